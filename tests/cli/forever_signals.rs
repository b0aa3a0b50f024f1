//! `--forever` and stop signals, through the binary users run: TERM and INT during a run and
//! during the wait end retry at once by the same signal, with no restart; a command that
//! ignores TERM gets KILL after `--kill-after`; a command that restarts with no delay at all
//! is still stopped by the first TERM; `--lock` is held across the restarts and let go at the
//! end. Synchronised on the runs' notes in a file and on retry's progress lines.

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::helpers::{lines, release, release_std, send, wait_for_lines, wait_with_limit};

/// `retry ARGS -- sh -c SCRIPT` (the release binary) started, stderr piped, `LOG` = `log`.
fn start(args: &[&str], script: &str, log: &Path) -> Child {
    release_std()
        .env("LOG", log)
        .args(args)
        .args(["--", "sh", "-c", script])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Reads `child`'s stderr until a line containing `needle`; returns the lines read.
fn read_until(child: &mut Child, needle: &str) -> Vec<String> {
    let stderr = child.stderr.take().unwrap();
    let mut seen = Vec::new();
    for line in BufReader::new(stderr).lines() {
        let line = line.unwrap();
        let found = line.contains(needle);
        seen.push(line);
        if found {
            return seen;
        }
    }
    panic!("no line with {needle:?}: {seen:?}");
}

/// Sends `signal` and asserts that retry dies of it within 10 s.
fn dies_of(child: &mut Child, signal: i32) {
    let sent = Instant::now();
    send(child.id(), signal);
    let status = wait_with_limit(child);
    assert_eq!(status.signal(), Some(signal), "{status:?}");
    assert!(sent.elapsed() < Duration::from_secs(10), "not at once");
}

#[test]
fn term_and_int_during_a_run_end_it_with_no_restart() {
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("runs");
        // -k 1s: a shell caught between its echo and its sleep may outlive INT (it waits for
        // a child the signal missed); KILL then comes after a second, not ten.
        let mut child = start(
            &["--forever", "-b", "0", "-k", "1s"],
            "echo run >> \"$LOG\"; sleep 60",
            &log,
        );
        wait_for_lines(&log, 1);
        dies_of(&mut child, signal);
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(lines(&log).len(), 1, "restarted after {signal}");
    }
}

#[test]
fn term_and_int_during_the_wait_end_it_at_once() {
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("runs");
        let mut child = start(
            &["--forever", "-b", "1h", "-c", "1h", "-j", "none"],
            "echo run >> \"$LOG\"",
            &log,
        );
        let seen = read_until(&mut child, "restarting in 1h");
        assert!(seen[0].contains("sh exited with status 0"), "{seen:?}");
        dies_of(&mut child, signal);
        assert_eq!(lines(&log).len(), 1);
    }
}

#[test]
fn a_command_that_ignores_term_is_killed_after_kill_after_and_not_restarted() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("runs");
    let mut child = start(
        &["--forever", "-b", "0", "-k", "0.5"],
        "trap '' TERM; echo run >> \"$LOG\"; while :; do sleep 0.05; done",
        &log,
    );
    wait_for_lines(&log, 1);
    dies_of(&mut child, libc::SIGTERM);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(lines(&log).len(), 1);
}

#[test]
fn a_command_that_restarts_faster_than_a_signal_arrives_is_still_stopped_by_it() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("runs");
    let mut child = start(
        &["--forever", "-b", "0", "-c", "0", "-q"],
        "echo run >> \"$LOG\"",
        &log,
    );
    wait_for_lines(&log, 50);
    dies_of(&mut child, libc::SIGTERM);
    // Nothing runs once retry is gone.
    let after = lines(&log).len();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(lines(&log).len(), after);
}

#[test]
fn the_lock_is_held_across_restarts_and_let_go_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("runs");
    let lock = dir.path().join("lock");
    let lock_arg = lock.to_str().unwrap();
    let mut child = start(
        &[
            "--forever",
            "--lock",
            lock_arg,
            "-b",
            "0.05",
            "-c",
            "0.05",
            "-q",
        ],
        "echo run >> \"$LOG\"",
        &log,
    );
    wait_for_lines(&log, 3);
    let busy = release()
        .args(["--lock", lock_arg, "--", "true"])
        .output()
        .unwrap();
    assert_eq!(
        busy.status.code(),
        Some(75),
        "{}",
        String::from_utf8_lossy(&busy.stderr)
    );
    dies_of(&mut child, libc::SIGTERM);
    let free = release()
        .args(["--lock", lock_arg, "--", "true"])
        .output()
        .unwrap();
    assert_eq!(free.status.code(), Some(0));
}
