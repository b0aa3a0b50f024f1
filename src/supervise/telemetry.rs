//! The supervisor's side of [`crate::telemetry`]: what it tells the run's record as the run
//! goes (each attempt's start, process, end; each wait; the give-up), the `TRACEPARENT` each
//! attempt and hook gets, and the end: the metrics file written and the trace exported, whose
//! failures are reported here. A metrics file that cannot be written turns a success into 125,
//! like a `GITHUB_OUTPUT` that cannot be appended; a trace that cannot be exported is a
//! warning and never changes the status (OpenTelemetry's error handling principle: telemetry
//! must not break the application, <https://opentelemetry.io/docs/specs/otel/error-handling/>).

use std::time::Duration;

use super::Supervisor;
use crate::codes::signal_name;
use crate::process::{Outcome, StopReason};
use crate::status::Exit;
use crate::telemetry::RunResult;

/// How an attempt failed, as the `error.type` of its span: the exit status, the signal's
/// name, `timeout`, `deadline` or `idle_timeout` for an attempt retry stopped, and
/// `retry_if_output` for a status 0 that failed by its output. `None` when it succeeded.
pub(super) fn error_type(outcome: &Outcome, output_failed: bool) -> Option<String> {
    if output_failed {
        return Some("retry_if_output".into());
    }
    match outcome {
        Outcome::Exited(0) => None,
        Outcome::Exited(c) => Some(c.to_string()),
        Outcome::Signaled(n) => Some(signal_name(*n)),
        Outcome::Stopped { reason, .. } => Some(
            match reason {
                StopReason::Timeout => "timeout",
                StopReason::Deadline => "deadline",
                StopReason::Idle(_) => "idle_timeout",
            }
            .into(),
        ),
        Outcome::LaunchFailed { status, .. } => Some(status.to_string()),
    }
}

impl Supervisor<'_> {
    /// Attempt `attempt` starts: its `TRACEPARENT` (and `TRACESTATE`), if traces are on.
    pub(super) fn telemetry_attempt_start(&self, attempt: u64) -> Vec<(&'static str, String)> {
        self.telemetry.borrow_mut().attempt_start(attempt)
    }

    /// The running attempt's process id.
    pub(super) fn telemetry_attempt_pid(&self, pid: i32) {
        self.telemetry.borrow_mut().attempt_pid(pid);
    }

    /// The running attempt ended with `outcome`.
    pub(super) fn telemetry_attempt_end(&self, outcome: &Outcome, output_failed: bool) {
        let status = if output_failed { 1 } else { outcome.status() };
        self.telemetry
            .borrow_mut()
            .attempt_end(status, error_type(outcome, output_failed));
    }

    /// A wait of `delay` after attempt `attempt` ended with `outcome`; `hint` is a server's.
    pub(super) fn telemetry_wait(
        &self,
        attempt: u64,
        delay: Duration,
        outcome: &Outcome,
        output_failed: bool,
        hint: Option<Duration>,
    ) {
        let reason = error_type(outcome, output_failed).unwrap_or_default();
        self.telemetry
            .borrow_mut()
            .wait(attempt, delay, &reason, hint);
    }

    /// The run gives up after `attempts`, because `why`.
    pub(super) fn telemetry_gave_up(&self, attempts: u64, why: &str) {
        self.telemetry.borrow_mut().gave_up(attempts, why);
    }

    /// The variables a hook gets to join the trace: `TRACEPARENT` naming the attempt before it.
    pub(super) fn telemetry_hook_env(&self) -> Vec<(&'static str, String)> {
        self.telemetry.borrow().hook_env()
    }

    /// How the run ended, for `retry_runs_total{result}`, from `exit` as the attempts left it
    /// (before the end's own writes): stopped by a signal, success, refused before any attempt
    /// (75, by the breaker or the budget), or given up.
    pub(super) fn run_result(&self, exit: Exit) -> RunResult {
        if crate::signals::stop_arrived() {
            RunResult::Stopped
        } else if exit == Exit::Code(0) && self.gave_up.borrow().is_none() {
            RunResult::Success
        } else if exit == Exit::TempFail && self.telemetry.borrow().attempts() == 0 {
            RunResult::Refused
        } else {
            RunResult::GaveUp
        }
    }

    /// The end's first write: the metrics file. Returns how retry ends (`exit`, or 125 when a
    /// success could not be recorded, the reason kept for what describes the end), and the
    /// warnings to say once `--chronic` has settled what it held (a warning never turns a
    /// success into a failure, so it is not dropped with a successful run's held output).
    pub(super) fn finish_metrics(&self, exit: Exit, result: RunResult) -> (Exit, Vec<String>) {
        let said = self
            .telemetry
            .borrow_mut()
            .finish_metrics(exit.code(), result);
        let exit = match said.error {
            Some(error) => {
                self.reporter.error(&error);
                self.failed_late(exit, &error)
            }
            None => exit,
        };
        (exit, said.warnings)
    }

    /// Says `warnings` (from [`Supervisor::finish_metrics`]).
    pub(super) fn say_warnings(&self, warnings: &[String]) {
        for warning in warnings {
            self.reporter.warning(warning);
        }
    }

    /// The end's last step: the trace, exported with the status retry exits with (`exit`,
    /// returned as it is).
    pub(super) fn finish_trace(&self, exit: Exit, result: RunResult) -> Exit {
        let stop = (result == RunResult::Stopped).then(|| match exit {
            Exit::Signal(n) => signal_name(n),
            _ => "a stop signal".to_string(),
        });
        let said = self
            .telemetry
            .borrow_mut()
            .finish_trace(exit.code(), result, stop);
        for warning in &said.warnings {
            self.reporter.warning(warning);
        }
        exit
    }
}
