//! One run's record ([`Telemetry`]), kept as the supervisor tells it what happens: the attempts'
//! trace context for their environment, the spans and events, and at the end the metrics file
//! written and the trace exported.

use std::ffi::OsString;
use std::time::{Duration, Instant, SystemTime};

use super::metrics::{self, RunResult};
use super::otlp;
use super::settings::{Settings, program};
use super::spans::{self, Attr, Trace};
use super::textfile;
use super::traceparent::SpanContext;

/// What retry has to say at the end: warnings, and an error that turns a success into 125.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Said {
    /// Warning lines (a metrics file replaced, traces not exported).
    pub warnings: Vec<String>,
    /// The metrics file could not be written.
    pub error: Option<String>,
}

/// One run's record, kept as the supervisor tells it what happens.
#[derive(Debug)]
pub struct Telemetry {
    settings: Settings,
    start: Instant,
    attempts: u64,
    /// Of `attempts`, those a write of the metrics file already counted.
    attempts_written: u64,
    trace: Option<Trace>,
}

impl Telemetry {
    /// Starts the record of a run with `settings`, whose id is `run_id`, running `command`.
    pub fn start(settings: &Settings, run_id: &str, command: &[OsString]) -> Telemetry {
        let trace = settings.traces.as_ref().map(|t| {
            let args = t.args.then(|| {
                command
                    .iter()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect()
            });
            Trace::new(
                t.parent,
                t.tracestate.clone(),
                run_id,
                &program(command),
                args,
                crate::entropy::seed(),
            )
        });
        Telemetry {
            settings: settings.clone(),
            start: Instant::now(),
            attempts: 0,
            attempts_written: 0,
            trace,
        }
    }

    /// Attempt `number` starts: the variables that name its span (`TRACEPARENT`, and
    /// `TRACESTATE`, empty when the trace has none); none without a trace.
    pub fn attempt_start(&mut self, number: u64) -> Vec<(&'static str, String)> {
        self.attempts += 1;
        match &mut self.trace {
            Some(trace) => {
                let context = trace.attempt_start(number);
                carriers(context, trace.tracestate())
            }
            None => Vec::new(),
        }
    }

    /// The variables for a hook: `TRACEPARENT` naming the attempt it follows.
    pub fn hook_env(&self) -> Vec<(&'static str, String)> {
        self.trace
            .as_ref()
            .and_then(|t| t.last_attempt().map(|c| carriers(c, t.tracestate())))
            .unwrap_or_default()
    }

    /// The running attempt's process id.
    pub fn attempt_pid(&mut self, pid: i32) {
        if let Some(t) = &mut self.trace {
            t.attempt_pid(pid);
        }
    }

    /// The running attempt ended with `status`; `error_type` says how it failed; `http_status`
    /// is its last HTTP response's status, if one was read.
    pub fn attempt_end(
        &mut self,
        status: u8,
        error_type: Option<String>,
        http_status: Option<u16>,
    ) {
        if let Some(t) = &mut self.trace {
            t.attempt_end(status, error_type, http_status);
        }
    }

    /// retry waits `delay` before attempt `attempt + 1`, because attempt `attempt` failed as
    /// `reason`; `hint` is the wait a server asked for, if any.
    pub fn wait(&mut self, attempt: u64, delay: Duration, reason: &str, hint: Option<Duration>) {
        if let Some(t) = &mut self.trace {
            let mut attributes = vec![
                (
                    "retry.attempt",
                    Attr::Int(i64::try_from(attempt).unwrap_or(i64::MAX)),
                ),
                ("retry.delay_seconds", spans::seconds(delay)),
                ("retry.reason", Attr::Str(reason.to_string())),
            ];
            if let Some(h) = hint {
                attributes.push(("retry.hint_seconds", spans::seconds(h)));
            }
            t.event("retry.wait", attributes);
        }
    }

    /// retry gives up after `attempts`, because `why`.
    pub fn gave_up(&mut self, attempts: u64, why: &str) {
        if let Some(t) = &mut self.trace {
            t.event(
                "retry.give_up",
                vec![
                    (
                        "retry.attempts",
                        Attr::Int(i64::try_from(attempts).unwrap_or(i64::MAX)),
                    ),
                    ("retry.reason", Attr::Str(why.to_string())),
                ],
            );
        }
    }

    /// Attempts started so far.
    pub fn attempts(&self) -> u64 {
        self.attempts
    }

    /// The run ends with `exit_status` as `result`: writes the metrics file, if there is one.
    /// Comes before anything that describes the run's end (`GITHUB_OUTPUT`, `--chronic`'s
    /// decision to drop what it held), since a file that cannot be written turns a success
    /// into 125.
    pub fn finish_metrics(&mut self, exit_status: u8, result: RunResult) -> Said {
        if self.settings.metrics.is_none() {
            return Said::default();
        }
        self.write_metrics(exit_status, Some(result))
    }

