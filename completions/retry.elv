
use builtin;
use str;

set edit:completion:arg-completer[retry] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'retry'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'retry'= {
            cand --preset 'Start from a published policy'
            cand -b 'First delay [default: 1s]'
            cand --base 'First delay [default: 1s]'
            cand -m 'Growth per retry; must be >= 1 [default: 2]'
            cand --multiplier 'Growth per retry; must be >= 1 [default: 2]'
            cand -c 'Largest single delay; must be >= base [default: 64s]'
            cand --cap 'Largest single delay; must be >= base [default: 64s]'
            cand --delays 'Explicit delays before retries 1, 2, 3, ...; the last one repeats'
            cand -j 'Jitter mode: none, full, equal, decorrelated, additive, proportional [default: full]'
            cand --jitter 'Jitter mode: none, full, equal, decorrelated, additive, proportional [default: full]'
            cand --seed 'Seed the jitter, to reproduce a schedule [default: from the OS]'
            cand -n 'Retries after the first attempt, or "unlimited" [default: 5]'
            cand --max-retries 'Retries after the first attempt, or "unlimited" [default: 5]'
            cand --reset-after 'An attempt that ran this long before failing starts the schedule afresh'
            cand -d 'Total time budget from the start'
            cand --deadline 'Total time budget from the start'
            cand -t 'Time limit for each attempt'
            cand --timeout 'Time limit for each attempt'
            cand --idle-timeout 'Stop an attempt that writes nothing on stdout or stderr for this long'
            cand -k 'Grace between TERM and KILL when an attempt is stopped [default: 10s]'
            cand --kill-after 'Grace between TERM and KILL when an attempt is stopped [default: 10s]'
            cand -s 'Signal that stops a timed-out attempt, instead of TERM'
            cand --signal 'Signal that stops a timed-out attempt, instead of TERM'
            cand --successes 'Done only after N successful attempts in a row [default: 1]'
            cand --retry-on 'Only these statuses are retried [default: any non-zero]'
            cand --stop-on 'These statuses are never retried [default: 126,127]'
            cand --retry-if-output 'An attempt with a matching output line counts as failed, even with status 0'
            cand --stop-if-output 'An attempt with a matching output line is not retried, whatever its status'
            cand --delay-from-output 'Take the next delay from a server hint in a failed attempt''s output'
            cand --http-retry-on 'With --http-hints, only these HTTP statuses are retried [default: 408,425,429,500-599]'
            cand --max-hint 'Longest server hint honoured [default: 1h]'
            cand --transient 'Retry only failures known to be transient (classes: all, or a list)'
            cand --transient-pattern 'A line matching REGEX makes a failure transient; implies --transient'
            cand --max-replay 'Most bytes of stdin --replay-stdin records, or "unlimited" [default: 4GiB]'
            cand --max-output 'Most bytes of output --chronic holds, or "unlimited" [default: 64MiB]'
            cand --log-format 'Format of retry''s own progress: text or json [default: text]'
            cand --color 'When to colour retry''s own words: auto, always or never [default: auto]'
            cand --on-retry 'Run CMD with `sh -c` before each retry'
            cand --on-retry-fail 'What a failing --on-retry hook does: continue or stop [default: continue]'
            cand --on-give-up 'Run CMD with `sh -c` once, when giving up'
            cand --splay 'Wait a random time, up to DURATION, before the first attempt'
            cand --budget 'Share a retry budget, circuit breaker and cooldown with every run using KEY'
            cand --budget-store 'Where --budget keeps its state: a directory or a redis:// URL [default: $XDG_RUNTIME_DIR/retry]'
            cand --breaker 'Open the circuit breaker after N runs in a row with --budget''s KEY gave up'
            cand --breaker-cooldown 'How long the circuit breaker stays open [default: 60s]'
            cand --budget-max-tokens 'The retry budget''s size: gRFC A6''s maxTokens [default: 10]'
            cand --budget-token-ratio 'Tokens a successful attempt gives back: gRFC A6''s tokenRatio [default: 0.1]'
            cand --budget-refill 'Give one token back every DURATION, whatever the attempts do [default: never]'
            cand --lock 'Run only while holding an exclusive lock on PATH, for cron jobs'
            cand --lock-wait 'How long to wait for --lock when another run holds it [default: 0]'
            cand --metrics-file 'Write how the run ended to PATH, for Prometheus (node_exporter textfile)'
            cand --metrics-job 'The job label of --metrics-file [default: the command''s file name]'
            cand --simulate 'Simulate CLIENTS clients contending for one server (or, with --model failure-rate, CLIENTS requests to a failing service); runs no COMMAND'
            cand --runs 'Runs averaged per point of the simulation [default: 100]'
            cand --model 'What the simulated clients contend for: occ, rate-limit or failure-rate [default: occ]'
            cand --capacity 'Requests per second the rate-limit server admits (needed by --model rate-limit)'
            cand --failure-rate 'The probability that a call fails, from 0 to 1, for --model failure-rate'
            cand --plot 'Sweep the clients from 10 up to CLIENTS and draw an SVG chart to FILE'
            cand --preserve-status 'End as a timed-out last attempt ended, not with 124 or 137'
            cand --until-fail 'Run the command again while it succeeds; stop at the first failure'
            cand --forever 'Keep the command running: run it again whatever it exits with'
            cand --http-hints 'Wait at least as long as the server asks in HTTP headers in a failed attempt''s output'
            cand --replay-stdin 'Give every attempt the same stdin: read it once, replay it from the start'
            cand --stdout-on-success 'Hold each attempt''s stdout; print it only if that attempt succeeds'
            cand --chronic 'Hold all output; print it only if the run does not succeed (like chronic)'
            cand --dry-run 'Print the planned schedule and exit; runs nothing'
            cand -q 'Silence retry''s own progress lines (never its errors)'
            cand --quiet 'Silence retry''s own progress lines (never its errors)'
            cand -v 'More detail: the command''s arguments, each attempt''s start and duration, the seed'
            cand --verbose 'More detail: the command''s arguments, each attempt''s start and duration, the seed'
            cand --no-github 'Tell GitHub Actions nothing: no folds, annotations, step outputs or step summary'
            cand --no-ci 'Tell no CI system anything: no folds, and --no-github'
            cand --trace-args 'Record the command''s arguments in the trace (process.command_args)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
    ]
    $completions[$command]
}
