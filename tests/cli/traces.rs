//! OpenTelemetry traces through a real OTLP/HTTP receiver (helpers/otlp.rs, decoding with the
//! `opentelemetry-proto` package): the run span and one child span per attempt, the parent
//! from `TRACEPARENT`, each attempt's and hook's `TRACEPARENT` as it saw it, both encodings,
//! and the export's bounds: a receiver that never answers costs at most
//! `OTEL_EXPORTER_OTLP_TIMEOUT`, a stop signal ends the export at once, and neither changes the
//! exit status; headers that would make a malformed request (a second `Content-Length`) are
//! warned about and never sent; credentials in the endpoint URL are never shown.

use std::path::Path;
use std::time::{Duration, Instant};

use predicates::prelude::PredicateBooleanExt;
use serde_json::{Value, json};

use crate::helpers::otlp::{RECEIVER, Receiver, attr_in};
use crate::helpers::{HANG_LIMIT, retry, retry_std, send, wait_with_limit};
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

fn string(v: Option<Value>) -> String {
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

#[test]
fn a_receiver_that_never_answers_costs_the_timeout_and_keeps_the_status() {
    if !require(&[RECEIVER]) {
        return;
    }
    let receiver = Receiver::start("silent");
    let start = Instant::now();
    let out = retry()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env("OTEL_EXPORTER_OTLP_TIMEOUT", "1500")
        .args(["-n", "0", "--", "sh", "-c", "exit 3"])
        .assert()
        .code(3)
        .get_output()
        .clone();
    let took = start.elapsed();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].contains("OTEL_EXPORTER_OTLP_TIMEOUT (1500ms)"),
        "{stderr}"
    );
    // It waited for the answer (the request arrived), and not much past the timeout.
    assert_eq!(receiver.requests(1).len(), 1);
    assert!(took >= Duration::from_millis(1500), "{took:?}");
    assert!(took < Duration::from_secs(15), "{took:?}");
}

#[test]
fn a_failing_or_absent_receiver_is_one_warning_and_never_the_status() {
    if !require(&[RECEIVER]) {
        return;
    }
    let receiver = Receiver::start("status:503");
    let out = retry()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .args(["--", "true"])
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("warning: the trace was not exported") && stderr.contains("503"),
        "{stderr}"
    );
    // Nobody listening (a closed port), and a URL retry cannot use: one line each, status kept.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    for endpoint in [
        format!("http://{closed}"),
        "https://127.0.0.1:1".to_string(),
    ] {
        let out = retry()
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
            .args(["--", "sh", "-c", "exit 4"])
            .args(["-n", "0"])
            .assert()
            .code(4)
            .get_output()
            .clone();
        let stderr = String::from_utf8(out.stderr).unwrap();
        let warnings = stderr.lines().filter(|l| l.contains("warning")).count();
        assert_eq!(warnings, 1, "{endpoint}: {stderr}");
    }
}

#[test]
fn a_stop_signal_during_the_export_ends_retry_at_once() {
    if !require(&[RECEIVER]) {
        return;
    }
    let receiver = Receiver::start("silent");
    let mut child = retry_std()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        // A minute: far longer than the test waits.
        .env("OTEL_EXPORTER_OTLP_TIMEOUT", "60000")
        .args(["-n", "0", "--", "sh", "-c", "exit 5"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The request has arrived: retry now waits for an answer that never comes.
    receiver.requests(1);
    let start = Instant::now();
    send(child.id(), libc::SIGTERM);
    let status = wait_with_limit(&mut child);
    let took = start.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "{took:?} (limit {HANG_LIMIT:?})"
    );
    // The run had ended: its status stands.
    assert_eq!(status.code(), Some(5), "{status:?}");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(stderr.contains("a stop signal arrived"), "{stderr}");
}

#[test]
fn hostile_otel_values_are_one_warning_each_and_never_reach_the_wire() {
    if !require(&[RECEIVER]) {
        return;
    }
    let receiver = Receiver::start("answer");
    let out = retry()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        // A header that would smuggle a second one, and one that is fine.
        .env(
            "OTEL_EXPORTER_OTLP_HEADERS",
            "x-ok=1,x-evil=a\r\nX-Injected: yes",
        )
        // Too large for any clock: the default is used.
        .env("OTEL_EXPORTER_OTLP_TIMEOUT", "99999999999999999999999")
        .env("OTEL_RESOURCE_ATTRIBUTES", "broken")
        .env("OTEL_SERVICE_NAME", "s\u{1b}[31m")
        .args(["-n", "0", "--", "sh", "-c", "exit 6"])
        .assert()
        .code(6)
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 3, "{stderr}");
    assert!(
        warnings[0].contains("OTEL_EXPORTER_OTLP_TIMEOUT"),
        "{stderr}"
    );
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
    let requests = receiver.requests(1);
    let headers = &requests[0]["headers"];
    // The variable with a bad entry sends none of its headers.
    assert!(headers.get("x-injected").is_none(), "{headers}");
    assert!(headers.get("x-evil").is_none(), "{headers}");
    assert!(headers.get("x-ok").is_none(), "{headers}");
    let resource = &requests[0]["request"]["resourceSpans"][0]["resource"]["attributes"];
    assert_eq!(string(attr_in(resource, "service.name")), "s\u{1b}[31m");
}

