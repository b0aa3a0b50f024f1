//! `retry -n 0` as a drop-in for coreutils `timeout`: the behaviours coreutils' own tests of
//! `timeout` check (tests/timeout/timeout.sh, timeout-parameters.sh,
//! timeout-large-parameters.sh and timeout-group.sh in the coreutils repository), written
//! afresh for retry, each through the built binary with `-n 0`; and what a shim
//! `timeout [-k K] [-s SIG] DURATION CMD` -> `retry -q -n 0 -t DURATION -k K -s SIG -- CMD`
//! relies on: ignored signals kept ignored, `--preserve-status`. Here: timeout.sh, the signals
//! and timeout-group.sh; the parameters and durations (timeout-parameters.sh,
//! timeout-large-parameters.sh, every duration `timeout` takes) are in
//! `timeout_compat_durations.rs`.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::helpers::{
    clear_outside_env, retry, retry_std, wait_for_lines, wait_gone, wait_with_limit,
};

/// The built `retry`, for shell command lines.
fn bin() -> &'static str {
    crate::helpers::bin().to_str().unwrap()
}

/// `retry -q -n 0 ARGS`: one attempt, as `timeout` runs its command once.
pub(crate) fn once(args: &[&str]) -> assert_cmd::Command {
    let mut cmd = retry();
    cmd.args(["-q", "-n", "0"]).args(args);
    cmd
}

/// What `sh -c SCRIPT` prints: with `echo $?` at its end, the status a shell sees.
fn shell(script: &str) -> String {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", script]).stdin(Stdio::null());
    clear_outside_env(&mut cmd);
    let out = cmd.output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// `retry ARGS` started with `signals` ignored by its parent, as `trap '' SIG` leaves them.
fn with_ignored(signals: &'static [i32], args: &[&str]) -> assert_cmd::Command {
    let mut cmd = retry_std();
    cmd.args(args);
    // SAFETY: signal() is async-signal-safe; SIG_IGN installs no handler.
    unsafe {
        cmd.pre_exec(move || {
            for &s in signals {
                libc::signal(s, libc::SIG_IGN);
            }
            Ok(())
        });
    }
    let mut cmd = assert_cmd::Command::from_std(cmd);
    cmd.timeout(crate::helpers::HANG_LIMIT);
    cmd
}

/// The signals ignored in the `SigIgn:` line of a `/proc/PID/status` text.
fn ignored_in(status: &str) -> u64 {
    let line = status
        .lines()
        .find(|l| l.starts_with("SigIgn:"))
        .unwrap_or_else(|| panic!("no SigIgn line in {status:?}"));
    u64::from_str_radix(line["SigIgn:".len()..].trim(), 16).unwrap()
}

fn bit(signal: i32) -> u64 {
    1 << (signal - 1)
}

// timeout.sh: statuses, a timeout, --preserve-status, -s 0 with -k, SIGCHLD ignored, a child
// present at start.

#[test]
fn statuses_pass_through_and_a_timed_out_command_is_124() {
    once(&["-t", "10", "--", "true"]).assert().code(0);
    once(&["-t", "1d", "--", "true"]).assert().code(0);
    once(&["-t", "0", "--", "true"]).assert().code(0);
    once(&["-t", "10", "--", "sh", "-c", "exit 2"])
        .assert()
        .code(2);
    once(&["-t", ".1", "--", "sleep", "10"]).assert().code(124);
}

#[test]
fn preserve_status_ends_as_the_stopped_command_ended_as_timeout_does() {
    let ours = shell(&format!(
        "{} -q -n 0 --preserve-status -t .1 -- sleep 10; echo $?",
        bin()
    ));
    assert_eq!(ours, "143");
    assert_eq!(
        ours,
        shell("timeout --preserve-status .1 sleep 10; echo $?")
    );
    // Its own status when it handles TERM; 124 without the flag.
    let script = "trap 'exit 7' TERM; sleep 30 & wait";
    once(&["--preserve-status", "-t", ".2", "--", "sh", "-c", script])
        .assert()
        .code(7);
    once(&["-t", ".2", "--", "sh", "-c", script])
        .assert()
        .code(124);
    // Retrying is unchanged: a timed-out attempt is still retried, then retry dies of TERM.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let out = retry()
        .args(["-q", "-n", "2", "-b", "0", "--preserve-status", "-t", ".1"])
        .args(["--", "sh", "-c"])
        .arg(format!("echo x >> {}; exec sleep 10", log.display()))
        .assert()
        .failure()
        .get_output()
        .clone();
    assert_eq!(out.status.signal(), Some(libc::SIGTERM));
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 3);
}

