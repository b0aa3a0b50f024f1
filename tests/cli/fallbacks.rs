//! The fallbacks, through the binary with a seccomp filter (helpers/seccomp.rs) that refuses
//! what seccomp-filtered containers and emulators refuse: `clone` with `CLONE_VFORK` (retry
//! then starts attempts with fork and exec) and `pidfd_open` (then SIGCHLD alone tells of an
//! attempt's end), each with ENOSYS, EPERM or EINVAL. Every guarantee holds: launch errors
//! (126, 127, never retried), exit statuses and deaths by signal, a timeout stopping the whole
//! tree, signals passed on once, a hook's output. `.ci/run` also runs the supervision modules
//! (signals, timeouts, process trees, timeout_compat, fidelity, hooks) with the filter on.
//! Linux on x86_64 and AArch64 only; not under qemu-user, which refuses seccomp filters.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::helpers::seccomp::Refuse;
use crate::helpers::{clear_outside_env, wait_for_lines, wait_with_limit};

/// Every way a container or an emulator refuses, one at a time and both together.
fn refusals() -> Vec<Refuse> {
    let mut all = Vec::new();
    for errno in [libc::ENOSYS, libc::EPERM, libc::EINVAL] {
        all.push(Refuse {
            vfork: Some(errno),
            pidfd: None,
        });
        all.push(Refuse {
            vfork: None,
            pidfd: Some(errno),
        });
    }
    all.push(Refuse {
        vfork: Some(libc::ENOSYS),
        pidfd: Some(libc::ENOSYS),
    });
    all
}

/// Whether seccomp filters can be installed here (not under qemu-user, which refuses them).
fn filters_work() -> bool {
    let mut cmd = Command::new("true");
    Refuse {
        vfork: Some(libc::ENOSYS),
        pidfd: None,
    }
    .apply(&mut cmd);
    let ok = cmd.status().is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: seccomp filters cannot be installed here (qemu-user refuses them)");
    }
    ok
}

/// retry under `refuse`, with a hang limit.
fn retry_refused(refuse: Refuse) -> assert_cmd::Command {
    let mut cmd = Command::new(crate::helpers::bin());
    cmd.stdin(std::process::Stdio::null()).process_group(0);
    clear_outside_env(&mut cmd);
    crate::helpers::default_signals(&mut cmd);
    refuse.apply(&mut cmd);
    let mut cmd = assert_cmd::Command::from_std(cmd);
    cmd.timeout(crate::helpers::HANG_LIMIT);
    cmd
}

#[test]
fn the_filter_refuses_what_it_says_and_nothing_else() {
    if !filters_work() {
        return;
    }
    // In a child under the filter: clone(CLONE_VFORK) and pidfd_open fail with the errno,
    // a plain fork (sh's) still works.
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "(exit 3); test $? = 3"]);
    Refuse {
        vfork: Some(libc::EPERM),
        pidfd: Some(libc::EINVAL),
    }
    .apply(&mut cmd);
    // SAFETY: raw system calls only; a vfork child that the filter failed to refuse exits at
    // once.
    unsafe {
        cmd.pre_exec(|| {
            let r = libc::syscall(
                libc::SYS_clone,
                libc::CLONE_VFORK | libc::SIGCHLD,
                0,
                0,
                0,
                0,
            );
            if r == 0 {
                libc::_exit(0);
            }
            let errno = std::io::Error::last_os_error().raw_os_error();
            if r > 0 || errno != Some(libc::EPERM) {
                return Err(std::io::Error::other("clone(CLONE_VFORK) was not refused"));
            }
            let r = libc::syscall(libc::SYS_pidfd_open, libc::getpid(), 0);
            let errno = std::io::Error::last_os_error().raw_os_error();
            if r >= 0 || errno != Some(libc::EINVAL) {
                return Err(std::io::Error::other("pidfd_open was not refused"));
            }
            Ok(())
        });
    }
    assert!(cmd.status().unwrap().success());
}

#[test]
fn launch_errors_statuses_and_signal_deaths_are_exact() {
    if !filters_work() {
        return;
    }
    for refuse in refusals() {
        // Not found: 127, one attempt only; found but not executable: 126.
        let out = retry_refused(refuse)
            .args(["-n", "3", "-b", "0", "--", "no-such-command-xyz"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(127), "{refuse:?}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("attempt 2"),
            "{refuse:?}: retried: {stderr}"
        );
        retry_refused(refuse)
            .args(["-n", "3", "-b", "0", "--", "/etc/passwd"])
            .assert()
            .code(126);
        for code in [0, 1, 3, 125, 255] {
            retry_refused(refuse)
                .args(["-n", "1", "-b", "0", "--", "sh", "-c"])
                .arg(format!("exit {code}"))
                .assert()
                .code(code);
        }
        let status = retry_refused(refuse)
            .args(["-n", "0", "--", "sh", "-c", "kill -USR1 $$"])
            .output()
            .unwrap()
            .status;
        assert_eq!(status.signal(), Some(libc::SIGUSR1), "{refuse:?}");
    }
}

#[test]
fn a_timeout_stops_the_whole_group_and_a_term_is_passed_on_once() {
    if !filters_work() {
        return;
    }
    for refuse in refusals() {
        let dir = tempfile::tempdir().unwrap();
        let (pids, got) = (dir.path().join("pids"), dir.path().join("got"));
        // A timeout: the attempt and its background child are stopped.
        let started = Instant::now();
        retry_refused(refuse)
            .args(["-n", "0", "-t", "200ms", "--", "sh", "-c"])
            .arg(format!(
                "sleep 60 & echo $! >> {p}; echo $$ >> {p}; wait",
                p = pids.display()
            ))
            .assert()
            .code(124);
        assert!(started.elapsed() < Duration::from_secs(30), "{refuse:?}");
        let pids: Vec<i32> = std::fs::read_to_string(&pids)
            .unwrap()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        crate::helpers::wait_gone(&pids);
        // TERM to retry reaches the attempt once; retry then ends as the attempt did.
        let mut child = cmd_std(refuse, &got).spawn().unwrap();
        wait_for_lines(&got, 1);
        crate::helpers::send(child.id(), libc::SIGTERM);
        let status = wait_with_limit(&mut child);
        assert_eq!(status.code(), Some(7), "{refuse:?}");
        assert_eq!(
            std::fs::read_to_string(&got).unwrap(),
            "ready\nTERM\n",
            "{refuse:?}"
        );
    }
}

/// The std command of the TERM case (assert_cmd's cannot be signalled while it runs).
fn cmd_std(refuse: Refuse, got: &std::path::Path) -> Command {
    let mut cmd = Command::new(crate::helpers::bin());
    cmd.stdin(std::process::Stdio::null()).process_group(0);
    clear_outside_env(&mut cmd);
    crate::helpers::default_signals(&mut cmd);
    refuse.apply(&mut cmd);
    cmd.args(["-n", "3", "-q", "--", "sh", "-c"]).arg(format!(
        "trap 'echo TERM >> {g}; exit 7' TERM; echo ready >> {g}; while :; do sleep 0.05; done",
        g = got.display()
    ));
    cmd
}

#[test]
fn hooks_run_and_their_output_reaches_stderr() {
    if !filters_work() {
        return;
    }
    for refuse in refusals() {
        let out = retry_refused(refuse)
            .args(["-n", "1", "-b", "0", "-q", "--on-retry", "echo hook-ran"])
            .args(["--", "sh", "-c", "exit 2"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{refuse:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("hook-ran"),
            "{refuse:?}: {out:?}"
        );
    }
}
