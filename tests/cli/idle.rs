//! `--idle-timeout`: an attempt that writes nothing is stopped like a timeout and retried; one
//! that keeps writing is not; output passes through while the attempt runs. Margins are wide:
//! the silences that must be noticed are 1 s against sleeps of 60 s, and the ones that must
//! not are 0.1 s against an allowance of 3 s.

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::helpers::{retry, retry_std, send, wait_with_limit};

#[test]
fn a_stalled_attempt_is_stopped_with_124_and_retried() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("attempts");
    let started = Instant::now();
    let out = retry()
        .args([
            "--idle-timeout",
            "1s",
            "-b",
            "0",
            "-n",
            "1",
            "--",
            "sh",
            "-c",
        ])
        .arg(format!(
            "echo \"started $RETRY_ATTEMPT\"; echo x >> {}; exec sleep 60",
            log.display()
        ))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(124), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(40), "{stderr}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "x\nx\n");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "started 1\nstarted 2\n"
    );
    assert!(
        stderr.contains(
            "retry: attempt 1 of 2: sh was idle: no output for 1.000s (status 124); retrying in"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("retry: attempt 2 of 2: sh was idle: no output for 1.000s (status 124)\n"),
        "{stderr}"
    );
}

#[test]
fn output_on_stderr_counts_and_a_busy_attempt_runs_on() {
    // Writes every 0.1 s (to stderr) for about 4 s, longer than the 3 s allowed for a
    // silence: never idle, so it ends by itself.
    let out = retry()
        .args(["--idle-timeout", "3s", "-n", "0", "--", "sh", "-c"])
        .arg("i=0; while [ $i -lt 40 ]; do echo tick >&2; sleep 0.1; i=$((i+1)); done; echo done")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(stderr.lines().filter(|l| *l == "tick").count(), 40);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "done\n");
}

#[test]
fn an_idle_attempt_that_ignores_term_gets_kill_and_retry_dies_of_it() {
    let out = retry()
        .args(["--idle-timeout", "1s", "--kill-after", "1s", "-n", "0"])
        .args([
            "--",
            "sh",
            "-c",
            "trap '' TERM; echo up; while :; do sleep 60; done",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{stderr}");
    assert!(
        stderr.contains("sh was idle: no output for 1.000s, KILL needed (status 137)"),
        "{stderr}"
    );
}

#[test]
fn output_passes_through_while_the_attempt_runs() {
    // The first line reaches retry's stdout while the attempt is still running: it then
    // sleeps, and the test ends it with a TERM to retry long before the 30 s allowed.
    let mut child = retry_std()
        .args(["--idle-timeout", "30s", "-n", "0", "--", "sh", "-c"])
        .arg("echo first; sleep 60")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "first\n");
    assert!(
        child.try_wait().unwrap().is_none(),
        "retry is still running"
    );
    send(child.id(), libc::SIGTERM);
    let status = wait_with_limit(&mut child);
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
}

#[test]
fn the_json_attempt_end_says_idle_and_the_variable_sets_it() {
    let out = retry()
        .env("RETRY_IDLE_TIMEOUT", "1s")
        .args(["--log-format", "json", "-n", "0", "--", "sleep", "60"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(124));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let end: serde_json::Value = stderr
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|e| e["event"] == "attempt_end")
        .unwrap();
    assert_eq!(end["outcome"], "idle", "{end}");
    assert_eq!(end["status"], 124);
    assert_eq!(end["killed"], false);
}

#[test]
fn zero_means_no_idle_limit() {
    retry()
        .args([
            "--idle-timeout",
            "0",
            "-n",
            "0",
            "--",
            "sh",
            "-c",
            "sleep 1.2; echo ok",
        ])
        .assert()
        .success()
        .stdout("ok\n");
}