#[test]
fn signal_0_sends_nothing_and_kill_follows_as_timeout_does() {
    let started = Instant::now();
    let ours = shell(&format!(
        "{} -q -n 0 -s 0 -k 1 -t 0.1 -- sleep 10; echo $?",
        bin()
    ));
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "KILL came early"
    );
    assert_eq!(ours, "137", "never 124: KILL was needed");
    assert_eq!(
        ours,
        shell("timeout -s0 -k1 .1 sleep 10 2>/dev/null; echo $?")
    );
    let out = once(&["-s", "0", "-k", "1", "-t", "0.1", "--", "sleep", "10"])
        .assert()
        .failure()
        .get_output()
        .clone();
    assert_eq!(out.status.signal(), Some(libc::SIGKILL));
}

#[test]
fn a_caller_that_ignores_sigchld_changes_nothing() {
    let chld: &'static [i32] = &[libc::SIGCHLD];
    with_ignored(chld, &["-q", "-n", "0", "-t", "10", "--", "true"])
        .assert()
        .code(0);
    with_ignored(chld, &["-q", "-n", "0", "-t", ".1", "--", "sleep", "10"])
        .assert()
        .code(124);
}

#[test]
fn a_child_present_at_start_is_not_waited_for() {
    // retry is exec'd by a shell that has a child already: the attempt times out, its output
    // never comes, and the shell's child is not retry's to wait for.
    let started = Instant::now();
    let out = shell(&format!(
        "sleep 0.3 & exec {} -q -n 0 -t 1 -- sh -c 'sleep 20; echo foo'",
        bin()
    ));
    assert_eq!(out, "");
    let status = shell(&format!(
        "(sleep 0.3 & exec {} -q -n 0 -t 1 -- sh -c 'sleep 20; echo foo') >/dev/null; echo $?",
        bin()
    ));
    assert_eq!(status, "124");
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn verbose_and_dry_run_name_the_signal() {
    let out = retry()
        .args([
            "-v", "-n", "0", "-s", "0", "-k", ".1", "-t", ".1", "--", "sleep", "10",
        ])
        .assert()
        .failure()
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("stop no signal, then KILL 100ms later"),
        "{stderr}"
    );
    let out = retry()
        .args(["--dry-run", "-n", "1", "-t", "10", "-s", "int", "-k", "2"])
        .assert()
        .success()
        .get_output()
        .clone();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.lines().last().unwrap().starts_with(
            "stop   at --timeout 10s: SIGINT to the attempt's process tree, then KILL 2s later"
        ),
        "{stdout}"
    );
}

// Signals: -s, ignored signals kept ignored.

