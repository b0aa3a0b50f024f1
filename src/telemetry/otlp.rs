//! The OTLP exporter ([`Exporter`], read from the `OTEL_*` variables by [`super::otel_env`]),
//! the request body in either encoding of OTLP/HTTP
//! (<https://opentelemetry.io/docs/specs/otlp/#otlphttp>): binary protobuf, or the JSON
//! mapping with hex trace and span ids, both from the OpenTelemetry project's generated types
//! (`opentelemetry-proto`, encoded by `prost` and `serde_json`), and the export itself
//! ([`export`]: one POST through [`super::http`], its failure in words).

use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;

use super::http;
use crate::net::Failure;

/// `OTEL_EXPORTER_OTLP_TIMEOUT` when unset: 10 s, the specification's default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The two OTLP/HTTP encodings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// `http/protobuf` (the default): `application/x-protobuf`.
    Protobuf,
    /// `http/json`: `application/json`.
    Json,
}

impl Protocol {
    /// The `Content-Type` of a request body.
    pub fn content_type(self) -> &'static str {
        match self {
            Protocol::Protobuf => "application/x-protobuf",
            Protocol::Json => "application/json",
        }
    }

    /// `request` in this encoding.
    #[cold]
    #[inline(never)]
    pub fn encode(self, request: &ExportTraceServiceRequest) -> Vec<u8> {
        match self {
            Protocol::Protobuf => request.encode_to_vec(),
            // The generated types' serde mapping is the OTLP JSON one (hex ids, camelCase).
            Protocol::Json => serde_json::to_vec(request).unwrap_or_default(),
        }
    }
}

/// Where and how the traces go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exporter {
    /// The full URL the spans are POSTed to (`http://HOST:PORT/v1/traces`).
    pub url: url::Url,
    /// The encoding.
    pub protocol: Protocol,
    /// Extra request headers (`OTEL_EXPORTER_OTLP_HEADERS`), decoded; never one of
    /// [`http::OWN_HEADERS`] (each of those is a warning instead).
    pub headers: Vec<(String, String)>,
    /// The longest the export at the end of the run may take.
    pub timeout: Duration,
    /// `service.name` and the other resource attributes, in order.
    pub resource: Vec<(String, String)>,
}

/// Sends `request` to the exporter's URL within its timeout.
///
/// # Errors
/// Why it was not accepted, in words.
#[cold]
#[inline(never)]
pub fn export(exporter: &Exporter, request: &ExportTraceServiceRequest) -> Result<(), String> {
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
