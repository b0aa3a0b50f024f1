//! What retry says: progress on stderr (text lines, or JSON events with `--log-format json`),
//! and the `--dry-run` schedule table ([`fn@dry_run`], in `dry_run.rs`). What it says about the
//! splay and the retry budget is in `protect.rs`; about the loop shapes, the lock and
//! `RETRY_ENV_FILE` in `loops.rs`.
//!
//! Progress names the program, never its arguments (they often hold tokens) unless
//! `--verbose`; both are escaped ([`fn@escape`]), so a newline in a name cannot forge a line.
//! `--quiet` silences progress, never errors. Writes to a closed stream are ignored rather than
//! panicking. In JSON, durations are seconds rounded to the microsecond (elapsed times and
//! attempt durations to the millisecond) and the seed is a string, as it may pass 2^53. Every
//! event of a run carries its `run_id` (the `RETRY_RUN_ID` of its attempts).

mod dry_run;
mod escape;
mod loops;
mod protect;
mod stopping;

use std::cell::Cell;
use std::ffi::OsString;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::backoff::{GiveUp, Policy};
use crate::cli::JitterArg;
use crate::codes::signal_name;
use crate::config::{Shape, Verbosity};
use crate::duration::format_human;
use crate::hints::HintSource;
use crate::process::{Outcome, StopReason};
use crate::types::LogFormat;

pub use self::dry_run::{DRY_RUN_UNLIMITED_ROWS, dry_run};
pub use self::escape::escape;
use self::escape::quote;
pub use self::loops::dry_run_loop;
pub use self::stopping::StopPlan;

/// Progress reporting for one run.
#[derive(Debug)]
pub struct Reporter {
    verbosity: Verbosity,
    format: LogFormat,
    /// The program's name, escaped for text lines.
    program: String,
    /// The program's name as it is (JSON escapes it itself).
    program_raw: String,
    command_line: String,
    /// The last attempt the run may make as things stand (`--reset-after` moves it on).
    max_attempts: Cell<Option<u64>>,
    start: Instant,
    /// The run's id, in every JSON event; `None` before a run has one.
    run_id: Option<String>,
    /// `--successes` or `--until-fail`, and `--lock`: for the `start` event (loops.rs).
    shape: Shape,
    lock: Option<std::path::PathBuf>,
}

