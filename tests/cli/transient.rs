//! `--transient` through the binary (issue 43, first tests): a failure known to be transient is
//! retried, any other ends the run at once with its status and says why; the classes given
//! narrow it; `--transient-pattern` and `RETRY_TRANSIENT`; the class on the progress line and
//! in JSON; curl against a closed port on 127.0.0.1.

use std::net::TcpListener;

use serde_json::Value;

use crate::helpers::retry;
use crate::tools::{self, CURL};

/// retry's stderr and status for `args` (and `env`).
fn run(env: &[(&str, &str)], args: &[&str]) -> (Option<i32>, String) {
    let out = retry()
        .envs(env.iter().copied())
        .args(args)
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stderr).unwrap())
}

/// retry's stderr and status for `RULE -n 1 -b 1ms -- COMMAND` (one retry, at once).
fn once(rule: &str, command: &[&str]) -> (Option<i32>, String) {
    let mut args = vec![rule, "-n", "1", "-b", "1ms", "--"];
    args.extend_from_slice(command);
    run(&[], &args)
}

/// A port on 127.0.0.1 nobody listens on (one just bound and let go).
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_permanent_failure_ends_the_run_at_once_with_its_status() {
    let (code, err) = run(
        &[],
        &[
            "--transient",
            "-n",
            "3",
            "-b",
            "1ms",
            "--",
            "sh",
            "-c",
            "echo \"fatal: repository 'https://example.com/typo.git/' not found\" >&2; exit 128",
        ],
    );
    assert_eq!(code, Some(128), "{err}");
    assert!(err.contains("gave up after 1 attempt"), "{err}");
    assert!(err.contains("not known to be transient"), "{err}");
    assert!(err.contains("--transient-pattern"), "{err}");
}

#[test]
fn a_transient_failure_is_retried_and_named() {
    let (code, err) = run(
        &[],
        &[
            "--transient",
            "-n",
            "2",
            "-b",
            "1ms",
            "--",
            "sh",
            "-c",
            "echo 'fatal: unable to access: Could not resolve host: example.com' >&2; exit 128",
        ],
    );
    assert_eq!(code, Some(128), "{err}");
    assert!(err.contains("(transient: dns); retrying in"), "{err}");
    assert!(err.contains("gave up after 3 attempts"), "{err}");
}

#[test]
fn the_classes_given_narrow_the_rule() {
    let script = "echo 'connect to host h port 22: Connection refused' >&2; exit 255";
    let (code, err) = run(
        &[],
        &[
            "--transient=dns",
            "-n",
            "3",
            "-b",
            "1ms",
            "--",
            "sh",
            "-c",
            script,
        ],
    );
    assert_eq!(code, Some(255), "{err}");
    assert!(
        err.contains("its failure (connect) is not one --transient=dns retries"),
        "{err}"
    );
    let (code, err) = run(
        &[("RETRY_TRANSIENT", "dns,connect")],
        &["-n", "1", "-b", "1ms", "--", "sh", "-c", script],
    );
    assert_eq!(code, Some(255), "{err}");
    assert!(err.contains("gave up after 2 attempts"), "{err}");
    let (code, err) = run(&[("RETRY_TRANSIENT", "dnz")], &["--", "true"]);
    assert_eq!(code, Some(125), "{err}");
    assert!(
        err.contains("RETRY_TRANSIENT") && err.contains("dnz"),
        "{err}"
    );
}

#[test]
fn a_pattern_makes_a_failure_transient() {
    let script = "echo 'runner lost: try again' >&2; exit 3";
    let (_, err) = run(
        &[],
        &[
            "--transient-pattern",
            "runner lost",
            "-n",
            "1",
            "-b",
            "1ms",
            "--",
            "sh",
            "-c",
            script,
        ],
    );
    assert!(
        err.contains("(transient: pattern)") && err.contains("gave up after 2 attempts"),
        "{err}"
    );
    let (code, err) = run(
        &[],
        &[
            "--transient-pattern",
            "nothing like it",
            "-n",
            "1",
            "-b",
            "1ms",
            "--",
            "sh",
            "-c",
            script,
        ],
    );
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("gave up after 1 attempt"), "{err}");
}

#[test]
fn a_success_is_never_examined() {
    let (code, err) = run(
        &[],
        &["--transient", "--", "sh", "-c", "echo 'Permission denied'"],
    );
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn curl_refused_by_a_closed_port_is_retried_as_connect_in_json() {
    if !tools::require(&[CURL]) {
        return;
    }
    let url = format!("http://127.0.0.1:{}/", closed_port());
    let (code, err) = run(
        &[],
        &[
            "--log-format",
            "json",
            "--transient",
            "-n",
            "1",
            "-b",
            "1ms",
            "--",
            "curl",
            "-sS",
            &url,
        ],
    );
    assert_eq!(code, Some(7), "{err}");
    let ends: Vec<Value> = err
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["event"] == "attempt_end")
        .collect();
    assert_eq!(ends.len(), 2, "{err}");
    assert!(ends.iter().all(|e| e["transient"] == "connect"), "{err}");
}

/// Each recorded line of the built-in table, printed by a small program as the tools print
/// them (apt-get, Docker, npm, pip, kubectl, the AWS CLI, Terraform, git, ssh, curl, wget):
/// the failure is retried and named by its class, on stderr as on stdout.
#[test]
fn every_recorded_message_of_the_table_is_retried_by_its_class() {
    for (n, row) in retry::transient::ROWS.iter().enumerate() {
        let to = if n % 2 == 0 { ">&2" } else { "" };
        let script = format!("printf '%s\\n' \"$LINE\" {to}; exit 1");
        let out = retry()
            .env("LINE", row.example)
            .args([
                "--transient",
                "-n",
                "1",
                "-b",
                "1ms",
                "--",
                "sh",
                "-c",
                &script,
            ])
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains(&format!("(transient: {}); retrying in", row.class))
                && err.contains("gave up after 2 attempts"),
            "{:?} ({}): {err}",
            row.example,
            row.programs
        );
    }
}

/// git over HTTP against a closed port on 127.0.0.1: `connect`, retried; with
/// `--transient=dns`, given up at once with git's 128.
#[test]
fn git_clone_refused_is_connect() {
    if !tools::require(&[tools::GIT]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{}/org/repo.git", closed_port());
    let target = dir.path().join("repo");
    let target = target.to_str().unwrap();
    let (code, err) = once("--transient", &["git", "clone", "-q", &url, target]);
    assert_eq!(code, Some(128), "{err}");
    assert!(err.contains("(transient: connect); retrying in"), "{err}");
    let (code, err) = once("--transient=dns", &["git", "clone", "-q", &url, target]);
    assert_eq!(code, Some(128), "{err}");
    assert!(
        err.contains("gave up after 1 attempt") && err.contains("(connect)"),
        "{err}"
    );
}

/// ssh to a closed port on 127.0.0.1: `connect`, retried, with ssh's own 255.
#[test]
fn ssh_to_a_refused_port_is_connect() {
    if !tools::require(&[tools::SSH]) {
        return;
    }
    let port = closed_port().to_string();
    let (code, err) = once(
        "--transient",
        &[
            "ssh",
            "-F",
            "/dev/null",
            "-o",
            "BatchMode=yes",
            "-p",
            &port,
            "nobody@127.0.0.1",
            "true",
        ],
    );
    assert_eq!(code, Some(255), "{err}");
    assert!(err.contains("(transient: connect); retrying in"), "{err}");
}
