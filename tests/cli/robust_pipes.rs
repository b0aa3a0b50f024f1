//! Robustness: pipes and output. A stop signal never waits for a reader that does not read, a
//! reader that went away still means SIGPIPE, a grandchild holding stdout does not hang
//! `--stdout-on-success`, and a closed stdin, stdout or stderr stays closed for the attempt.
//! Writing retry's stdout fails (a full disk or a terminal that hung up under a held stdout, a
//! full disk under a matched one, `--dry-run` and `--generate` on a full disk) or a held stdout
//! cannot spill: nothing is lost without a
//! non-zero exit and one clear line. RELIABILITY.md, "Faults: I/O and reporting", lists each
//! with its command.
//!
//! Not here: recording stdin for `--replay-stdin` (`robust_stdin.rs`); job control at a
//! terminal and retry's own lines (`robust_terminal.rs`); every output jammed at once, pipes
//! and FIFOs (`helpers/jammed.rs`, used by `stop_latency.rs`, `fatal_signals.rs` and
//! `chronic.rs`).

use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::helpers::proc::{token, wait_none_running};
use crate::helpers::pty::{Attach, spawn_on_pty};
use crate::helpers::run::{collect, dev_full, retry_with, run};
use crate::helpers::{alive, lines, retry, retry_std, send, wait_for_lines, wait_with_limit};

// ---------------------------------------------------------------------------------------------
// A reader that does not read or went away

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

// ---------------------------------------------------------------------------------------------
// Descriptors held or closed

