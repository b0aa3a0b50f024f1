//! Robustness: the terminal and what the user reads. At a terminal, `retry ... &` followed by
//! `fg` reads the terminal on the next attempt and stops on Ctrl-Z. In retry's own lines: a
//! newline in a program name or argument cannot forge a line, `-v` gives the limits and the
//! successful attempt's duration, and `--log-format json` gives the seed as a string, delays
//! in microseconds and errors as events.
//!
//! Not here: a held stdout on a terminal that hung up (`robust_pipes.rs`); the command's
//! arguments kept out of retry's messages (`robust_security.rs`); escapes in what a budget
//! store returns (`robust_stores.rs`); a hint that is neither seconds nor a date
//! (`robust_servers.rs`); retry in the foreground of a terminal, with Ctrl-C and Ctrl-Z typed
//! there (`terminal.rs`); what the countdown and the colours show (`countdown*.rs`,
//! `colour.rs`).

use std::fs::File;
use std::io::Write;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::helpers::proc::{stat, wait_state};
use crate::helpers::pty::interactive_shell;
use crate::helpers::run::{dev_full, retry_with, run};
use crate::helpers::{HANG_LIMIT, wait_for_lines, wait_with_limit};
use crate::tools::{self, require};

// ---------------------------------------------------------------------------------------------
// Job control

/// Processes of a test in a terminal, killed if the test fails (a pty test that fails midway
/// would leave its shell and jobs behind).
struct KillOnPanic(Vec<i32>);

impl Drop for KillOnPanic {
    fn drop(&mut self) {
        if std::thread::panicking() {
            for &pid in &self.0 {
                // SAFETY: kill(2) of processes this test started, while the test still runs.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
}

/// The process group of `pid` and the foreground group of its terminal.
fn groups(pid: i32) -> (i32, i32) {
    let s = stat(pid).unwrap();
    (s.pgrp, s.tpgid)
}

#[test]
fn started_with_amp_then_fg_the_next_attempt_reads_the_terminal_and_ctrl_z_stops_it() {
    if !require(&[tools::BASH]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    let (first, go, ready, out, rc) = (
        path("first"),
        path("go"),
        path("ready"),
        path("out"),
        path("rc"),
    );
    let (mut shell, mut tty) = interactive_shell();
    let mut ours = KillOnPanic(vec![shell.id() as i32]);
    // Attempt 1 starts in the background, waits for `go` and fails; attempt 2 reads the
    // terminal.
    let line = format!(
        "{bin} -q -b 0 -n 1 -- sh -c 'if [ $RETRY_ATTEMPT = 1 ]; then \
         echo $PPID $(cut -d\" \" -f5 /proc/$$/stat) $$ > {first}; \
         while [ ! -e {go} ]; do sleep 0.05; done; exit 1; fi; \
         echo $PPID $$ > {ready}; read a; echo \"$a\" > {out}' &\n",
        bin = crate::helpers::bin().display(),
        first = first.display(),
        go = go.display(),
        ready = ready.display(),
        out = out.display(),
    );
    tty.write_all(line.as_bytes()).unwrap();
    let text = wait_for_lines(&first, 1);
    let ids: Vec<i32> = text
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    let (retry_pid, first_group, first_pid) = (ids[0], ids[1], ids[2]);
    ours.0.extend([retry_pid, first_pid]);
    assert_eq!(
        first_group, first_pid,
        "in the background, an attempt leads its own group"
    );
    // `fg`: wait until retry's group holds the terminal, then let attempt 1 fail.
    tty.write_all(b"fg\n").unwrap();
    let start = Instant::now();
    while groups(retry_pid).0 != groups(retry_pid).1 {
        assert!(start.elapsed() < HANG_LIMIT, "fg never took effect");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::fs::write(&go, "").unwrap();
    let text = wait_for_lines(&ready, 1);
    let ids: Vec<i32> = text
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    let child = ids[1];
    ours.0.push(child);
    assert_eq!(ids[0], retry_pid);
    assert_eq!(
        groups(child).0,
        groups(retry_pid).0,
        "in the foreground, the attempt is in retry's group"
    );
    wait_state(child, 'S');
    // Ctrl-Z stops the job: retry and its attempt.
    tty.write_all(b"\x1a").unwrap();
    wait_state(retry_pid, 'T');
    wait_state(child, 'T');
    // `fg` again: the attempt reads what is typed.
    let fg = format!("fg; echo $? > {}; exit\n", rc.display());
    tty.write_all(fg.as_bytes()).unwrap();
    wait_state(child, 'S');
    tty.write_all(b"typed\n").unwrap();
    assert_eq!(wait_for_lines(&rc, 1), "0\n");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "typed\n");
    wait_with_limit(&mut shell);
}

// ---------------------------------------------------------------------------------------------
// retry's own lines

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
