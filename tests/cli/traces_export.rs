//! OpenTelemetry traces, the export's bounds: a receiver that never answers costs at most
//! `OTEL_EXPORTER_OTLP_TIMEOUT`, a failing one is one warning, a stop signal ends the export at
//! once, hostile values and malformed headers are warned about and never sent, credentials are
//! never shown. The spans themselves are in `traces.rs`.

use std::time::{Duration, Instant};

use crate::helpers::otlp::{RECEIVER, Receiver, attr_in};
use crate::helpers::{HANG_LIMIT, retry, retry_std, send, wait_with_limit};
use crate::tools::require;
use crate::traces::string;

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
            .args(["-n", "0", "--", "sh", "-c", "exit 4"])
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
