//! `--idle-timeout`: an attempt that writes nothing is stopped like a timeout and retried; one
//! that keeps writing is not, nor one held up by a slow reader downstream; output passes
//! through while the attempt runs. Margins are wide: the silences that must be noticed are 1 s
//! against sleeps of 60 s, and the ones that must not are 0.1 s against an allowance of 3 s, or
//! a reader that stops reading for 4 s against an allowance of 1 s.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
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
            "retry: attempt 1 of 2: sh was idle: no output for 1s (status 124); retrying in"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("retry: attempt 2 of 2: sh was idle: no output for 1s (status 124)\n"),
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
        stderr.contains("sh was idle: no output for 1s, KILL needed (status 137)"),
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

/// Runs `retry --idle-timeout 1s -b 0 ARGS` with its stdout read by a slow reader: a shell that
/// reads nothing for 4 s (four times the allowed silence), then copies everything to a file.
/// Returns retry's status, its stderr and what the reader got.
fn through_a_slow_reader(args: &[&str]) -> (std::process::ExitStatus, String, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let got = dir.path().join("got");
    let mut reader = Command::new("sh")
        .arg("-c")
        .arg(format!("sleep 4; exec cat > {}", got.display()))
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = retry_std()
        .args(["--idle-timeout", "1s", "-b", "0"])
        .args(args)
        .stdout(Stdio::from(reader.stdin.take().unwrap()))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = wait_with_limit(&mut child);
    assert!(wait_with_limit(&mut reader).success());
    (status, stderr, std::fs::read(&got).unwrap())
}

/// `seq 1 N` as bytes.
fn seq(n: u32) -> Vec<u8> {
    (1..=n)
        .flat_map(|i| format!("{i}\n").into_bytes())
        .collect()
}

#[test]
fn a_writer_held_up_by_a_slow_reader_is_not_idle() {
    // 6.9 MB: far more than the pipes between seq, retry and the reader hold, so while the
    // reader does not read, retry's write blocks and seq's writes block behind it. That is the
    // reader's slowness, not seq's silence: the attempt runs to its end, and the reader gets
    // every line once.
    let (status, stderr, got) = through_a_slow_reader(&["-n", "1", "--", "seq", "1", "1000000"]);
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("idle"), "{stderr}");
    assert!(got == seq(1_000_000), "the reader got {} bytes", got.len());
}

#[test]
fn silence_after_the_slow_reader_caught_up_is_still_idle() {
    // The same writer then really falls silent: it is stopped 1 s after the reader took its
    // last line, and nothing it wrote is lost or repeated.
    let (status, stderr, got) =
        through_a_slow_reader(&["-n", "0", "--", "sh", "-c", "seq 1 1000000; exec sleep 60"]);
    assert_eq!(status.code(), Some(124), "{stderr}");
    assert!(
        stderr.contains("sh was idle: no output for 1s (status 124)"),
        "{stderr}"
    );
    assert!(got == seq(1_000_000), "the reader got {} bytes", got.len());
}
