//! Signals sent to retry (not from a terminal): INT, TERM, HUP and QUIT reach the attempt once
//! and stop the retrying; during a wait they end retry at once; USR1 and USR2 pass through. So
//! does every other signal that ends a process by default, one class at a time, with an
//! attempt that started a grandchild: a stop, ALRM (the attempt's timer), passed on (real-time
//! signals); the steps of a run they can come at are `fatal_signals.rs`'s.

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::helpers::{retry_std, send, wait_for_lines, wait_gone, wait_with_limit};
use crate::tools::{self, require};

fn lines(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn stop_signals_reach_the_attempt_once_and_its_own_status_is_retrys() {
    if !require(&[tools::PERL]) {
        return;
    }
    for (sig, name) in [(15, "TERM"), (2, "INT"), (1, "HUP"), (3, "QUIT")] {
        let dir = tempfile::tempdir().unwrap();
        let (log, ready) = (dir.path().join("log"), dir.path().join("ready"));
        // perl counts every delivery (a shell trap would merge two into one).
        let script = format!(
            "$SIG{{{name}}} = sub {{ open my $f, '>>', '{log}'; print $f \"got\\n\"; $n++ }}; \
             open my $r, '>>', '{ready}'; print $r \"$ENV{{RETRY_ATTEMPT}}\\n\"; close $r; \
             select(undef, undef, undef, 0.05) until $n; \
             select(undef, undef, undef, 0.05) for 1..10; exit 7",
            log = log.display(),
            ready = ready.display()
        );
        let mut child = retry_std()
            .args(["-b", "0", "-n", "5", "-q", "--", "perl", "-e", &script])
            .spawn()
            .unwrap();
        wait_for_lines(&ready, 1);
        send(child.id(), sig);
        let status = wait_with_limit(&mut child);
        assert_eq!(status.code(), Some(7), "{name}: {status:?}");
        assert_eq!(lines(&log), vec!["got"], "{name} delivered once");
        assert_eq!(lines(&ready), vec!["1"], "{name}: retried");
    }
}

#[test]
fn an_attempt_killed_by_the_forwarded_signal_makes_retry_die_of_it() {
    for (sig, name) in [(15, "TERM"), (2, "INT"), (1, "HUP")] {
        let dir = tempfile::tempdir().unwrap();
        let ready = dir.path().join("ready");
        let mut child = retry_std()
            .args(["-b", "0", "-q", "--", "sh", "-c"])
            .arg(format!(
                "echo $$ >> {}; while :; do sleep 0.05; done",
                ready.display()
            ))
            .spawn()
            .unwrap();
        let pid: i32 = wait_for_lines(&ready, 1).trim().parse().unwrap();
        send(child.id(), sig);
        let status = wait_with_limit(&mut child);
        assert_eq!(status.signal(), Some(sig), "{name}: {status:?}");
        wait_gone(&[pid]);
        assert_eq!(lines(&ready).len(), 1, "{name}: retried");
    }
}

#[test]
fn a_signal_during_the_wait_ends_retry_at_once_by_that_signal() {
    for (sig, name) in [(15, "TERM"), (2, "INT")] {
        let mut child = retry_std()
            .args(["-b", "60s", "-j", "none", "--", "sh", "-c", "exit 1"])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Synchronise on the progress line: retry is now waiting 60 s.
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        assert!(line.contains("retrying in 1m"), "{line:?}");
        let sent = Instant::now();
        send(child.id(), sig);
        let status = wait_with_limit(&mut child);
        assert_eq!(status.signal(), Some(sig), "{name}: {status:?}");
        assert!(
            sent.elapsed() < Duration::from_secs(20),
            "{name}: not at once"
        );
    }
}

#[test]
fn usr1_and_usr2_are_passed_on_and_retrying_goes_on() {
    for (sig, name) in [(10, "USR1"), (12, "USR2")] {
        let dir = tempfile::tempdir().unwrap();
        let (log, ready) = (dir.path().join("log"), dir.path().join("ready"));
        let mut child = retry_std()
            .args(["-b", "0", "-q", "--", "sh", "-c"])
            .arg(format!(
                "trap 'echo got >> {log}; exit 3' {name}; echo $RETRY_ATTEMPT >> {ready}; \
                 test $RETRY_ATTEMPT -ge 2 && exit 0; while :; do sleep 0.05; done",
                log = log.display(),
                ready = ready.display()
            ))
            .spawn()
            .unwrap();
        wait_for_lines(&ready, 1);
        send(child.id(), sig);
        let status = wait_with_limit(&mut child);
        assert_eq!(status.code(), Some(0), "{name}: {status:?}");
        assert_eq!(lines(&log), vec!["got"]);
        assert_eq!(lines(&ready), vec!["1", "2"]);
    }
}

#[test]
fn after_a_forwarded_term_a_stubborn_attempt_gets_kill() {
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let mut child = retry_std()
        .args(["--kill-after", "300ms", "-q", "--", "sh", "-c"])
        .arg(format!(
            "trap '' TERM; sleep 100 & echo $! >> {0}; echo $$ >> {0}; \
             while :; do sleep 0.05; done",
            ready.display()
        ))
        .spawn()
        .unwrap();
    let text = wait_for_lines(&ready, 2);
    let pids: Vec<i32> = text.lines().map(|l| l.parse().unwrap()).collect();
    send(child.id(), 15);
    let status = wait_with_limit(&mut child);
    assert_eq!(status.signal(), Some(9), "{status:?}");
    wait_gone(&pids);
}

#[test]
fn a_signalled_retry_leaves_no_process_of_the_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let mut child = retry_std()
        .args(["-q", "--", "sh", "-c"])
        .arg(format!(
            "trap 'exit 5' TERM; sh -c 'trap \"\" TERM; sleep 100' & echo $! >> {0}; \
             sleep 100 & echo $! >> {0}; echo $$ >> {0}; wait",
            ready.display()
        ))
        .spawn()
        .unwrap();
    let text = wait_for_lines(&ready, 3);
    let pids: Vec<i32> = text.lines().map(|l| l.parse().unwrap()).collect();
    send(child.id(), 15);
    let status = wait_with_limit(&mut child);
    assert_eq!(status.code(), Some(5), "{status:?}");
    wait_gone(&pids);
}