/// The wait before the next attempt, for [`Reporter::failed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wait {
    /// How long.
    pub delay: Duration,
    /// The server's hint that set it, when one did (it was longer than the backoff delay).
    pub hint: Option<HintSource>,
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
        let program_raw = command
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
            program: escape(&program_raw),
            program_raw,
            command_line,
            max_attempts: Cell::new(max_attempts),
            start,
            run_id: None,
            shape: Shape::Plain,
            lock: None,
        }
    }

    /// This reporter, for a run of `shape` holding `lock` (for the `start` event).
    pub fn with_loop(self, shape: Shape, lock: Option<&std::path::Path>) -> Reporter {
        Reporter {
            shape,
            lock: lock.map(std::path::Path::to_path_buf),
            ..self
        }
    }

    /// This reporter, naming `run_id` in every JSON event.
    pub fn with_run_id(self, run_id: &str) -> Reporter {
        Reporter {
            run_id: Some(run_id.to_string()),
            ..self
        }
    }

    /// From now on the run may make attempts up to number `max_attempts` (`None`: unlimited):
    /// `--reset-after` started the count afresh.
    pub fn set_max_attempts(&self, max_attempts: Option<u64>) {
        self.max_attempts.set(max_attempts);
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
            write_line(&format!("retry: {line}"));
        }
    }

    /// A JSON event (only in JSON mode; `--quiet` silences all but errors): `fields` plus the
    /// event's name and the elapsed seconds.
    /// Whether `event` is printed: JSON format, and not silenced by `--quiet`. Callers skip
    /// building the fields of an event that is not.
    fn emits(&self, event: &str) -> bool {
        self.json() && !(self.quiet() && event != "error")
    }

    fn emit(&self, event: &str, fields: Value) {
        if !self.emits(event) {
            return;
        }
        emit_json(event, self.start.elapsed(), self.run_id.as_deref(), fields);
    }

    fn attempt_label(&self, attempt: u64) -> String {
        match self.max_attempts.get() {
            Some(m) => format!("attempt {attempt} of {m}"),
            None => format!("attempt {attempt} (unlimited)"),
        }
    }

    /// The run starts: the policy in effect, the limits (`deadline`, `timeout`: `None` when
    /// not set) and the seed (a text line only with `--verbose`).
    pub fn start(
        &self,
        policy: &Policy,
        deadline: Option<Duration>,
        timeout: Option<Duration>,
        seed: u64,
        stop: &StopPlan,
    ) {
        let max_retries = self.max_attempts.get().map(|m| m.saturating_sub(1));
        if self.verbose() {
            let or_none = |d: Option<Duration>| d.map_or("none".to_string(), format_human);
            self.say(format_args!(
                "jitter {}, {}, retries {}, deadline {}, timeout {}, seed {seed}, stop {}{}",
                JitterArg::from(policy.jitter()),
                loops::curve_text(policy),
                max_retries.map_or("unlimited".to_string(), |n| n.to_string()),
                or_none(deadline),
                or_none(timeout),
                stop.escalation(),
                if stop.preserve {
                    ", preserve status"
                } else {
                    ""
                },
            ));
        }
        if !self.emits("start") {
            return;
        }
        let mut fields = json!({
            "program": self.program_raw,
            "max_attempts": self.max_attempts.get(),
            "max_retries": max_retries,
            "jitter": JitterArg::from(policy.jitter()).to_string(),
            "base": micros(policy.base()),
            "multiplier": policy.multiplier(),
            "cap": micros(policy.cap()),
            "deadline": deadline.map(micros),
            "timeout": timeout.map(micros),
            "seed": seed.to_string(),
            "signal": stop.signal.to_string(),
            "kill_after": micros(stop.kill_after),
            "preserve_status": stop.preserve,
        });
        if let (Value::Object(map), Value::Object(more)) = (
            &mut fields,
            loops::start_fields(policy, self.shape, self.lock.as_deref()),
        ) {
            map.extend(more);
        }
        self.emit("start", fields);
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
        if !self.emits("attempt_start") {
            return;
        }
        let mut fields = json!({ "attempt": attempt, "max_attempts": self.max_attempts.get() });
        if self.verbose() {
            fields["command"] = self.command_line.clone().into();
        }
        self.emit("attempt_start", fields);
    }

    /// An attempt ended (a JSON event; text reports only failures, in [`Reporter::failed`]).
    pub fn attempt_end(&self, attempt: u64, outcome: &Outcome, ran: Duration, output_failed: bool) {
        if !self.emits("attempt_end") {
            return;
        }
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
                    StopReason::Idle(_) => "idle",
                }
                .into();
                fields["killed"] = (*killed).into();
            }
            Outcome::LaunchFailed { .. } => fields["outcome"] = "launch_failed".into(),
        }
        self.emit("attempt_end", fields);
    }

    /// A failed attempt: how it ended, and the wait before the next one if there is one
    /// (JSON: a `wait` event, whose `hint` names the server's hint that set the delay, or is
    /// null). `output_failed`: it exited 0 but its output matched `--retry-if-output`.
    pub fn failed(
        &self,
        attempt: u64,
        outcome: &Outcome,
        ran: Duration,
        next: Option<Wait>,
        output_failed: bool,
    ) {
        let mut how = describe(&self.program, outcome);
        if output_failed {
            how.push_str(" but its output matched --retry-if-output");
        }
        let took = if self.verbose() {
            format!(" after {}", format_human(ran))
        } else {
            String::new()
        };
        match next {
            Some(Wait { delay, hint }) => {
                let named = hint.map(|h| format!(" ({h})")).unwrap_or_default();
                self.say(format_args!(
                    "{}: {how}{took}; retrying in {}{named}",
                    self.attempt_label(attempt),
                    format_human(delay)
                ));
                self.emit(
                    "wait",
                    json!({
                        "attempt": attempt,
                        "delay": micros(delay),
                        "hint": hint.map(|h| h.to_string()),
                    }),
                );
            }
            None => self.say(format_args!("{}: {how}{took}", self.attempt_label(attempt))),
        }
    }

    /// Attempt `attempt` ran for `ran`, at least `reset_after`, before it failed: the schedule
    /// starts afresh (JSON: a `reset` event).
    pub fn reset(&self, attempt: u64, ran: Duration, reset_after: Duration) {
        self.say(format_args!(
            "attempt {attempt} ran for {}, at least --reset-after ({}): the backoff and the \
             retry count start afresh",
            format_human(ran),
            format_human(reset_after)
        ));
        self.emit(
            "reset",
            json!({ "attempt": attempt, "duration": (ran.as_secs_f64() * 1000.0).round() / 1000.0 }),
        );
    }

    /// Giving up after `attempts`, with `status`, and why: the closing line, with the time
    /// the run took (`gave up after 6 attempts in 1m 3s: no retries left`).
    pub fn giving_up(&self, attempts: u64, why: &str, status: u8) {
        let s = if attempts == 1 { "" } else { "s" };
        self.say(format_args!(
            "gave up after {attempts} attempt{s} in {}: {why}",
            format_human(self.start.elapsed())
        ));
        self.emit(
            "give_up",
            json!({ "attempts": attempts, "reason": why, "status": status }),
        );
    }

    /// Success on attempt `attempts`: the closing line when the run needed more than one
    /// attempt, or with `--verbose` (`succeeded on attempt 3 of 6 after 12.4s`, the time the
    /// run took); a JSON event.
    pub fn success(&self, attempts: u64) {
        if attempts > 1 || self.verbose() {
            let label = match self.max_attempts.get() {
                Some(m) => format!("attempt {attempts} of {m}"),
                None => format!("attempt {attempts}"),
            };
            self.say(format_args!(
                "succeeded on {label} after {}",
                format_human(self.start.elapsed())
            ));
        }
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
        match (self.format, &self.run_id) {
            (LogFormat::Json, Some(id)) => emit_json(
                "error",
                self.start.elapsed(),
                Some(id),
                json!({ "message": message }),
            ),
            _ => error(self.format, self.start, message),
        }
    }

    /// The program could not be launched: an error naming it.
    pub fn launch_failed(&self, message: &str) {
        self.error(&format!("cannot run '{}': {message}", self.program));
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
            ..
        } => {
            let what = match reason {
                StopReason::Timeout => {
                    format!("{program} timed out after {}", format_human(*after))
                }
                StopReason::Deadline => format!("{program} was stopped at the deadline"),
                StopReason::Idle(quiet) => {
                    format!("{program} was idle: no output for {}", format_human(*quiet))
                }
            };
            let kill = if *killed { ", KILL needed" } else { "" };
            format!("{what}{kill} (status {status})")
        }
        Outcome::LaunchFailed { message, .. } => {
            format!("{program} could not be run: {message} (status {status})")
        }
    }
}

