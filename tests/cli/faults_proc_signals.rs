//! Faults of processes and signals, never a hang: an inherited signal mask or ignored signals
//! change nothing, and `retry ... &` followed by `fg` in a terminal reads the terminal and stops on
//! Ctrl-Z. What retry stops of what it starts is in `faults_proc.rs`.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::time::{Duration, Instant};

use crate::faults_proc::{bit, lines, mask_in};
use crate::helpers::proc::{stat, wait_state};
use crate::helpers::pty::interactive_shell;
use crate::helpers::{HANG_LIMIT, retry_std, send, wait_for_lines, wait_with_limit};
use crate::tools::{self, require};

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