#[test]
fn the_signal_flag_sends_that_signal_to_the_whole_tree() {
    let dir = tempfile::tempdir().unwrap();
    let (log, pids) = (dir.path().join("log"), dir.path().join("pids"));
    let script = format!(
        "trap 'echo got INT >> {log}; exit 3' INT; sh -c 'trap \"echo child got INT >> {log}; \
         exit\" INT; sleep 30 & wait' & echo $! >> {pids}; wait",
        log = log.display(),
        pids = pids.display()
    );
    once(&["-s", "INT", "-t", "0.5", "--", "sh", "-c", &script])
        .assert()
        .code(124);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("got INT"), "{text:?}");
    wait_gone(&wait_pids(&pids));
    // A real-time signal, and KILL, by the status they leave with --preserve-status.
    let Some((rtmin, _)) = retry::stop_signal::realtime_range() else {
        return;
    };
    let rt = rtmin + 1;
    let out = once(&[
        "--preserve-status",
        "-s",
        "RTMIN+1",
        "-t",
        ".1",
        "--",
        "sleep",
        "10",
    ])
    .assert()
    .failure()
    .get_output()
    .clone();
    assert_eq!(out.status.signal(), Some(rt));
    let out = once(&["-s", "SIGKILL", "-t", ".1", "--", "sleep", "10"])
        .assert()
        .failure()
        .get_output()
        .clone();
    assert_eq!(out.status.signal(), Some(libc::SIGKILL), "KILL: 137");
    // STOP and CONT do not end it: CONT follows STOP; KILL after --kill-after does.
    for (signal, number) in [("STOP", libc::SIGSTOP), ("CONT", libc::SIGCONT)] {
        let started = Instant::now();
        let out = once(&["-s", signal, "-k", "0.5", "-t", ".1", "--", "sleep", "10"])
            .assert()
            .failure()
            .get_output()
            .clone();
        assert_eq!(
            out.status.signal(),
            Some(libc::SIGKILL),
            "{signal} ({number})"
        );
        assert!(started.elapsed() >= Duration::from_millis(550), "{signal}");
    }
}

/// The pids written one per line to `path`.
fn wait_pids(path: &Path) -> Vec<i32> {
    wait_for_lines(path, 1)
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

#[test]
fn an_ignored_sigpipe_stays_ignored_so_yes_sees_broken_pipe() {
    let script = format!("trap '' PIPE; {} -q -n 0 -t 10 -- yes | :", bin());
    let mut cmd = Command::new("sh");
    cmd.args(["-c", &script]).stdin(Stdio::null());
    clear_outside_env(&mut cmd);
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Broken pipe"), "{stderr:?}");
    // At its default, yes dies of SIGPIPE without a word, as under timeout.
    let script = format!("{} -q -n 0 -t 10 -- yes | :", bin());
    let mut cmd = Command::new("sh");
    cmd.args(["-c", &script]).stdin(Stdio::null());
    clear_outside_env(&mut cmd);
    let out = cmd.output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("Broken pipe"));
}

#[test]
fn ignored_signals_stay_ignored_in_attempts_hooks_and_nested_retries() {
    let all: &'static [i32] = &[libc::SIGPIPE, libc::SIGHUP, libc::SIGCHLD];
    let attempt = with_ignored(all, &["-q", "-n", "0", "--", "cat", "/proc/self/status"])
        .assert()
        .success()
        .get_output()
        .clone();
    let mask = ignored_in(&String::from_utf8_lossy(&attempt.stdout));
    for &s in all {
        assert_ne!(
            mask & bit(s),
            0,
            "signal {s} not ignored in the attempt: {mask:x}"
        );
    }
    // A hook (sh -c): the shell keeps PIPE and HUP ignored for what it execs.
    let hook = with_ignored(
        all,
        &[
            "-q",
            "-n",
            "0",
            "--on-give-up",
            "exec cat /proc/self/status",
            "--",
            "false",
        ],
    )
    .assert()
    .code(1)
    .get_output()
    .clone();
    let mask = ignored_in(&String::from_utf8_lossy(&hook.stderr));
    for s in [libc::SIGPIPE, libc::SIGHUP] {
        assert_ne!(
            mask & bit(s),
            0,
            "signal {s} not ignored in the hook: {mask:x}"
        );
    }
    // Through a retry inside a retry.
    let nested = with_ignored(
        all,
        &[
            "-q",
            "-n",
            "0",
            "--",
            bin(),
            "-q",
            "-n",
            "0",
            "--",
            "cat",
            "/proc/self/status",
        ],
    )
    .assert()
    .success()
    .get_output()
    .clone();
    let mask = ignored_in(&String::from_utf8_lossy(&nested.stdout));
    for &s in all {
        assert_ne!(
            mask & bit(s),
            0,
            "signal {s} not ignored when nested: {mask:x}"
        );
    }
    // Signals at their default stay at default, SIGPIPE too (retry ignores it for itself).
    let plain = with_ignored(&[], &["-q", "-n", "0", "--", "cat", "/proc/self/status"])
        .assert()
        .success()
        .get_output()
        .clone();
    let mask = ignored_in(&String::from_utf8_lossy(&plain.stdout));
    for &s in all {
        assert_eq!(
            mask & bit(s),
            0,
            "signal {s} ignored in the attempt: {mask:x}"
        );
    }
}

