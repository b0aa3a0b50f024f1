//! Exit status fidelity, table-driven: every exit status 0..=255 and every signal that can end
//! a process passes through retry exactly, on the first attempt and after retries.
//!
//! Signals that are left out, and why: STOP, TSTP, TTIN and TTOU stop a process instead of
//! ending it; CONT, CHLD, URG and WINCH are ignored by default (on macOS and FreeBSD also IO
//! and INFO). None of them can be a death by signal unless the process catches and re-raises
//! them, which `sh` does not.

use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};

use crate::helpers::{retry_std, wait_with_limit};

/// Every signal 1..=31 that ends a process by default (KILL included: it cannot be caught by
/// the attempt, but it still ends it, and retry must die of it too).
const DEATH_SIGNALS: &[i32] = &[
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGILL,
    libc::SIGTRAP,
    libc::SIGABRT,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGKILL,
    libc::SIGUSR1,
    libc::SIGSEGV,
    libc::SIGUSR2,
    libc::SIGPIPE,
    libc::SIGALRM,
    libc::SIGTERM,
    #[cfg(target_os = "linux")]
    libc::SIGSTKFLT,
    #[cfg(not(target_os = "linux"))]
    libc::SIGEMT,
    libc::SIGXCPU,
    libc::SIGXFSZ,
    libc::SIGVTALRM,
    libc::SIGPROF,
    #[cfg(target_os = "linux")]
    libc::SIGIO,
    #[cfg(target_os = "linux")]
    libc::SIGPWR,
    libc::SIGSYS,
];

/// The signals 1..=31 left out of [`DEATH_SIGNALS`] (see the module doc).
const NOT_DEATHS: &[i32] = &[
    libc::SIGSTOP,
    libc::SIGTSTP,
    libc::SIGTTIN,
    libc::SIGTTOU,
    libc::SIGCONT,
    libc::SIGCHLD,
    libc::SIGURG,
    libc::SIGWINCH,
    #[cfg(not(target_os = "linux"))]
    libc::SIGIO,
    #[cfg(not(target_os = "linux"))]
    libc::SIGINFO,
];

/// Runs retry (`-b 0`, `-n RETRIES`, core dumps of the attempt off) on `sh -c SCRIPT` in a
/// scratch directory and returns how retry ended.
fn run(retries: u32, script: &str) -> ExitStatus {
    let dir = tempfile::tempdir().unwrap();
    let mut child = retry_std()
        .args([
            "-q",
            "-b",
            "0",
            "-n",
            &retries.to_string(),
            "--",
            "sh",
            "-c",
        ])
        .arg(format!("ulimit -c 0; {script}"))
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_with_limit(&mut child)
}

/// `body` on the last of three attempts; the first two exit 1 (retried).
fn on_third_attempt(body: &str) -> String {
    format!("test \"$RETRY_ATTEMPT\" -lt 3 && exit 1; {body}")
}

#[test]
fn the_signal_table_covers_every_classic_signal() {
    let mut all: Vec<i32> = DEATH_SIGNALS.iter().chain(NOT_DEATHS).copied().collect();
    all.sort_unstable();
    assert_eq!(all, (1..=31).collect::<Vec<_>>());
}

/// `check` of every value of `values`, four at a time (512 runs of retry take a minute under
/// qemu one by one), its findings in the order of `values`.
fn each_in_parallel<T: Sync>(
    values: &[T],
    check: impl Fn(&T) -> Vec<String> + Sync,
) -> Vec<String> {
    const LANES: usize = 4;
    let mut found: Vec<(usize, Vec<String>)> = std::thread::scope(|s| {
        let lanes: Vec<_> = (0..LANES)
            .map(|lane| {
                let check = &check;
                s.spawn(move || {
                    (lane..values.len())
                        .step_by(LANES)
                        .map(|i| (i, check(&values[i])))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        lanes.into_iter().flat_map(|l| l.join().unwrap()).collect()
    });
    found.sort_by_key(|(i, _)| *i);
    found.into_iter().flat_map(|(_, f)| f).collect()
}

#[test]
fn every_exit_status_passes_through_exactly() {
    let codes: Vec<i32> = (0..=255).collect();
    let wrong = each_in_parallel(&codes, |&code| {
        let mut wrong = Vec::new();
        let first = run(0, &format!("exit {code}"));
        let third = run(2, &on_third_attempt(&format!("exit {code}")));
        for (when, status) in [("first attempt", first), ("third attempt", third)] {
            if status.code() != Some(code) {
                wrong.push(format!("exit {code} on the {when}: retry ended {status:?}"));
            }
        }
        wrong
    });
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_death_by_signal_passes_through_as_the_same_signal_without_core() {
    let mut wrong = Vec::new();
    for &sig in DEATH_SIGNALS {
        let kill = format!("kill -{sig} $$");
        let first = run(0, &kill);
        let third = run(2, &on_third_attempt(&kill));
        for (when, status) in [("first attempt", first), ("third attempt", third)] {
            if status.signal() != Some(sig) || status.core_dumped() {
                wrong.push(format!(
                    "signal {sig} on the {when}: retry ended {status:?} (core dumped: {})",
                    status.core_dumped()
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Real-time signals too (RELIABILITY.md, finding 1: they used to end retry with exit status
/// 128+N, because the number went through `nix::sys::signal::Signal`, which has none).
#[test]
fn real_time_signal_deaths_pass_through() {
    // SIGRTMIN..=SIGRTMAX as the shell numbers them (glibc reserves the first two or three).
    let Some((min, max)) = retry::stop_signal::realtime_range() else {
        eprintln!("skipped: this system has no real-time signals");
        return;
    };
    let mut wrong = Vec::new();
    for sig in [min, min + 1, (min + max) / 2, max - 1, max] {
        let status = run(0, &format!("kill -{sig} $$"));
        if status.signal() != Some(sig) {
            wrong.push(format!(
                "signal {sig}: retry ended {status:?} (code {:?})",
                status.code()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
