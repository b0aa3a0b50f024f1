//! The signals that end a process by default, beyond INT, TERM, HUP and QUIT (`signals.rs`),
//! at every step of a run, through the release binary: ALRM (retry's timer), the other stops
//! (XCPU here stands for them) and the real-time signals (passed on) during the wait between
//! attempts, during a hook, during `--chronic`'s write-out, twice in a row, with TERM, and
//! ignored at start.

use std::io::{BufRead, BufReader};
#[cfg(target_os = "linux")]
use std::os::unix::process::CommandExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::helpers::{release_std, send, wait_for_lines, wait_gone, wait_with_limit};

/// KILLs these pids when dropped, if a failing test left them.
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

fn pids_in(path: &Path, n: usize) -> Vec<i32> {
    wait_for_lines(path, n)
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

/// retry waiting 1 h after a failed attempt, once its progress line says so.
fn waiting() -> Child {
    let mut child = release_std()
        .args([
            "-b", "1h", "-c", "2h", "-j", "none", "--", "sh", "-c", "exit 1",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(line.contains("retrying in 1h"), "{line:?}");
    child
}

#[test]
fn a_stop_during_the_wait_ends_retry_at_once_by_it() {
    for (signal, name) in [(libc::SIGALRM, "ALRM"), (libc::SIGXCPU, "XCPU")] {
        let mut child = waiting();
        let sent = Instant::now();
        send(child.id(), signal);
        let status = wait_with_limit(&mut child);
        assert_eq!(status.signal(), Some(signal), "{name}: {status:?}");
        assert!(
            sent.elapsed() < Duration::from_secs(20),
            "{name}: not at once"
        );
    }
}

// Real-time signals as glibc numbers them; /proc.
#[cfg(target_os = "linux")]
#[test]
fn a_real_time_signal_during_the_wait_is_dropped() {
    let mut child = waiting();
    // Not handled, RTMIN would end retry as it is delivered; dropped, retry waits on until
    // the TERM after it.
    send(child.id(), libc::SIGRTMIN());
    send(child.id(), libc::SIGRTMAX());
    send(child.id(), libc::SIGTERM);
    let status = wait_with_limit(&mut child);
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
}

/// retry whose attempt fails and whose `--on-retry` hook starts a grandchild and waits for
/// it; returns retry and the hook's pids (shell and grandchild).
fn in_a_hook(dir: &Path) -> (Child, Vec<i32>) {
    let pids = dir.join("pids");
    let child = release_std()
        .args(["-q", "-b", "1h", "-c", "2h", "-j", "none", "--on-retry"])
        .arg(format!(
            "sleep 1000 >/dev/null 2>&1 & echo $! >> {0}; echo $$ >> {0}; wait",
            pids.display()
        ))
        .args(["--", "sh", "-c", "exit 1"])
        .spawn()
        .unwrap();
    let hook = pids_in(&pids, 2);
    (child, hook)
}

#[test]
fn alrm_during_a_hook_stops_its_whole_tree_and_retry_dies_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, hook) = in_a_hook(dir.path());
    let _reap = KillOnDrop(hook.clone());
    send(child.id(), libc::SIGALRM);
    let status = wait_with_limit(&mut child);
    assert_eq!(status.signal(), Some(libc::SIGALRM), "{status:?}");
    wait_gone(&hook);
}

#[test]
fn a_stop_during_a_hook_is_passed_on_and_retry_dies_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, hook) = in_a_hook(dir.path());
    let _reap = KillOnDrop(hook.clone());
    send(child.id(), libc::SIGXCPU);
    let status = wait_with_limit(&mut child);
    assert_eq!(status.signal(), Some(libc::SIGXCPU), "{status:?}");
    wait_gone(&hook);
}

#[test]
fn a_stop_during_the_chronic_write_out_to_a_full_pipe_ends_retry_at_once() {
    for (signal, name) in [(libc::SIGALRM, "ALRM"), (libc::SIGXCPU, "XCPU")] {
        let dir = tempfile::tempdir().unwrap();
        let ready = dir.path().join("ready");
        let err = dir.path().join("err");
        let (_reader, writer) = crate::helpers::jammed::full_pipe();
        let mut child = release_std()
            .args([
                "--chronic",
                "-b",
                "1h",
                "-c",
                "2h",
                "-j",
                "none",
                "--on-retry",
            ])
            .arg(format!("echo $$ > {}", ready.display()))
            .args(["--", "sh", "-c", "echo 'held out'; exit 1"])
            .stdout(Stdio::from(writer))
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .unwrap();
        wait_for_lines(&ready, 1);
        let sent = Instant::now();
        send(child.id(), signal);
        let status = wait_with_limit(&mut child);
        assert_eq!(status.signal(), Some(signal), "{name}: {status:?}");
        // The grace is half a second; ten leave room for a loaded machine, not for a hang.
        assert!(sent.elapsed() < Duration::from_secs(10), "{name}");
        let err = std::fs::read_to_string(&err).unwrap();
        assert!(
            err.ends_with(&format!(
                "retry: stopped by SIG{name} while the output --chronic held was being \
                 written: the rest of it is dropped\n"
            )),
            "{name}: {err}"
        );
    }
}

