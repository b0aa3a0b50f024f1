//! The run's trace: one span for the run (retry's own execution) and one child span per
//! attempt, after the OpenTelemetry semantic conventions for CLI programs
//! (<https://opentelemetry.io/docs/specs/semconv/cli/cli-spans/>): the run span is retry's
//! execution span (kind `INTERNAL`, named `retry`), each attempt a client span (kind
//! `CLIENT`) named after the command's executable, with `process.executable.name`,
//! `process.pid`, `process.exit.code`, and `error.type` when the exit code is not 0.
//! `process.command_args` only when asked for (`--trace-args`): the conventions make it
//! opt-in, since arguments may hold secrets. retry's own attributes are under `retry.`:
//! `retry.run_id` (`RETRY_RUN_ID`), `retry.attempt`, `retry.attempts`; the waits and the
//! give-up are span events of the run span (`retry.wait`, `retry.give_up`, `retry.stopped`).

use std::time::{Duration, SystemTime};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    AnyValue, ArrayValue, InstrumentationScope, KeyValue, any_value::Value,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{
    ResourceSpans, ScopeSpans, Span, Status, span::Event, span::SpanKind, status::StatusCode,
};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{Rng, SeedableRng};

use super::traceparent::{SAMPLED, SpanContext};

/// An attribute value.
#[derive(Clone, Debug, PartialEq)]
pub enum Attr {
    /// A string.
    Str(String),
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Double(f64),
    /// An array of strings.
    Strings(Vec<String>),
}

/// `key` = `value`, as OTLP carries it.
fn kv(key: &str, value: Attr) -> KeyValue {
    let value = match value {
        Attr::Str(s) => Value::StringValue(s),
        Attr::Int(i) => Value::IntValue(i),
        Attr::Double(d) => Value::DoubleValue(d),
        Attr::Strings(v) => Value::ArrayValue(ArrayValue {
            values: v
                .into_iter()
                .map(|s| AnyValue {
                    value: Some(Value::StringValue(s)),
                })
                .collect(),
        }),
    };
    KeyValue {
        key: key.to_string(),
        value: Some(AnyValue { value: Some(value) }),
        ..Default::default()
    }
}

