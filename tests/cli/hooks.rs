//! `--on-retry`, `--on-retry-fail` and `--on-give-up`: commands run with `sh -c` around the
//! retrying, with the documented variables.

use std::os::unix::process::ExitStatusExt;

use predicates::prelude::*;

use crate::helpers::{retry, retry_std, send, wait_for_lines, wait_with_limit};

#[test]
fn on_retry_runs_before_each_retry_with_its_variables() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    retry()
        .args(["-b", "20ms", "-j", "none", "-m", "1", "-n", "2", "-q"])
        .arg("--on-retry")
        .arg(format!(
            "echo \"$RETRY_ATTEMPT $RETRY_MAX_ATTEMPTS $RETRY_LAST_STATUS $RETRY_DELAY\" >> {}",
            log.display()
        ))
        .args(["--", "sh", "-c", "exit 4"])
        .assert()
        .code(4);
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "1 3 4 0.020\n2 3 4 0.020\n"
    );
}

#[test]
fn hook_stdout_goes_to_stderr_and_stdin_is_empty() {
    retry()
        .args([
            "-b",
            "0",
            "-n",
            "1",
            "-q",
            "--on-retry",
            "echo hook-out; cat",
        ])
        .args(["--", "sh", "-c", "echo attempt-out; exit 1"])
        .write_stdin("stdin-for-the-attempt\n")
        .assert()
        .code(1)
        .stdout("attempt-out\nattempt-out\n")
        .stderr("hook-out\n");
}

#[test]
fn a_failing_hook_is_reported_and_retrying_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    retry()
        .args(["-b", "0", "--on-retry", "exit 3", "--", "sh", "-c"])
        .arg(format!(
            "echo x >> {}; test $RETRY_ATTEMPT -ge 3",
            log.display()
        ))
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "--on-retry hook exited with status 3",
        ));
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "x\nx\nx\n");
}

#[test]
fn on_retry_fail_stop_gives_up_with_the_last_status() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    retry()
        .args(["-b", "0", "--on-retry", "exit 3", "--on-retry-fail", "stop"])
        .args(["--", "sh", "-c"])
        .arg(format!("echo x >> {}; exit 6", log.display()))
        .assert()
        .code(6)
        .stderr(predicate::str::contains("gave up").and(predicate::str::contains("hook")));
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "x\n");
}

#[test]
fn on_give_up_runs_once_when_giving_up_and_never_on_success() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let hook = format!(
        "echo \"$RETRY_ATTEMPT $RETRY_LAST_STATUS ${{RETRY_DELAY-unset}}\" >> {}",
        log.display()
    );
    retry()
        .args([
            "-b",
            "0",
            "-n",
            "2",
            "-q",
            "--on-give-up",
            &hook,
            "--",
            "sh",
            "-c",
            "exit 5",
        ])
        .assert()
        .code(5);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "3 5 unset\n");
    retry()
        .args(["-b", "0", "-q", "--on-give-up", &hook, "--", "true"])
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "3 5 unset\n");
    // A stop status gives up too; the hook's own status does not change retry's.
    retry()
        .args(["-q", "--on-give-up", "exit 9", "--", "sh", "-c", "exit 127"])
        .assert()
        .code(127);
}

#[test]
fn output_failed_attempts_report_status_1_to_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    retry()
        .args(["-b", "0", "-n", "1", "-q", "--retry-if-output", "busy"])
        .arg("--on-retry")
        .arg(format!("echo $RETRY_LAST_STATUS >> {}", log.display()))
        .args(["--", "echo", "busy"])
        .assert()
        .code(1);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "1\n");
}

#[test]
fn a_signal_during_a_hook_reaches_it_and_ends_retry() {
    let dir = tempfile::tempdir().unwrap();
    let (ready, log) = (dir.path().join("ready"), dir.path().join("log"));
    let mut child = retry_std()
        .args(["-b", "0", "-q", "--on-retry"])
        .arg(format!(
            "trap 'echo got >> {log}; exit 0' TERM; echo x > {ready}; \
             while :; do sleep 0.05; done",
            log = log.display(),
            ready = ready.display()
        ))
        .args(["--", "false"])
        .spawn()
        .unwrap();
    wait_for_lines(&ready, 1);
    send(child.id(), libc::SIGTERM);
    let status = wait_with_limit(&mut child);
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "got\n");
}

#[test]
fn json_events_report_hooks() {
    retry()
        .args([
            "--log-format",
            "json",
            "-b",
            "0",
            "-n",
            "1",
            "--on-retry",
            "exit 2",
        ])
        .args(["--", "false"])
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains(r#""event":"hook","elapsed":"#)
                .and(predicate::str::contains(r#""hook":"on_retry","status":2"#)),
        );
}
