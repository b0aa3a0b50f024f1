//! What retry says: progress on stderr (text lines, or JSON events with `--log-format json`),
//! and the `--dry-run` schedule table.
//!
//! Progress names the program, never its arguments (they often hold tokens) unless
//! `--verbose`. `--quiet` silences progress, never errors. Writes to a closed stream are
//! ignored rather than panicking.

use std::ffi::OsString;
use std::io::{self, Write};
use std::time::{Duration, Instant};

use rand::Rng;
use serde_json::{Value, json};

use crate::backoff::{GiveUpRule, Limits, Policy};
use crate::cli::JitterArg;
use crate::codes::signal_name;
use crate::config::{LogFormat, Verbosity};
use crate::duration::format_secs;
use crate::process::{Outcome, StopReason};

/// Rows shown by `--dry-run` when retries are unlimited.
pub const DRY_RUN_UNLIMITED_ROWS: u64 = 20;

/// Progress reporting for one run.
#[derive(Debug)]
pub struct Reporter {
    verbosity: Verbosity,
    format: LogFormat,
    program: String,
    command_line: String,
    max_attempts: Option<u64>,
    start: Instant,
}

/// How a hook ended, for [`Reporter::hook`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HookEnd {
    /// It exited with this status (0: success), or died of a signal (`128 + N`).
    Status(u8),
    /// It could not be started.
    Failed(String),
}

