//! The reporter of one run: what it knows of the run (the program, the attempts allowed, the
//! start, the run's id, the loop's shape), the run's one [`Writer`] it says everything through,
//! and how it says a line or an event; the errors. What it says of the run as it goes is in
//! `attempts.rs`, `loops.rs` and `protect.rs`.

use std::cell::Cell;
use std::ffi::OsString;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::lines::json_line;
use super::writer::Writer;
use crate::escape::{escape, quote};
use crate::types::{LogFormat, Shape, Verbosity};

/// Progress reporting for one run.
#[derive(Debug)]
pub struct Reporter {
    /// retry's one writer of its own words for the run (the verbosity and format are its).
    pub(super) writer: Writer,
    /// The program's name, escaped for text lines.
    pub(super) program: String,
    /// The program's name as it is (JSON escapes it itself).
    pub(super) program_raw: String,
    pub(super) command_line: String,
    /// The last attempt the run may make as things stand (`--reset-after` moves it on).
    pub(super) max_attempts: Cell<Option<u64>>,
    pub(super) start: Instant,
    /// The run's id, in every JSON event; `None` before a run has one.
    pub(super) run_id: Option<String>,
    /// `--successes` or `--until-fail`, and `--lock`: for the `start` event (loops.rs).
    pub(super) shape: Shape,
    pub(super) lock: Option<std::path::PathBuf>,
    /// The number of the last attempt launched (`--forever`'s closing words count restarts).
    pub(super) runs: Cell<u64>,
    /// The HTTP status of the last attempt's last response (`--http-hints`), if one was read.
    pub(super) last_http: Cell<Option<u16>>,
    /// Whether the run is waiting for another run's `--lock` (between `lock_waiting` and
    /// `lock_held` or `lock_busy`): a stop then says so.
    pub(super) waiting_for_lock: Cell<bool>,
}

impl Reporter {
    /// A reporter for `command` (program first), with `max_attempts` in all (`None`: unlimited),
    /// that says everything through the run's `writer`; elapsed times count from `start`.
    pub fn new(
        writer: Writer,
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
            writer,
            program: escape(&program_raw),
            program_raw,
            command_line,
            max_attempts: Cell::new(max_attempts),
            start,
            run_id: None,
            shape: Shape::Plain,
            lock: None,
            runs: Cell::new(0),
            last_http: Cell::new(None),
            waiting_for_lock: Cell::new(false),
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

    /// The run's writer: for what the run writes of retry's own besides the reporter's lines
    /// (CI markers, [`Writer::raw`]), the countdown's frames and settling, `--chronic`'s hold
    /// and the patience of writes.
    pub fn writer(&self) -> &Writer {
        &self.writer
    }

    pub(super) fn quiet(&self) -> bool {
        self.writer.verbosity() == Verbosity::Quiet
    }

    pub(super) fn verbose(&self) -> bool {
        self.writer.verbosity() == Verbosity::Verbose
    }

    pub(super) fn json(&self) -> bool {
        self.writer.format() == LogFormat::Json
    }

    /// A text progress line (not in JSON mode, not with `--quiet`).
    pub(super) fn say(&self, line: std::fmt::Arguments<'_>) {
        if self.speaks() {
            self.writer.line(&format!("retry: {line}"));
        }
    }

    /// Whether text progress lines are printed: text format, not `--quiet`.
    pub(super) fn speaks(&self) -> bool {
        !self.quiet() && !self.json()
    }

    /// A text progress line in `style` (after the `retry: ` prefix, which stays plain).
    pub(super) fn say_in(&self, style: anstyle::Style, line: &str) {
        if self.speaks() {
            self.writer
                .spans(&[(anstyle::Style::new(), "retry: "), (style, line)]);
        }
    }

    /// Whether `event` is printed: JSON format, and not silenced by `--quiet`. Callers skip
    /// building the fields of an event that is not.
    pub(super) fn emits(&self, event: &str) -> bool {
        self.json() && !(self.quiet() && event != "error")
    }

    /// A JSON event (only in JSON mode; `--quiet` silences all but errors): `fields` plus the
    /// event's name and the elapsed seconds.
    pub(super) fn emit(&self, event: &str, fields: Value) {
        if !self.emits(event) {
            return;
        }
        self.writer
            .event(event, self.start.elapsed(), self.run_id.as_deref(), fields);
    }

    pub(super) fn attempt_label(&self, attempt: u64) -> String {
        match self.max_attempts.get() {
            Some(m) => format!("attempt {attempt} of {m}"),
            None => format!("attempt {attempt} (unlimited)"),
        }
    }

    /// The command as a CI step summary names it: the program, or with `--verbose` the whole
    /// command line (quoted as `--verbose` shows it), not yet escaped.
    pub fn command_for_summary(&self) -> &str {
        if self.verbose() {
            &self.command_line
        } else {
            &self.program_raw
        }
    }

    /// `attempt N of M`, or `attempt N (unlimited)`: how folds and lines name attempt `n`.
    pub fn label(&self, attempt: u64) -> String {
        self.attempt_label(attempt)
    }

    /// An error: printed even with `--quiet` (as a JSON `error` event in JSON mode).
    pub fn error(&self, message: &str) {
        match (self.writer.format(), &self.run_id) {
            (LogFormat::Json, Some(id)) => self.writer.event(
                "error",
                self.start.elapsed(),
                Some(id),
                json!({ "message": message }),
            ),
            _ => write_error(&self.writer, self.start, message),
        }
    }

    /// The program could not be launched: an error naming it.
    pub fn launch_failed(&self, message: &str) {
        self.error(&format!("cannot run '{}': {message}", self.program));
    }
}

/// The line [`Reporter::error`] would write for `message` now (uncoloured), for a process
/// that says it later without the reporter: the relay of [`crate::process::relay`].
pub fn error_line(reporter: &Reporter, message: &str) -> Vec<u8> {
    match reporter.writer.format() {
        LogFormat::Json => json_line(
            "error",
            reporter.start.elapsed(),
            reporter.run_id.as_deref(),
            json!({ "message": message }),
        ),
        LogFormat::Text => format!("retry: {message}\n").into_bytes(),
    }
}

/// Prints an error on stderr, on one line, in `format`: `retry: MESSAGE`, or a JSON `error`
/// event with the seconds elapsed since `start`. For errors before a [`Reporter`] exists: said
/// through a writer made on the spot ([`Writer::plain`]).
pub fn error(format: LogFormat, start: Instant, message: &str) {
    write_error(&Writer::plain(format), start, message);
}

/// Writes an error through `writer`, on one line, in its format, without a run's id: `retry:
/// MESSAGE`, or a JSON `error` event with the seconds elapsed since `start`.
fn write_error(writer: &Writer, start: Instant, message: &str) {
    match writer.format() {
        LogFormat::Json => writer.event(
            "error",
            start.elapsed(),
            None,
            json!({ "message": message }),
        ),
        LogFormat::Text => writer.line(&format!("retry: {message}")),
    }
}

/// A duration for JSON: seconds rounded to the microsecond.
pub(super) fn micros(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_delays_to_microseconds() {
        assert_eq!(micros(Duration::from_nanos(412_345_678)), 0.412346);
        assert_eq!(micros(Duration::from_millis(10)), 0.01);
    }
}
