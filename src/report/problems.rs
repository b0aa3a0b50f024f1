//! retry's own errors and warnings during a run, in words: one place per
//! [`crate::observe::problems::Problem`].

use crate::codes::signal_name;
use crate::env_file::VARIABLE;
use crate::escape::escape;
use crate::observe::problems::Problem;

use super::reasons::stdin_lost_line;

/// `problem` in words, without the `retry: ` (or `retry: warning: `) prefix.
pub fn problem_words(problem: &Problem<'_>) -> String {
    match *problem {
        Problem::SignalHandlers(e) => format!("cannot install signal handlers: {e}"),
        Problem::PipelineSetup(e) => format!("cannot set up pipeline I/O: {e}"),
        Problem::AttemptStart { attempt, error } => {
            format!("cannot start attempt {attempt}: {error}")
        }
        Problem::PipelineStart(e) => format!("cannot start pipeline I/O: {e}"),
        Problem::BadHint(text) => format!(
            "--delay-from-output captured '{text}', which is neither a number of seconds nor \
             an HTTP-date: the hint is ignored"
        ),
        Problem::StdinLost(lost) => stdin_lost_line(lost),
        Problem::HookCapture { hook, error } => format!(
            "cannot hold the output of the --{} hook: {error}",
            hook.replace('_', "-")
        ),
        Problem::RelayStart { attempt, error } => format!(
            "cannot start a process to pass on what attempt {attempt} left running still \
             writes: {error}; retry passes it on itself until its output is closed"
        ),
        Problem::OutputCut { signal, attempt } => format!(
            "stopped by {} while the output of attempt {attempt} was still being written: the \
             rest of it is dropped",
            signal_name(signal)
        ),
        Problem::OutputLost(why) => why.to_string(),
        Problem::LockFailed { path, why } => {
            format!("--lock {}: {why}", escape(&path.display().to_string()))
        }
        Problem::EnvFileUnavailable(why) => {
            format!("{VARIABLE} is not offered to the attempts: {}", escape(why))
        }
        // The path comes from $TMPDIR: escaped, so that a newline cannot forge a line.
        Problem::EnvFileCreate(why) => escape(&format!("{VARIABLE}: {why}")),
        Problem::EnvFileLine(line) => escape(line),
        Problem::EnvFileMore { more, after } => format!(
            "{VARIABLE}: {more} more problem{} after {after} not shown",
            if more == 1 { "" } else { "s" }
        ),
        Problem::BudgetStore(why) => why.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_problem_in_its_words() {
        let lost = crate::observe::reasons::StdinLost {
            why: "cannot record stdin: disk full".into(),
            next: 3,
        };
        let path = std::path::Path::new("/run/a\nb");
        let cases = [
            (
                Problem::SignalHandlers("no"),
                "cannot install signal handlers: no",
            ),
            (
                Problem::PipelineSetup("no"),
                "cannot set up pipeline I/O: no",
            ),
            (
                Problem::AttemptStart {
                    attempt: 2,
                    error: "no",
                },
                "cannot start attempt 2: no",
            ),
            (
                Problem::PipelineStart("no"),
                "cannot start pipeline I/O: no",
            ),
            (
                Problem::BadHint("soon"),
                "--delay-from-output captured 'soon', which is neither a number of seconds nor \
                 an HTTP-date: the hint is ignored",
            ),
            (
                Problem::StdinLost(&lost),
                "cannot record stdin: disk full; not retrying: attempt 3 would see only part of \
                 stdin",
            ),
            (
                Problem::HookCapture {
                    hook: "on_retry",
                    error: "no",
                },
                "cannot hold the output of the --on-retry hook: no",
            ),
            (
                Problem::RelayStart {
                    attempt: 1,
                    error: "no",
                },
                "cannot start a process to pass on what attempt 1 left running still writes: \
                 no; retry passes it on itself until its output is closed",
            ),
            (
                Problem::OutputCut {
                    signal: 15,
                    attempt: 4,
                },
                "stopped by SIGTERM while the output of attempt 4 was still being written: the \
                 rest of it is dropped",
            ),
            (Problem::OutputLost("disk full"), "disk full"),
            (
                Problem::LockFailed { path, why: "no" },
                "--lock /run/a\\nb: no",
            ),
            (Problem::EnvFileCreate("a\nb"), "RETRY_ENV_FILE: a\\nb"),
            (Problem::EnvFileLine("x\ny"), "x\\ny"),
            (
                Problem::EnvFileMore {
                    more: 1,
                    after: "attempt 2",
                },
                "RETRY_ENV_FILE: 1 more problem after attempt 2 not shown",
            ),
            (
                Problem::EnvFileMore {
                    more: 7,
                    after: "--on-retry",
                },
                "RETRY_ENV_FILE: 7 more problems after --on-retry not shown",
            ),
            (Problem::BudgetStore("store down"), "store down"),
        ];
        for (problem, words) in cases {
            assert_eq!(problem_words(&problem), words, "{problem:?}");
        }
        assert!(Problem::BudgetStore("x").is_warning());
        assert!(!Problem::OutputLost("x").is_warning());
    }
}
