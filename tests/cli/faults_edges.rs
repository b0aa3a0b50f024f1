//! Exact edges of supervision (issue 9): `-t 0`, `-d 0` and `--kill-after 0` as coreutils
//! `timeout` reads 0, death by KILL after KILL at a timeout, and closed standard descriptors
//! that stay closed for the attempt.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::Stdio;
use std::time::{Duration, Instant};

use predicates::prelude::*;

use crate::faults_proc::lines;
use crate::helpers::{retry, retry_std, wait_with_limit};

#[test]
fn timeout_0_and_deadline_0_mean_no_limit() {
    let none: &[&str] = &[];
    for (flags, env) in [
        (&["-t", "0"][..], None),
        (&["-d", "0"][..], None),
        (none, Some(("RETRY_TIMEOUT", "0"))),
        (none, Some(("RETRY_DEADLINE", "0s"))),
    ] {
        let mut cmd = retry();
        if let Some((name, value)) = env {
            cmd.env(name, value);
        }
        cmd.args(["-n", "0"])
            .args(flags)
            .args(["--", "sh", "-c", "sleep 0.3; exit 3"])
            .assert()
            .code(3);
    }
    // `-d 0` lifts a preset's deadline: the unlimited retries of api-core then list the
    // longest schedule --dry-run shows (20 rows and a heading).
    let rows = |flags: &[&str]| {
        let out = retry()
            .args(["--preset", "api-core", "--dry-run", "--seed", "1"])
            .args(flags)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().lines().count()
    };
    assert!(
        rows(&[]) < 21,
        "the preset's 120 s deadline cuts the schedule"
    );
    // The header, the 20 rows of unlimited retries and the line saying they go on.
    assert_eq!(rows(&["-d", "0"]), 22);
}

#[test]
fn kill_after_0_never_sends_kill() {
    let dir = tempfile::tempdir().unwrap();
    let done = dir.path().join("done");
    let started = Instant::now();
    // The attempt ignores TERM and ends by itself 1 s later: stopped (124), never killed.
    retry()
        .args([
            "-n",
            "0",
            "-t",
            "200ms",
            "--kill-after",
            "0",
            "--",
            "sh",
            "-c",
        ])
        .arg(format!(
            "trap '' TERM; sleep 1; echo done > {}",
            done.display()
        ))
        .assert()
        .code(124)
        .stderr(predicate::str::contains("KILL").not());
    assert_eq!(lines(&done), vec!["done"]);
    assert!(started.elapsed() >= Duration::from_millis(900));
}

#[test]
fn after_kill_at_a_timeout_or_the_deadline_retry_dies_of_kill() {
    for flags in [["-t", "200ms"], ["-d", "200ms"]] {
        let out = retry()
            .args(["-n", "0", "--kill-after", "200ms"])
            .args(flags)
            .args([
                "--",
                "sh",
                "-c",
                "trap '' TERM; while :; do sleep 0.05; done",
            ])
            .assert()
            .failure()
            .stderr(predicate::str::contains("KILL needed (status 137)"));
        let status = out.get_output().status;
        assert_eq!(
            status.signal(),
            Some(libc::SIGKILL),
            "{flags:?}: {status:?}"
        );
        assert!(!status.core_dumped());
    }
}

/// What the attempt saw of descriptors 0, 1 and 2 when retry was started with those in
/// `closed` closed (and the rest on /dev/null, given by the caller).
fn fds_seen_with(closed: &'static [i32], flags: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let mut cmd = retry_std();
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    // SAFETY: close(2) between fork and exec, on descriptors std has just set up.
    unsafe {
        cmd.pre_exec(move || {
            for &fd in closed {
                libc::close(fd);
            }
            Ok(())
        });
    }
    let mut child = cmd
        .args(["-n", "0", "-q"])
        .args(flags)
        .args(["--", "sh", "-c"])
        .arg(format!(
            "exec 3>> {}; for fd in 0 1 2; do \
               if [ -e /proc/$$/fd/$fd ]; then echo $fd open >&3; else echo $fd closed >&3; fi; \
             done",
            log.display()
        ))
        .spawn()
        .unwrap();
    assert_eq!(wait_with_limit(&mut child).code(), Some(0));
    lines(&log)
}

#[test]
fn a_closed_stdin_stdout_or_stderr_stays_closed_for_the_attempt() {
    let seen = |closed, flags| fds_seen_with(closed, flags).join(", ");
    assert_eq!(seen(&[], &[]), "0 open, 1 open, 2 open");
    assert_eq!(seen(&[0], &[]), "0 closed, 1 open, 2 open");
    assert_eq!(seen(&[1], &[]), "0 open, 1 closed, 2 open");
    assert_eq!(seen(&[2], &[]), "0 open, 1 open, 2 closed");
    assert_eq!(seen(&[0, 1, 2], &[]), "0 closed, 1 closed, 2 closed");
    // Whatever the flags: nothing is recorded from, or held for, a closed descriptor.
    assert_eq!(
        seen(&[0, 1], &["--replay-stdin", "--stdout-on-success"]),
        "0 closed, 1 closed, 2 open"
    );
    // So a command that writes to a closed stdout fails under retry as without it.
    let mut cmd = retry_std();
    cmd.stderr(Stdio::null());
    // SAFETY: close(2) between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::close(1);
            Ok(())
        });
    }
    let mut child = cmd.args(["-n", "0", "--", "echo", "hi"]).spawn().unwrap();
    assert_eq!(wait_with_limit(&mut child).code(), Some(1));
}
