//! Robustness: process trees, what retry stops of what it starts (issue 9): processes that
//! leave the attempt's group or session, what failed attempts and hooks leave behind, hooks at
//! the deadline, a child inherited from before the attempt; and, in quick versions of
//! `benches/trees.sh`, 50 timeouts of a shell with background children leave nothing, and a
//! tree that ignores TERM gets KILL after `--kill-after` (137).
//!
//! Processes the tests start carry a token on their command line (`sleep 100.TOKEN`), so they
//! are found whatever their pid, and a [`Tagged`] guard kills any that a failing test left.
//!
//! Not here: descriptors, threads, memory and zombies over thousands of attempts
//! (`robust_soak.rs`); a grandchild holding stdout (`robust_pipes.rs`); the signals and the
//! exact edges of the limits (`robust_signals.rs`); the attempt as retry's own child, no shell
//! between (`robust_security.rs`).

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use predicates::prelude::*;

use crate::helpers::proc::{running_with, token, wait_none_running};
use crate::helpers::pty::retry_in_terminal;
use crate::helpers::{lines, retry, retry_std, send, wait_for_lines, wait_with_limit};
use crate::tools::{self, require};

/// A token unique to one test, carried on the command lines of the processes it starts.
struct Tagged(String);

impl Tagged {
    fn new(tag: u32) -> Tagged {
        Tagged(token(tag))
    }

    /// A shell command for a 100-second sleep that carries the token.
    fn sleep(&self) -> String {
        format!("sleep 100.{}", self.0)
    }

    /// Live (not zombie) processes with the token on their command line.
    fn running(&self) -> Vec<i32> {
        running_with(&self.0)
    }

    /// Waits (within 10 s) until none of the token's processes is alive.
    fn wait_none(&self) {
        wait_none_running(&self.0);
    }
}

