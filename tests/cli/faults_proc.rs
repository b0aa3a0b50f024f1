//! Faults of processes and signals (issue 9): an inherited signal mask or ignored signals,
//! `retry ... &` followed by `fg` in a terminal, processes that leave the attempt's group or
//! session, what failed attempts and hooks leave behind, hooks at the deadline. The exact edges
//! (0 limits, closed descriptors, the end after KILL) are in `faults_edges.rs`.
//!
//! Processes the tests start carry a token on their command line (`sleep 100.TOKEN`), so they
//! are found whatever their pid, and a [`Tagged`] guard kills any that a failing test left.

use std::io::Write;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use predicates::prelude::*;

use crate::helpers::proc::{running_with, stat, wait_state};
use crate::helpers::pty::{interactive_shell, retry_in_terminal};
use crate::helpers::{HANG_LIMIT, retry, retry_std, send, wait_for_lines, wait_with_limit};
use crate::tools::{self, require};

/// A token unique to one test, carried on the command lines of the processes it starts.
struct Tagged(String);

impl Tagged {
    fn new(tag: u32) -> Tagged {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        Tagged(format!("{tag}{}{nanos:09}", std::process::id()))
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
        let start = Instant::now();
        loop {
            let left = self.running();
            if left.is_empty() {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "processes left running: {left:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
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

pub(crate) fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

/// A field of `/proc/PID/status` (`SigBlk`, `SigIgn`, ...) as a bit mask.
fn mask_in(status: &str, field: &str) -> u64 {
    let line = status
        .lines()
        .find(|l| l.starts_with(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in {status}"));
    u64::from_str_radix(line.split_whitespace().nth(1).unwrap(), 16).unwrap()
}

fn bit(signal: i32) -> u64 {
    1 << (signal - 1)
}

// ---------------------------------------------------------------------------------------------
// Never hangs: inherited signal state, job control

/// A running retry, killed (its process group) if the test fails before it ends.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            // SAFETY: killpg(2) of the process group retry_std() gave this retry.
            unsafe { libc::killpg(self.0.id() as i32, libc::SIGKILL) };
            let _ = self.0.wait();
        }
    }
}

#[test]
fn a_blocked_sigchld_term_and_int_in_the_inherited_mask_change_nothing() {
    let blocked = || {
        let mut cmd = retry_std();
        // SAFETY: sigprocmask between fork and exec only changes the mask retry inherits.
        unsafe {
            cmd.pre_exec(|| {
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                for s in [libc::SIGCHLD, libc::SIGTERM, libc::SIGINT] {
                    libc::sigaddset(&mut set, s);
                }
                libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
                Ok(())
            });
        }
        cmd
    };
    // The end of an attempt is noticed (this hung before: SIGCHLD was never delivered), and
    // the attempt starts with an empty mask.
    let dir = tempfile::tempdir().unwrap();
    let status = dir.path().join("status");
    let mut child = Running(
        blocked()
            .stdout(std::fs::File::create(&status).unwrap())
            .args(["-n", "0", "--", "cat", "/proc/self/status"])
            .spawn()
            .unwrap(),
    );
    assert_eq!(wait_with_limit(&mut child.0).code(), Some(0));
    let text = std::fs::read_to_string(&status).unwrap();
    assert_eq!(mask_in(&text, "SigBlk"), 0, "the attempt's mask: {text}");
    // A TERM is noticed and passed on.
    let (ready, log) = (dir.path().join("ready"), dir.path().join("log"));
    let mut child = Running(
        blocked()
            .args(["-b", "0", "-q", "--", "sh", "-c"])
            .arg(format!(
                "trap 'echo got TERM >> {log}; exit 7' TERM; echo up > {ready}; \
                 while :; do sleep 0.05; done",
                log = log.display(),
                ready = ready.display()
            ))
            .spawn()
            .unwrap(),
    );
    wait_for_lines(&ready, 1);
    send(child.0.id(), libc::SIGTERM);
    let end = wait_with_limit(&mut child.0);
    assert_eq!(end.code(), Some(7), "{end:?}");
    assert_eq!(lines(&log), vec!["got TERM"]);
}

#[test]
fn signals_ignored_at_start_stay_ignored_for_retry_and_the_attempt() {
    // As a POSIX shell starts `cmd &` without job control: INT and QUIT ignored.
    let dir = tempfile::tempdir().unwrap();
    let (status, log) = (dir.path().join("status"), dir.path().join("log"));
    let attempts = dir.path().join("attempts");
    let mut cmd = retry_std();
    // SAFETY: signal(2) between fork and exec only sets the dispositions retry inherits.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            libc::signal(libc::SIGQUIT, libc::SIG_IGN);
            Ok(())
        });
    }
    let mut child = Running(
        cmd.args(["-b", "0", "-n", "1", "-q", "--", "sh", "-c"])
            .arg(format!(
                "echo $RETRY_ATTEMPT >> {attempts}; \
                 cat /proc/$$/status > {status}.tmp; mv {status}.tmp {status}; \
                 while [ ! -e {log} ]; do sleep 0.05; done; exit 3",
                attempts = attempts.display(),
                status = status.display(),
                log = log.display()
            ))
            .spawn()
            .unwrap(),
    );
    let text = wait_for_lines(&status, 10);
    let ignored = mask_in(&text, "SigIgn");
    assert_eq!(ignored & bit(libc::SIGINT), bit(libc::SIGINT), "{text}");
    assert_eq!(ignored & bit(libc::SIGQUIT), bit(libc::SIGQUIT), "{text}");
    // An INT for retry is ignored too: the attempt goes on and ends by itself, and retrying
    // goes on as if no INT had come.
    send(child.0.id(), libc::SIGINT);
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        child.0.try_wait().unwrap().is_none(),
        "retry ended on an ignored INT"
    );
    std::fs::write(&log, "go").unwrap();
    let end = wait_with_limit(&mut child.0);
    assert_eq!(end.code(), Some(3), "{end:?}");
    assert_eq!(
        lines(&attempts),
        vec!["1", "2"],
        "retried as if no INT came"
    );
}

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
    if crate::helpers::skip_unless_finds_processes_outside_the_group() {
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
    if crate::helpers::skip_unless_finds_processes_outside_the_group() {
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
    if crate::helpers::skip_unless_finds_processes_outside_the_group() {
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
