//! What a run leaves behind for monitoring: the Prometheus textfile of `--metrics-file`
//! ([`metrics`]) and an OpenTelemetry trace exported over OTLP/HTTP when the `OTEL_*`
//! variables ask for one ([`otlp`], [`spans`], [`http`]), with the trace context handed to
//! every attempt and hook in `TRACEPARENT` / `TRACESTATE` ([`traceparent`]).
//!
//! Code layout: everything that runs only when telemetry is asked for (the file's writing
//! and parsing, the encoding, the HTTP exchange) is `#[cold]` and never inlined, so that none
//! of it is inlined into the code every run goes through (the command line's reading, the
//! supervisor), which a plain `retry -- true` pages in.
//!
//! Self-contained: it knows neither the command line nor the supervisor. [`Settings`] is read
//! once, from the flags and the environment; [`Telemetry`] records the run as the supervisor
//! tells it and writes and sends it at the end. Without `--metrics-file` and without an OTLP
//! endpoint it does nothing at all: no file, no socket, no thread.

pub mod endpoint;
pub mod http;
pub mod metrics;
pub mod otlp;
pub mod prom_parse;
pub mod spans;
pub mod textfile;
pub mod traceparent;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

pub use metrics::RunResult;
use spans::{Attr, Trace};
use traceparent::SpanContext;

use crate::net::Failure;

/// `--metrics-file` and its job label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metrics {
    /// Where the file goes.
    pub path: PathBuf,
    /// The `job` label.
    pub job: String,
}

/// The trace's settings: the exporter, the parent from `TRACEPARENT` / `TRACESTATE`, and
/// whether the command's arguments are recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Traces {
    /// Where and how the spans go.
    pub exporter: otlp::Exporter,
    /// The run span's parent, from a valid `TRACEPARENT` (an invalid one starts a new trace,
    /// as the W3C specification asks).
    pub parent: Option<SpanContext>,
    /// `TRACESTATE`, passed on with the parent (ignored without one).
    pub tracestate: Option<String>,
    /// `--trace-args`: `process.command_args` on the attempt spans.
    pub args: bool,
}

/// What the run leaves behind, validated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// `--metrics-file`, when given.
    pub metrics: Option<Metrics>,
    /// Traces, when an OTLP endpoint is set and not disabled.
    pub traces: Option<Traces>,
    /// Lines to print as warnings when the run starts: a PATH not ending in `.prom`, an
    /// `OTEL_*` variable that cannot be used.
    pub warnings: Vec<String>,
}

impl Settings {
    /// The settings from the flags (`--metrics-file`, `--metrics-job`, `--trace-args`), the
    /// command (its file name is the default job) and the environment through `var`.
    ///
    /// # Errors
    /// One line naming the flag and the value: a `--metrics-file` that names no file, an
    /// empty `--metrics-job`.
    pub fn new(
        metrics_file: Option<PathBuf>,
        metrics_job: Option<String>,
        trace_args: bool,
        command: &[OsString],
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Settings, String> {
        let mut settings = Settings::default();
        if let Some(path) = metrics_file {
            settings.metrics_from(path, metrics_job, command)?;
        }
        let from_env = otlp::from_env(&var);
        if from_env.exporter.is_some() || !from_env.warnings.is_empty() {
            settings.traces_from(from_env, trace_args, &var);
        }
        Ok(settings)
    }

    /// The `--metrics-file` part of [`Settings::new`].
    #[cold]
    #[inline(never)]
    fn metrics_from(
        &mut self,
        path: PathBuf,
        metrics_job: Option<String>,
        command: &[OsString],
    ) -> Result<(), String> {
        let settings = self;
        {
            if path.file_name().is_none() {
                return Err(format!(
                    "invalid value '{}' for --metrics-file: it names no file",
                    path.display()
                ));
            }
            if let Some(kind) = textfile::not_replaceable(&path) {
                return Err(format!(
                    "invalid value '{}' for --metrics-file: it is a {kind}, not a regular file",
                    path.display()
                ));
            }
            if path.extension().is_none_or(|e| e != "prom") {
                settings.warnings.push(format!(
                    "--metrics-file '{}' does not end in .prom: node_exporter's textfile \
                     collector reads only *.prom files",
                    path.display()
                ));
            }
            let job = match metrics_job {
                Some(job) if job.trim().is_empty() => {
                    return Err(format!(
                        "invalid value '{job}' for --metrics-job: it is empty"
                    ));
                }
                Some(job) => job,
                None => program(command),
            };
            settings.metrics = Some(Metrics { path, job });
        }
        Ok(())
    }

    /// The trace part of [`Settings::new`], once the `OTEL_*` variables said something.
    #[cold]
    #[inline(never)]
    fn traces_from(
        &mut self,
        from_env: otlp::FromEnv,
        trace_args: bool,
        var: &dyn Fn(&str) -> Option<String>,
    ) {
        self.warnings.extend(from_env.warnings);
        if let Some(exporter) = from_env.exporter {
            let parent = var("TRACEPARENT").and_then(|v| SpanContext::parse(v.trim()));
            let tracestate = parent
                .and(var("TRACESTATE"))
                .and_then(|v| traceparent::tracestate(&v));
            self.traces = Some(Traces {
                exporter,
                parent,
                tracestate,
                args: trace_args,
            });
        }
    }
}

/// The file name of the command's program (`/usr/bin/curl` → `curl`), lossily as UTF-8.
pub fn program(command: &[OsString]) -> String {
    command
        .first()
        .map(|p| {
            Path::new(p)
                .file_name()
                .unwrap_or(p.as_os_str())
                .to_string_lossy()
                .into_owned()
        })
        .unwrap_or_default()
}

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

