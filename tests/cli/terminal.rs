//! retry in the foreground of a terminal (a real pty): the attempt can read the terminal, a
//! typed Ctrl-C reaches it exactly once and is never retried, Ctrl-Z and `fg` work, and a
//! timeout stops the attempt's tree without touching retry's own group.

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::helpers::proc::{stat, stat_at, wait_state};
use crate::helpers::pty::{interactive_shell, retry_in_terminal};
use crate::helpers::{HANG_LIMIT, send, wait_for_lines, wait_gone, wait_with_limit};
use crate::tools::{self, require};

fn args(flags: &[&str], script: String) -> Vec<String> {
    flags
        .iter()
        .map(|s| s.to_string())
        .chain(["--".into(), "sh".into(), "-c".into(), script])
        .collect()
}

#[test]
fn a_typed_ctrl_c_reaches_the_attempt_once_and_is_not_retried() {
    if !require(&[tools::PERL]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (log, ready) = (dir.path().join("log"), dir.path().join("ready"));
    let (mut retry, mut tty) = retry_in_terminal(&counting_attempt(&log, &ready));
    wait_for_lines(&ready, 1);
    tty.write_all(b"\x03").unwrap();
    let status = wait_with_limit(&mut retry);
    assert_eq!(status.code(), Some(1), "{status:?}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "got\n");
    assert_eq!(std::fs::read_to_string(&ready).unwrap(), "1\n");
}

/// retry's arguments for an attempt that logs every SIGINT it receives (perl counts each
/// delivery, where a shell trap merges them), lingers 0.5 s after the first to catch a second,
/// then exits 1.
fn counting_attempt(log: &std::path::Path, ready: &std::path::Path) -> Vec<String> {
    let script = format!(
        "$SIG{{INT}} = sub {{ open my $f, '>>', '{log}'; print $f \"got\\n\"; $n++ }}; \
         open my $r, '>>', '{ready}'; print $r \"$ENV{{RETRY_ATTEMPT}}\\n\"; close $r; \
         select(undef, undef, undef, 0.05) until $n; \
         select(undef, undef, undef, 0.05) for 1..10; exit 1",
        log = log.display(),
        ready = ready.display()
    );
    ["-b", "0", "-q", "--", "perl", "-e", &script]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

#[test]
fn a_kill_sent_to_retry_alone_is_forwarded_once() {
    if !require(&[tools::PERL]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (log, ready) = (dir.path().join("log"), dir.path().join("ready"));
    let (mut retry, _tty) = retry_in_terminal(&counting_attempt(&log, &ready));
    wait_for_lines(&ready, 1);
    send(retry.id(), libc::SIGINT);
    let status = wait_with_limit(&mut retry);
    assert_eq!(status.code(), Some(1), "{status:?}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "got\n");
}

#[test]
fn the_attempt_reads_the_terminal_and_ctrl_z_then_fg_work() {
    if !require(&[tools::BASH]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (out, ready, rc) = (
        dir.path().join("out"),
        dir.path().join("ready"),
        dir.path().join("rc"),
    );
    let (mut shell, mut tty) = interactive_shell();
    let line = format!(
        "{bin} -q -- sh -c 'echo $PPID $$ > {ready}; read a; echo \"$a\" > {out}'\n",
        bin = crate::helpers::bin().display(),
        ready = ready.display(),
        out = out.display(),
    );
    tty.write_all(line.as_bytes()).unwrap();
    let text = wait_for_lines(&ready, 1);
    let pids: Vec<i32> = text
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    let (retry_pid, child) = (pids[0], pids[1]);
    // Ctrl-Z stops the whole foreground job: retry and its attempt.
    tty.write_all(b"\x1a").unwrap();
    wait_state(retry_pid, 'T');
    wait_state(child, 'T');
    // `fg` continues the job and gives it the terminal back; the attempt then reads it.
    // `fg` returns the job's status once it ends.
    let fg = format!("fg; echo $? > {}; exit\n", rc.display());
    tty.write_all(fg.as_bytes()).unwrap();
    wait_state(child, 'S');
    tty.write_all(b"typed\n").unwrap();
    assert_eq!(wait_for_lines(&rc, 1), "0\n");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "typed\n");
    wait_with_limit(&mut shell);
}

#[test]
fn a_timeout_stops_the_tree_but_not_retry() {
    // Synchronised on files, not on the 300 ms: an attempt lists its two background processes,
    // then marks itself complete and waits to be timed out; retry goes on to the next attempt,
    // until two complete attempts were timed out, and the next one succeeds. A slow start that
    // meets the timeout before its mark is only retried (its processes are checked all the same).
    let dir = tempfile::tempdir().unwrap();
    let (pids, complete) = (dir.path().join("pids"), dir.path().join("complete"));
    let (mut retry, _tty) = retry_in_terminal(&args(
        &["-t", "300ms", "-n", "50", "-b", "0", "-q"],
        format!(
            "[ $(cat {c} 2>/dev/null | wc -l) -ge 2 ] && exit 0; \
             sleep 100 & echo $! >> {p}; sh -c 'sleep 100' & echo $! >> {p}; \
             echo $RETRY_ATTEMPT >> {c}; wait",
            p = pids.display(),
            c = complete.display()
        ),
    ));
    let status = wait_with_limit(&mut retry);
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert_eq!(
        std::fs::read_to_string(&complete).unwrap().lines().count(),
        2,
        "two complete attempts timed out, retry went on after each"
    );
    let p: Vec<i32> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert!(
        p.len() >= 4,
        "two background processes per complete attempt: {p:?}"
    );
    wait_gone(&p);
}

#[test]
fn a_typed_ctrl_c_during_the_wait_ends_retry_by_sigint() {
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let (mut retry, mut tty) = retry_in_terminal(&args(
        &["-b", "60s", "-j", "none", "-q"],
        format!("echo $$ >> {}; exit 1", ready.display()),
    ));
    let attempt: i32 = wait_for_lines(&ready, 1).trim().parse().unwrap();
    // The attempt has written its line; wait until it is reaped and every thread of retry
    // sleeps: retry is in its 60 s wait.
    let retry_pid = retry.id() as i32;
    let waiting = || {
        let asleep = std::fs::read_dir(format!("/proc/{retry_pid}/task")).is_ok_and(|tasks| {
            tasks
                .flatten()
                .all(|t| stat_at(&t.path().join("stat")).is_none_or(|s| s.state == 'S'))
        });
        let childless =
            std::fs::read_to_string(format!("/proc/{retry_pid}/task/{retry_pid}/children"))
                .is_ok_and(|c| c.trim().is_empty());
        asleep && childless
    };
    let start = Instant::now();
    while !waiting() {
        assert!(
            start.elapsed() < HANG_LIMIT,
            "retry never settled into its wait"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        stat(attempt).is_none(),
        "the attempt {attempt} was not reaped"
    );
    let sent = Instant::now();
    tty.write_all(b"\x03").unwrap();
    let status = wait_with_limit(&mut retry);
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?}");
    // Well before the 60 s wait would have ended, and no attempt after it.
    assert!(sent.elapsed() < Duration::from_secs(20));
    assert_eq!(lines_of(&ready), vec![attempt.to_string()]);
}

/// The lines of the file at `path` (none if it does not exist).
fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}
