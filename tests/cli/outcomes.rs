//! Attempts and their outcomes: success, retries used up, which statuses retry or stop, launch
//! failures, exit-status fidelity, the child's environment and stdio, and progress lines.

use std::os::unix::process::ExitStatusExt;

use predicates::prelude::*;

use crate::helpers::{retry, retry_std, wait_with_limit};

/// A shell snippet that appends a line to `$LOG` per attempt, then runs `body`.
fn counting(body: &str) -> Vec<String> {
    vec![
        "sh".into(),
        "-c".into(),
        format!("echo \"$RETRY_ATTEMPT $RETRY_MAX_ATTEMPTS\" >> \"$LOG\"; {body}"),
    ]
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    attempts: Vec<String>,
}

fn run(flags: &[&str], body: &str) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let out = retry()
        .env("LOG", &log)
        .args(flags)
        .arg("--")
        .args(counting(body))
        .output()
        .unwrap();
    let attempts = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into(),
        stderr: String::from_utf8_lossy(&out.stderr).into(),
        attempts,
    }
}

#[test]
fn success_at_once_runs_one_attempt_and_says_nothing() {
    let r = run(&["-b", "0"], "echo hi");
    assert_eq!(r.code, Some(0));
    assert_eq!(r.stdout, "hi\n");
    assert_eq!(r.stderr, "");
    assert_eq!(r.attempts, vec!["1 6"]);
}

#[test]
fn default_is_five_retries_and_the_last_status() {
    let r = run(&["-b", "0"], "exit 3");
    assert_eq!(r.code, Some(3));
    assert_eq!(r.attempts.len(), 6);
    assert_eq!(r.attempts[5], "6 6");
}

#[test]
fn max_retries_counts_retries_and_unlimited_has_no_max() {
    let r = run(&["-b", "0", "-n", "2"], "exit 4");
    assert_eq!((r.code, r.attempts.len()), (Some(4), 3));
    let r = run(&["-b", "0", "-n", "0"], "exit 4");
    assert_eq!((r.code, r.attempts.len()), (Some(4), 1));
    // Unlimited: succeed on the 40th attempt; RETRY_MAX_ATTEMPTS is empty.
    let r = run(
        &["-b", "0", "-n", "unlimited"],
        "test \"$RETRY_ATTEMPT\" -ge 40",
    );
    assert_eq!(r.code, Some(0));
    assert_eq!(r.attempts.len(), 40);
    assert_eq!(r.attempts[39], "40 ");
}

#[test]
fn succeeds_after_failures() {
    let r = run(&["-b", "0"], "test \"$RETRY_ATTEMPT\" -ge 3");
    assert_eq!(r.code, Some(0));
    assert_eq!(r.attempts, vec!["1 6", "2 6", "3 6"]);
}

#[test]
fn progress_lines_name_the_program_not_its_arguments() {
    let r = run(
        &["-b", "0", "-n", "1", "--seed", "1"],
        "exit 9 # secret-token",
    );
    assert_eq!(r.code, Some(9));
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{:?}", r.stderr);
    assert_eq!(
        lines[0],
        "retry: attempt 1 of 2: sh exited with status 9; retrying in 0s"
    );
    assert_eq!(lines[1], "retry: attempt 2 of 2: sh exited with status 9");
    assert!(lines[2].starts_with("retry: gave up after 2 attempts in "));
    assert!(!r.stderr.contains("secret-token"));
}

#[test]
fn verbose_shows_arguments_and_quiet_shows_nothing() {
    let r = run(&["-b", "0", "-n", "1", "-v"], "exit 9 # shown-arg");
    assert!(r.stderr.contains("shown-arg"), "{}", r.stderr);
    assert!(r.stderr.contains("seed"), "{}", r.stderr);
    let r = run(&["-b", "0", "-n", "1", "-q"], "exit 9");
    assert_eq!((r.code, r.stderr.as_str()), (Some(9), ""));
}

#[test]
fn quiet_still_prints_errors() {
    retry()
        .args(["-q", "--", "/nonexistent/program"])
        .assert()
        .code(127)
        .stderr(predicate::str::contains("/nonexistent/program"));
}

#[test]
fn default_stop_set_is_not_retried() {
    for code in [126, 127] {
        let r = run(&["-b", "0"], &format!("exit {code}"));
        assert_eq!((r.code, r.attempts.len()), (Some(code), 1), "status {code}");
        assert!(r.stderr.contains(&format!("status {code} is not retried")));
    }
    // 141 (SIGPIPE) is retried: the attempt's own connection may have closed
    // (forever_ends.rs has the reader of retry's own output going away).
    let r = run(&["-b", "0", "-n", "2"], "exit 141");
    assert_eq!((r.code, r.attempts.len()), (Some(141), 3));
}

