complete -c retry -n 'not __fish_retry_command >/dev/null' -l preset -d 'Start from a published policy' -r -f -a "gcp\t'Google Cloud retry guides (Memorystore, IAM): 1s doubling plus up to 1s random (additive jitter), cap 64s'
aws\t'AWS SDK standard retry mode: full jitter, base 1s, x2, cap 20s, 3 attempts in all'
grpc\t'gRPC connection backoff (grpc/grpc doc/connection-backoff.md): 1s, x1.6, +/-20% (proportional jitter), cap 120s'
api-core\t'google-api-core retry (Python): 1s, x2, cap 60s, full jitter, retries until a deadline of 120s'"
complete -c retry -n 'not __fish_retry_command >/dev/null' -s b -l base -d 'First delay [default: 1s]' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -s m -l multiplier -d 'Growth per retry; must be >= 1 [default: 2]' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -s c -l cap -d 'Largest single delay; must be >= base [default: 64s]' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l delays -d 'Explicit delays before retries 1, 2, 3, ...; the last one repeats' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -s j -l jitter -d 'Jitter mode: none, full, equal, decorrelated, additive, proportional [default: full]' -r -f -a "none\t'the exponential delay, min(cap, base * multiplier^n), with no randomness'
full\t'random from 0 to the exponential delay: the AWS Architecture Blog\'s recommendation'
equal\t'half the exponential delay, plus a random part up to the other half'
decorrelated\t'random from base to 3 times the previous delay, at most cap'
additive\t'base * multiplier^n plus a random part up to base, at most cap: Google Cloud\'s guides'
proportional\t'the exponential delay, 20% more or less at random, at most cap: gRPC connection backoff'"
complete -c retry -n 'not __fish_retry_command >/dev/null' -l seed -d 'Seed the jitter, to reproduce a schedule [default: from the OS]' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -s n -l max-retries -d 'Retries after the first attempt, or "unlimited" [default: 5]' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l reset-after -d 'An attempt that ran this long before failing starts the schedule afresh' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -s d -l deadline -d 'Total time budget from the start' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -s t -l timeout -d 'Time limit for each attempt' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l idle-timeout -d 'Stop an attempt that writes nothing on stdout or stderr for this long' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -s k -l kill-after -d 'Grace between TERM and KILL when an attempt is stopped [default: 10s]' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -s s -l signal -d 'Signal that stops a timed-out attempt, instead of TERM' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l successes -d 'Done only after N successful attempts in a row [default: 1]' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l retry-on -d 'Only these statuses are retried [default: any non-zero]' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l stop-on -d 'These statuses are never retried [default: 126,127]' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l retry-if-output -d 'An attempt with a matching output line counts as failed, even with status 0' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l stop-if-output -d 'An attempt with a matching output line is not retried, whatever its status' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l delay-from-output -d 'Take the next delay from a server hint in a failed attempt\'s output' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l http-retry-on -d 'With --http-hints, only these HTTP statuses are retried [default: 408,425,429,500-599]' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l max-hint -d 'Longest server hint honoured [default: 1h]' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l transient -d 'Retry only failures known to be transient (classes: all, or a list)' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l transient-pattern -d 'A line matching REGEX makes a failure transient; implies --transient' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l max-replay -d 'Most bytes of stdin --replay-stdin records, or "unlimited" [default: 4GiB]' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l max-output -d 'Most bytes of output --chronic holds, or "unlimited" [default: 64MiB]' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l log-format -d 'Format of retry\'s own progress: text or json [default: text]' -r -f -a "text\t'Lines for people: `retry: attempt 1 of 6: ...`'
json\t'One JSON object per event and line, for machines'"
complete -c retry -n 'not __fish_retry_command >/dev/null' -l color -d 'When to colour retry\'s own words: auto, always or never [default: auto]' -r -f -a "auto\t'When stderr is a terminal whose `TERM` is not `dumb`, unless `NO_COLOR` is set to something; or whenever `CLICOLOR_FORCE` is (no-color.org, the CLICOLOR convention)'
always\t'Always, even into a pipe or a file'
never\t'Never'"
complete -c retry -n 'not __fish_retry_command >/dev/null' -l on-retry -d 'Run CMD with `sh -c` before each retry' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l on-retry-fail -d 'What a failing --on-retry hook does: continue or stop [default: continue]' -r -f -a "continue\t'Report it and go on retrying'
stop\t'Give up at once'"
complete -c retry -n 'not __fish_retry_command >/dev/null' -l on-give-up -d 'Run CMD with `sh -c` once, when giving up' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l splay -d 'Wait a random time, up to DURATION, before the first attempt' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l budget -d 'Share a retry budget, circuit breaker and cooldown with every run using KEY' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l budget-store -d 'Where --budget keeps its state: a directory or a redis:// URL [default: $XDG_RUNTIME_DIR/retry]' -r -f -a "(__fish_complete_directories)"
complete -c retry -n 'not __fish_retry_command >/dev/null' -l breaker -d 'Open the circuit breaker after N runs in a row with --budget\'s KEY gave up' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l breaker-cooldown -d 'How long the circuit breaker stays open [default: 60s]' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l budget-max-tokens -d 'The retry budget\'s size: gRFC A6\'s maxTokens [default: 10]' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l budget-token-ratio -d 'Tokens a successful attempt gives back: gRFC A6\'s tokenRatio [default: 0.1]' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l budget-refill -d 'Give one token back every DURATION, whatever the attempts do [default: never]' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l lock -d 'Run only while holding an exclusive lock on PATH, for cron jobs' -r -F
complete -c retry -n 'not __fish_retry_command >/dev/null' -l lock-wait -d 'How long to wait for --lock when another run holds it [default: 0]' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l metrics-file -d 'Write how the run ended to PATH, for Prometheus (node_exporter textfile)' -r -F
complete -c retry -n 'not __fish_retry_command >/dev/null' -l metrics-job -d 'The job label of --metrics-file [default: the command\'s file name]' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l simulate -d 'Simulate CLIENTS clients contending for one server (or, with --model failure-rate, CLIENTS requests to a failing service); runs no COMMAND' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l runs -d 'Runs averaged per point of the simulation [default: 100]' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l model -d 'What the simulated clients contend for: occ, rate-limit or failure-rate [default: occ]' -r -f -a "occ\t'One row under optimistic concurrency, as the published simulator'
rate-limit\t'A server admitting --capacity requests per second'
failure-rate\t'A service whose calls fail with probability --failure-rate'"
complete -c retry -n 'not __fish_retry_command >/dev/null' -l capacity -d 'Requests per second the rate-limit server admits (needed by --model rate-limit)' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l failure-rate -d 'The probability that a call fails, from 0 to 1, for --model failure-rate' -r -f
complete -c retry -n 'not __fish_retry_command >/dev/null' -l plot -d 'Sweep the clients from 10 up to CLIENTS and draw an SVG chart to FILE' -r -F
complete -c retry -n 'not __fish_retry_command >/dev/null' -l preserve-status -d 'End as a timed-out last attempt ended, not with 124 or 137'
complete -c retry -n 'not __fish_retry_command >/dev/null' -l until-fail -d 'Run the command again while it succeeds; stop at the first failure'
complete -c retry -n 'not __fish_retry_command >/dev/null' -l forever -d 'Keep the command running: run it again whatever it exits with'
complete -c retry -n 'not __fish_retry_command >/dev/null' -l http-hints -d 'Wait at least as long as the server asks in HTTP headers in a failed attempt\'s output'
complete -c retry -n 'not __fish_retry_command >/dev/null' -l replay-stdin -d 'Give every attempt the same stdin: read it once, replay it from the start'
complete -c retry -n 'not __fish_retry_command >/dev/null' -l stdout-on-success -d 'Hold each attempt\'s stdout; print it only if that attempt succeeds'
complete -c retry -n 'not __fish_retry_command >/dev/null' -l chronic -d 'Hold all output; print it only if the run does not succeed (like chronic)'
complete -c retry -n 'not __fish_retry_command >/dev/null' -l dry-run -d 'Print the planned schedule and exit; runs nothing'
complete -c retry -n 'not __fish_retry_command >/dev/null' -s q -l quiet -d 'Silence retry\'s own progress lines (never its errors)'
complete -c retry -n 'not __fish_retry_command >/dev/null' -s v -l verbose -d 'More detail: the command\'s arguments, each attempt\'s start and duration, the seed'
complete -c retry -n 'not __fish_retry_command >/dev/null' -l no-github -d 'Tell GitHub Actions nothing: no folds, annotations, step outputs or step summary'
complete -c retry -n 'not __fish_retry_command >/dev/null' -l no-ci -d 'Tell no CI system anything: no folds, and --no-github'
complete -c retry -n 'not __fish_retry_command >/dev/null' -l trace-args -d 'Record the command\'s arguments in the trace (process.command_args)'
complete -c retry -n 'not __fish_retry_command >/dev/null' -s h -l help -d 'Print help (see more with \'--help\')'
complete -c retry -n 'not __fish_retry_command >/dev/null' -s V -l version -d 'Print version'

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
            case --preset --base --multiplier --cap --delays --jitter --seed --max-retries --reset-after --deadline --timeout --idle-timeout --kill-after --signal --successes --retry-on --stop-on --retry-if-output --stop-if-output --delay-from-output --http-retry-on --max-hint --transient-pattern --max-replay --max-output --log-format --color --on-retry --on-retry-fail --on-give-up --splay --budget --budget-store --breaker --breaker-cooldown --budget-max-tokens --budget-token-ratio --budget-refill --lock --lock-wait --metrics-file --metrics-job --simulate --runs --model --capacity --failure-rate --plot
                set -e words[1]
                set -q words[1]; or return 1
            case '-?*'
                if string match -qr -- '^-[qvhV]*[bmcjndtks]$' $words[1]
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
