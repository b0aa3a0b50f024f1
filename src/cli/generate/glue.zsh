
# retry's glue, in clap_complete's script (src/cli/generate/complete.rs): COMMAND's action.
# The command and its arguments, the words `*::` leaves in $words, are completed as zsh
# completes them alone (_normal, as _precommand does for nohup or time). When `--` is retry's
# first argument, _arguments leaves it in $words (not after other options): it is not the
# command.
(( $+functions[_retry_command] )) ||
_retry_command() {
    if [[ $words[1] == -- ]]; then
        shift words
        (( CURRENT-- ))
    fi
    _normal -p retry
}

