//! The help retry prints: `-h` fits one screen (usage, the flags most people need first,
//! three examples, the exit statuses, where to read more), `--help` has every flag under its
//! heading and ends with every example and the exit statuses in full. The examples and exit
//! statuses are also the man page's (`man.rs`): written once, here.

use clap::builder::StyledStr;
use clap::{Arg, CommandFactory};

use super::definition::Cli;
use super::flags::Flag;

/// A command line and what it does.
#[derive(Clone, Copy, Debug)]
pub struct Example {
    /// The command line, as typed.
    pub command: &'static str,
    /// What it does, one sentence or two.
    pub what: &'static str,
}

/// The examples, most useful first: `-h` shows the first [`SHORT_EXAMPLES`], `--help` and the
/// man page all of them. Every one of them is run by the tests.
pub const EXAMPLES: &[Example] = &[
    Example {
        command: "retry -- curl -fsS https://example.com/health",
        what: "Up to 6 attempts, with random delays of at most 1s, 2s, 4s, 8s and 16s between \
               them (full jitter).",
    },
    Example {
        command: "retry -n unlimited -d 5m -t 30s -- ./deploy.sh",
        what: "Keep trying for at most five minutes, each attempt stopped after 30 seconds.",
    },
    Example {
        command: "retry --http-hints -- curl -fsS -D /dev/stderr https://api.example.com/",
        what: "Wait at least as long as the server asks (Retry-After, RateLimit, \
               X-RateLimit-Reset, x-amz-retry-after), up to --max-hint, and retry only the \
               statuses that may succeed later (--http-retry-on: 408, 425, 429, 5xx; a 404 \
               ends the run): curl prints the headers on stderr, where retry reads them, and \
               the body alone on stdout.",
    },
    Example {
        command: "retry --forever -- ssh -N -L 8080:localhost:80 tunnel.example.com",
        what: "Keep a tunnel up: run it again whenever it exits, backing off while it keeps \
               failing within a minute, until TERM or Ctrl-C (retry then dies of that signal).",
    },
    Example {
        command: "retry --preset aws --dry-run",
        what: "Show the schedule of the AWS SDK standard retry mode without running anything.",
    },
    Example {
        command: "export RETRY_PRESET=gcp RETRY_MAX_RETRIES=8",
        what: "In a CI pipeline: set the policy once; every retry in later steps uses it, and a \
               flag on one command line still overrides it.",
    },
    Example {
        command: "retry --retry-on 75,100-199 --stop-on 2 -- make fetch",
        what: "Retry only statuses 75 and 100 to 199, never 2.",
    },
    Example {
        command: "retry --idle-timeout 5m -- ./long-test-suite",
        what: "Stop and retry an attempt that has printed nothing for five minutes.",
    },
    Example {
        command: "producer | retry --replay-stdin --stdout-on-success -- upload -",
        what: "Give every attempt the same stdin, and pass on the stdout of the successful \
               attempt only.",
    },
];

/// How many [`EXAMPLES`] `-h` shows.
pub const SHORT_EXAMPLES: usize = 4;

/// One exit status retry can end with.
#[derive(Clone, Copy, Debug)]
pub struct ExitStatus {
    /// The status (`0`, `124, 137`) or what stands for it (`status`, `signal N`).
    pub status: &'static str,
    /// One line for `-h`.
    pub short: &'static str,
    /// The full explanation, for `--help` and the man page.
    pub long: &'static str,
}

/// Every status retry can end with ([`crate::status`] owns the numbers).
pub const EXIT_STATUSES: &[ExitStatus] = &[
    ExitStatus {
        status: "0",
        short: "an attempt succeeded",
        long: "An attempt succeeded; or --dry-run, --help, --version.",
    },
    ExitStatus {
        status: "status",
        short: "the last attempt's own status when retry gives up (--forever: 1 for a 0)",
        long: "The last attempt's exit status, when retry gives up: no retries left, the \
               deadline passed, the status is not retried, or a stop signal arrived while it \
               ran. An attempt that exited 0 but failed through --retry-if-output gives 1; so \
               does a --forever loop that gives up (a crash loop, the deadline) after a run \
               that exited 0: --forever ends 0 only when --stop-on 0 ends it.",
    },
    ExitStatus {
        status: "signal N",
        short: "the last attempt died of signal N: retry dies of it too (a shell shows 128+N)",
        long: "The last attempt died of signal N: retry dies of the same signal (without a \
               core dump), so the caller sees what it would have seen without retry (a shell \
               shows 128+N). So does a stop signal that reaches retry between attempts: any \
               signal whose default action ends a process but KILL, USR1, USR2 and the \
               real-time signals (which are passed on to a running attempt and retrying goes \
               on).",
    },
    ExitStatus {
        status: "75",
        short: "the retry budget or --lock refused the run; the command did not run",
        long: "The run's --budget refused it before its first attempt (EX_TEMPFAIL, \"try \
               again later\"): the circuit breaker is open or another run is probing it, or \
               the shared cooldown lasts past --deadline or --max-hint; or another run held \
               --lock past --lock-wait. The command did not run.",
    },
    ExitStatus {
        status: "124, 137",
        short: "the last attempt timed out (137: KILL was needed)",
        long: "The last attempt was stopped at its --timeout, --idle-timeout or the --deadline, \
               or by SIGALRM sent to retry (its timer, as timeout(1)'s; not retried): 124 if \
               TERM ended it, 137 (retry dies of KILL) if KILL was needed after --kill-after, \
               as timeout(1).",
    },
    ExitStatus {
        status: "125",
        short: "retry's own error: a bad flag or value, an output it could not write",
        long: "retry's own error: a bad flag or value, a bad RETRY_<FLAG> variable, a missing \
               COMMAND, an attempt it could not start (no descriptors or processes left), \
               output or step outputs it could not write whole. One line on stderr, starting \
               \"retry: \", says why.",
    },
    ExitStatus {
        status: "126, 127",
        short: "COMMAND cannot be executed (126) or was not found (127)",
        long: "COMMAND could not be executed (126) or was not found (127). A failed launch is \
               never retried.",
    },
];

