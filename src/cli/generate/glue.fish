
# retry's glue, after clap_complete's script (src/cli/generate/complete.rs), whose lines
# above offer retry's own options only before the command. The words from the command on
# (after `--`, or from the first word that is neither an option nor an option's value) are
# the wrapped command's: they are completed as fish completes that command line alone, as
# for sudo or nice.

# Prints the wrapped command's words up to the cursor (the last one as typed, the others
# escaped), or fails while the cursor is still on retry's own words.
function __fish_retry_command
    set -l words (commandline -opc)
    set -e words[1]
    set -l dashes
    while set -q words[1]
        switch $words[1]
            case --
                set dashes --
                set -e words[1]
                break
            # The flags that take a value, from the clap definition.
            case @VALUE_LONGS@
                set -e words[1]
                set -q words[1]; or return 1
            case '-?*'
                if string match -qr -- '@VALUE_SHORTS@' $words[1]
                    set -e words[1]
                    set -q words[1]; or return 1
                end
            case '*'
                break
        end
        set -e words[1]
    end
    set -l current (commandline -ct)
    if not set -q words[1]; and not set -q dashes[1]; and string match -q -- '-*' "$current"
        return 1
    end
    string escape -- $words
    printf '%s\n' "$current"
end

# Completes the wrapped command line.
function __fish_retry_complete_command
    complete -C (string join ' ' -- (__fish_retry_command))
end

complete -c retry -n '__fish_retry_command >/dev/null' -f -a '(__fish_retry_complete_command)'
