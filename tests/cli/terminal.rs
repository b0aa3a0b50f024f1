//! retry in the foreground of a terminal (a real pty): the attempt can read the terminal, a
//! typed Ctrl-C reaches it exactly once and is never retried, Ctrl-Z and `fg` work, and a
//! timeout stops the attempt's tree without touching retry's own group.

use std::fs::File;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use crate::helpers::{HANG_LIMIT, send, wait_for_lines, wait_gone, wait_with_limit};

/// Starts `cmd` as the session leader of a new pty, with the pty as its stdin, stdout, stderr
/// and controlling terminal. Returns the process and the pty's master side (what a user types
/// into).
fn on_new_pty(mut cmd: Command) -> (Child, File) {
    let pty = nix::pty::openpty(None, None).unwrap();
    let slave: OwnedFd = pty.slave;
    cmd.stdin(slave.try_clone().unwrap())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave.try_clone().unwrap());
    // SAFETY: setsid and ioctl are async-signal-safe system calls; nothing is allocated.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid()?;
            if libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn().unwrap();
    drop(slave);
    (child, File::from(pty.master))
}

/// Starts retry as the session leader of a new pty, so it is the terminal's foreground group.
pub(crate) fn in_terminal(args: &[String]) -> (Child, File) {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin!("retry"));
    cmd.args(args);
    crate::helpers::clear_outside_env(&mut cmd);
    on_new_pty(cmd)
}

fn args(flags: &[&str], script: String) -> Vec<String> {
    flags
        .iter()
        .map(|s| s.to_string())
        .chain(["--".into(), "sh".into(), "-c".into(), script])
        .collect()
}

pub(crate) fn state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

pub(crate) fn wait_state(pid: i32, want: char) {
    let start = Instant::now();
    while state(pid) != Some(want) {
        assert!(
            start.elapsed() < HANG_LIMIT,
            "{pid} never reached state {want}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_typed_ctrl_c_reaches_the_attempt_once_and_is_not_retried() {
    let dir = tempfile::tempdir().unwrap();
    let (log, ready) = (dir.path().join("log"), dir.path().join("ready"));
    let (mut retry, mut tty) = in_terminal(&counting_attempt(&log, &ready));
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
    let dir = tempfile::tempdir().unwrap();
    let (log, ready) = (dir.path().join("log"), dir.path().join("ready"));
    let (mut retry, _tty) = in_terminal(&counting_attempt(&log, &ready));
    wait_for_lines(&ready, 1);
    send(retry.id(), libc::SIGINT);
    let status = wait_with_limit(&mut retry);
    assert_eq!(status.code(), Some(1), "{status:?}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "got\n");
}

/// Starts an interactive bash (job control on) as the session leader of a new pty; returns it
/// and the pty's master side, into which commands are typed.
pub(crate) fn interactive_shell() -> (Child, File) {
    let mut cmd = Command::new("bash");
    cmd.args(["--norc", "--noprofile", "-i"]).env("PS1", "$ ");
    crate::helpers::clear_outside_env(&mut cmd);
    on_new_pty(cmd)
}

#[test]
fn the_attempt_reads_the_terminal_and_ctrl_z_then_fg_work() {
    let dir = tempfile::tempdir().unwrap();
    let (out, ready, rc) = (
        dir.path().join("out"),
        dir.path().join("ready"),
        dir.path().join("rc"),
    );
    let (mut shell, mut tty) = interactive_shell();
    let line = format!(
        "{bin} -q -- sh -c 'echo $PPID $$ > {ready}; read a; echo \"$a\" > {out}'\n",
        bin = assert_cmd::cargo::cargo_bin!("retry").display(),
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
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let (mut retry, _tty) = in_terminal(&args(
        &["-t", "300ms", "-n", "1", "-b", "0", "-q"],
        format!(
            "sleep 100 & echo $! >> {0}; sh -c 'sleep 100' & echo $! >> {0}; wait",
            pids.display()
        ),
    ));
    let status = wait_with_limit(&mut retry);
    assert_eq!(status.code(), Some(124), "{status:?}");
    let p: Vec<i32> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(p.len(), 4, "two attempts, two background processes each");
    wait_gone(&p);
}

#[test]
fn a_typed_ctrl_c_during_the_wait_ends_retry_by_sigint() {
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let (mut retry, mut tty) = in_terminal(&args(
        &["-b", "60s", "-j", "none", "-q"],
        format!("echo x >> {}; exit 1", ready.display()),
    ));
    wait_for_lines(&ready, 1);
    // The attempt has written its line; wait until it is reaped and retry sleeps.
    let retry_pid = retry.id() as i32;
    let start = Instant::now();
    while !std::fs::read_dir(format!("/proc/{retry_pid}/task"))
        .map(|tasks| {
            tasks.flatten().all(|t| {
                std::fs::read_to_string(t.path().join("stat"))
                    .map(|s| s.rsplit_once(')').unwrap().1.trim_start().starts_with('S'))
                    .unwrap_or(true)
            })
        })
        .unwrap_or(false)
        || std::fs::read_to_string(format!("/proc/{retry_pid}/task/{retry_pid}/children"))
            .map(|c| !c.trim().is_empty())
            .unwrap_or(false)
    {
        assert!(start.elapsed() < HANG_LIMIT);
        std::thread::sleep(Duration::from_millis(5));
    }
    let sent = Instant::now();
    tty.write_all(b"\x03").unwrap();
    let status = wait_with_limit(&mut retry);
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?}");
    assert!(sent.elapsed() < Duration::from_secs(20));
    wait_gone(&[]);
}