/// Nanoseconds since the Unix epoch (0 before it; saturating far in the future).
fn nanos(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// One attempt's span as it is recorded.
#[derive(Clone, Debug)]
struct AttemptSpan {
    number: u64,
    span_id: [u8; 8],
    start: SystemTime,
    end: Option<SystemTime>,
    pid: Option<i32>,
    exit_code: Option<u8>,
    error_type: Option<String>,
    /// The status of the last HTTP response in its output (`--http-hints`), if one was read.
    http_status: Option<u16>,
}

/// The trace of one run, recorded as it goes, exported at its end.
#[derive(Debug)]
pub struct Trace {
    run: SpanContext,
    parent: Option<[u8; 8]>,
    tracestate: Option<String>,
    start: SystemTime,
    run_id: String,
    program: String,
    args: Option<Vec<String>>,
    attempts: Vec<AttemptSpan>,
    events: Vec<Event>,
    ids: Xoshiro256PlusPlus,
}

impl Trace {
    /// A new trace for a run starting now: a child of `parent` (from `TRACEPARENT`) when given,
    /// in its trace and with its flags, else a new trace, sampled. `program` names the attempt
    /// spans; `args` (the command and its arguments) are recorded only when given
    /// (`--trace-args`). `seed` seeds the span ids (the operating system's randomness).
    #[cold]
    #[inline(never)]
    pub fn new(
        parent: Option<SpanContext>,
        tracestate: Option<String>,
        run_id: &str,
        program: &str,
        args: Option<Vec<String>>,
        seed: u64,
    ) -> Trace {
        let mut ids = Xoshiro256PlusPlus::seed_from_u64(seed);
        let trace_id = parent.map_or_else(|| nonzero(&mut ids), |p| p.trace_id);
        let run = SpanContext {
            trace_id,
            span_id: nonzero(&mut ids),
            flags: parent.map_or(SAMPLED, |p| p.flags),
        };
        Trace {
            run,
            parent: parent.map(|p| p.span_id),
            tracestate,
            start: SystemTime::now(),
            run_id: run_id.to_string(),
            program: program.to_string(),
            args,
            attempts: Vec::new(),
            events: Vec::new(),
            ids,
        }
    }

    /// The run span's identity.
    pub fn run_context(&self) -> SpanContext {
        self.run
    }

    /// Whether the spans are recorded and exported: the parent's `sampled` flag (a new trace
    /// is sampled), as the default `parentbased_always_on` sampler decides.
    pub fn sampled(&self) -> bool {
        self.run.flags & SAMPLED != 0
    }

    /// The `tracestate` passed on with every `TRACEPARENT`.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// Attempt `number` starts now: its span's identity, for its `TRACEPARENT`.
    pub fn attempt_start(&mut self, number: u64) -> SpanContext {
        let span_id = nonzero(&mut self.ids);
        self.attempts.push(AttemptSpan {
            number,
            span_id,
            start: SystemTime::now(),
            end: None,
            pid: None,
            exit_code: None,
            http_status: None,
            error_type: None,
        });
        SpanContext {
            span_id,
            ..self.run
        }
    }

    /// The last attempt's span (for the hooks that follow it), if any.
    pub fn last_attempt(&self) -> Option<SpanContext> {
        self.attempts.last().map(|a| SpanContext {
            span_id: a.span_id,
            ..self.run
        })
    }

    /// The running attempt's process id.
    pub fn attempt_pid(&mut self, pid: i32) {
        if let Some(a) = self.attempts.last_mut() {
            a.pid = Some(pid);
        }
    }

    /// The running attempt ended now with `exit_code`; `error_type` when it failed;
    /// `http_status`, the status of the last HTTP response in its output, if one was read.
    pub fn attempt_end(
        &mut self,
        exit_code: u8,
        error_type: Option<String>,
        http_status: Option<u16>,
    ) {
        if let Some(a) = self.attempts.last_mut() {
            a.end = Some(SystemTime::now());
            a.exit_code = Some(exit_code);
            a.error_type = error_type;
            a.http_status = http_status;
        }
    }

    /// An event on the run span, now.
    pub fn event(&mut self, name: &str, attributes: Vec<(&str, Attr)>) {
        self.events.push(Event {
            time_unix_nano: nanos(SystemTime::now()),
            name: name.to_string(),
            attributes: attributes.into_iter().map(|(k, v)| kv(k, v)).collect(),
            dropped_attributes_count: 0,
        });
    }

    /// The export request for the run that ends now with `exit_code` (`error_type` when not 0),
    /// with `resource` attributes (`service.name` first).
    #[cold]
    #[inline(never)]
    pub fn request(
        &self,
        exit_code: u8,
        error_type: Option<&str>,
        resource: &[(String, String)],
    ) -> ExportTraceServiceRequest {
        let end = SystemTime::now();
        let flags =
            u32::from(self.run.flags) | 0x100 | if self.parent.is_some() { 0x200 } else { 0 };
        let mut spans = Vec::with_capacity(self.attempts.len() + 1);
        let mut attributes = vec![
            kv("process.executable.name", Attr::Str("retry".into())),
            kv("process.pid", Attr::Int(i64::from(std::process::id()))),
            kv("process.exit.code", Attr::Int(i64::from(exit_code))),
            kv("retry.run_id", Attr::Str(self.run_id.clone())),
            kv("retry.attempts", Attr::Int(self.attempts.len() as i64)),
        ];
        if let Some(e) = error_type {
            attributes.push(kv("error.type", Attr::Str(e.to_string())));
        }
        spans.push(Span {
            trace_id: self.run.trace_id.to_vec(),
            span_id: self.run.span_id.to_vec(),
            trace_state: self.tracestate.clone().unwrap_or_default(),
            parent_span_id: self.parent.map(|p| p.to_vec()).unwrap_or_default(),
            flags,
            name: "retry".into(),
            kind: SpanKind::Internal as i32,
            start_time_unix_nano: nanos(self.start),
            end_time_unix_nano: nanos(end),
            attributes,
            events: self.events.clone(),
            status: Some(status(error_type)),
            ..Default::default()
        });
        for a in &self.attempts {
            let mut attributes = vec![
                kv("process.executable.name", Attr::Str(self.program.clone())),
                kv(
                    "retry.attempt",
                    Attr::Int(i64::try_from(a.number).unwrap_or(i64::MAX)),
                ),
            ];
            if let Some(pid) = a.pid {
                attributes.push(kv("process.pid", Attr::Int(i64::from(pid))));
            }
            if let Some(code) = a.exit_code {
                attributes.push(kv("process.exit.code", Attr::Int(i64::from(code))));
            }
            if let Some(e) = &a.error_type {
                attributes.push(kv("error.type", Attr::Str(e.clone())));
            }
            // OpenTelemetry's HTTP semantic conventions name the response's status so
            // (<https://opentelemetry.io/docs/specs/semconv/http/http-spans/>).
            if let Some(code) = a.http_status {
                attributes.push(kv("http.response.status_code", Attr::Int(i64::from(code))));
            }
            if let Some(args) = &self.args {
                attributes.push(kv("process.command_args", Attr::Strings(args.clone())));
            }
            spans.push(Span {
                trace_id: self.run.trace_id.to_vec(),
                span_id: a.span_id.to_vec(),
                trace_state: self.tracestate.clone().unwrap_or_default(),
                parent_span_id: self.run.span_id.to_vec(),
                flags: u32::from(self.run.flags) | 0x300,
                name: self.program.clone(),
                kind: SpanKind::Client as i32,
                start_time_unix_nano: nanos(a.start),
                // An attempt still running when the run ended (stopped by a signal): now.
                end_time_unix_nano: nanos(a.end.unwrap_or(end)),
                attributes,
                status: Some(status(a.error_type.as_deref())),
                ..Default::default()
            });
        }
        ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                resource: Some(Resource {
                    attributes: resource
                        .iter()
                        .map(|(k, v)| kv(k, Attr::Str(v.clone())))
                        .collect(),
                    ..Default::default()
                }),
                scope_spans: vec![ScopeSpans {
                    scope: Some(InstrumentationScope {
                        name: "retry".into(),
                        version: env!("CARGO_PKG_VERSION").into(),
                        ..Default::default()
                    }),
                    spans,
                    schema_url: String::new(),
                }],
                schema_url: String::new(),
            }],
        }
    }
}

