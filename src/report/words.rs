//! How things ended, in the words of retry's lines (and of the step summary's table): an
//! attempt's outcome, and why the give-up rule grants no further retry.

use crate::codes::signal_name;
use crate::duration::format_human;
use crate::process::{Outcome, StopReason};
use retry_tool_backoff::GiveUp;

/// How an attempt ended, without the program's name (`exited with status 22`, `timed out
/// after 5s (status 124)`); `output_failed`: it exited 0 but its output matched
/// `--retry-if-output`.
pub fn outcome_words(outcome: &Outcome, output_failed: bool) -> String {
    let mut words = predicate(outcome);
    if output_failed {
        words.push_str(" but its output matched --retry-if-output");
    }
    words
}

/// How an attempt of `program` ended, in words, with its status number.
pub(super) fn describe(program: &str, outcome: &Outcome) -> String {
    format!("{program} {}", predicate(outcome))
}

fn predicate(outcome: &Outcome) -> String {
    let status = outcome.status();
    match outcome {
        Outcome::Exited(c) => format!("exited with status {c}"),
        Outcome::Signaled(n) => {
            format!("was killed by {} (status {status})", signal_name(*n))
        }
        Outcome::Stopped {
            reason,
            killed,
            after,
            ..
        } => {
            let what = match reason {
                StopReason::Timeout => format!("timed out after {}", format_human(*after)),
                StopReason::Deadline => "was stopped at the deadline".to_string(),
                StopReason::Idle(quiet) => {
                    format!("was idle: no output for {}", format_human(*quiet))
                }
            };
            let kill = if *killed { ", KILL needed" } else { "" };
            format!("{what}{kill} (status {status})")
        }
        Outcome::LaunchFailed { message, .. } => {
            format!("could not be run: {message} (status {status})")
        }
    }
}

/// Why the give-up rule grants no further retry, in the words of the closing line (durations
/// in [`format_human`]'s form, where the crate's own `Display` keeps seconds).
pub fn give_up_reason(why: GiveUp) -> String {
    match why {
        GiveUp::DelayPastDeadline(delay) => format!(
            "the next delay ({}) would end at or past the deadline",
            format_human(delay)
        ),
        other => other.to_string(),
    }
}
