//! OpenTelemetry traces through a real OTLP/HTTP receiver (helpers/otlp.rs, decoding with the
//! `opentelemetry-proto` package): the run span and one child span per attempt, the parent
//! from `TRACEPARENT`, each attempt's and hook's `TRACEPARENT` as it saw it, both encodings,
//! nothing sent when disabled or not sampled. The export's bounds (a receiver that never
//! answers, a stop signal, hostile values and headers, credentials in the endpoint URL) are in
//! `traces_export.rs`.

use std::path::Path;

use predicates::prelude::PredicateBooleanExt;
use serde_json::{Value, json};

use crate::helpers::otlp::{RECEIVER, Receiver, attr_in};
use crate::helpers::retry;
use crate::tools::require;

const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const PARENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_SPAN: &str = "00f067aa0ba902b7";

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

fn int(v: Option<Value>) -> i64 {
    let v = v.unwrap_or_default();
    v["intValue"]
        .as_str()
        .map(|s| s.parse().unwrap())
        .or_else(|| v["intValue"].as_i64())
        .unwrap_or(-1)
}

pub(crate) fn string(v: Option<Value>) -> String {
    v.and_then(|v| v["stringValue"].as_str().map(String::from))
        .unwrap_or_default()
}

#[test]
fn the_run_and_each_attempt_are_spans_linked_to_the_callers_trace() {
    if !require(&[RECEIVER]) {
        return;
    }
    let receiver = Receiver::start("answer");
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let script = format!(
        "echo \"attempt $RETRY_ATTEMPT $TRACEPARENT $TRACESTATE $RETRY_RUN_ID\" >> {0}; \
         [ \"$RETRY_ATTEMPT\" -ge 3 ]",
        log.display()
    );
    let hook = format!(
        "echo \"hook $RETRY_ATTEMPT $TRACEPARENT\" >> {}",
        log.display()
    );
    retry()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env("OTEL_SERVICE_NAME", "nightly-backup")
        .env(
            "OTEL_RESOURCE_ATTRIBUTES",
            "deployment.environment=test,service.name=ignored",
        )
        .env("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=s3cr%20t")
        .env("TRACEPARENT", PARENT)
        .env("TRACESTATE", "vendor=opaque")
        .args([
            "-b",
            "0",
            "-n",
            "5",
            "--on-retry",
            &hook,
            "--",
            "sh",
            "-c",
            &script,
        ])
        .assert()
        .success()
        .stderr(predicates::str::contains("warning").not());
    let requests = receiver.requests(1);
    let request = &requests[0];
    assert_eq!(request["path"], "/v1/traces");
    assert_eq!(request["content_type"], "application/x-protobuf");
    assert_eq!(request["headers"]["x-api-key"], "s3cr t");
    let resource = &request["request"]["resourceSpans"][0]["resource"]["attributes"];
    assert_eq!(string(attr_in(resource, "service.name")), "nightly-backup");
    assert_eq!(string(attr_in(resource, "deployment.environment")), "test");
    let spans = Receiver::spans(request);
    assert_eq!(spans.len(), 4, "{spans:?}");
    let run = &spans[0];
    let attempts = &spans[1..];
    // The run span: retry's own execution, a child of the caller's span, in its trace.
    assert_eq!(run.field("name"), "retry");
    assert_eq!(run.field("kind"), "SPAN_KIND_INTERNAL");
    assert_eq!(run.field("traceId"), PARENT_TRACE);
    assert_eq!(run.field("parentSpanId"), PARENT_SPAN);
    assert_eq!(run.field("traceState"), "vendor=opaque");
    assert_eq!(int(run.attr("process.exit.code")), 0);
    assert_eq!(int(run.attr("retry.attempts")), 3);
    assert!(run.attr("error.type").is_none());
    assert_eq!(run.events("retry.wait").len(), 2);
    let wait = &run.events("retry.wait")[0];
    assert_eq!(string(attr_in(&wait["attributes"], "retry.reason")), "1");
    assert_eq!(int(attr_in(&wait["attributes"], "retry.attempt")), 1);
    assert!(attr_in(&wait["attributes"], "retry.delay_seconds").is_some());
    // What each attempt and hook saw, as the log has it.
    let log = lines(&log);
    let seen = |who: &str, n: u64| -> Vec<String> {
        let line = log
            .iter()
            .find(|l| l.starts_with(&format!("{who} {n} ")))
            .unwrap_or_else(|| panic!("no {who} {n} in {log:?}"));
        line.split(' ').map(String::from).collect()
    };
    let run_id = seen("attempt", 1)[4].clone();
    assert_eq!(string(run.attr("retry.run_id")), run_id);
    for (i, span) in attempts.iter().enumerate() {
        let n = i as u64 + 1;
        assert_eq!(span.field("name"), "sh");
        assert_eq!(span.field("kind"), "SPAN_KIND_CLIENT");
        assert_eq!(span.field("traceId"), PARENT_TRACE);
        assert_eq!(span.field("parentSpanId"), run.field("spanId"));
        assert_eq!(int(span.attr("retry.attempt")), n as i64);
        assert_eq!(string(span.attr("process.executable.name")), "sh");
        assert!(int(span.attr("process.pid")) > 1);
        assert!(
            span.attr("process.command_args").is_none(),
            "only with --trace-args"
        );
        let traceparent = format!("00-{PARENT_TRACE}-{}-01", span.field("spanId"));
        let attempt = seen("attempt", n);
        assert_eq!(attempt[2], traceparent, "attempt {n}");
        assert_eq!(attempt[3], "vendor=opaque");
        if n < 3 {
            assert_eq!(int(span.attr("process.exit.code")), 1);
            assert_eq!(string(span.attr("error.type")), "1");
            assert_eq!(span.0["status"]["code"], "STATUS_CODE_ERROR");
            // The hook after attempt n names attempt n's span.
            assert_eq!(seen("hook", n)[2], traceparent, "hook {n}");
        } else {
            assert_eq!(int(span.attr("process.exit.code")), 0);
            assert!(span.attr("error.type").is_none());
        }
    }
    let ids: std::collections::BTreeSet<String> = spans.iter().map(|s| s.field("spanId")).collect();
    assert_eq!(ids.len(), 4, "span ids differ");
}