/// Kills (KILL) the processes whose pids are listed in `path`, while they are still ours (by
/// `tag` on their command line), until none is left (within 10 s): one may still be between
/// `setsid` and `exec`, with no command line to read yet.
fn kill_listed(path: &Path, tag: &str) {
    let listed: Vec<i32> = std::fs::read_to_string(path)
        .unwrap_or_default()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    let start = Instant::now();
    loop {
        let mut pending = false;
        for &pid in &listed {
            if !alive(pid) {
                continue;
            }
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            if String::from_utf8_lossy(&cmdline).contains(tag) {
                // SAFETY: kill(2) on a process this test started (checked by its command line).
                unsafe { libc::kill(pid, libc::SIGKILL) };
                pending = true;
            } else if cmdline.is_empty() {
                // Mid-exec: look again.
                pending = true;
            }
        }
        if !pending || start.elapsed() > Duration::from_secs(10) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_grandchild_holding_stdout_does_not_hang_stdout_on_success() {
    // The grandchild leaves the attempt's process group (setsid), so no group signal reaches
    // it, and it keeps the held stdout pipe open; one of them keeps writing to it. retry
    // stops it once a failed attempt has ended. (Only failed attempts start one: a successful
    // attempt's is left running and its output passed on until it closes the pipe, which
    // tests/cli/leftover_output.rs checks.)
    for (name, n, holder) in [
        ("quiet", 41, "sleep 100.TAG"),
        ("busy", 42, "sh -c 'while :; do echo spam; done; : TAG'"),
    ] {
        for (flags, want) in [
            // Fails twice, then succeeds: only the third attempt's stdout is printed.
            (&["-b", "0", "-n", "3"][..], Some(0)),
            // Gives up.
            (&["-b", "0", "-n", "1"][..], None),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let pids = dir.path().join("pids");
            let tag = token(n);
            let holder = holder.replace("TAG", &tag);
            let script = format!(
                "if [ $RETRY_ATTEMPT -lt 3 ]; then setsid {holder} 2>/dev/null & \
                 echo $! >> {}; fi; echo attempt $RETRY_ATTEMPT; test $RETRY_ATTEMPT -ge 3",
                pids.display()
            );
            let started = Instant::now();
            let out = retry()
                .args(["--stdout-on-success", "-q"])
                .args(flags)
                .args(["--", "sh", "-c", &script])
                .output()
                .unwrap();
            let took = started.elapsed();
            kill_listed(&pids, &tag);
            assert!(took < Duration::from_secs(30), "{name}: took {took:?}");
            match want {
                Some(code) => {
                    assert_eq!(out.status.code(), Some(code), "{name}: {out:?}");
                    // The third attempt's own output (with whatever its grandchild wrote).
                    let stdout = String::from_utf8_lossy(&out.stdout);
                    assert!(stdout.contains("attempt 3\n"), "{name}: {stdout:?}");
                    assert!(
                        !stdout.contains("attempt 1") && !stdout.contains("attempt 2"),
                        "{name}: {stdout:?}"
                    );
                }
                None => assert_eq!(out.status.code(), Some(1), "{name}: {out:?}"),
            }
            wait_none_running(&tag);
        }
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

// ---------------------------------------------------------------------------------------------
// Writing retry's stdout fails

#[test]
fn a_held_stdout_on_a_full_disk_is_reported_and_never_0() {
    let mut cmd = retry_with(&["--stdout-on-success", "--", "echo", "hi"]);
    cmd.stdout(dev_full());
    let r = run(cmd);
    assert_eq!(r.status.code(), Some(125), "{}", r.stderr);
    let lines = r.retry_lines();
    assert!(lines[0].contains("cannot write the held stdout of attempt 1 to stdout"));
    assert!(lines[0].contains("No space left on device"), "{}", r.stderr);
    // A failed attempt's held stdout goes to stderr: the disk is not involved.
    let mut cmd = retry_with(&["--stdout-on-success", "-b", "0", "-n", "1", "--"]);
    cmd.args(["sh", "-c", "echo held; exit 3"])
        .stdout(dev_full());
    let r = run(cmd);
    assert_eq!(r.status.code(), Some(3), "{}", r.stderr);
    assert_eq!(r.stderr.matches("held\n").count(), 2, "{}", r.stderr);
}

/// A pty whose master side is closed: writing to its slave side fails with EIO, as writing to
/// a terminal that hung up does. Returns the slave side.
fn hung_up_terminal() -> OwnedFd {
    let pty = crate::helpers::pty::open_pty(None);
    drop(pty.master);
    pty.slave
}

#[test]
fn a_held_stdout_on_a_hung_up_terminal_is_an_eio_reported_and_never_0() {
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    // The terminal hangs up while the attempt runs (its output is held meanwhile).
    let mut cmd = retry_with(&["--stdout-on-success", "-n", "0", "--", "sh", "-c"]);
    cmd.arg(format!(
        "echo started > {r}; while [ ! -e {r}.go ]; do sleep 0.01; done; echo output",
        r = ready.display()
    ))
    .stderr(Stdio::piped());
    let (child, master) = spawn_on_pty(cmd, Attach::Stdout);
    wait_for_lines(&ready, 1);
    drop(master);
    std::fs::write(dir.path().join("ready.go"), "").unwrap();
    let r = collect(child);
    assert_eq!(r.status.code(), Some(125), "{}", r.stderr);
    assert!(
        r.stderr.contains("Input/output error"),
        "an EIO, reported: {}",
        r.stderr
    );
}

#[test]
fn a_matched_stdout_on_a_full_disk_keeps_the_attempts_status_and_says_why() {
    // Much more than a pipe holds: the attempt is not stopped by a broken pipe either.
    for (script, code) in [("seq 1 300000; exit 5", 5), ("seq 1 300000", 125)] {
        let mut cmd = retry_with(&["--retry-if-output", "zzz", "-b", "0", "--"]);
        cmd.args(["sh", "-c", script]).stdout(dev_full());
        let r = run(cmd);
        assert_eq!(r.status.code(), Some(code), "{script}: {}", r.stderr);
        assert!(r.status.signal().is_none());
        let lines = r.retry_lines();
        assert!(
            lines[0].contains("cannot write the stdout of attempt 1: No space left on device"),
            "{}",
            r.stderr
        );
        // Not retried: the next attempt's output would be lost too.
        assert_eq!(r.stderr.matches("attempt 2").count(), 0, "{}", r.stderr);
    }
    // On a terminal that hung up: the same, with EIO.
    let mut cmd = retry_with(&[
        "--stop-if-output",
        "zzz",
        "--",
        "sh",
        "-c",
        "echo x; exit 4",
    ]);
    cmd.stdout(hung_up_terminal());
    let r = run(cmd);
    assert_eq!(r.status.code(), Some(4), "{}", r.stderr);
    assert!(r.stderr.contains("Input/output error"), "{}", r.stderr);
}

#[test]
fn dry_run_and_generate_report_a_write_error_with_125() {
    for args in [&["--dry-run"][..], &["--generate", "bash"][..]] {
        let mut cmd = retry_with(args);
        cmd.stdout(dev_full());
        let r = run(cmd);
        assert_eq!(r.status.code(), Some(125), "{args:?}: {}", r.stderr);
        assert_eq!(r.retry_lines().len(), 1, "{}", r.stderr);
        assert!(r.stderr.contains("No space left on device"), "{}", r.stderr);
    }
    // A reader that went away just ends the table.
    let mut child = retry_with(&["--dry-run", "-n", "unlimited"])
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    assert_eq!(wait_with_limit(&mut child).code(), Some(0));
}

// ---------------------------------------------------------------------------------------------
// A held stdout that cannot spill

#[test]
fn a_held_stdout_that_cannot_spill_goes_to_stderr_whole_and_is_never_0() {
    let dir = tempfile::tempdir().unwrap();
    let data: Vec<u8> = (0..9u32 << 20).map(|i| (i % 241) as u8).collect();
    let file = dir.path().join("data");
    std::fs::write(&file, &data).unwrap();
    for (status, code) in [(0, 125), (3, 3)] {
        let count = dir.path().join(format!("count{status}"));
        let mut cmd = retry_std();
        cmd.args(["--stdout-on-success", "-q", "-b", "0", "--", "sh", "-c"])
            .arg(format!(
                "echo >> {}; cat {}; exit {status}",
                count.display(),
                file.display()
            ))
            .env("TMPDIR", "/nonexistent")
            .stdout(Stdio::piped());
        let mut child = cmd.stderr(Stdio::piped()).spawn().unwrap();
        let mut stderr = Vec::new();
        let out = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut v = Vec::new();
            let mut out = out;
            out.read_to_end(&mut v).unwrap();
            v
        });
        child
            .stderr
            .take()
            .unwrap()
            .read_to_end(&mut stderr)
            .unwrap();
        let st = wait_with_limit(&mut child);
        assert_eq!(st.code(), Some(code), "exit {status}");
        assert!(
            reader.join().unwrap().is_empty(),
            "stdout carries no attempt"
        );
        // stderr: all the attempt's bytes, in order, then one line saying why.
        assert!(
            stderr.starts_with(&data),
            "the held output is on stderr, whole"
        );
        let rest = String::from_utf8_lossy(&stderr[data.len()..]).into_owned();
        assert_eq!(rest.lines().count(), 1, "{rest}");
        assert!(
            rest.starts_with("retry: cannot hold the stdout of attempt 1 for --stdout-on-success")
                && rest.contains("/nonexistent"),
            "{rest}"
        );
        assert_eq!(
            std::fs::read_to_string(&count).unwrap(),
            "\n",
            "not retried"
        );
    }
}
