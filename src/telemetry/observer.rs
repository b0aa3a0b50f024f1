//! The metrics file and the trace as an observer of the run ([`crate::observe`]): each
//! attempt's start, process, end and wait, and the give-up, recorded in [`Telemetry`]; the
//! `TRACEPARENT` each attempt and hook gets; at the end the metrics file written (a file that
//! cannot be written turns a success into 125, like a `GITHUB_OUTPUT` that cannot be
//! appended) and, once the status is settled, its warnings said and the trace exported (a
//! trace that cannot be exported is a warning and never changes the status: OpenTelemetry's
//! error handling principle, <https://opentelemetry.io/docs/specs/otel/error-handling/>).

use crate::codes::signal_name;
use crate::observe::{End, Event, Observer, RunResult as Ended};
use crate::process::{Outcome, StopReason};
use crate::status::Exit;

use super::{RunResult, Telemetry};

/// [`Telemetry`] listening to a run.
pub struct TelemetryObserver {
    telemetry: Telemetry,
    /// The metrics file's warnings, said once the status is settled.
    warnings: Vec<String>,
    /// A write of the metrics file after a `--forever` run failed (said once).
    run_write_failed: bool,
    /// The notices of the writes after runs kept to say at the end (at most [`RUN_NOTICES`]).
    run_notices: usize,
}

/// The most notices of the metrics file's writes after `--forever` runs said at the end.
const RUN_NOTICES: usize = 8;

impl TelemetryObserver {
    /// Records the run in `telemetry` (which does nothing at all when neither the metrics file
    /// nor a trace was asked for).
    pub fn new(telemetry: Telemetry) -> TelemetryObserver {
        TelemetryObserver {
            telemetry,
            warnings: Vec::new(),
            run_write_failed: false,
            run_notices: 0,
        }
    }
}

/// How an attempt failed, as the `error.type` of its span: the exit status, the signal's
/// name, `timeout`, `deadline` or `idle_timeout` for an attempt retry stopped, and
/// `retry_if_output` for a status 0 that failed by its output. `None` when it succeeded.
pub fn error_type(outcome: &Outcome, output_failed: bool) -> Option<String> {
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

/// The metrics file's `result` label for how the run ended.
fn result(ended: Ended) -> RunResult {
    match ended {
        Ended::Stopped => RunResult::Stopped,
        Ended::Success => RunResult::Success,
        Ended::Refused => RunResult::Refused,
        Ended::GaveUp => RunResult::GaveUp,
    }
}

impl Observer for TelemetryObserver {
    fn event(&mut self, event: &Event<'_>) {
        match *event {
            Event::Spawned(pid) => self.telemetry.attempt_pid(pid),
            Event::AttemptEnd(a) => {
                let status = if a.output_failed {
                    1
                } else {
                    a.outcome.status()
                };
                // With --transient, a failure known by its classes is of that type
                // (`connect`, `dns,reset`).
                let error = error_type(a.outcome, a.output_failed).map(|own| {
                    a.transient
                        .filter(|found| !found.is_empty())
                        .map_or(own, |found| found.to_string())
                });
                self.telemetry.attempt_end(status, error, a.http_status);
            }
            Event::Wait {
                after: a,
                delay,
                asked,
                ..
            } => {
                let reason = error_type(a.outcome, a.output_failed).unwrap_or_default();
                self.telemetry.wait(a.attempt, delay, &reason, asked);
                let status = if a.output_failed {
                    1
                } else {
                    a.outcome.status()
                };
                // --forever: the file after every run. A write that fails here is said at the
                // end (once); the end's own write decides the status.
                let said = self.telemetry.run_ended(status);
                if let Some(error) = said.error
                    && !self.run_write_failed
                {
                    self.run_write_failed = true;
                    self.warnings
                        .push(format!("after run {}: {error}", a.attempt));
                }
                // Its notices too (a file that did not parse was replaced): each said once, and
                // only so many over a loop that may run for weeks.
                for notice in said.warnings {
                    if self.run_notices < RUN_NOTICES
                        && !self.warnings.iter().any(|w| w.ends_with(&notice))
                    {
                        self.run_notices += 1;
                        self.warnings
                            .push(format!("after run {}: {notice}", a.attempt));
                    }
                }
            }
            Event::GaveUp { attempts, why, .. } => {
                self.telemetry
                    .gave_up(attempts, &crate::report::why_words(why));
            }
            _ => {}
        }
    }

    fn attempt_env(&mut self, attempt: u64) -> Vec<(&'static str, String)> {
        self.telemetry.attempt_start(attempt)
    }

    fn hook_env(&self) -> Vec<(&'static str, String)> {
        self.telemetry.hook_env()
    }

    /// The end's first write: the metrics file, with the status as the attempts left it.
    fn finish(&mut self, end: &mut End<'_>) {
        let said = self
            .telemetry
            .finish_metrics(end.exit.status(), result(end.result));
        if let Some(error) = said.error {
            end.failed(&error);
        }
        self.warnings.extend(said.warnings);
    }

    /// The metrics file's warnings (never dropped with a successful run's held output), then
    /// the trace, exported with the status retry exits with.
    fn after(&mut self, end: &End<'_>) {
        for warning in &self.warnings {
            end.voice.warning(warning);
        }
        let stop = (end.result == Ended::Stopped).then(|| match end.exit {
            Exit::Signal(n) => signal_name(n),
            _ => "a stop signal".to_string(),
        });
        let said = self
            .telemetry
            .finish_trace(end.exit.status(), result(end.result), stop);
        for warning in &said.warnings {
            end.voice.warning(warning);
        }
    }
}