impl Reporter {
    /// A reporter for `command` (program first), with `max_attempts` in all (`None`: unlimited);
    /// elapsed times count from `start`.
    pub fn new(
        verbosity: Verbosity,
        format: LogFormat,
        command: &[OsString],
        max_attempts: Option<u64>,
        start: Instant,
    ) -> Reporter {
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
            format,
            program,
            command_line,
            max_attempts,
            start,
        }
    }

    fn quiet(&self) -> bool {
        self.verbosity == Verbosity::Quiet
    }

    fn verbose(&self) -> bool {
        self.verbosity == Verbosity::Verbose
    }

    fn json(&self) -> bool {
        self.format == LogFormat::Json
    }

    /// A text progress line (not in JSON mode, not with `--quiet`).
    fn say(&self, line: std::fmt::Arguments<'_>) {
        if !self.quiet() && !self.json() {
            let _ = writeln!(io::stderr().lock(), "retry: {line}");
        }
    }

    /// A JSON event (only in JSON mode; `--quiet` silences all but errors): `fields` plus the
    /// event's name and the elapsed seconds.
    fn emit(&self, event: &str, mut fields: Value) {
        if !self.json() || (self.quiet() && event != "error") {
            return;
        }
        let elapsed = (self.start.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
        let mut line = serde_json::Map::new();
        line.insert("event".into(), event.into());
        line.insert("elapsed".into(), elapsed.into());
        if let Value::Object(map) = fields.take() {
            line.extend(map);
        }
        let _ = writeln!(io::stderr().lock(), "{}", Value::Object(line));
    }

    fn attempt_label(&self, attempt: u64) -> String {
        match self.max_attempts {
            Some(m) => format!("attempt {attempt} of {m}"),
            None => format!("attempt {attempt} (unlimited)"),
        }
    }

    /// The run starts: the policy and seed (a text line only with `--verbose`).
    pub fn start(&self, policy: &Policy, seed: u64) {
        if self.verbose() {
            self.say(format_args!(
                "jitter {}, base {}, multiplier {}, cap {}, seed {seed}",
                JitterArg::from(policy.jitter()),
                format_secs(policy.base()),
                policy.multiplier(),
                format_secs(policy.cap()),
            ));
        }
        self.emit(
            "start",
            json!({
                "program": self.program,
                "max_attempts": self.max_attempts,
                "jitter": JitterArg::from(policy.jitter()).to_string(),
                "base": policy.base().as_secs_f64(),
                "multiplier": policy.multiplier(),
                "cap": policy.cap().as_secs_f64(),
                "seed": seed,
            }),
        );
    }

    /// An attempt starts (a text line only with `--verbose`, which also shows the arguments).
    pub fn attempt_start(&self, attempt: u64) {
        if self.verbose() {
            self.say(format_args!(
                "{}: running {}",
                self.attempt_label(attempt),
                self.command_line
            ));
        }
        let mut fields = json!({ "attempt": attempt, "max_attempts": self.max_attempts });
        if self.verbose() {
            fields["command"] = self.command_line.clone().into();
        }
        self.emit("attempt_start", fields);
    }

    /// An attempt ended (a JSON event; text reports only failures, in [`Reporter::failed`]).
    pub fn attempt_end(&self, attempt: u64, outcome: &Outcome, ran: Duration, output_failed: bool) {
        let mut fields = json!({
            "attempt": attempt,
            "status": outcome.status(),
            "duration": (ran.as_secs_f64() * 1000.0).round() / 1000.0,
            "output_failed": output_failed,
        });
        match outcome {
            Outcome::Exited(_) => fields["outcome"] = "exited".into(),
            Outcome::Signaled(n) => {
                fields["outcome"] = "signaled".into();
                fields["signal"] = signal_name(*n).into();
            }
            Outcome::Stopped { reason, killed, .. } => {
                fields["outcome"] = match reason {
                    StopReason::Timeout => "timed_out",
                    StopReason::Deadline => "deadline",
                }
                .into();
                fields["killed"] = (*killed).into();
            }
            Outcome::LaunchFailed { .. } => fields["outcome"] = "launch_failed".into(),
        }
        self.emit("attempt_end", fields);
    }

    /// A failed attempt: how it ended, and the delay before the next one if there is one
    /// (JSON: a `wait` event). `output_failed`: it exited 0 but its output matched
    /// `--retry-if-output`.
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
        let took = if self.verbose() {
            format!(" after {}", format_secs(ran))
        } else {
            String::new()
        };
        match next {
            Some(delay) => {
                self.say(format_args!(
                    "{}: {how}{took}; retrying in {}",
                    self.attempt_label(attempt),
                    format_secs(delay)
                ));
                self.emit(
                    "wait",
                    json!({ "attempt": attempt, "delay": delay.as_secs_f64() }),
                );
            }
            None => self.say(format_args!("{}: {how}{took}", self.attempt_label(attempt))),
        }
    }

    /// Giving up after `attempts`, with `status`, and why.
    pub fn giving_up(&self, attempts: u64, why: &str, status: u8) {
        let s = if attempts == 1 { "" } else { "s" };
        self.say(format_args!("giving up after {attempts} attempt{s}: {why}"));
        self.emit(
            "give_up",
            json!({ "attempts": attempts, "reason": why, "status": status }),
        );
    }

    /// Success after `attempts` (a JSON event; text says nothing).
    pub fn success(&self, attempts: u64) {
        self.emit("success", json!({ "attempts": attempts, "status": 0 }));
    }

    /// retry was told to stop by `signal` (during an attempt, a wait or a hook).
    pub fn interrupted(&self, signal: i32) {
        self.say(format_args!(
            "stopped by {}: not retrying",
            signal_name(signal)
        ));
        self.emit("interrupted", json!({ "signal": signal_name(signal) }));
    }

    /// A hook (`on_retry` or `on_give_up`) ended: failures are reported, successes only with
    /// `--verbose` (always as a JSON event).
    pub fn hook(&self, name: &str, end: &HookEnd) {
        match end {
            HookEnd::Status(0) if self.verbose() => {
                self.say(format_args!("--{} hook succeeded", name.replace('_', "-")));
            }
            HookEnd::Status(0) => {}
            HookEnd::Status(s) => {
                self.say(format_args!(
                    "--{} hook exited with status {s}",
                    name.replace('_', "-")
                ));
            }
            HookEnd::Failed(e) => {
                self.say(format_args!(
                    "--{} hook could not run: {e}",
                    name.replace('_', "-")
                ));
            }
        }
        let fields = match end {
            HookEnd::Status(s) => json!({ "hook": name, "status": s }),
            HookEnd::Failed(e) => json!({ "hook": name, "error": e }),
        };
        self.emit("hook", fields);
    }

    /// An error: printed even with `--quiet` (as a JSON `error` event in JSON mode).
    pub fn error(&self, message: &str) {
        if self.json() {
            self.emit("error", json!({ "message": message }));
        } else {
            let _ = writeln!(io::stderr().lock(), "retry: {message}");
        }
    }

    /// The program could not be launched: an error naming it.
    pub fn launch_failed(&self, message: &str) {
        self.error(&format!("cannot run '{}': {message}", self.program));
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
/// decimals. The retries a real run would grant if every attempt failed at once, by the same
/// [`GiveUpRule`]: at most `max_retries` rows ([`DRY_RUN_UNLIMITED_ROWS`] when unlimited), and no
/// row whose cumulative delay reaches `deadline` (nor any after it).
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
    let limits = Limits {
        max_retries,
        deadline,
    };
    let mut budget = GiveUpRule::new(policy.schedule(), limits);
    let mut total = Duration::ZERO;
    for retry in 1..=rows {
        let Ok(delay) = budget.next_delay(total, None, rng) else {
            break;
        };
        total = total.saturating_add(delay);
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