#[test]
fn json_with_the_arguments_a_new_trace_and_the_give_up() {
    if !require(&[RECEIVER]) {
        return;
    }
    let receiver = Receiver::start("answer");
    retry()
        .env(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            format!("{}/v1/traces", receiver.endpoint()),
        )
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        // Not a valid traceparent: a new trace is started.
        .env("TRACEPARENT", "00-zz-00f067aa0ba902b7-01")
        .args([
            "--trace-args",
            "-b",
            "0",
            "-n",
            "1",
            "--",
            "sh",
            "-c",
            "exit 7",
            "sh",
        ])
        .assert()
        .code(7);
    let requests = receiver.requests(1);
    assert_eq!(requests[0]["content_type"], "application/json");
    let spans = Receiver::spans(&requests[0]);
    assert_eq!(spans.len(), 3);
    let run = &spans[0];
    assert_eq!(run.field("parentSpanId"), "");
    assert_eq!(run.field("traceId").len(), 32);
    assert_ne!(run.field("traceId"), PARENT_TRACE);
    assert_eq!(int(run.attr("process.exit.code")), 7);
    assert_eq!(string(run.attr("error.type")), "gave_up");
    let give_up = run.events("retry.give_up");
    assert_eq!(give_up.len(), 1, "{run:?}");
    assert_eq!(
        string(attr_in(&give_up[0]["attributes"], "retry.reason")),
        "no retries left"
    );
    let args = spans[1].attr("process.command_args").unwrap();
    assert_eq!(
        args,
        json!({"arrayValue": {"values": [
            {"stringValue": "sh"}, {"stringValue": "-c"},
            {"stringValue": "exit 7"}, {"stringValue": "sh"}
        ]}})
    );
}

#[test]
fn nothing_is_sent_when_disabled_or_not_sampled_and_traceparent_passes_through() {
    if !require(&[RECEIVER]) {
        return;
    }
    let receiver = Receiver::start("answer");
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let script = format!("echo \"$TRACEPARENT\" >> {}", log.display());
    let unsampled = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";
    // Disabled, or no exporter: the caller's TRACEPARENT reaches the command unchanged.
    for vars in [
        vec![("OTEL_SDK_DISABLED", "true")],
        vec![("OTEL_TRACES_EXPORTER", "none")],
    ] {
        retry()
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
            .env("TRACEPARENT", PARENT)
            .envs(vars)
            .args(["--", "sh", "-c", &script])
            .assert()
            .success()
            .stderr("");
    }
    retry()
        .env("TRACEPARENT", PARENT)
        .args(["--", "sh", "-c", &script])
        .assert()
        .success();
    // A parent that did not sample: the attempt joins its trace, unsampled; nothing is sent.
    retry()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env("TRACEPARENT", unsampled)
        .args(["--", "sh", "-c", &script])
        .assert()
        .success()
        .stderr("");
    let seen = lines(&log);
    assert_eq!(seen[..3], [PARENT, PARENT, PARENT]);
    assert!(
        seen[3].starts_with(&format!("00-{PARENT_TRACE}-")),
        "{seen:?}"
    );
    assert!(seen[3].ends_with("-00") && seen[3] != unsampled, "{seen:?}");
    assert_eq!(receiver.received(), 0);
}
