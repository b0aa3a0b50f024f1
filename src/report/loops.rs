//! What retry says about the loop shapes, the lock and `RETRY_ENV_FILE`: the policy of
//! `--delays`, each success of a `--successes` streak and its end, each run of `--until-fail`
//! and which one failed, waiting for `--lock` and finding it busy, the variables an attempt
//! handed on; and their lines in `--dry-run`.
//!
//! JSON events: `streak` (a success of a streak not yet complete, with the wait before the next
//! attempt), `success` with `successes` (the streak, once complete), `rerun` (a success of
//! `--until-fail`, with the wait before the next run), `until_fail` (the end of it: `failed`
//! with the run and its status, or `no_failure` with the runs and the reason), `lock`
//! (`waiting`, `held` or `busy`, with the holder's pid when known), `env_file` (the names an
//! attempt or hook set, never their values). The `start` event carries `delays`, `successes`,
//! `until_fail` and `lock` when they are set.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::dry_run::NoteAbout;
use super::reporter::{Reporter, micros};
use super::words::describe;
use crate::duration::{format_exact, format_human};
use crate::escape::escape;
use crate::process::Outcome;
use crate::status::TEMP_FAIL;
use crate::types::Shape;
use retry_tool_backoff::Policy;

/// The curve of `policy` before jitter, for the `--verbose` start line: `base 1s,
/// multiplier 2, cap 1m 4s`, or `delays 1s,5s (the last repeating)`.
pub(super) fn curve_text(policy: &Policy) -> String {
    match policy.delays() {
        Some(delays) => format!("delays {} (the last repeating)", list_text(&delays)),
        None => format!(
            "base {}, multiplier {}, cap {}",
            format_human(policy.base()),
            policy.multiplier(),
            format_human(policy.cap())
        ),
    }
}

/// Delays as `1s,5s`.
fn list_text(delays: &[Duration]) -> String {
    delays
        .iter()
        .map(|&d| format_human(d))
        .collect::<Vec<_>>()
        .join(",")
}

/// A path as retry's lines show it: escaped, so that a newline in it cannot forge a line.
fn shown(path: &Path) -> String {
    escape(&path.display().to_string())
}

/// The loop's fields of the `start` event: `delays` (seconds), `successes`, `until_fail`,
/// `forever`, `lock`, each only when set.
pub(super) fn start_fields(policy: &Policy, shape: Shape, lock: Option<&Path>) -> Value {
    let mut fields = serde_json::Map::new();
    if let Some(delays) = policy.delays() {
        fields.insert(
            "delays".into(),
            delays.iter().map(|&d| micros(d)).collect::<Vec<_>>().into(),
        );
    }
    match shape {
        Shape::Streak(n) => {
            fields.insert("successes".into(), n.into());
        }
        Shape::UntilFail => {
            fields.insert("until_fail".into(), true.into());
        }
        Shape::Forever => {
            fields.insert("forever".into(), true.into());
        }
        Shape::Plain => {}
    }
    if let Some(path) = lock {
        fields.insert("lock".into(), path.to_string_lossy().into());
    }
    Value::Object(fields)
}

impl Reporter {
    /// Attempt `attempt` succeeded, the `successes`-th in a row of the `needed`; the next
    /// attempt comes after `delay` (JSON: a `streak` event).
    pub fn streak(&self, attempt: u64, successes: u64, needed: u64, delay: Duration) {
        self.say(format_args!(
            "{}: {} succeeded, {successes} of {needed} in a row; next attempt in {}",
            self.attempt_label(attempt),
            self.program,
            format_human(delay)
        ));
        self.emit(
            "streak",
            json!({
                "attempt": attempt,
                "successes": successes,
                "needed": needed,
                "delay": micros(delay),
            }),
        );
    }