    /// A run of `--forever` ended with `status` and another follows: the metrics file is
    /// rewritten (atomically, as at the end) with the attempts so far, so that a collector sees
    /// the restarts of a loop that runs for weeks. Nothing without `--metrics-file` or
    /// `--forever`.
    pub fn run_ended(&mut self, status: u8) -> Said {
        match &self.settings.metrics {
            Some(m) if m.every_run => self.write_metrics(status, None),
            _ => Said::default(),
        }
    }

    /// [`Telemetry::finish_metrics`] when there is a file to write.
    #[cold]
    #[inline(never)]
    fn write_metrics(&mut self, exit_status: u8, result: Option<RunResult>) -> Said {
        let mut said = Said::default();
        let Some(m) = &self.settings.metrics else {
            return said;
        };
        let record = metrics::RunRecord {
            job: m.job.clone(),
            ended: SystemTime::now(),
            duration: self.start.elapsed(),
            attempts: self.attempts,
            counted: self.attempts_written,
            exit_status,
            result,
        };
        let file = m.path.display();
        match textfile::write(&m.path, &record) {
            Ok(notices) => {
                self.attempts_written = self.attempts;
                said.warnings.extend(
                    notices
                        .into_iter()
                        .map(|notice| format!("--metrics-file {file}: {notice}")),
                );
            }
            Err(e) => said.error = Some(format!("cannot write --metrics-file {file}: {e}")),
        }
        said
    }

    /// The run ended with `exit_status` as `result`: exports the trace (bounded by
    /// `OTEL_EXPORTER_OTLP_TIMEOUT`, and ended at once by a stop signal), last of all, with
    /// the status retry exits with. `stop` is the stop signal's name when one ended the run.
    /// Never an error: a trace that is not exported is a warning.
    pub fn finish_trace(
        &mut self,
        exit_status: u8,
        result: RunResult,
        stop: Option<String>,
    ) -> Said {
        if self.trace.is_none() {
            return Said::default();
        }
        self.send_trace(exit_status, result, stop)
    }

    /// [`Telemetry::finish_trace`] when there is a trace to send.
    #[cold]
    #[inline(never)]
    fn send_trace(&mut self, exit_status: u8, result: RunResult, stop: Option<String>) -> Said {
        let mut said = Said::default();
        if let (Some(trace), Some(settings)) = (&mut self.trace, &self.settings.traces) {
            if let Some(signal) = &stop {
                trace.event("retry.stopped", vec![("signal", Attr::Str(signal.clone()))]);
            }
            if trace.sampled() {
                let error_type = (exit_status != 0).then(|| result.label());
                let request = trace.request(exit_status, error_type, &settings.exporter.resource);
                if let Err(why) = otlp::export(&settings.exporter, &request) {
                    said.warnings.push(format!(
                        "the trace was not exported to {}: {why}",
                        settings.exporter.url
                    ));
                }
            }
        }
        said
    }
}

/// `TRACEPARENT` for `context`, and `TRACESTATE`: the trace's, or empty without one, so that a
/// `TRACESTATE` retry was given beside an invalid `TRACEPARENT` (the state of another trace)
/// does not reach the command with retry's new trace.
fn carriers(context: SpanContext, tracestate: Option<&str>) -> Vec<(&'static str, String)> {
    vec![
        ("TRACEPARENT", context.traceparent()),
        ("TRACESTATE", tracestate.unwrap_or_default().to_string()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::settings::tests::settings;

    #[test]
    fn every_attempt_gets_its_own_traceparent_and_hooks_the_last_one() {
        let on = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1");
        let s = settings(None, None, &[on]).unwrap();
        let mut t = Telemetry::start(&s, "id", &["curl".into()]);
        assert!(t.hook_env().is_empty());
        let first = t.attempt_start(1);
        assert_eq!(first[0].0, "TRACEPARENT");
        assert_eq!(t.hook_env(), first);
        let second = t.attempt_start(2);
        assert_ne!(first, second);
        assert_eq!(first[0].1[..35], second[0].1[..35], "same trace");
        assert_eq!(t.attempts(), 2);
        // A state without a valid parent is another trace's: the attempt gets none.
        let s = settings(
            None,
            None,
            &[on, ("TRACEPARENT", "junk"), ("TRACESTATE", "a=b")],
        );
        let env = Telemetry::start(&s.unwrap(), "id", &["curl".into()]).attempt_start(1);
        assert_eq!(env[1], ("TRACESTATE", String::new()));
        let off = Telemetry::start(&Settings::default(), "id", &[]).attempt_start(1);
        assert!(off.is_empty());
    }
}