    /// The running attempt ended with `status`; `error_type` says how it failed.
    pub fn attempt_end(&mut self, status: u8, error_type: Option<String>) {
        if let Some(t) = &mut self.trace {
            t.attempt_end(status, error_type);
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
        self.write_metrics(exit_status, result)
    }

    /// [`Telemetry::finish_metrics`] when there is a file to write.
    #[cold]
    #[inline(never)]
    fn write_metrics(&mut self, exit_status: u8, result: RunResult) -> Said {
        let mut said = Said::default();
        let Some(m) = &self.settings.metrics else {
            return said;
        };
        let record = metrics::RunRecord {
            job: m.job.clone(),
            ended: SystemTime::now(),
            duration: self.start.elapsed(),
            attempts: self.attempts,
            exit_status,
            result,
        };
        let file = m.path.display();
        match textfile::write(&m.path, &record) {
            Ok(notices) => said.warnings.extend(
                notices
                    .into_iter()
                    .map(|notice| format!("--metrics-file {file}: {notice}")),
            ),
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
                if let Err(why) = export(&settings.exporter, &request) {
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

/// Sends `request` to the exporter's URL within its timeout.
///
/// # Errors
/// Why it was not accepted, in words.
#[cold]
#[inline(never)]
pub fn export(
    exporter: &otlp::Exporter,
    request: &opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest,
) -> Result<(), String> {
    let body = exporter.protocol.encode(request);
    let headers: Vec<(&str, &str)> = exporter
        .headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let now = Instant::now();
    let until = now
        .checked_add(exporter.timeout)
        .unwrap_or(now + Duration::from_secs(86_400 * 365));
    match http::post(
        &exporter.url,
        exporter.protocol.content_type(),
        &headers,
        &body,
        until,
    ) {
        Ok(_) => Ok(()),
        Err(Failure::Stopped) => Err("a stop signal arrived".into()),
        Err(Failure::TimedOut(_)) => Err(format!(
            "no answer within OTEL_EXPORTER_OTLP_TIMEOUT ({}ms)",
            exporter.timeout.as_millis()
        )),
        Err(Failure::Io(step, e)) => Err(http::io_words(step, &e)),
        Err(Failure::Other(why)) => Err(why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(
        file: Option<&str>,
        job: Option<&str>,
        vars: &[(&str, &str)],
    ) -> Result<Settings, String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Settings::new(
            file.map(PathBuf::from),
            job.map(String::from),
            false,
            &["/usr/bin/curl".into(), "-f".into()],
            |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
        )
    }

    #[test]
    fn nothing_is_set_up_without_the_flag_or_an_endpoint() {
        assert_eq!(
            settings(None, None, &[("TRACEPARENT", "x")]).unwrap(),
            Settings::default()
        );
    }

    #[test]
    fn the_job_is_the_program_unless_named_and_prom_is_expected() {
        let s = settings(Some("/d/x.prom"), None, &[]).unwrap();
        assert_eq!(s.metrics.unwrap().job, "curl");
        assert!(s.warnings.is_empty());
        let s = settings(Some("x.txt"), Some("nightly"), &[]).unwrap();
        assert_eq!(s.metrics.unwrap().job, "nightly");
        assert!(
            s.warnings[0].contains("does not end in .prom"),
            "{:?}",
            s.warnings
        );
        let err = settings(Some("x.prom"), Some(" "), &[]).unwrap_err();
        assert_eq!(err, "invalid value ' ' for --metrics-job: it is empty");
        let err = settings(Some("/"), None, &[]).unwrap_err();
        assert!(err.contains("--metrics-file"), "{err}");
    }

    #[test]
    fn the_parent_comes_from_a_valid_traceparent_only() {
        let on = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1");
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let s = settings(
            None,
            None,
            &[on, ("TRACEPARENT", good), ("TRACESTATE", "a=b")],
        )
        .unwrap();
        let traces = s.traces.unwrap();
        assert_eq!(traces.parent.unwrap().traceparent(), good);
        assert_eq!(traces.tracestate.as_deref(), Some("a=b"));
        let s = settings(
            None,
            None,
            &[on, ("TRACEPARENT", "junk"), ("TRACESTATE", "a=b")],
        )
        .unwrap();
        let traces = s.traces.unwrap();
        assert_eq!((traces.parent, traces.tracestate), (None, None));
    }

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
