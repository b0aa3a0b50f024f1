//! Without `--metrics-file` and without an OTLP endpoint, telemetry costs nothing: retry
//! itself (not its attempt) makes no network call and touches no file beyond what it did
//! before (the dynamic loader's, `/dev/tty`, the run's `RETRY_ENV_FILE`), even with
//! `TRACEPARENT` and other `OTEL_*` variables set. Seen through `strace(1)` (`.ci/run` installs it); the same trace with the
//! flag or an endpoint shows the file and the socket, so the check can fail.

use std::path::Path;

use crate::tools::{self, require};

/// The system calls retry's own process made (not its attempt's), as `strace -f` wrote them,
/// for `retry ARGS -- true` with `envs`.
fn own_calls(dir: &Path, args: &[&str], envs: &[(&str, &str)]) -> Vec<String> {
    let log = dir.join("strace.log");
    let bin = assert_cmd::cargo::cargo_bin("retry");
    // Hermetic: only PATH and the variables under test.
    let mut strace = assert_cmd::Command::new("strace");
    strace
        .args(["-f", "-qq", "-e", "trace=%network,%file", "-o"])
        .arg(&log)
        .arg(&bin)
        .args(args)
        .args(["--", "true"])
        .env_clear()
        .envs(envs.iter().copied())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default());
    strace
        .timeout(crate::helpers::HANG_LIMIT)
        .assert()
        .success();
    let text = std::fs::read_to_string(&log).unwrap();
    let pid = text.split_whitespace().next().unwrap().to_string();
    text.lines()
        .filter(|l| l.split_whitespace().next() == Some(pid.as_str()))
        .map(String::from)
        .collect()
}

/// Calls that are neither the loader's nor the terminal's, nor `RETRY_ENV_FILE`'s, nor retry's
/// own `execve`, nor on a descriptor it already had; and signals delivered (the portable
/// supervision learns of the attempt's end by `SIGCHLD`, which strace shows as a line).
fn unexpected(calls: &[String]) -> Vec<&String> {
    const EXPECTED: [&str; 10] = [
        // `PID --- SIGCHLD {...} ---`: a signal delivered, not a call.
        " --- SIG",
        // fstat(2) of a descriptor (AT_EMPTY_PATH): no path.
        "AT_EMPTY_PATH",
        // RETRY_ENV_FILE: the run's file in retry's own directory (TMPDIR unset: /tmp).
        "\"/tmp/retry-",
        ".env\"",
        "\"/etc/ld.so",
        "\"/lib",
        "\"/usr/lib",
        "\"/dev/tty\"",
        "execve(",
        "+++ exited",
    ];
    calls
        .iter()
        .filter(|c| !EXPECTED.iter().any(|e| c.contains(e)))
        .collect()
}

#[test]
fn without_the_flag_or_an_endpoint_retry_opens_no_file_and_no_socket() {
    if !require(&[tools::STRACE]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for envs in [
        vec![],
        vec![
            (
                "TRACEPARENT",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            ),
            ("OTEL_SERVICE_NAME", "x"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
        ],
        // Disabled: an endpoint, but no export.
        vec![
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9"),
            ("OTEL_SDK_DISABLED", "true"),
        ],
    ] {
        let calls = own_calls(dir.path(), &[], &envs);
        assert!(calls.iter().any(|c| c.contains("execve(")), "{calls:?}");
        let odd = unexpected(&calls);
        assert!(odd.is_empty(), "{envs:?}: {odd:#?}");
    }
    // The same trace sees the file and the socket when they are asked for.
    let file = dir.path().join("x.prom");
    let calls = own_calls(dir.path(), &["--metrics-file", file.to_str().unwrap()], &[]);
    assert!(
        unexpected(&calls).iter().any(|c| c.contains("x.prom")),
        "{calls:#?}"
    );
    let calls = own_calls(
        dir.path(),
        &[],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "5000"),
        ],
    );
    assert!(
        unexpected(&calls)
            .iter()
            // `PID  socket(...)`: strace pads the pid column to five characters.
            .any(|c| c
                .split_whitespace()
                .nth(1)
                .is_some_and(|call| call.starts_with("socket("))),
        "{calls:#?}"
    );
}