    /// The streak is complete: attempt `attempt` was the `needed`-th success in a row (the
    /// closing line; JSON: `success` with `successes`).
    pub fn streak_done(&self, attempt: u64, needed: u64) {
        let first = attempt.saturating_sub(needed - 1);
        self.say(format_args!(
            "{} succeeded {needed} times in a row, on attempts {first} to {}, after {}",
            self.program,
            self.attempt_label(attempt).trim_start_matches("attempt "),
            format_human(self.start.elapsed())
        ));
        self.emit(
            "success",
            json!({
                "attempts": attempt,
                "max_attempts": self.max_attempts.get(),
                "first_attempt": first,
                "status": 0,
                "successes": needed,
            }),
        );
    }

    /// `--until-fail`: run `attempt` succeeded and the next one comes after `delay` (JSON: a
    /// `rerun` event).
    pub fn rerun(&self, attempt: u64, delay: Duration) {
        self.say(format_args!(
            "{}: {} succeeded; running it again in {}",
            self.run_label(attempt),
            self.program,
            format_human(delay)
        ));
        self.emit(
            "rerun",
            json!({ "attempt": attempt, "delay": micros(delay) }),
        );
    }

    /// `--until-fail`: run `attempt` failed as `outcome` says (the closing line, printed even
    /// with `--quiet`, as an error is; JSON: `until_fail` with `failed`).
    pub fn until_fail_failed(&self, attempt: u64, outcome: &Outcome, output_failed: bool) {
        let mut how = describe(&self.program, outcome);
        if output_failed {
            how.push_str(" but its output matched --retry-if-output");
        }
        let line = format!(
            "failed on {} after {}: {how}",
            self.run_label(attempt),
            format_human(self.start.elapsed())
        );
        if !self.json() {
            self.writer.line(&format!("retry: {line}"));
        }
        let status = if output_failed { 1 } else { outcome.status() };
        if self.json() {
            self.writer.event(
                "until_fail",
                self.start.elapsed(),
                self.run_id.as_deref(),
                json!({ "outcome": "failed", "attempt": attempt, "status": status }),
            );
        }
    }

    /// `--until-fail` ends without a failure after `runs` runs, for `why` (the closing line;
    /// JSON: `until_fail` with `no_failure`).
    pub fn until_fail_none(&self, runs: u64, why: &str) {
        let s = if runs == 1 { "" } else { "s" };
        self.say(format_args!(
            "no failure in {runs} run{s} after {}: {why}",
            format_human(self.start.elapsed())
        ));
        self.emit(
            "until_fail",
            json!({ "outcome": "no_failure", "runs": runs, "reason": why, "status": 0 }),
        );
    }

    /// `run 4 of 201`, as `--until-fail` numbers its attempts.
    fn run_label(&self, attempt: u64) -> String {
        self.attempt_label(attempt).replacen("attempt", "run", 1)
    }

    /// `--lock PATH` is held by another process (pid `holder`, when PATH names a live one): waiting up to
    /// `wait` ([`Duration::MAX`]: without end) for it (JSON: `lock` with `waiting`).
    pub fn lock_waiting(&self, path: &Path, holder: Option<u32>, wait: Duration) {
        let by = holder.map_or("another process".to_string(), |pid| format!("pid {pid}"));
        let up_to = if wait == Duration::MAX {
            "as long as it takes".to_string()
        } else {
            format!("up to {}", format_human(wait))
        };
        self.waiting_for_lock.set(true);
        self.say(format_args!(
            "--lock {} is held by {by}: waiting {up_to}",
            shown(path)
        ));
        self.emit(
            "lock",
            json!({ "state": "waiting", "path": path.to_string_lossy(), "holder": holder }),
        );
    }

    /// The run holds `--lock PATH`, after waiting `waited` (a text line only with
    /// `--verbose`; JSON: `lock` with `held`).
    pub fn lock_held(&self, path: &Path, waited: Duration) {
        self.waiting_for_lock.set(false);
        if self.verbose() {
            self.say(format_args!(
                "holding --lock {} (waited {})",
                shown(path),
                format_human(waited)
            ));
        }
        self.emit(
            "lock",
            json!({ "state": "held", "path": path.to_string_lossy(), "waited": micros(waited) }),
        );
    }