impl Drop for Tagged {
    fn drop(&mut self) {
        for pid in self.running() {
            // SAFETY: kill(2) of a process whose command line carries this test's token.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Stops what it starts

/// A script that starts background sleeps outside the plain tree, then runs `tail`: one in a
/// new session (`setsid`), one in a process group of its own (`set -m` in a bash script that
/// then exits), one through an intermediate shell that exits (both orphaned, so re-parented to
/// retry), and a plain one.
fn escaping_tree(tag: &Tagged, tail: &str) -> String {
    let sleep = tag.sleep();
    format!("setsid {sleep} & bash -c 'set -m; {sleep} & :'; sh -c '{sleep} &'; {sleep} & {tail}")
}

#[test]
fn a_timeout_stops_processes_that_left_the_group_or_the_session() {
    // The tree's job-control branch is bash's (`set -m`).
    if crate::helpers::skip_unless_finds_processes_outside_the_group() || !require(&[tools::BASH]) {
        return;
    }
    let tag = Tagged::new(1);
    retry()
        .args([
            "-n",
            "0",
            "-t",
            "500ms",
            "--kill-after",
            "5s",
            "--",
            "sh",
            "-c",
        ])
        .arg(escaping_tree(&tag, "wait"))
        .assert()
        .code(124);
    tag.wait_none();
}

#[test]
fn a_forwarded_term_and_the_deadline_stop_processes_that_left_the_session() {
    // The tree's job-control branch is bash's (`set -m`).
    if crate::helpers::skip_unless_finds_processes_outside_the_group() || !require(&[tools::BASH]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let tag = Tagged::new(2);
    let mut child = retry_std()
        .args(["-q", "--", "sh", "-c"])
        .arg(escaping_tree(
            &tag,
            &format!("echo up > {}; wait", ready.display()),
        ))
        .spawn()
        .unwrap();
    wait_for_lines(&ready, 1);
    send(child.id(), libc::SIGTERM);
    let end = wait_with_limit(&mut child);
    assert_eq!(end.signal(), Some(libc::SIGTERM), "{end:?}");
    tag.wait_none();

    let tag = Tagged::new(3);
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
        .arg(escaping_tree(&tag, "wait"))
        .assert()
        .code(124)
        .stderr(predicate::str::contains("deadline"));
    tag.wait_none();
}

#[test]
fn in_a_terminal_a_timeout_stops_processes_that_left_the_session() {
    // The tree's job-control branch is bash's (`set -m`).
    if crate::helpers::skip_unless_finds_processes_outside_the_group() || !require(&[tools::BASH]) {
        return;
    }
    let tag = Tagged::new(4);
    let args: Vec<String> = ["-t", "500ms", "-n", "0", "-q", "--", "sh", "-c"]
        .iter()
        .map(|s| s.to_string())
        .chain([escaping_tree(&tag, "wait")])
        .collect();
    let (mut retry, _tty) = retry_in_terminal(&args);
    assert_eq!(wait_with_limit(&mut retry).code(), Some(124));
    tag.wait_none();
}

#[test]
fn what_a_failed_attempt_leaves_running_is_stopped_before_the_next_attempt() {
    if crate::helpers::skip_unless_finds_processes_outside_the_group() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (pids, seen) = (dir.path().join("pids"), dir.path().join("seen"));
    let tag = Tagged::new(5);
    // Attempt 1 leaves a sleep in a new session and one that ignores TERM; attempt 2 looks
    // for them before failing too.
    retry()
        .args(["-b", "0", "-n", "1", "-q", "--kill-after", "300ms", "--"])
        .args(["sh", "-c"])
        .arg(format!(
            "if [ $RETRY_ATTEMPT = 1 ]; then \
               setsid sh -c 'echo $$ >> {pids}; exec {sleep}' & \
               sh -c 'trap \"\" TERM; echo $$ >> {pids}; {sleep}; :' & \
               while [ $(wc -l < {pids} 2>/dev/null || echo 0) -lt 2 ]; do sleep 0.01; done; \
               exit 3; \
             fi; \
             for p in $(cat {pids}); do \
               if kill -0 $p 2>/dev/null; then echo alive >> {seen}; \
               else echo gone >> {seen}; fi; \
             done; exit 4",
            pids = pids.display(),
            seen = seen.display(),
            sleep = tag.sleep()
        ))
        .assert()
        .code(4);
    assert_eq!(lines(&seen), vec!["gone", "gone"]);
    tag.wait_none();
}

#[test]
fn what_a_successful_attempt_leaves_running_keeps_running() {
    let dir = tempfile::tempdir().unwrap();
    let pid = dir.path().join("pid");
    let tag = Tagged::new(6);
    retry()
        .args(["-n", "0", "--", "sh", "-c"])
        .arg(format!(
            "{} > /dev/null 2>&1 & echo $! > {}",
            tag.sleep(),
            pid.display()
        ))
        .assert()
        .success();
    let pid: i32 = wait_for_lines(&pid, 1).trim().parse().unwrap();
    assert_eq!(
        tag.running(),
        vec![pid],
        "the daemon of a successful attempt"
    );
}

#[test]
fn what_a_hook_leaves_running_is_stopped_when_it_ends() {
    if crate::helpers::skip_unless_finds_processes_outside_the_group() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (pids, seen) = (dir.path().join("pids"), dir.path().join("seen"));
    let tag = Tagged::new(7);
    retry()
        .args(["-b", "0", "-n", "1", "-q", "--on-retry"])
        .arg(format!(
            "setsid sh -c 'echo $$ >> {pids}; exec {sleep}' & \
             while [ ! -s {pids} ]; do sleep 0.01; done",
            pids = pids.display(),
            sleep = tag.sleep()
        ))
        .args(["--", "sh", "-c"])
        .arg(format!(
            "[ $RETRY_ATTEMPT = 1 ] && exit 3; \
             if kill -0 $(cat {pids}) 2>/dev/null; then echo alive > {seen}; \
             else echo gone > {seen}; fi; exit 4",
            pids = pids.display(),
            seen = seen.display()
        ))
        .assert()
        .code(4);
    assert_eq!(lines(&seen), vec!["gone"]);
    tag.wait_none();
}

#[test]
fn an_on_retry_hook_running_at_the_deadline_is_stopped_and_no_attempt_follows() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let tag = Tagged::new(8);
    let started = Instant::now();
    retry()
        .args(["-d", "1s", "-b", "0", "-n", "unlimited", "--on-retry"])
        .arg(format!("{}; :", tag.sleep()))
        .args(["--", "sh", "-c"])
        .arg(format!("echo x >> {}; exit 3", log.display()))
        .assert()
        .code(3)
        .stderr(
            predicate::str::contains("--on-retry hook exited with status 124")
                .and(predicate::str::contains("deadline")),
        );
    assert_eq!(lines(&log), vec!["x"], "no attempt after the deadline");
    assert!(started.elapsed() < Duration::from_secs(30));
    tag.wait_none();
}

#[test]
fn an_inherited_child_is_not_the_attempts() {
    // `job & exec retry ...`: the job is retry's child from the start, not an attempt's.
    let dir = tempfile::tempdir().unwrap();
    let pid = dir.path().join("pid");
    let tag = Tagged::new(9);
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!(
            "{sleep} & echo $! > {pid}; exec {bin} -n 0 -t 300ms -- sh -c '{sleep}'",
            sleep = tag.sleep(),
            pid = pid.display(),
            bin = crate::helpers::bin().display()
        ))
        .stdin(Stdio::null())
        .process_group(0);
    crate::helpers::clear_outside_env(&mut cmd);
    let mut child = cmd.spawn().unwrap();
    assert_eq!(wait_with_limit(&mut child).code(), Some(124));
    let pid: i32 = wait_for_lines(&pid, 1).trim().parse().unwrap();
    assert_eq!(
        tag.running(),
        vec![pid],
        "only the attempt's sleep was stopped"
    );
}

// ---------------------------------------------------------------------------------------------
// Trees under timeouts

#[test]
fn fifty_timeouts_of_a_shell_with_background_children_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let tag = token(1);
    // `sleep 100.TAG`: a 100-second sleep that can be found by its command line.
    let script = format!(
        "sleep 100.{tag} & echo $! >> {p}; sleep 100.{tag} & echo $! >> {p}; \
         echo $$ >> {p}; wait",
        p = pids.display()
    );
    retry()
        .args(["-q", "-b", "0", "-n", "49", "-t", "50ms", "--", "sh", "-c"])
        .arg(&script)
        .assert()
        .code(124);
    let recorded = std::fs::read_to_string(&pids).unwrap();
    assert!(recorded.lines().count() >= 50, "{recorded}");
    wait_none_running(&tag);
}

#[test]
fn a_tree_that_ignores_term_gets_kill_after_kill_after_and_137() {
    let tag = token(2);
    let started = Instant::now();
    let out = retry()
        .args(["-n", "0", "-t", "200ms", "--kill-after", "300ms", "--"])
        .args(["sh", "-c"])
        .arg(format!(
            "trap '' TERM; sh -c 'trap \"\" TERM; sleep 100.{tag}' & \
             while :; do sleep 0.05; done"
        ))
        .assert()
        .failure()
        .stderr(predicate::str::contains("KILL"));
    // KILL was needed: retry dies of KILL, as coreutils `timeout` (a shell's 137).
    assert_eq!(out.get_output().status.signal(), Some(libc::SIGKILL));
    // TERM at 200 ms, KILL 300 ms later.
    assert!(started.elapsed() >= Duration::from_millis(500));
    wait_none_running(&tag);
}
