//! What retry says: progress lines on stderr, and the `--dry-run` schedule table.
//!
//! Progress lines name the program, never its arguments (they often hold tokens) unless
//! `--verbose`. `--quiet` silences progress, never errors. Writes to a closed stream are
//! ignored rather than panicking.

use std::ffi::OsString;
use std::io::{self, Write};
use std::time::Duration;

use rand::Rng;

use crate::backoff::Policy;
use crate::codes::signal_name;
use crate::config::Verbosity;
use crate::duration::format_secs;
use crate::process::{Outcome, StopReason};

/// Rows shown by `--dry-run` when retries are unlimited.
pub const DRY_RUN_UNLIMITED_ROWS: u64 = 20;

/// Progress reporting for one run.
#[derive(Debug)]
pub struct Reporter {
    verbosity: Verbosity,
    program: String,
    command_line: String,
    max_attempts: Option<u64>,
}

impl Reporter {
    /// A reporter for `command` (program first), with `max_attempts` in all (`None`: unlimited).
    pub fn new(verbosity: Verbosity, command: &[OsString], max_attempts: Option<u64>) -> Reporter {
        let program = command
            .first()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let command_line = command
            .iter()
            .map(|a| quote(&a.to_string_lossy()))
            .collect::<Vec<_>>()
            .join(" ");
        Reporter {
            verbosity,
            program,
            command_line,
            max_attempts,
        }
    }

    fn say(&self, line: std::fmt::Arguments<'_>) {
        if self.verbosity != Verbosity::Quiet {
            let _ = writeln!(io::stderr().lock(), "retry: {line}");
        }
    }

    fn attempt_label(&self, attempt: u64) -> String {
        match self.max_attempts {
            Some(m) => format!("attempt {attempt} of {m}"),
            None => format!("attempt {attempt} (unlimited)"),
        }
    }

    /// `--verbose`: the policy and seed, once.
    pub fn policy(&self, policy: &Policy, seed: u64) {
        if self.verbosity == Verbosity::Verbose {
            self.say(format_args!(
                "jitter {}, base {}, multiplier {}, cap {}, seed {seed}",
                policy.jitter(),
                format_secs(policy.base()),
                policy.multiplier(),
                format_secs(policy.cap()),
            ));
        }
    }

    /// `--verbose`: an attempt starts.
    pub fn starting(&self, attempt: u64) {
        if self.verbosity == Verbosity::Verbose {
            self.say(format_args!(
                "{}: running {}",
                self.attempt_label(attempt),
                self.command_line
            ));
        }
    }

    /// A failed attempt: how it ended, and the delay before the next one if there is one.
    /// `output_failed`: it exited 0 but its output matched `--retry-if-output`.
    pub fn failed(
        &self,
        attempt: u64,
        outcome: &Outcome,
        ran: Duration,
        next: Option<Duration>,
        output_failed: bool,
    ) {
        let mut how = describe(&self.program, outcome);
        if output_failed {
            how.push_str(" but its output matched --retry-if-output");
        }
        let took = if self.verbosity == Verbosity::Verbose {
            format!(" after {}", format_secs(ran))
        } else {
            String::new()
        };
        match next {
            Some(delay) => self.say(format_args!(
                "{}: {how}{took}; retrying in {}",
                self.attempt_label(attempt),
                format_secs(delay)
            )),
            None => self.say(format_args!("{}: {how}{took}", self.attempt_label(attempt))),
        }
    }

    /// Giving up, and why.
    pub fn giving_up(&self, attempts: u64, why: &str) {
        let s = if attempts == 1 { "" } else { "s" };
        self.say(format_args!("giving up after {attempts} attempt{s}: {why}"));
    }

    /// retry was told to stop by `signal` (during an attempt or a wait).
    pub fn interrupted(&self, signal: i32) {
        self.say(format_args!(
            "stopped by {}: not retrying",
            signal_name(signal)
        ));
    }

    /// The program could not be launched: an error, printed even with `--quiet`.
    pub fn launch_failed(&self, message: &str) {
        let _ = writeln!(
            io::stderr().lock(),
            "retry: cannot run '{}': {message}",
            self.program
        );
    }
}

/// How an attempt ended, in words, with its status number.
fn describe(program: &str, outcome: &Outcome) -> String {
    let status = outcome.status();
    match outcome {
        Outcome::Exited(c) => format!("{program} exited with status {c}"),
        Outcome::Signaled(n) => {
            format!(
                "{program} was killed by {} (status {status})",
                signal_name(*n)
            )
        }
        Outcome::Stopped {
            reason,
            killed,
            after,
        } => {
            let what = match reason {
                StopReason::Timeout => {
                    format!("{program} timed out after {}", format_secs(*after))
                }
                StopReason::Deadline => format!("{program} was stopped at the deadline"),
            };
            let kill = if *killed { ", KILL needed" } else { "" };
            format!("{what}{kill} (status {status})")
        }
        Outcome::LaunchFailed { message, .. } => {
            format!("{program} could not be run: {message} (status {status})")
        }
    }
}

/// Quotes an argument for display when it holds characters a shell would treat specially.
fn quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// Writes the `--dry-run` table: a header line beginning with `retry`, then one row per planned
/// retry: its number (from 1), the delay and the cumulative delay, as seconds with three
/// decimals. At most `max_retries` rows, or [`DRY_RUN_UNLIMITED_ROWS`] when unlimited; a row
/// whose cumulative delay reaches `deadline` is not shown (nor any after it).
///
/// # Errors
/// Write errors from `out` (a closed pipe, say).
pub fn dry_run<W: Write, R: Rng + ?Sized>(
    out: &mut W,
    policy: &Policy,
    max_retries: Option<u64>,
    deadline: Option<Duration>,
    rng: &mut R,
) -> io::Result<()> {
    writeln!(out, "{:<6} {:>12} {:>14}", "retry", "delay", "cumulative")?;
    let rows = max_retries.unwrap_or(DRY_RUN_UNLIMITED_ROWS);
    let mut schedule = policy.schedule();
    let mut total = Duration::ZERO;
    for retry in 1..=rows {
        let delay = schedule.next_delay(rng);
        total = total.saturating_add(delay);
        if deadline.is_some_and(|d| total >= d) {
            break;
        }
        writeln!(
            out,
            "{retry:<6} {:>12} {:>14}",
            format_secs(delay),
            format_secs(total)
        )?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_when_needed() {
        assert_eq!(
            quote("https://x.example/a?b=c"),
            "'https://x.example/a?b=c'"
        );
        assert_eq!(quote("-fsS"), "-fsS");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
    }
}
