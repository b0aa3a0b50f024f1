//! I/O faults, the reader's side and the words: a stop signal never waits for a reader that does
//! not read, a reader that went away still means SIGPIPE, and messages stay exact (escaped
//! names, `-v`, JSON numbers, hints that are not seconds). Writing and recording faults are in
//! `faults_io.rs`.

use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::faults_io::{collect, dev_full, retry_with, run};
use crate::helpers::{retry_std, send, wait_with_limit};

// ---------------------------------------------------------------------------------------------
// A stop signal while the output waits for a reader that does not read

/// The number of bytes waiting in a pipe (FIONREAD on its read end).
fn unread(fd: &OwnedFd) -> usize {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one c_int through the pointer, which points to `n`.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), libc::FIONREAD, &mut n) };
    assert_eq!(rc, 0);
    n as usize
}

/// Runs retry with `flags` and `script`, its stdout a pipe nobody reads; once output is
/// waiting there, sends `signal`. Returns retry's status and how long it took to end after
/// the signal.
fn stopped_while_blocked(flags: &[&str], script: &str, signal: i32) -> (ExitStatus, Duration) {
    let (read, write) = nix::unistd::pipe().unwrap();
    let mut child = retry_std()
        .args(flags)
        .args(["--kill-after", "1s", "--", "sh", "-c", script])
        .stdout(write)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while unread(&read) == 0 {
        assert!(
            start.elapsed() < crate::helpers::HANG_LIMIT,
            "no output came"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    send(child.id(), signal);
    let signalled = Instant::now();
    let status = wait_with_limit(&mut child);
    let took = signalled.elapsed();
    drop(read);
    (status, took)
}

#[test]
fn a_stop_signal_never_waits_for_a_reader_that_does_not_read() {
    // Within --kill-after (1 s) plus a second, with a wide margin for a loaded machine; the
    // fault this guards against is a wait without end.
    let bound = Duration::from_secs(10);
    let held = "head -c 20000000 /dev/zero";
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT] {
        let (status, took) = stopped_while_blocked(&["--stdout-on-success"], held, signal);
        assert_eq!(status.signal(), Some(signal), "held, {signal}: {status:?}");
        assert!(took < bound, "held, {signal}: {took:?}");
    }
    // A matched output, forwarded live: the attempt is stopped, the pump is left behind.
    for signal in [libc::SIGTERM, libc::SIGHUP] {
        let (status, took) = stopped_while_blocked(&["--retry-if-output", "zzz"], "yes", signal);
        assert_eq!(
            status.signal(),
            Some(signal),
            "matched, {signal}: {status:?}"
        );
        assert!(took < bound, "matched, {signal}: {took:?}");
    }
    // An attempt that ignores TERM while it writes: KILL after --kill-after, then the same.
    let (status, took) = stopped_while_blocked(
        &["--retry-if-output", "zzz"],
        "trap '' TERM; yes",
        libc::SIGTERM,
    );
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    assert!(
        took >= Duration::from_millis(900) && took < bound,
        "{took:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Exact messages

#[test]
fn a_hint_that_is_neither_seconds_nor_a_date_is_reported_once_per_attempt() {
    let mut cmd = retry_with(&["--delay-from-output", "(?i)^retry-after: *(.+)$"]);
    cmd.args(["-b", "0", "-n", "2", "--", "sh", "-c"])
        .arg("echo 'retry-after: Wed, 21 Oct 2015 07:28 GMT'; exit 1");
    let r = run(cmd);
    assert_eq!(r.status.code(), Some(1));
    let hints: Vec<&str> = r
        .retry_lines()
        .into_iter()
        .filter(|l| l.contains("--delay-from-output"))
        .collect();
    // Attempts 1 and 2 are followed by a delay; attempt 3 is not.
    assert_eq!(hints.len(), 2, "{}", r.stderr);
    assert!(
        hints[0].contains(
            "'Wed, 21 Oct 2015 07:28 GMT', which is neither a number of seconds nor an HTTP-date"
        ),
        "{}",
        r.stderr
    );
}

#[test]
fn a_newline_in_a_program_name_or_argument_cannot_forge_a_line() {
    let name = "bad\nretry: attempt 1 of 1: all is well";
    let r = run(retry_with(&["-n", "0", "--", name]));
    assert_eq!(r.status.code(), Some(127));
    assert!(
        r.stderr.lines().all(|l| l.starts_with("retry: ")),
        "{}",
        r.stderr
    );
    assert!(
        !r.stderr.contains("\nretry: attempt 1 of 1: all is well"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains(r"bad\nretry"), "{}", r.stderr);
    // -v shows the arguments, quoted for a shell that understands $'...'.
    let r = run(retry_with(&[
        "-v",
        "-n",
        "0",
        "--",
        "sh",
        "-c",
        "exit 1",
        "a\nb\x1b[2J",
    ]));
    assert!(
        r.stderr.lines().all(|l| l.starts_with("retry: ")),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains(r"$'a\nb\x1b[2J'"), "{}", r.stderr);
}

#[test]
fn verbose_gives_the_limits_and_the_successful_attempts_duration() {
    let r = run(retry_with(&[
        "-v", "-d", "1m", "-t", "5s", "-n", "3", "--", "true",
    ]));
    assert_eq!(r.status.code(), Some(0));
    let lines = r.retry_lines();
    assert!(
        lines[0].contains("retries 3, deadline 1m, timeout 5s, seed "),
        "{}",
        r.stderr
    );
    let last = lines.last().unwrap();
    assert!(
        last.starts_with("retry: succeeded on attempt 1 of 4 after ") && last.ends_with('s'),
        "{}",
        r.stderr
    );
    let r = run(retry_with(&["-v", "-n", "unlimited", "--", "true"]));
    assert!(
        r.stderr
            .contains("retries unlimited, deadline none, timeout none"),
        "{}",
        r.stderr
    );
}

/// retry's stderr as JSON events.
fn events(stderr: &str) -> Vec<Value> {
    stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .collect()
}

#[test]
fn json_gives_the_seed_as_a_string_and_delays_in_microseconds() {
    let r = run(retry_with(&[
        "--log-format",
        "json",
        "--seed",
        "18446744073709551615",
        "-j",
        "none",
        "-b",
        "0.0123456789",
        "-n",
        "1",
        "--",
        "false",
    ]));
    let ev = events(&r.stderr);
    assert_eq!(ev[0]["seed"], "18446744073709551615");
    assert_eq!(ev[0]["base"], 0.012346);
    assert_eq!(ev[0]["max_retries"], 1);
    let wait = ev.iter().find(|e| e["event"] == "wait").unwrap();
    assert_eq!(wait["delay"], 0.012346);
}

#[test]
fn errors_are_json_events_while_json_is_on() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(Command, &str)> = vec![
        // A bad value, before and after --log-format.
        (
            retry_with(&["--log-format", "json", "--base", "abc", "true"]),
            "--base",
        ),
        (
            retry_with(&["--base", "abc", "--log-format", "json", "true"]),
            "--base",
        ),
        (
            retry_with(&["--log-format", "json", "-c", "0.1", "true"]),
            "--cap",
        ),
        (
            {
                let mut c = retry_with(&["--log-format", "json", "true"]);
                c.env("RETRY_MAX_REPLAY", "lots");
                c
            },
            "RETRY_MAX_REPLAY",
        ),
        (
            {
                let mut c = retry_with(&["--log-format", "json", "--dry-run"]);
                c.stdout(dev_full());
                c
            },
            "No space left",
        ),
        (
            {
                let mut c = retry_with(&["--log-format", "json", "--replay-stdin", "-q", "cat"]);
                c.stdin(File::open(dir.path()).unwrap());
                c
            },
            "Is a directory",
        ),
    ];
    for (cmd, needle) in cases {
        let r = run(cmd);
        assert_eq!(r.status.code(), Some(125), "{needle}: {}", r.stderr);
        let ev = events(&r.stderr);
        let error = ev.iter().find(|e| e["event"] == "error").unwrap();
        assert!(
            error["message"].as_str().unwrap().contains(needle),
            "{needle}: {}",
            r.stderr
        );
    }
}

#[test]
fn a_reader_that_went_away_still_means_sigpipe() {
    let mut child = retry_with(&["--stdout-on-success", "--", "seq", "1", "1000000"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 2];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take());
    let r = collect(child);
    assert_eq!(r.status.signal(), Some(libc::SIGPIPE), "{}", r.stderr);
    assert!(!r.stderr.contains("cannot write"), "{}", r.stderr);
}
