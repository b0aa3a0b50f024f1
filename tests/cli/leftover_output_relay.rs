//! What the relay of a successful attempt's leftovers keeps and what it passes on: retry's exit
//! with the attempt's status while a leftover still writes, no descriptor of retry kept but the
//! output, hundreds of megabytes whole, a write error said, stderr alone, a terminal (the runs
//! and their synchronisation on files are in `leftover_output.rs`).

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::helpers::{alive, release_std, wait_for_lines, wait_gone};
use crate::leftover_output::{PIPED, Run, relay_of, relay_writing_to};

/// Waits (within `limit`) for `child` to end; `None` if it is still running then.
pub(crate) fn exited_within(
    child: &mut Child,
    limit: Duration,
) -> Option<std::process::ExitStatus> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if started.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The attempt writes `now` and succeeds at once; what it started (its pid in file `bg`)
/// waits for `go`, then writes `late` to stdout and `late-err` to stderr, and exits.
const WRITES_AFTER_GO: &str = "echo $$ > {dir}/main; \
    sh -c 'echo $$ > {dir}/bg; while [ ! -e {dir}/go ]; do sleep 0.01; done; \
           echo late; echo late-err >&2' & echo now";

#[test]
fn retry_exits_with_the_successful_attempt_and_what_its_leftover_writes_later_still_arrives() {
    for flags in PIPED {
        let mut run = Run::release(flags, WRITES_AFTER_GO);
        assert_eq!(run.line(), "now\n", "{flags:?}");
        let bg = run.pid("bg");
        // The leftover waits for `go`, which comes only after retry has ended: retry must end
        // while it still holds the attempt's output, as it does without the flag.
        let status = exited_within(&mut run.child, Duration::from_secs(20));
        assert!(alive(bg), "{flags:?}: the leftover was stopped");
        run.touch("go");
        let status = status.unwrap_or_else(|| {
            panic!("{flags:?}: retry waited for the leftover to close its output")
        });
        assert_eq!(status.code(), Some(0), "{flags:?}");
        let (_, rest, stderr) = run.finish();
        assert_eq!(rest, "late\n", "{flags:?}: the late line was lost");
        assert!(stderr.contains("late-err\n"), "{flags:?}: {stderr}");
        assert!(!stderr.contains("retry: "), "{flags:?}: {stderr}");
        wait_gone(&[bg]);
    }
}

#[test]
fn the_relay_keeps_nothing_of_retry_open_but_the_output() {
    // A `--lock` file, retry's stdin, its other pipes: none stays open in the relay, so the
    // lock is free once retry has ended, and a writer to retry's stdin meets a broken pipe.
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("lock");
    // Close-on-exec: no process the other tests start meanwhile may hold it.
    let (stdin_read, stdin_write) = retry::process::cloexec_pipe().unwrap();
    let mut child = release_std()
        .args(["--http-hints", "--lock"])
        .arg(&lock)
        .args(["-n", "0", "--", "sh", "-c"])
        .arg(format!(
            "sh -c 'while [ ! -e {d}/go ]; do sleep 0.01; done; echo late; echo late-err >&2' \
             </dev/null & echo now",
            d = dir.path().display()
        ))
        .stdin(stdin_read)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "now\n");
    let status = exited_within(&mut child, crate::helpers::HANG_LIMIT);
    assert_eq!(status.and_then(|s| s.code()), Some(0));
    let relay = relay_of(stdout.get_ref());
    let mut fds: Vec<i32> = std::fs::read_dir(format!("/proc/{relay}/fd"))
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    fds.sort_unstable();
    assert_eq!(fds, [1, 2, 3, 4], "the relay's descriptors");
    // The lock is free for the next run.
    release_std()
        .args(["--lock"])
        .arg(&lock)
        .args(["-n", "0", "--", "true"])
        .status()
        .map(|s| assert_eq!(s.code(), Some(0), "the lock is still held"))
        .unwrap();
    // Nobody reads retry's stdin any more.
    let wrote = nix::unistd::write(&stdin_write, b"x");
    assert_eq!(wrote, Err(nix::errno::Errno::EPIPE));
    // The relay leads a process group of its own.
    assert_eq!(crate::helpers::proc::stat(relay).unwrap().pgrp, relay);
    std::fs::write(dir.path().join("go"), "").unwrap();
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "late\n");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(stderr, "late-err\n");
    wait_gone(&[relay]);
}

#[test]
fn a_leftover_that_writes_hundreds_of_megabytes_after_retry_ended_is_passed_on_whole() {
    let dir = tempfile::tempdir().unwrap();
    let size: u64 = 256 << 20;
    let mut child = release_std()
        .args(["--stdout-on-success", "-n", "0", "--", "sh", "-c"])
        .arg(format!(
            "(while [ ! -e {d}/go ]; do sleep 0.01; done; head -c {size} /dev/zero) & echo now",
            d = dir.path().display()
        ))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "now\n");
    let status = exited_within(&mut child, crate::helpers::HANG_LIMIT);
    assert_eq!(status.and_then(|s| s.code()), Some(0));
    std::fs::write(dir.path().join("go"), "").unwrap();
    let copied = std::io::copy(&mut stdout, &mut std::io::sink()).unwrap();
    assert_eq!(copied, size);
}

