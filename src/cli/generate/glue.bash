
# retry's glue, after clap_complete's script (src/cli/generate/complete.rs). The words from
# the command on (after `--`, or from the first word that is neither an option nor an
# option's value) are the wrapped command's: they are completed as bash-completion completes
# them after sudo or timeout (_command_offset). retry's own words are completed by _retry.
_retry_line() {
    local i=1 word
    while ((i < COMP_CWORD)); do
        word=${COMP_WORDS[i]}
        if [[ $word == -- ]]; then
            _retry_command $((i + 1))
            return
        elif [[ $word != -?* ]]; then
            _retry_command $i
            return
        elif [[ ${COMP_WORDS[i + 1]} == = ]]; then
            # --flag=value, which bash splits at the `=`.
            ((i += 2))
        else
            # The flags that take a value, from the clap definition.
            case $word in
                @VALUE_LONGS@) ((i++)) ;;
                *) [[ $word =~ @VALUE_SHORTS@ ]] && ((i++)) ;;
            esac
        fi
        ((i++))
    done
    if ((i == COMP_CWORD)) && [[ ${COMP_WORDS[i]} != -* ]]; then
        _retry_command $i
        return
    fi
    if ((COMP_CWORD >= 2)) && [[ ${COMP_WORDS[COMP_CWORD - 1]} == = ]]; then
        # The value of --flag=value: complete it as the value of --flag.
        set -- "$1" "$2" "${COMP_WORDS[COMP_CWORD - 2]}"
    fi
    compopt -o bashdefault -o default 2>/dev/null
    compopt -o nosort 2>/dev/null
    _retry "$@"
}

# Completes the words from COMP_WORDS[$1] on as a command line of their own.
_retry_command() {
    if declare -F _command_offset >/dev/null; then
        _command_offset "$1"
    elif declare -F _comp_command_offset >/dev/null; then
        # bash-completion 2.12 on, without its deprecated names: with `words` unset, the
        # index is one in COMP_WORDS, as for _command_offset.
        local words
        unset -v words
        _comp_command_offset "$1"
    elif (($1 == COMP_CWORD)); then
        # Without bash-completion: command names, then file names.
        COMPREPLY=($(compgen -c -- "${COMP_WORDS[COMP_CWORD]}"))
    else
        compopt -o default 2>/dev/null
        COMPREPLY=()
    fi
}

complete -F _retry_line retry
