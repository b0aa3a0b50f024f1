//! What retry says of the run as it goes: its start (the policy and limits), each attempt's
//! start and end, a failure and the wait after it (with the countdown on a terminal), a reset,
//! the end (success, giving up, stopped by a signal) and the hooks.

pub use crate::hints::Wait;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::lines::{one_line, without_os_error};
use super::reporter::{Reporter, micros};
use super::stopping::StopPlan;
use super::words::describe;
use super::{colour, live, loops};
use crate::codes::signal_name;
use crate::duration::format_human;
use crate::escape::escape;
use crate::hints::HintSource;
use crate::observe::{Attempted, HookEnd};
use crate::process::{Left, Outcome, StopReason};
use crate::types::Shape;
use retry_tool_backoff::Policy;

impl Reporter {
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
                policy.jitter().name(),
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
            "jitter": policy.jitter().name(),
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
        self.runs.set(attempt);
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

    /// An attempt ended (a JSON event, with `http_status` when an HTTP status was read; text
    /// reports only failures, in [`Reporter::failed`]).
    pub fn attempt_end(&self, a: &Attempted<'_>) {
        self.last_http.set(a.http_status);
        if !self.emits("attempt_end") {
            return;
        }
        let outcome = a.outcome;
        let mut fields = json!({
            "attempt": a.attempt,
            "max_attempts": self.max_attempts.get(),
            "status": outcome.code(),
            "duration": (a.ran.as_secs_f64() * 1000.0).round() / 1000.0,
            "output_failed": a.output_failed,
        });
        if let Some(code) = a.http_status {
            fields["http_status"] = code.into();
        }
        if let Some(found) = a.transient {
            fields["transient"] = (!found.is_empty()).then(|| found.to_string()).into();
        }
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

    /// A failed attempt (with `--forever`, any attempt run again): how it ended, with the HTTP
    /// status of its last response when one was read, and the wait before the next one if
    /// there is one (JSON: a `wait` event, whose `hint` names the server's hint that set the
    /// delay, or is null).
    pub fn failed(&self, a: &Attempted<'_>, next: Option<Wait>) {
        let (attempt, ran) = (a.attempt, a.ran);
        let mut how = describe(&self.program, a.outcome);
        if a.output_failed {
            how.push_str(" but its output matched --retry-if-output");
        }
        if let Some(code) = a.http_status {
            how.push_str(&format!(" (HTTP {code})"));
        }
        if let Some(found) = a.transient.filter(|found| !found.is_empty()) {
            how.push_str(&format!(" (transient: {found})"));
        }
        how.push_str(&left_running(a.left_running));
        let took = if self.verbose() {
            format!(" after {}", format_human(ran))
        } else {
            String::new()
        };
        match next {
            Some(Wait { delay, hint }) => {
                self.waiting(
                    &format!("retry: {}: {how}{took}", self.attempt_label(attempt)),
                    delay,
                    hint,
                );
                let mut fields = json!({
                    "attempt": attempt,
                    "delay": micros(delay),
                    "hint": hint.map(|h| h.to_string()),
                });
                add_left_running(&mut fields, a.left_running);
                self.emit("wait", fields);
            }
            None => self.say(format_args!("{}: {how}{took}", self.attempt_label(attempt))),
        }
    }

    /// The line of a failed attempt followed by a wait of `delay` (`head; retrying in DELAY
    /// (HINT)`): on a terminal the start of a countdown ([`live`]), elsewhere the line.
    fn waiting(&self, head: &str, delay: Duration, hint: Option<HintSource>) {
        if !self.speaks() {
            return;
        }
        let shown = format_human(delay);
        let hint = hint.map(|h| h.to_string());
        let plain = anstyle::Style::new();
        let verb = if self.shape == Shape::Forever {
            "restarting"
        } else {
            "retrying"
        };
        let middle = format!("; {verb} in {shown}");
        let mut spans = vec![(plain, head), (plain, middle.as_str())];
        if let Some(name) = &hint {
            spans.extend([(plain, " ("), (colour::HINT, name.as_str()), (plain, ")")]);
        }
        let normal = self.writer.line_bytes(&spans);
        let wake = Instant::now().checked_add(delay);
        match wake {
            Some(wake) if delay >= live::SHORTEST && self.writer.counts_down() => {
                // The frames' tail: what follows the delay, as the line has it.
                let tail_spans = &spans[2..];
                let tail = self.writer.line_bytes(tail_spans);
                let tail = tail.strip_suffix(b"\n").unwrap_or(&tail).to_vec();
                let width = hint.as_ref().map_or(0, |h| live::columns(h) + 3);
                let head = escape(&without_os_error(&one_line(head)));
                self.writer
                    .count_down(normal, head, (tail, width), wake, &shown);
            }
            _ => self.writer.put(&normal),
        }
    }

    /// Attempt `attempt` ran for `ran`, at least `reset_after`, before it failed: the schedule
    /// starts afresh (JSON: a `reset` event).
    pub fn reset(&self, attempt: u64, ran: Duration, reset_after: Duration) {
        // With --forever a long run is the rule, not news: said with --verbose only.
        let forever = self.shape == Shape::Forever;
        if !forever || self.verbose() {
            let afresh = if forever {
                "the backoff starts afresh"
            } else {
                "the backoff and the retry count start afresh"
            };
            self.say(format_args!(
                "attempt {attempt} ran for {}, at least --reset-after ({}): {afresh}",
                format_human(ran),
                format_human(reset_after)
            ));
        }
        self.emit(
            "reset",
            json!({ "attempt": attempt, "duration": (ran.as_secs_f64() * 1000.0).round() / 1000.0 }),
        );
    }

    /// The closing line of a run giving up after `attempts` because `why`, with the time the
    /// run took (`elapsed`) (`gave up after 6 attempts in 1m 3s: no retries left`), without `retry: `.
    ///
    /// With `--forever` it counts runs and restarts (`gave up after 12 runs (11 restarts) in
    /// 3m 2s: ...`); when the last attempt's last HTTP response was read and `why` does not
    /// name it, it ends with `(last response: HTTP 503)`.
    pub fn gave_up_line(&self, attempts: u64, why: &str, elapsed: Duration) -> String {
        let s = if attempts == 1 { "" } else { "s" };
        let made = if self.shape == Shape::Forever {
            format!("{attempts} run{s} ({})", restarts(attempts))
        } else {
            format!("{attempts} attempt{s}")
        };
        let http = match self.last_http.get() {
            Some(code) if !why.starts_with("HTTP ") => format!(" (last response: HTTP {code})"),
            _ => String::new(),
        };
        format!(
            "gave up after {made} in {}: {why}{http}",
            format_human(elapsed)
        )
    }

    /// Giving up after `attempts`, with `status`, and why: says `line`
    /// ([`Reporter::gave_up_line`]); a JSON event.
    pub fn giving_up(&self, attempts: u64, why: &str, status: u32, line: &str) {
        // Under --chronic, after all the held output, whatever --max-output dropped.
        self.writer.closing(|| {
            self.say_in(colour::GAVE_UP, line);
            let mut fields = json!({ "attempts": attempts, "reason": why, "status": status });
            if self.shape == Shape::Forever {
                fields["restarts"] = attempts.saturating_sub(1).into();
            }
            if let Some(code) = self.last_http.get() {
                fields["http_status"] = code.into();
            }
            self.emit("give_up", fields);
        });
    }

    /// The closing line of a success on attempt `attempts` (`succeeded on attempt 3 of 6
    /// after 12.4s`, the time the run took: `elapsed`), without `retry: `.
    pub fn success_line(&self, attempts: u64, elapsed: Duration) -> String {
        let label = match self.max_attempts.get() {
            Some(m) => format!("attempt {attempts} of {m}"),
            None => format!("attempt {attempts}"),
        };
        let http = self
            .last_http
            .get()
            .map_or(String::new(), |code| format!(" (HTTP {code})"));
        format!("succeeded on {label} after {}{http}", format_human(elapsed))
    }

    /// Success on attempt `attempts`: says `line` ([`Reporter::success_line`]) when the run
    /// needed more than one attempt, or with `--verbose`; a JSON event.
    pub fn success(&self, attempts: u64, line: &str) {
        if attempts > 1 {
            self.say_in(colour::SUCCEEDED, line);
        } else if self.verbose() {
            self.say_in(anstyle::Style::new(), line);
        }
        let mut fields = json!({
            "attempts": attempts,
            "max_attempts": self.max_attempts.get(),
            "status": 0,
        });
        if let Some(code) = self.last_http.get() {
            fields["http_status"] = code.into();
        }
        self.emit("success", fields);
    }

    /// retry was told to stop by `signal` (during an attempt, a wait or a hook).
    ///
    /// With `--forever`: `stopped by SIGTERM after 12 runs (11 restarts): not restarting`, and
    /// the event's `restarts`. Before any attempt started (waiting for `--lock`, `--splay` or
    /// the retry budget): `stopped by SIGTERM while waiting for --lock: not running PROGRAM`,
    /// or `before the first attempt` (`run` with `--forever`).
    pub fn interrupted(&self, signal: i32) {
        self.writer.closing(|| {
            let mut fields = json!({ "signal": signal_name(signal) });
            let runs = self.runs.get();
            let forever = self.shape == Shape::Forever;
            if runs == 0 {
                let when = match (self.waiting_for_lock.get(), forever) {
                    (true, _) => "while waiting for --lock",
                    (false, true) => "before the first run",
                    (false, false) => "before the first attempt",
                };
                self.say(format_args!(
                    "stopped by {} {when}: not running {}",
                    signal_name(signal),
                    self.program
                ));
            } else if forever {
                let s = if runs == 1 { "" } else { "s" };
                self.say(format_args!(
                    "stopped by {} after {runs} run{s} ({}): not restarting",
                    signal_name(signal),
                    restarts(runs)
                ));
            } else {
                self.say(format_args!(
                    "stopped by {}: not retrying",
                    signal_name(signal)
                ));
            }
            if forever {
                fields["restarts"] = runs.saturating_sub(1).into();
            }
            self.emit("interrupted", fields);
        });
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
}

/// `11 restarts` after `runs` runs (`1 restart`, `no restarts`).
fn restarts(runs: u64) -> String {
    match runs.saturating_sub(1) {
        0 => "no restarts".to_string(),
        1 => "1 restart".to_string(),
        n => format!("{n} restarts"),
    }
}

/// What the attempt line adds when retry stopped what the attempt left running (` (stopped 2
/// processes it left running)`); empty when it left nothing.
fn left_running(left: Left) -> String {
    match left {
        Left::Nothing => String::new(),
        Left::Processes(1) => " (stopped 1 process it left running)".into(),
        Left::Processes(n) => format!(" (stopped {n} processes it left running)"),
        Left::Group => " (stopped what it left running in its process group)".into(),
    }
}

/// A JSON event's `left_running`: how many processes the attempt left running that retry
/// stopped (`null`: some, how many not known); absent when it left nothing.
fn add_left_running(fields: &mut Value, left: Left) {
    match left {
        Left::Nothing => {}
        Left::Processes(n) => fields["left_running"] = n.into(),
        Left::Group => fields["left_running"] = Value::Null,
    }
}