#[test]
fn retry_on_replaces_any_nonzero_and_can_retry_the_stop_set() {
    let r = run(&["-b", "0", "--retry-on", "2,10-12"], "exit 3");
    assert_eq!((r.code, r.attempts.len()), (Some(3), 1));
    let r = run(&["-b", "0", "--retry-on", "2,10-12"], "exit 11");
    assert_eq!((r.code, r.attempts.len()), (Some(11), 6));
    let r = run(&["-b", "0", "--retry-on", "127", "-n", "2"], "exit 127");
    assert_eq!((r.code, r.attempts.len()), (Some(127), 3));
    let r = run(
        &["-b", "0", "--retry-on", "SIGPIPE", "-n", "2"],
        "kill -PIPE $$",
    );
    assert_eq!(r.attempts.len(), 3);
}

#[test]
fn stop_on_adds_to_the_stop_set_and_wins_over_retry_on() {
    let r = run(&["-b", "0", "--stop-on", "3"], "exit 3");
    assert_eq!((r.code, r.attempts.len()), (Some(3), 1));
    let r = run(&["-b", "0", "--stop-on", "3"], "exit 4");
    assert_eq!(r.attempts.len(), 6);
    let r = run(
        &["-b", "0", "--stop-on", "3", "--retry-on", "3,4"],
        "exit 3",
    );
    assert_eq!(r.attempts.len(), 1);
    let r = run(&["-b", "0", "--stop-on", "TERM"], "kill -TERM $$");
    assert_eq!(r.attempts.len(), 1);
}

#[test]
fn launch_failures_are_not_retried_and_name_the_program() {
    retry()
        .args([
            "-b",
            "0",
            "--retry-on",
            "1-255",
            "--",
            "no-such-program-xyz",
        ])
        .assert()
        .code(127)
        .stderr(
            predicate::str::contains("no-such-program-xyz")
                .and(predicate::str::contains("retrying").not()),
        );
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("not-executable");
    std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
    retry()
        .args(["-b", "0", "--"])
        .arg(&script)
        .assert()
        .code(126)
        .stderr(predicate::str::contains("not-executable"));
}

#[test]
fn every_exit_status_passes_through() {
    for code in [1, 2, 42, 99, 124, 125, 128, 200, 255] {
        retry()
            .args(["-b", "0", "-n", "0", "--", "sh", "-c"])
            .arg(format!("exit {code}"))
            .assert()
            .code(code);
    }
}

#[test]
fn a_death_by_signal_is_passed_on_as_the_same_signal() {
    for (sig, name) in [(9, "KILL"), (15, "TERM"), (10, "USR1"), (6, "ABRT")] {
        let mut child = retry_std()
            .args(["-b", "0", "-n", "1", "--", "sh", "-c"])
            .arg(format!("kill -{name} $$"))
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let status = wait_with_limit(&mut child);
        assert_eq!(status.signal(), Some(sig), "{name}: {status:?}");
        assert!(!status.core_dumped());
    }
}

#[test]
fn stdin_and_stdout_are_the_childs_own() {
    retry()
        .args([
            "-b",
            "0",
            "--",
            "sh",
            "-c",
            "read a; read b; echo \"$b-$a\"",
        ])
        .write_stdin("one\ntwo\n")
        .assert()
        .success()
        .stdout("two-one\n");
    // Attempt 1 consumes a line; attempt 2 gets the rest of the same stdin.
    retry()
        .args([
            "-b",
            "0",
            "-q",
            "--",
            "sh",
            "-c",
            "read a; echo $a; test $a = b",
        ])
        .write_stdin("a\nb\n")
        .assert()
        .success()
        .stdout("a\nb\n");
}

#[test]
fn a_delay_of_zero_is_zero_and_there_is_no_sleep_after_the_last_attempt() {
    let started = std::time::Instant::now();
    let r = run(&["-b", "0", "-n", "200", "-q"], "exit 1");
    assert_eq!(r.attempts.len(), 201);
    // With a 60 s base, a sleep after the only attempt would be obvious.
    let r = run(&["-b", "60s", "-n", "0"], "exit 1");
    assert_eq!(r.code, Some(1));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn waits_happen_between_attempts() {
    // Jitter none, base 300ms: the second attempt starts at least 300 ms after the first ended.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("t");
    retry()
        .args([
            "-j", "none", "-b", "300ms", "-n", "1", "-q", "--", "sh", "-c",
        ])
        .arg(format!("date +%s%N >> {}; exit 1", log.display()))
        .assert()
        .code(1);
    let stamps: Vec<u128> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(stamps.len(), 2);
    let gap_ms = (stamps[1] - stamps[0]) / 1_000_000;
    assert!((300..5_000).contains(&gap_ms), "gap {gap_ms} ms");
}