/// retry (`-b 0 -n 5 -q`) on an attempt that starts a grandchild and waits (later attempts
/// succeed); returns retry and the attempt's pids (shell and grandchild) once both run.
fn in_an_attempt(dir: &Path) -> (Child, Vec<i32>) {
    let child = release_std()
        .args(["-b", "0", "-n", "5", "-q", "--", "sh", "-c"])
        .arg(format!(
            "echo $RETRY_ATTEMPT >> {attempts}; test $RETRY_ATTEMPT -ge 2 && exit 0; \
             sleep 1000 >/dev/null 2>&1 & echo $! >> {pids}; echo $$ >> {pids}; wait",
            attempts = dir.join("attempts").display(),
            pids = dir.join("pids").display()
        ))
        .spawn()
        .unwrap();
    let pids = pids_in(&dir.join("pids"), 2);
    (child, pids)
}

fn attempts(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("attempts")).unwrap()
}

/// How retry ended.
#[derive(Debug, PartialEq)]
enum End {
    Code(i32),
    Died(i32),
}

#[test]
fn twice_in_a_row_and_with_term_is_still_one_stop() {
    use End::{Code, Died};
    // Two stops in a row: whichever reached the attempt first ends it (TERM may end the
    // attempt before ALRM is read; two pending at once are read lowest number first).
    for (signals, ends) in [
        (vec![libc::SIGALRM, libc::SIGALRM], vec![Code(124)]),
        (
            vec![libc::SIGXCPU, libc::SIGXCPU],
            vec![Died(libc::SIGXCPU)],
        ),
        (vec![libc::SIGALRM, libc::SIGTERM], vec![Code(124)]),
        (
            vec![libc::SIGTERM, libc::SIGALRM],
            vec![Code(124), Died(libc::SIGTERM)],
        ),
        (
            vec![libc::SIGXCPU, libc::SIGTERM],
            vec![Died(libc::SIGXCPU), Died(libc::SIGTERM)],
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (mut child, pids) = in_an_attempt(dir.path());
        let _reap = KillOnDrop(pids.clone());
        for &s in &signals {
            send(child.id(), s);
        }
        let status = wait_with_limit(&mut child);
        let end = status
            .code()
            .map_or_else(|| Died(status.signal().unwrap()), Code);
        assert!(ends.contains(&end), "{signals:?}: {status:?}");
        assert_eq!(attempts(dir.path()), "1\n", "{signals:?}: retried");
        wait_gone(&pids);
    }
}

// Real-time signals as glibc numbers them; /proc.
#[cfg(target_os = "linux")]
#[test]
fn fatal_signals_ignored_at_start_stay_ignored_for_retry_and_the_attempt() {
    let ignored = [
        libc::SIGALRM,
        libc::SIGXCPU,
        libc::SIGSEGV,
        libc::SIGUSR1,
        libc::SIGRTMIN(),
        libc::SIGRTMAX(),
    ];
    let dir = tempfile::tempdir().unwrap();
    let (status, go) = (dir.path().join("status"), dir.path().join("go"));
    let mut cmd = release_std();
    // SAFETY: signal(2) between fork and exec only sets the dispositions retry inherits.
    unsafe {
        cmd.pre_exec(move || {
            for s in ignored {
                libc::signal(s, libc::SIG_IGN);
            }
            Ok(())
        });
    }
    let mut child = cmd
        .args(["-b", "0", "-n", "1", "-q", "--", "sh", "-c"])
        .arg(format!(
            "test $RETRY_ATTEMPT -ge 2 && exit 0; \
             cat /proc/$$/status > {status}.tmp; mv {status}.tmp {status}; \
             while [ ! -e {go} ]; do sleep 0.05; done; exit 3",
            status = status.display(),
            go = go.display()
        ))
        .spawn()
        .unwrap();
    let text = wait_for_lines(&status, 10);
    let line = text.lines().find(|l| l.starts_with("SigIgn:")).unwrap();
    let mask = u64::from_str_radix(line.split_whitespace().nth(1).unwrap(), 16).unwrap();
    for s in ignored {
        assert_ne!(
            mask & (1 << (s - 1)),
            0,
            "{s} not ignored in the attempt: {line}"
        );
    }
    // Ignored by retry too: not one of them ends or stops the run, which retries as if none
    // had come.
    for s in ignored {
        send(child.id(), s);
    }
    std::fs::write(&go, "go").unwrap();
    let end = wait_with_limit(&mut child);
    assert_eq!(end.code(), Some(0), "{end:?}");
}