/// A span's status: `ERROR` with the error type as message, or `UNSET`.
fn status(error_type: Option<&str>) -> Status {
    match error_type {
        Some(e) => Status {
            message: e.to_string(),
            code: StatusCode::Error as i32,
        },
        None => Status::default(),
    }
}

/// `N` random bytes, not all zero (an all-zero id is invalid).
fn nonzero<const N: usize>(rng: &mut Xoshiro256PlusPlus) -> [u8; N] {
    loop {
        let mut bytes = [0u8; N];
        rng.fill_bytes(&mut bytes);
        if bytes != [0; N] {
            return bytes;
        }
    }
}

/// Seconds as a span event attribute: a double.
pub fn seconds(d: Duration) -> Attr {
    Attr::Double(d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_are_children_of_the_run_in_its_trace() {
        let mut trace = Trace::new(None, None, "id", "curl", None, 7);
        let run = trace.run_context();
        let first = trace.attempt_start(1);
        trace.attempt_pid(42);
        trace.attempt_end(7, Some("7".into()), None);
        let second = trace.attempt_start(2);
        trace.attempt_end(0, None, Some(200));
        assert_eq!(first.trace_id, run.trace_id);
        assert_ne!(first.span_id, second.span_id);
        assert_eq!(trace.last_attempt(), Some(second));
        let request = trace.request(0, None, &[("service.name".into(), "s".into())]);
        let spans = &request.resource_spans[0].scope_spans[0].spans;
        assert_eq!(spans.len(), 3);
        assert!(spans[0].parent_span_id.is_empty());
        assert_eq!(spans[1].parent_span_id, run.span_id.to_vec());
        assert_eq!(spans[1].span_id, first.span_id.to_vec());
        assert_eq!(spans[1].name, "curl");
        assert_eq!(
            spans[1].status.as_ref().unwrap().code,
            StatusCode::Error as i32
        );
        assert!(spans[1].attributes.iter().any(|a| a.key == "process.pid"));
        assert!(
            !spans[1]
                .attributes
                .iter()
                .any(|a| a.key == "process.command_args")
        );
        assert!(!spans[2].attributes.iter().any(|a| a.key == "error.type"));
        let http = |i: usize| {
            spans[i]
                .attributes
                .iter()
                .find(|a| a.key == "http.response.status_code")
                .map(|a| a.value.clone())
        };
        assert_eq!(http(1), None);
        assert_eq!(
            http(2).flatten().and_then(|v| v.value),
            Some(Value::IntValue(200))
        );
    }

    #[test]
    fn a_parent_gives_its_trace_flags_and_state() {
        let parent =
            SpanContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00").unwrap();
        let trace = Trace::new(
            Some(parent),
            Some("k=v".into()),
            "id",
            "x",
            Some(vec!["x".into()]),
            1,
        );
        assert_eq!(trace.run_context().trace_id, parent.trace_id);
        assert!(!trace.sampled());
        let request = trace.request(3, Some("gave_up"), &[]);
        let span = &request.resource_spans[0].scope_spans[0].spans[0];
        assert_eq!(span.parent_span_id, parent.span_id.to_vec());
        assert_eq!(span.trace_state, "k=v");
    }
}