// timeout-group.sh: a signal to the caller's whole group, and timeouts in cascade.

/// A command that says it runs, then waits up to 20 s for INT, which it records.
fn int_catcher(dir: &Path) -> String {
    format!(
        "trap 'touch {d}/int.received; exit' INT; touch {d}/running; n=200; \
         while [ $n -gt 0 ] && [ ! -e {d}/int.received ]; do sleep 0.1; n=$((n-1)); done",
        d = dir.display()
    )
}

fn wait_for(path: &Path) {
    let started = Instant::now();
    while !path.exists() {
        assert!(started.elapsed() < Duration::from_secs(30), "{path:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn int_to_the_callers_group_reaches_the_command_and_ends_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = retry_std()
        .args([
            "-q",
            "-n",
            "0",
            "-t",
            "25",
            "--",
            "sh",
            "-c",
            &int_catcher(dir.path()),
        ])
        .spawn()
        .unwrap();
    wait_for(&dir.path().join("running"));
    let sent = Instant::now();
    // The whole group retry leads (retry_std starts it in one of its own), as kill -INT -PGID.
    send_group(child.id(), libc::SIGINT);
    let status = wait_with_limit(&mut child);
    assert!(sent.elapsed() < Duration::from_secs(15), "not in time");
    assert!(dir.path().join("int.received").exists());
    assert_ne!(status.code(), Some(124), "{status:?}");
}

#[test]
fn an_int_ignored_by_the_caller_stays_ignored_for_the_command() {
    // A background job of a non-interactive shell starts with INT ignored: neither retry nor
    // its command act on it (coreutils does not catch or pass on an ignored signal either).
    let dir = tempfile::tempdir().unwrap();
    let mut std_cmd = retry_std();
    std_cmd.args([
        "-q",
        "-n",
        "0",
        "-t",
        "2",
        "--",
        "sh",
        "-c",
        &int_catcher(dir.path()),
    ]);
    // SAFETY: signal() is async-signal-safe; SIG_IGN installs no handler.
    unsafe {
        std_cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            Ok(())
        });
    }
    let mut child = std_cmd.spawn().unwrap();
    wait_for(&dir.path().join("running"));
    send_group(child.id(), libc::SIGINT);
    let status = wait_with_limit(&mut child);
    assert_eq!(status.code(), Some(124), "{status:?}");
    assert!(!dir.path().join("int.received").exists());
}

#[test]
fn cascaded_timeouts_stop_a_command_that_leads_its_own_group() {
    // The outer retry's INT reaches the inner retry (which passes it on) and the command
    // (found in its tree): the command acts on it long before its own 20 s.
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let script = int_catcher(dir.path());
    let args = [
        "-q", "-n", "0", "-s", "INT", "-t", "25", "--", "sh", "-c", &script,
    ];
    let mut child = retry_std()
        .args(["-q", "-n", "0", "-s", "INT", "-t", "1", "--", bin()])
        .args(args)
        .spawn()
        .unwrap();
    let status = wait_with_limit(&mut child);
    assert_eq!(status.code(), Some(124), "{status:?}");
    assert!(dir.path().join("int.received").exists());
    assert!(started.elapsed() < Duration::from_secs(15));
}

/// Sends `signal` to the process group led by `pid`.
fn send_group(pid: u32, signal: i32) {
    // SAFETY: killpg with a group we started and a valid signal number.
    let rc = unsafe { libc::killpg(pid as i32, signal) };
    assert_eq!(rc, 0, "killpg({pid}, {signal})");
}
