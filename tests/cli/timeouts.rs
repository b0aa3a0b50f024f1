//! `--timeout`, `--kill-after` and `--deadline`: statuses 124 and 137, whole trees stopped.

use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

use predicates::prelude::*;

use crate::helpers::{retry, wait_gone};

/// Pids written one per line by the attempts' processes.
fn pids(path: &std::path::Path) -> Vec<i32> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect()
}

#[test]
fn a_timed_out_attempt_is_124_and_retried() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    retry()
        .args(["-t", "200ms", "-b", "0", "-n", "2", "--", "sh", "-c"])
        .arg(format!(
            "echo $RETRY_ATTEMPT >> {}; sleep 100",
            log.display()
        ))
        .assert()
        .code(124)
        .stderr(predicate::str::contains("timed out"));
    assert_eq!(pids(&log), vec![1, 2, 3]);
}

#[test]
fn a_timeout_stops_the_whole_tree() {
    // Synchronised on files, not on the 300 ms: an attempt lists its processes, marks itself
    // complete and waits to be timed out; the attempt after a complete one succeeds at once. A
    // start so slow that the timeout meets it before its mark is only retried.
    let dir = tempfile::tempdir().unwrap();
    let (log, complete) = (dir.path().join("pids"), dir.path().join("complete"));
    retry()
        .args(["-t", "300ms", "-n", "50", "-b", "0", "--", "sh", "-c"])
        .arg(format!(
            "[ -e {c} ] && exit 0; \
             sleep 100 & echo $! >> {0}; sleep 100 & echo $! >> {0}; echo $$ >> {0}; \
             touch {c}; wait",
            log.display(),
            c = complete.display()
        ))
        .assert()
        .success()
        .stderr(predicate::str::contains("timed out"));
    let p = pids(&log);
    assert!(p.len() >= 3, "{p:?}");
    wait_gone(&p);
}

#[test]
fn a_child_that_ignores_term_gets_kill_and_137() {
    // An attempt timed out before its trap was set dies of TERM (124) and is retried; the
    // first one that ignores TERM needs KILL (137), which --stop-on makes the last.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("pids");
    let started = Instant::now();
    let out = retry()
        .args([
            "-t",
            "200ms",
            "--kill-after",
            "300ms",
            "-n",
            "50",
            "-b",
            "0",
        ])
        .args(["--stop-on", "137", "--", "sh", "-c"])
        .arg(format!(
            "trap '' TERM; sleep 100 & echo $! >> {0}; echo $$ >> {0}; while :; do wait; done",
            log.display()
        ))
        .assert()
        .failure()
        .stderr(predicate::str::contains("KILL needed (status 137)"));
    // KILL was needed: retry dies of KILL, as coreutils `timeout` does (a shell's 137).
    assert_eq!(out.get_output().status.signal(), Some(libc::SIGKILL));
    assert!(started.elapsed() >= Duration::from_millis(500));
    wait_gone(&pids(&log));
}

#[test]
fn stop_on_applies_to_timeouts() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    retry()
        .args([
            "-t",
            "100ms",
            "-b",
            "0",
            "--stop-on",
            "124",
            "--",
            "sh",
            "-c",
        ])
        .arg(format!("echo x >> {}; sleep 100", log.display()))
        .assert()
        .code(124);
    assert_eq!(pids_count(&log), 1);
}

fn pids_count(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .count()
}

#[test]
fn the_deadline_stops_a_running_attempt_and_no_attempt_starts_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let started = Instant::now();
    retry()
        .args([
            "-d",
            "500ms",
            "-b",
            "0",
            "-n",
            "unlimited",
            "--",
            "sh",
            "-c",
        ])
        .arg(format!("echo x >> {}; sleep 100", log.display()))
        .assert()
        .code(124)
        .stderr(predicate::str::contains("deadline"));
    assert_eq!(pids_count(&log), 1);
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn gives_up_at_once_when_the_next_delay_would_pass_the_deadline() {
    // base 60s with a 5s deadline: the first delay would end past it, so no sleep at all.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let started = Instant::now();
    retry()
        .args(["-d", "5s", "-b", "60s", "-j", "none", "--", "sh", "-c"])
        .arg(format!("echo x >> {}; exit 7", log.display()))
        .assert()
        .code(7)
        .stderr(predicate::str::contains("deadline"));
    assert_eq!(pids_count(&log), 1);
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn deadline_lets_attempts_run_until_it_passes() {
    // 100 ms delays (none) within a 1.5 s deadline: several attempts, then give up, never sleeping past it.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let started = Instant::now();
    retry()
        .args(["-d", "1500ms", "-b", "100ms", "-m", "1", "-j", "none"])
        .args(["-n", "unlimited", "-q", "--", "sh", "-c"])
        .arg(format!("echo x >> {}; exit 5", log.display()))
        .assert()
        .code(5);
    let n = pids_count(&log);
    assert!((3..=15).contains(&n), "{n} attempts");
    assert!(started.elapsed() < Duration::from_secs(20));
}
