
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'retry' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'retry'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'retry' {
            [CompletionResult]::new('--preset', '--preset', [CompletionResultType]::ParameterName, 'Start from a published policy')
            [CompletionResult]::new('-b', '-b', [CompletionResultType]::ParameterName, 'First delay [default: 1s]')
            [CompletionResult]::new('--base', '--base', [CompletionResultType]::ParameterName, 'First delay [default: 1s]')
            [CompletionResult]::new('-m', '-m', [CompletionResultType]::ParameterName, 'Growth per retry; must be >= 1 [default: 2]')
            [CompletionResult]::new('--multiplier', '--multiplier', [CompletionResultType]::ParameterName, 'Growth per retry; must be >= 1 [default: 2]')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'Largest single delay; must be >= base [default: 64s]')
            [CompletionResult]::new('--cap', '--cap', [CompletionResultType]::ParameterName, 'Largest single delay; must be >= base [default: 64s]')
            [CompletionResult]::new('--delays', '--delays', [CompletionResultType]::ParameterName, 'Explicit delays before retries 1, 2, 3, ...; the last one repeats')
            [CompletionResult]::new('-j', '-j', [CompletionResultType]::ParameterName, 'Jitter mode: none, full, equal, decorrelated, additive, proportional [default: full]')
            [CompletionResult]::new('--jitter', '--jitter', [CompletionResultType]::ParameterName, 'Jitter mode: none, full, equal, decorrelated, additive, proportional [default: full]')
            [CompletionResult]::new('--seed', '--seed', [CompletionResultType]::ParameterName, 'Seed the jitter, to reproduce a schedule [default: from the OS]')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Retries after the first attempt, or "unlimited" [default: 5]')
            [CompletionResult]::new('--max-retries', '--max-retries', [CompletionResultType]::ParameterName, 'Retries after the first attempt, or "unlimited" [default: 5]')
            [CompletionResult]::new('--reset-after', '--reset-after', [CompletionResultType]::ParameterName, 'An attempt that ran this long before failing starts the schedule afresh')
            [CompletionResult]::new('-d', '-d', [CompletionResultType]::ParameterName, 'Total time budget from the start')
            [CompletionResult]::new('--deadline', '--deadline', [CompletionResultType]::ParameterName, 'Total time budget from the start')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'Time limit for each attempt')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Time limit for each attempt')
            [CompletionResult]::new('--idle-timeout', '--idle-timeout', [CompletionResultType]::ParameterName, 'Stop an attempt that writes nothing on stdout or stderr for this long')
            [CompletionResult]::new('-k', '-k', [CompletionResultType]::ParameterName, 'Grace between TERM and KILL when an attempt is stopped [default: 10s]')
            [CompletionResult]::new('--kill-after', '--kill-after', [CompletionResultType]::ParameterName, 'Grace between TERM and KILL when an attempt is stopped [default: 10s]')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'Signal that stops a timed-out attempt, instead of TERM')
            [CompletionResult]::new('--signal', '--signal', [CompletionResultType]::ParameterName, 'Signal that stops a timed-out attempt, instead of TERM')
            [CompletionResult]::new('--successes', '--successes', [CompletionResultType]::ParameterName, 'Done only after N successful attempts in a row [default: 1]')
            [CompletionResult]::new('--retry-on', '--retry-on', [CompletionResultType]::ParameterName, 'Only these statuses are retried [default: any non-zero]')
            [CompletionResult]::new('--stop-on', '--stop-on', [CompletionResultType]::ParameterName, 'These statuses are never retried [default: 126,127]')
            [CompletionResult]::new('--retry-if-output', '--retry-if-output', [CompletionResultType]::ParameterName, 'An attempt with a matching output line counts as failed, even with status 0')
            [CompletionResult]::new('--stop-if-output', '--stop-if-output', [CompletionResultType]::ParameterName, 'An attempt with a matching output line is not retried, whatever its status')
            [CompletionResult]::new('--delay-from-output', '--delay-from-output', [CompletionResultType]::ParameterName, 'Take the next delay from a server hint in a failed attempt''s output')
            [CompletionResult]::new('--http-retry-on', '--http-retry-on', [CompletionResultType]::ParameterName, 'With --http-hints, only these HTTP statuses are retried [default: 408,425,429,500-599]')
            [CompletionResult]::new('--max-hint', '--max-hint', [CompletionResultType]::ParameterName, 'Longest server hint honoured [default: 1h]')
            [CompletionResult]::new('--transient', '--transient', [CompletionResultType]::ParameterName, 'Retry only failures known to be transient (classes: all, or a list)')
            [CompletionResult]::new('--transient-pattern', '--transient-pattern', [CompletionResultType]::ParameterName, 'A line matching REGEX makes a failure transient; implies --transient')
            [CompletionResult]::new('--max-replay', '--max-replay', [CompletionResultType]::ParameterName, 'Most bytes of stdin --replay-stdin records, or "unlimited" [default: 4GiB]')
            [CompletionResult]::new('--max-output', '--max-output', [CompletionResultType]::ParameterName, 'Most bytes of output --chronic holds, or "unlimited" [default: 64MiB]')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Format of retry''s own progress: text or json [default: text]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour retry''s own words: auto, always or never [default: auto]')
            [CompletionResult]::new('--on-retry', '--on-retry', [CompletionResultType]::ParameterName, 'Run CMD with `sh -c` before each retry')
            [CompletionResult]::new('--on-retry-fail', '--on-retry-fail', [CompletionResultType]::ParameterName, 'What a failing --on-retry hook does: continue or stop [default: continue]')
            [CompletionResult]::new('--on-give-up', '--on-give-up', [CompletionResultType]::ParameterName, 'Run CMD with `sh -c` once, when giving up')
            [CompletionResult]::new('--splay', '--splay', [CompletionResultType]::ParameterName, 'Wait a random time, up to DURATION, before the first attempt')
            [CompletionResult]::new('--budget', '--budget', [CompletionResultType]::ParameterName, 'Share a retry budget, circuit breaker and cooldown with every run using KEY')
            [CompletionResult]::new('--budget-store', '--budget-store', [CompletionResultType]::ParameterName, 'Where --budget keeps its state: a directory or a redis:// URL [default: $XDG_RUNTIME_DIR/retry]')
            [CompletionResult]::new('--breaker', '--breaker', [CompletionResultType]::ParameterName, 'Open the circuit breaker after N runs in a row with --budget''s KEY gave up')
            [CompletionResult]::new('--breaker-cooldown', '--breaker-cooldown', [CompletionResultType]::ParameterName, 'How long the circuit breaker stays open [default: 60s]')
            [CompletionResult]::new('--budget-max-tokens', '--budget-max-tokens', [CompletionResultType]::ParameterName, 'The retry budget''s size: gRFC A6''s maxTokens [default: 10]')
            [CompletionResult]::new('--budget-token-ratio', '--budget-token-ratio', [CompletionResultType]::ParameterName, 'Tokens a successful attempt gives back: gRFC A6''s tokenRatio [default: 0.1]')
            [CompletionResult]::new('--budget-refill', '--budget-refill', [CompletionResultType]::ParameterName, 'Give one token back every DURATION, whatever the attempts do [default: never]')
            [CompletionResult]::new('--lock', '--lock', [CompletionResultType]::ParameterName, 'Run only while holding an exclusive lock on PATH, for cron jobs')
            [CompletionResult]::new('--lock-wait', '--lock-wait', [CompletionResultType]::ParameterName, 'How long to wait for --lock when another run holds it [default: 0]')
            [CompletionResult]::new('--metrics-file', '--metrics-file', [CompletionResultType]::ParameterName, 'Write how the run ended to PATH, for Prometheus (node_exporter textfile)')
            [CompletionResult]::new('--metrics-job', '--metrics-job', [CompletionResultType]::ParameterName, 'The job label of --metrics-file [default: the command''s file name]')
            [CompletionResult]::new('--simulate', '--simulate', [CompletionResultType]::ParameterName, 'Simulate CLIENTS clients contending for one server (or, with --model failure-rate, CLIENTS requests to a failing service); runs no COMMAND')
            [CompletionResult]::new('--runs', '--runs', [CompletionResultType]::ParameterName, 'Runs averaged per point of the simulation [default: 100]')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'What the simulated clients contend for: occ, rate-limit or failure-rate [default: occ]')
            [CompletionResult]::new('--capacity', '--capacity', [CompletionResultType]::ParameterName, 'Requests per second the rate-limit server admits (needed by --model rate-limit)')
            [CompletionResult]::new('--failure-rate', '--failure-rate', [CompletionResultType]::ParameterName, 'The probability that a call fails, from 0 to 1, for --model failure-rate')
            [CompletionResult]::new('--plot', '--plot', [CompletionResultType]::ParameterName, 'Sweep the clients from 10 up to CLIENTS and draw an SVG chart to FILE')
            [CompletionResult]::new('--preserve-status', '--preserve-status', [CompletionResultType]::ParameterName, 'End as a timed-out last attempt ended, not with 124 or 137')
            [CompletionResult]::new('--until-fail', '--until-fail', [CompletionResultType]::ParameterName, 'Run the command again while it succeeds; stop at the first failure')
            [CompletionResult]::new('--forever', '--forever', [CompletionResultType]::ParameterName, 'Keep the command running: run it again whatever it exits with')
            [CompletionResult]::new('--http-hints', '--http-hints', [CompletionResultType]::ParameterName, 'Wait at least as long as the server asks in HTTP headers in a failed attempt''s output')
            [CompletionResult]::new('--replay-stdin', '--replay-stdin', [CompletionResultType]::ParameterName, 'Give every attempt the same stdin: read it once, replay it from the start')
            [CompletionResult]::new('--stdout-on-success', '--stdout-on-success', [CompletionResultType]::ParameterName, 'Hold each attempt''s stdout; print it only if that attempt succeeds')
            [CompletionResult]::new('--chronic', '--chronic', [CompletionResultType]::ParameterName, 'Hold all output; print it only if the run does not succeed (like chronic)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print the planned schedule and exit; runs nothing')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Silence retry''s own progress lines (never its errors)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Silence retry''s own progress lines (never its errors)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail: the command''s arguments, each attempt''s start and duration, the seed')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail: the command''s arguments, each attempt''s start and duration, the seed')
            [CompletionResult]::new('--no-github', '--no-github', [CompletionResultType]::ParameterName, 'Tell GitHub Actions nothing: no folds, annotations, step outputs or step summary')
            [CompletionResult]::new('--no-ci', '--no-ci', [CompletionResultType]::ParameterName, 'Tell no CI system anything: no folds, and --no-github')
            [CompletionResult]::new('--trace-args', '--trace-args', [CompletionResultType]::ParameterName, 'Record the command''s arguments in the trace (process.command_args)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