/// Prints an error on stderr, on one line, in `format`: `retry: MESSAGE`, or a JSON `error`
/// event with the seconds elapsed since `start`. For errors before a [`Reporter`] exists.
pub fn error(format: LogFormat, start: Instant, message: &str) {
    match format {
        LogFormat::Json => emit_json(
            "error",
            start.elapsed(),
            None,
            json!({ "message": message }),
        ),
        LogFormat::Text => write_line(&format!("retry: {message}")),
    }
}

/// Writes one of retry's own text lines on stderr, through [`crate::outlet`] (never waiting
/// for a reader past a stop signal or the deadline). Line breaks become spaces, and every other
/// character that must not reach a terminal raw (control characters: ESC, BEL, an OSC
/// sequence's start; bidirectional controls) is escaped ([`fn@escape`]), whatever part of the
/// message it came from: a server's reply, a stored value, a file name. A write that fails is
/// dropped: stderr is where its error would go.
pub(crate) fn write_line(text: &str) {
    let mut line = escape(&without_os_error(&one_line(text)));
    line.push('\n');
    let _ = crate::outlet::stderr(line.as_bytes());
}

/// Writes one JSON event line on stderr: the event's name, `elapsed` (seconds, rounded to the
/// millisecond), the run's id when there is one, then `fields`.
fn emit_json(event: &str, elapsed: Duration, run_id: Option<&str>, mut fields: Value) {
    let mut line = serde_json::Map::new();
    line.insert("event".into(), event.into());
    line.insert(
        "elapsed".into(),
        ((elapsed.as_secs_f64() * 1000.0).round() / 1000.0).into(),
    );
    if let Some(id) = run_id {
        line.insert("run_id".into(), id.into());
    }
    if let Value::Object(map) = fields.take() {
        line.extend(map);
    }
    let mut text = without_os_error(&Value::Object(line).to_string()).into_owned();
    text.push('\n');
    // serde_json escapes every control character; a failed write is dropped (see write_line).
    let _ = crate::outlet::stderr(text.as_bytes());
}

/// A duration for JSON: seconds rounded to the microsecond.
fn micros(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e6
}

/// `message` without the ` (os error N)` that Rust's I/O errors add to the system's own words
/// ("No such file or directory (os error 2)"): the words are for people, the number is not.
fn without_os_error(message: &str) -> std::borrow::Cow<'_, str> {
    const MARK: &str = " (os error ";
    if !message.contains(MARK) {
        return message.into();
    }
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find(MARK) {
        let after = &rest[at + MARK.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(')') {
            out.push_str(&rest[..at]);
            rest = &after[digits + 1..];
        } else {
            out.push_str(&rest[..at + MARK.len()]);
            rest = after;
        }
    }
    out.push_str(rest);
    out.into()
}

/// `message` with every line break replaced by a space: one line whatever it quotes.
fn one_line(message: &str) -> std::borrow::Cow<'_, str> {
    if message.contains(['\n', '\r']) {
        message.replace(['\n', '\r'], " ").into()
    } else {
        message.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_error_numbers_are_dropped_and_nothing_else() {
        assert_eq!(
            without_os_error("cannot run 'x': No such file or directory (os error 2); next"),
            "cannot run 'x': No such file or directory; next"
        );
        assert_eq!(without_os_error("a (os error x) b"), "a (os error x) b");
        assert_eq!(
            without_os_error("one (os error 24) two (os error 11)"),
            "one two"
        );
    }

    #[test]
    fn rounds_delays_to_microseconds() {
        assert_eq!(micros(Duration::from_nanos(412_345_678)), 0.412346);
        assert_eq!(micros(Duration::from_millis(10)), 0.01);
    }
}