#[test]
fn a_relay_that_cannot_write_says_so_on_stderr() {
    // retry has ended with the attempt's 0; what its leftover writes then meets a full disk:
    // the relay says so, in retry's words, and drops the rest.
    let Ok(full) = std::fs::File::options().write(true).open("/dev/full") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut child = release_std()
        .args(["--http-hints", "-n", "0", "--", "sh", "-c"])
        .arg(format!(
            "sh -c 'while [ ! -e {d}/go ]; do sleep 0.01; done; echo late' 2>/dev/null & \
             echo $! > {d}/bg",
            d = dir.path().display()
        ))
        .stdout(full)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = exited_within(&mut child, crate::helpers::HANG_LIMIT);
    assert_eq!(status.and_then(|s| s.code()), Some(0));
    std::fs::write(dir.path().join("go"), "").unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(
        stderr,
        "retry: cannot write the stdout of attempt 1 (from what it left running) to stdout: \
         No space left on device; the rest of it is lost\n"
    );
}

#[test]
fn a_leftover_holding_only_stderr_keeps_no_reader_of_stdout_waiting() {
    // The relay holds retry's stdout only while it passes something on to it: `$(retry ...)`
    // returns when retry does, as `$(cmd)` would with cmd's leftover on stderr alone.
    let dir = tempfile::tempdir().unwrap();
    let mut child = release_std()
        .args(["--http-hints", "--lock"])
        .arg(dir.path().join("lock"))
        .args(["-n", "0", "--", "sh", "-c"])
        .arg(format!(
            "sh -c 'echo $$ > {d}/bg; while [ ! -e {d}/go ]; do sleep 0.01; done; \
             echo late-err >&2' >/dev/null & echo now",
            d = dir.path().display()
        ))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Should the end not come, `go` after 20 s lets the leftover end, and the test fail.
    let go = dir.path().join("go");
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(20));
        let _ = std::fs::write(go, "");
    });
    let mut stdout = String::new();
    let mut reader = child.stdout.take().unwrap();
    reader.read_to_string(&mut stdout).unwrap();
    assert_eq!(stdout, "now\n");
    assert!(
        !dir.path().join("go").exists(),
        "stdout ended only with the leftover"
    );
    let status = exited_within(&mut child, crate::helpers::HANG_LIMIT);
    assert_eq!(status.and_then(|s| s.code()), Some(0));
    // The relay has the stderr pipe (4) and retry's stderr, nothing else: not what retry
    // had at 3 (with `--lock`, the lock file).
    let mut err = child.stderr.take().unwrap();
    let relay = relay_writing_to(&err, 2);
    assert_eq!(descriptors(relay), [2, 4]);
    std::fs::write(dir.path().join("go"), "").unwrap();
    let mut stderr = String::new();
    err.read_to_string(&mut stderr).unwrap();
    assert_eq!(stderr, "late-err\n");
}

/// The descriptors process `pid` has open, in order.
fn descriptors(pid: i32) -> Vec<i32> {
    let mut fds: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    fds.sort_unstable();
    fds
}

#[test]
fn on_a_terminal_the_leftovers_late_line_still_shows_after_retry_ended() {
    // retry as a user's terminal job (session leader, foreground group): it ends with the
    // attempt; the relay, in a group of its own, still writes the late line to the terminal.
    // (The leftover ignores the hangup the end of the session leader sends the terminal's
    // foreground group, as a daemon started under `nohup` does; the attempt ends only once it
    // does.)
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        "sh -c 'trap \"\" HUP; echo $$ > {d}/bg; while [ ! -e {d}/go ]; do sleep 0.01; done; echo late' & \
         while [ ! -s {d}/bg ]; do sleep 0.01; done; echo now",
        d = dir.path().display()
    );
    let (mut child, mut master) = crate::helpers::pty::retry_on_pty(
        &["--http-hints", "-n", "0", "--", "sh", "-c", &script],
        &[],
        80,
    );
    let bg: i32 = wait_for_lines(&dir.path().join("bg"), 1)
        .trim()
        .parse()
        .unwrap();
    let status = exited_within(&mut child, crate::helpers::HANG_LIMIT);
    assert!(alive(bg), "the leftover was stopped");
    std::fs::write(dir.path().join("go"), "").unwrap();
    assert_eq!(status.and_then(|s| s.code()), Some(0));
    let seen = crate::helpers::pty::read_until_closed(&mut master);
    assert_eq!(String::from_utf8_lossy(&seen), "now\r\nlate\r\n");
    wait_gone(&[bg]);
}
