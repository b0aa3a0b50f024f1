//! Signals sent to retry (not from a terminal): INT, TERM, HUP and QUIT reach the attempt once
//! and stop the retrying; during a wait they end retry at once; USR1 and USR2 pass through.

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::helpers::{retry_std, send, wait_for_lines, wait_gone, wait_with_limit};

fn lines(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn stop_signals_reach_the_attempt_once_and_its_own_status_is_retrys() {
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