#[test]
fn headers_that_would_make_a_malformed_request_are_one_warning_each_and_not_sent() {
    if !require(&[RECEIVER]) {
        return;
    }
    let receiver = Receiver::start("answer");
    let out = retry()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env(
            "OTEL_EXPORTER_OTLP_HEADERS",
            "Host=evil.example,x-ok=1,Content-Length=0,transfer-encoding=chunked,\
             CONNECTION=keep-alive,Content-Type=text/plain",
        )
        .args(["-n", "0", "--", "true"])
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let warnings: Vec<&str> = stderr.lines().collect();
    assert_eq!(warnings.len(), 5, "{stderr}");
    for (line, header) in warnings.iter().zip([
        "Host",
        "Content-Length",
        "transfer-encoding",
        "CONNECTION",
        "Content-Type",
    ]) {
        assert!(
            line.contains("warning")
                && line.contains(&format!("OTEL_EXPORTER_OTLP_HEADERS: '{header}'"))
                && line.contains("not sent"),
            "{stderr}"
        );
    }
    let requests = receiver.requests(1);
    let request = &requests[0];
    // Decoded: the body had the length retry said, in the encoding retry said.
    assert_eq!(Receiver::spans(request).len(), 2, "{request}");
    let list = request["header_list"].as_array().unwrap();
    let all = |name: &str| -> Vec<&str> {
        list.iter()
            .filter(|h| h[0] == name)
            .map(|h| h[1].as_str().unwrap())
            .collect()
    };
    assert_eq!(
        all("host"),
        [receiver.endpoint().trim_start_matches("http://")]
    );
    assert_eq!(all("content-length").len(), 1, "{list:?}");
    assert_ne!(all("content-length"), ["0"], "{list:?}");
    assert!(all("transfer-encoding").is_empty(), "{list:?}");
    assert_eq!(all("connection"), ["close"]);
    assert_eq!(all("content-type"), ["application/x-protobuf"]);
    assert_eq!(all("x-ok"), ["1"]);
}

#[test]
fn credentials_in_the_endpoint_are_never_shown_and_one_warning_says_they_are_not_sent() {
    if !require(&[RECEIVER]) {
        return;
    }
    let receiver = Receiver::start("status:500");
    let port = receiver.endpoint().rsplit(':').next().unwrap().to_string();
    let out = retry()
        .env(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://user:s3cret@127.0.0.1:{port}"),
        )
        .args(["-n", "0", "--", "true"])
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!stderr.contains("s3cret"), "{stderr}");
    let warnings: Vec<&str> = stderr.lines().collect();
    assert_eq!(warnings.len(), 2, "{stderr}");
    assert!(
        warnings[0].contains("warning: OTEL_EXPORTER_OTLP_ENDPOINT: the user name and password")
            && warnings[0].contains("not sent")
            && warnings[0].contains("OTEL_EXPORTER_OTLP_HEADERS"),
        "{stderr}"
    );
    assert!(
        warnings[1].contains(&format!(
            "the trace was not exported to http://127.0.0.1:{port}/v1/traces: the server \
             answered 500"
        )),
        "{stderr}"
    );
    let requests = receiver.requests(1);
    assert!(
        requests[0]["headers"].get("authorization").is_none(),
        "{}",
        requests[0]["headers"]
    );
    // A value retry cannot use is echoed with its userinfo hidden.
    let out = retry()
        .env(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "https://user:s3cret@127.0.0.1:1/v1/traces",
        )
        .args(["-n", "0", "--", "true"])
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is 'https://***@127.0.0.1:1/v1/traces': \
             retry sends OTLP over plain http only"
        ),
        "{stderr}"
    );
}
