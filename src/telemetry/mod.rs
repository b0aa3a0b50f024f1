//! What a run leaves behind for monitoring: the Prometheus textfile of `--metrics-file`
//! ([`metrics`]) and an OpenTelemetry trace exported over OTLP/HTTP when the `OTEL_*`
//! variables ask for one ([`otel_env`], [`otlp`], [`spans`], [`http`]), with the trace context handed to
//! every attempt and hook in `TRACEPARENT` / `TRACESTATE` ([`traceparent`]).
//!
//! Code layout: everything that runs only when telemetry is asked for (the file's writing
//! and parsing, the encoding, the HTTP exchange) is `#[cold]` and never inlined, so that none
//! of it is inlined into the code every run goes through (the command line's reading, the
//! supervisor), which a plain `retry -- true` pages in.
//!
//! Self-contained: it knows neither the command line nor the supervisor. [`Settings`] is read
//! once, from the flags and the environment ([`settings`], the `OTEL_*` variables by
//! [`otel_env`]); [`Telemetry`] records the run as the supervisor tells it and writes and
//! sends it at the end ([`record`]; the export by [`otlp::export`]). Without `--metrics-file` and without an OTLP
//! endpoint it does nothing at all: no file, no socket, no thread.

pub mod endpoint;
pub mod http;
pub mod metrics;
pub mod observer;
pub mod otel_env;
pub mod otlp;
pub mod prom_parse;
pub mod record;
pub mod settings;
pub mod spans;
pub mod textfile;
pub mod traceparent;

pub use metrics::RunResult;
pub use record::{Said, Telemetry};
pub use settings::{Metrics, Settings, Traces, program};