/// An attempt for the fatal-signal tests: on attempt 1, a grandchild (`sleep`) in the
/// background and the attempt's shell waiting for it, their pids written to `pids` once both
/// run; later attempts succeed at once. Every attempt adds its number to `attempts`.
fn attempt_with_a_grandchild(dir: &std::path::Path) -> String {
    format!(
        "ulimit -c 0; echo $RETRY_ATTEMPT >> {attempts}; test $RETRY_ATTEMPT -ge 2 && exit 0; \
         sleep 1000 >/dev/null 2>&1 & echo $! >> {pids}; echo $$ >> {pids}; wait",
        attempts = dir.join("attempts").display(),
        pids = dir.join("pids").display()
    )
}

/// Runs the release retry (`-b 0 -n 5 -q`) on [`attempt_with_a_grandchild`], sends it
/// `signal` once the attempt and its grandchild run, checks that no process of the attempt is
/// left (within 10 s) and returns how retry ended and the attempts made.
fn send_during_an_attempt(signal: i32) -> (std::process::ExitStatus, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let mut child = crate::helpers::release_std()
        .args(["-b", "0", "-n", "5", "-q", "--", "sh", "-c"])
        .arg(attempt_with_a_grandchild(dir.path()))
        .spawn()
        .unwrap();
    let text = wait_for_lines(&dir.path().join("pids"), 2);
    let pids: Vec<i32> = text.lines().map(|l| l.parse().unwrap()).collect();
    // A failing run leaves them: they must not outlive the test (nor hold its output).
    let _reap = KillOnDrop(pids.clone());
    send(child.id(), signal);
    let status = wait_with_limit(&mut child);
    wait_gone(&pids);
    (status, lines(&dir.path().join("attempts")))
}

/// KILLs these pids when dropped (when a test fails, what the run left behind).
struct KillOnDrop(Vec<i32>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for &pid in &self.0 {
            if crate::helpers::alive(pid) {
                // SAFETY: kill(2) has no memory effects; an error (gone already) is ignored.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
}

/// Signals whose default action ends a process, and that retry treats as a stop: passed on to
/// the attempt (with CONT), no further attempt, retry ends as that attempt did.
fn stop_class() -> Vec<(i32, &'static str)> {
    let mut signals = vec![
        (libc::SIGVTALRM, "VTALRM"),
        (libc::SIGPROF, "PROF"),
        (libc::SIGXCPU, "XCPU"),
        (libc::SIGXFSZ, "XFSZ"),
        (libc::SIGABRT, "ABRT"),
        (libc::SIGSYS, "SYS"),
        (libc::SIGTRAP, "TRAP"),
        (libc::SIGBUS, "BUS"),
        (libc::SIGSEGV, "SEGV"),
        (libc::SIGILL, "ILL"),
        (libc::SIGFPE, "FPE"),
    ];
    #[cfg(target_os = "linux")]
    signals.extend([
        (libc::SIGSTKFLT, "STKFLT"),
        (libc::SIGPWR, "PWR"),
        (libc::SIGIO, "IO"),
    ]);
    #[cfg(not(target_os = "linux"))]
    signals.push((libc::SIGEMT, "EMT"));
    signals
}

#[test]
fn a_fatal_signal_is_a_stop_and_leaves_no_process_of_the_attempt() {
    for (signal, name) in stop_class() {
        let (status, attempts) = send_during_an_attempt(signal);
        assert_eq!(status.signal(), Some(signal), "{name}: {status:?}");
        assert_eq!(attempts, vec!["1"], "{name}: retried");
    }
}

#[test]
fn alrm_stops_the_attempt_as_its_timeout_does() {
    let (status, attempts) = send_during_an_attempt(libc::SIGALRM);
    assert_eq!(status.code(), Some(124), "{status:?}");
    assert_eq!(attempts, vec!["1"], "retried");
}

// macOS has no real-time signals.
#[cfg(any(target_os = "linux", target_os = "freebsd"))]
#[test]
fn real_time_signals_are_passed_on_and_retrying_goes_on() {
    #[cfg(target_os = "linux")]
    let (min, max) = (libc::SIGRTMIN(), libc::SIGRTMAX());
    #[cfg(target_os = "freebsd")]
    let (min, max) = (65, 126);
    for signal in [min, min + 1, max - 1, max] {
        let (status, attempts) = send_during_an_attempt(signal);
        assert_eq!(status.code(), Some(0), "{signal}: {status:?}");
        assert_eq!(attempts, vec!["1", "2"], "{signal}");
    }
}