/// How to read this retry's manual, however it was installed: `cargo install` copies no man
/// page, and `man retry` then opens whatever page of that name the system has (Debian's
/// unrelated `retry` package installs one). `man -l -` reads a page from stdin (man-db's and
/// mandoc's `man`).
pub const MANUAL: &str = "retry --generate man | man -l -";

/// The flags `-h` shows, in this order of importance; `--help` shows them all.
const SHORT_FLAGS: &[Flag] = &[
    Flag::MaxRetries,
    Flag::Deadline,
    Flag::Timeout,
    Flag::Base,
    Flag::Cap,
    Flag::Jitter,
    Flag::RetryOn,
    Flag::Quiet,
    Flag::Help,
    Flag::Version,
];

/// Whether the command line asks for the long help (`--help`) rather than `-h`: a `--help`
/// before the command.
pub fn wants_long(args: &[std::ffi::OsString]) -> bool {
    args.iter()
        .skip(1)
        .take_while(|a| a.as_encoded_bytes() != b"--")
        .any(|a| a.as_encoded_bytes() == b"--help")
}

/// The help for `-h` (`long`: `--help`), styled for a terminal.
pub fn render(command: clap::Command, long: bool) -> StyledStr {
    let command = command
        .after_help(short_after())
        .after_long_help(long_after())
        // Shown as what it is: required (only --dry-run and the documentation flags do
        // without it).
        .mut_arg("command", |a| {
            a.required_unless_present(clap::builder::Resettable::Reset)
                .required(true)
        });
    if long {
        let mut command = command;
        return command.render_long_help();
    }
    let mut command = command.mut_args(|arg| {
        let flag = Flag::from_id(arg.get_id().as_str());
        if flag.is_some_and(|f| SHORT_FLAGS.contains(&f)) || arg.is_positional() {
            short_arg(arg)
        } else {
            arg.hide_short_help(true)
        }
    });
    command.render_help()
}

/// A flag as `-h` shows it: under "Options", without its environment variable.
fn short_arg(arg: Arg) -> Arg {
    arg.hide_env(true).help_heading(None::<&str>)
}

/// What `-h` ends with.
fn short_after() -> String {
    let mut text = String::from("Examples:\n");
    for e in &EXAMPLES[..SHORT_EXAMPLES] {
        text.push_str(&format!("  {}\n", e.command));
    }
    text.push_str("\nExit status:\n");
    for s in EXIT_STATUSES {
        text.push_str(&format!("  {:<9} {}\n", s.status, s.short));
    }
    text.push_str(&format!(
        "\nEvery flag (and its RETRY_<FLAG> variable): retry --help.\nThe manual: {MANUAL}"
    ));
    text
}

/// What `--help` ends with.
fn long_after() -> String {
    let mut text = String::from("Examples:\n");
    for e in EXAMPLES {
        text.push_str(&format!("  {}\n          {}\n\n", e.command, e.what));
    }
    text.push_str("Exit status:\n");
    for s in EXIT_STATUSES {
        text.push_str(&format!("  {}\n          {}\n\n", s.status, s.long));
    }
    text.push_str(&format!(
        "The manual, with the environment and signals: {MANUAL} (this retry's, however it \
         was installed: `man retry` may open another program's, such as Debian's retry \
         package)."
    ));
    text
}

/// The definition as `retry -h` and `retry --help` show it.
pub fn command() -> clap::Command {
    Cli::command()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_help_fits_one_screen_and_names_what_matters() {
        let text = render(command(), false).to_string();
        let lines = text.lines().count();
        assert!(lines <= 40, "{lines} lines:\n{text}");
        for needle in [
            "Usage:",
            "<COMMAND>",
            "--max-retries",
            "Examples:",
            "Exit status:",
        ] {
            assert!(text.contains(needle), "{needle} missing:\n{text}");
        }
        assert!(!text.contains("[env:"), "{text}");
        assert!(text.contains("retry --help") && text.contains(MANUAL));
        assert!(!text.contains("man retry"), "{text}");
    }

    #[test]
    fn long_help_has_every_flag_and_ends_with_the_examples() {
        let text = render(command(), true).to_string();
        for arg in command().get_arguments() {
            if arg.is_hide_set() {
                continue;
            }
            if let Some(long) = arg.get_long() {
                assert!(text.contains(&format!("--{long}")), "--{long} missing");
            }
        }
        let examples = text.find("Examples:").unwrap();
        assert!(examples > text.find("--max-retries").unwrap());
        for e in EXAMPLES {
            assert!(text[examples..].contains(e.command));
        }
        assert!(text.contains("75") && text.contains("126, 127"));
    }

    #[test]
    fn long_is_only_for_a_help_flag_before_the_command() {
        let args = |a: &[&str]| -> Vec<std::ffi::OsString> {
            std::iter::once("retry")
                .chain(a.iter().copied())
                .map(Into::into)
                .collect()
        };
        assert!(wants_long(&args(&["--help"])));
        assert!(wants_long(&args(&["-n", "3", "--help"])));
        assert!(!wants_long(&args(&["-h"])));
        assert!(!wants_long(&args(&["--", "x", "--help"])));
    }
}
