//! A real OTLP/HTTP trace receiver for the tests: `otlp_receiver.py` beside this file, a
//! Python HTTP server that decodes each request with the OpenTelemetry project's protocol
//! definitions (the `opentelemetry-proto` package, which `.ci/run` installs) and records it as
//! a JSON line. Started on a free loopback port; killed when dropped. A test that starts one
//! first checks [`RECEIVER`] (`crate::tools::require`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{HANG_LIMIT, wait_for_lines};
use crate::tools::Tool;

/// What the receiver needs: a Python that has the `opentelemetry-proto` package (see
/// [`python`]), for `crate::tools::require`.
pub const RECEIVER: Tool = Tool::elsewhere(
    "python3 with the opentelemetry-proto package",
    "PyPI; `.ci/run --deps` installs it into target/otlp-venv",
    python_has_the_package,
);

/// Whether [`python`] runs and imports the package's trace service (asked once).
fn python_has_the_package() -> bool {
    static FOUND: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FOUND.get_or_init(|| {
        Command::new(python())
            .args([
                "-c",
                "import opentelemetry.proto.collector.trace.v1.trace_service_pb2",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// The running receiver.
pub struct Receiver {
    child: Child,
    port: u16,
    out: PathBuf,
    _dir: tempfile::TempDir,
}

/// One span as the receiver decoded it, with the request's resource attributes.
#[derive(Clone, Debug)]
pub struct Span(pub Value);

impl Span {
    /// A field of the span (`name`, `traceId`, `spanId`, `parentSpanId`, `kind`, ...), as text.
    pub fn field(&self, key: &str) -> String {
        match &self.0[key] {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        }
    }

    /// Attribute `key`'s value (`{"stringValue": ...}`, `{"intValue": ...}`, ...), if present.
    pub fn attr(&self, key: &str) -> Option<Value> {
        attr_in(&self.0["attributes"], key)
    }

    /// The span's events, by name, in order.
    pub fn events(&self, name: &str) -> Vec<Value> {
        self.0["events"]
            .as_array()
            .map(|a| a.iter().filter(|e| e["name"] == name).cloned().collect())
            .unwrap_or_default()
    }
}

/// The value of attribute `key` in a list of OTLP key-values.
pub fn attr_in(attributes: &Value, key: &str) -> Option<Value> {
    attributes
        .as_array()?
        .iter()
        .find(|kv| kv["key"] == key)
        .map(|kv| kv["value"].clone())
}

/// The Python that has the `opentelemetry-proto` package: the virtual environment
/// `.ci/run --deps` makes under `target/` when the system's `python3` lacks it, else `python3`.
fn python() -> PathBuf {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/otlp-venv/bin/python3");
    if venv.exists() {
        venv
    } else {
        PathBuf::from("python3")
    }
}

impl Receiver {
    /// Starts a receiver that answers as `mode` says: `answer` (200), `silent` (never), or
    /// `status:NNN`.
    pub fn start(mode: &str) -> Receiver {
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/helpers/otlp_receiver.py");
        let dir = tempfile::tempdir().unwrap();
        let port_file = dir.path().join("port");
        let out = dir.path().join("requests.jsonl");
        let mut child = Command::new(python())
            .arg(&script)
            .arg(&port_file)
            .arg(&out)
            .arg(mode)
            .stdin(Stdio::null())
            .spawn()
            .expect("python3 (with the opentelemetry-proto package: .ci/run installs it)");
        let start = Instant::now();
        let port = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                break text.trim().parse().unwrap();
            }
            if let Some(status) = child.try_wait().unwrap() {
                panic!(
                    "the OTLP receiver ended ({status}): is the opentelemetry-proto Python \
                     package installed? (.ci/run installs it)"
                );
            }
            assert!(
                start.elapsed() < HANG_LIMIT,
                "the OTLP receiver did not start"
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        Receiver {
            child,
            port,
            out,
            _dir: dir,
        }
    }

    /// The base URL, for `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The first `n` requests received, waiting for them (within the hang limit).
    pub fn requests(&self, n: usize) -> Vec<Value> {
        wait_for_lines(&self.out, n)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The requests received so far.
    pub fn received(&self) -> usize {
        std::fs::read_to_string(&self.out).map_or(0, |t| t.lines().count())
    }

    /// The spans of request `request`, run span first as retry sends them.
    pub fn spans(request: &Value) -> Vec<Span> {
        assert!(
            request["error"].is_null(),
            "the receiver could not decode: {request}"
        );
        request["request"]["resourceSpans"][0]["scopeSpans"][0]["spans"]
            .as_array()
            .unwrap()
            .iter()
            .cloned()
            .map(Span)
            .collect()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