    /// `--lock PATH` stayed busy: the run ends with 75 without running the command, for `why`
    /// (one line; JSON: `lock` with `busy`).
    pub fn lock_busy(&self, path: &Path, holder: Option<u32>, why: &str) {
        self.waiting_for_lock.set(false);
        self.say(format_args!(
            "{why}: not running {} (status {TEMP_FAIL})",
            self.program
        ));
        self.emit(
            "lock",
            json!({
                "state": "busy",
                "path": path.to_string_lossy(),
                "holder": holder,
                "reason": why,
                "status": TEMP_FAIL,
            }),
        );
    }

    /// `RETRY_ENV_FILE` cannot be offered to the attempts, for `why` (a text line only with
    /// `--verbose`; JSON: `env_file` with `unavailable`).
    pub fn env_file_unavailable(&self, why: &str) {
        if self.verbose() {
            self.say(format_args!(
                "{}",
                super::problems::problem_words(
                    &crate::observe::problems::Problem::EnvFileUnavailable(why)
                )
            ));
        }
        self.emit("env_file", json!({ "unavailable": why }));
    }

    /// `after` (`attempt 3`, `--on-retry`) set or changed these variables through
    /// `RETRY_ENV_FILE` (names only, never values; a text line only with `--verbose`; JSON:
    /// `env_file`).
    pub fn env_file_set(&self, after: &str, names: &[String]) {
        if self.verbose() {
            self.say(format_args!(
                "{after} set {} through RETRY_ENV_FILE, for the attempts and hooks that follow",
                names.join(", ")
            ));
        }
        self.emit("env_file", json!({ "after": after, "set": names }));
    }
}

/// The line `--dry-run` adds for `--transient`'s rule: which failures are retried.
pub fn transient_note(classes: crate::transient::Classes) -> String {
    format!(
        "only failures known to be transient are retried ({classes}); any other ends the run \
         at once with its status"
    )
}

/// The lines `--dry-run` adds after its table for the loop's `shape` and `lock` (the lock
/// file and how long to wait for it), if any, each as what it is about and its words;
/// `first_delay` is the policy's first delay before jitter (its base), the wait between the
/// successes of a streak; `reset_after` is `--reset-after`, which `--forever`'s line states.
/// Durations exactly to the millisecond, as in the table.
pub fn dry_run_loop(
    shape: Shape,
    first_delay: Duration,
    reset_after: Option<Duration>,
    lock: Option<(&Path, Duration)>,
) -> Vec<(NoteAbout, String)> {
    let mut notes = Vec::new();
    match shape {
        Shape::Streak(n) => notes.push((
            NoteAbout::Successes,
            format!(
                "{n} in a row, each {} after the last (the first delay, without jitter); the \
                 retries above follow failures",
                format_exact(first_delay)
            ),
        )),
        Shape::UntilFail => notes.push((
            NoteAbout::UntilFail,
            "the retries above follow successes; the first failure ends the run".into(),
        )),
        Shape::Forever => notes.push((
            NoteAbout::Forever,
            match reset_after {
                Some(reset) => format!(
                    "the command runs again whatever it exits with; the delays above follow \
                     runs that end within --reset-after ({}) one after another; after a run \
                     that lasts longer the table starts again at its first row",
                    format_exact(reset)
                ),
                None => "the command runs again whatever it exits with, after the delays \
                         above (--reset-after 0 or inf: they never start again from the first)"
                    .into(),
            },
        )),
        Shape::Plain => {}
    }
    if let Some((path, wait)) = lock {
        let waiting = match wait {
            Duration::ZERO => "not waiting if another run holds it".to_string(),
            w => format!("waiting up to {} if another run holds it", format_exact(w)),
        };
        notes.push((NoteAbout::Lock, format!("{}, {waiting}", shown(path))));
    }
    notes
}
