//! Robustness: signals, and the limits in time that end an attempt with one. A blocked or
//! ignored signal inherited at start changes nothing; twenty SIGTERMs at random moments of a
//! `--replay-stdin` run that spilled to a file (during an attempt, during a wait, at the
//! boundary) end it promptly and cleanly (the full-size run is `benches/signals_under_load.sh`);
//! a child that stopped itself is still ended by its timeout; the exact edges (issue 9): `-t 0`,
//! `-d 0` and `--kill-after 0` as coreutils `timeout` reads 0, and death by KILL after KILL at a
//! timeout or the deadline.
//!
//! Not here: what a timeout or a signal leaves running (`robust_trees.rs`); `retry ... &` then
//! `fg` and Ctrl-Z at a terminal (`robust_terminal.rs`); a stop signal while the output waits
//! for a reader (`robust_pipes.rs`); a signal's words kept free of the command's arguments
//! (`robust_security.rs`). Deaths by signal passed on exactly are in `fidelity.rs`; forwarding,
//! timeouts and their grace in `signals.rs`, `fatal_signals.rs`, `stop_latency.rs`,
//! `timeouts.rs` and `timeout_compat*.rs`.

use std::io::Write;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::Stdio;
use std::time::{Duration, Instant};

use predicates::prelude::*;

use crate::helpers::proc::{token, wait_none_running};
use crate::helpers::{lines, retry, retry_std, send, wait_for_lines, wait_with_limit};

// ---------------------------------------------------------------------------------------------
// Inherited signal state

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

/// A field of `/proc/PID/status` (`SigBlk`, `SigIgn`, ...) as a bit mask.
pub(crate) fn mask_in(status: &str, field: &str) -> u64 {
    let line = status
        .lines()
        .find(|l| l.starts_with(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in {status}"));
    u64::from_str_radix(line.split_whitespace().nth(1).unwrap(), 16).unwrap()
}

pub(crate) fn bit(signal: i32) -> u64 {
    1 << (signal - 1)
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

// ---------------------------------------------------------------------------------------------
// Signals under load

/// How one TERM at a random moment ended.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Landed {
    /// The attempt caught it (its trap ran): retry ends with the attempt's 7.
    DuringAttempt,
    /// retry was waiting (or the attempt had not set its trap yet): retry dies of TERM.
    DuringWaitOrStart,
    /// The attempt had just exited 1 on its own: retry ends with that 1, no retry after.
    AtBoundary,
}

/// One run: `--replay-stdin` with 9 MiB of input (spilled to a temporary file in a private
/// TMPDIR), failing attempts 20 ms apart, TERM after `delay`; checks the status, the time to
/// exit, that nothing is left running and that TMPDIR is empty.
fn term_at(delay: Duration) -> Landed {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (pids, trapped) = (dir.path().join("pids"), dir.path().join("trapped"));
    let tag = token(5);
    let script = format!(
        ": {tag}; echo $$ >> {p}; trap 'echo $RETRY_ATTEMPT >> {t}; exit 7' TERM; \
         cat > /dev/null; sleep 0.02{tag} & wait; exit 1",
        p = pids.display(),
        t = trapped.display(),
    );
    let mut child = retry_std()
        .env("TMPDIR", tmp.path())
        .args([
            "--replay-stdin",
            "-q",
            "-b",
            "20ms",
            "-j",
            "none",
            "-m",
            "1",
        ])
        .args([
            "-n",
            "unlimited",
            "--kill-after",
            "30s",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .stdin(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        // retry may be gone before it has read it all.
        let _ = stdin.write_all(&vec![b'y'; 9 << 20]);
    });
    std::thread::sleep(delay);
    let sent = Instant::now();
    send(child.id(), libc::SIGTERM);
    let status = wait_with_limit(&mut child);
    let took = sent.elapsed();
    feeder.join().unwrap();
    assert!(took < Duration::from_secs(10), "slow to exit: {took:?}");
    let trapped = std::fs::read_to_string(&trapped).unwrap_or_default();
    let landed = match (status.code(), status.signal()) {
        (Some(7), _) => {
            assert_eq!(
                trapped.lines().count(),
                1,
                "7 without the trap: {trapped:?}"
            );
            Landed::DuringAttempt
        }
        (_, Some(libc::SIGTERM)) => {
            assert!(
                trapped.is_empty(),
                "the trap ran, yet retry died: {trapped:?}"
            );
            Landed::DuringWaitOrStart
        }
        (Some(1), _) => {
            assert!(trapped.is_empty(), "the trap ran, yet 1: {trapped:?}");
            Landed::AtBoundary
        }
        _ => panic!("TERM after {delay:?}: unexpected {status:?}, trapped {trapped:?}"),
    };
    wait_none_running(&tag);
    let left = crate::helpers::tmp_left(tmp.path());
    assert!(left.is_empty(), "temporary files left: {left:?}");
    // No attempt started after retry ended.
    let attempts = std::fs::read_to_string(&pids).unwrap_or_default();
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(std::fs::read_to_string(&pids).unwrap_or_default(), attempts);
    landed
}

#[test]
fn twenty_sigterms_at_random_moments_end_retry_promptly_and_cleanly() {
    // A fixed pseudo-random sequence (xorshift), so a failure can be replayed.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut draw = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        Duration::from_millis(x % 250)
    };
    let mut landed: Vec<Landed> = (0..20).map(|_| term_at(draw())).collect();
    // Over 20 draws from 0-250 ms both main phases are hit; on a machine so loaded that the
    // draws fell on one side, more draws (at most 40) find the other.
    let hit = |landed: &[Landed], phase| landed.contains(&phase);
    while !(hit(&landed, Landed::DuringAttempt) && hit(&landed, Landed::DuringWaitOrStart))
        && landed.len() < 60
    {
        landed.push(term_at(draw()));
    }
    landed.sort();
    assert!(
        hit(&landed, Landed::DuringAttempt),
        "no TERM reached an attempt: {landed:?}"
    );
    assert!(
        hit(&landed, Landed::DuringWaitOrStart),
        "no TERM came between attempts: {landed:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Exact edges of the limits

#[test]
fn a_child_that_stopped_itself_is_still_ended_by_its_timeout() {
    let tag = token(3);
    // Stopped, with a stopped grandchild: TERM then CONT ends both.
    retry()
        .args(["-n", "0", "-t", "200ms", "--", "sh", "-c"])
        .arg(format!(
            "sleep 100.{tag} & kill -STOP $!; kill -STOP $$; sleep 100"
        ))
        .assert()
        .code(124);
    wait_none_running(&tag);
    // Stopped again and again, ignoring TERM: KILL after --kill-after.
    let out = retry()
        .args(["-n", "0", "-t", "200ms", "--kill-after", "200ms", "--"])
        .args(["sh", "-c"])
        .arg(format!(
            "trap '' TERM; : {tag}; while :; do kill -STOP $$; done"
        ))
        .assert()
        .failure();
    assert_eq!(out.get_output().status.signal(), Some(libc::SIGKILL));
    wait_none_running(&tag);
}

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
