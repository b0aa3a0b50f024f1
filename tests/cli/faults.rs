//! Faults, load and process trees, in quick versions (the full-size runs are scripts under
//! `benches/`: `soak.sh`, `trees.sh`, `signals_under_load.sh`, with figures in RELIABILITY.md).
//!
//! - Soak: 1,000 failing attempts in one run; retry's open descriptors, threads and resident
//!   memory at attempt 100 and 1,000, and no zombie children; the same with pipeline I/O over
//!   3,000 attempts.
//! - Process trees: 50 timeouts of a shell with two background children leave nothing; a child
//!   that ignores TERM gets KILL after `--kill-after` (137); a child that stopped itself is
//!   still ended by its timeout; a grandchild holding stdout does not hang
//!   `--stdout-on-success`.
//! - Signals under load: 20 SIGTERMs at random moments (during an attempt, during a wait, at
//!   the boundary) of a `--replay-stdin` run that spilled to a temporary file.

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use predicates::prelude::*;

use crate::helpers::proc::{all_pids, running_with, stat};
use crate::helpers::{alive, retry, retry_std, send, wait_for_lines, wait_with_limit};

// ---------------------------------------------------------------------------------------------
// /proc

/// Children of `parent` that are zombies (ended, not yet reaped).
fn zombie_children(parent: i32) -> Vec<i32> {
    all_pids()
        .into_iter()
        .filter(|&p| stat(p).is_some_and(|s| s.state == 'Z' && s.ppid == parent))
        .collect()
}

/// Waits (up to 10 s) until no live process has `token` on its command line; panics with
/// what is left.
fn wait_none_running(token: &str) {
    let start = Instant::now();
    loop {
        let left = running_with(token);
        if left.is_empty() {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "processes left running: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A token of digits unique to this test run, to find its processes by command line (pids
/// are reused); `sleep 100.TOKEN` is a 100-second sleep that carries it.
fn token(tag: u32) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("{tag}{}{nanos:09}", std::process::id())
}

/// retry's resources at one moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Usage {
    fds: usize,
    threads: usize,
    rss_kib: u64,
}

fn usage(pid: u32) -> Usage {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap()
    };
    Usage {
        fds,
        threads: field("Threads:") as usize,
        rss_kib: field("VmRSS:"),
    }
}

/// [`usage`] once it has stopped changing (three equal readings 20 ms apart, within 5 s): a
/// thread that just closed its pipe may take a moment to exit.
fn settled_usage(pid: u32) -> Usage {
    let start = Instant::now();
    let mut last = usage(pid);
    let mut same = 0;
    while same < 2 && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
        let now = usage(pid);
        same = if now == last { same + 1 } else { 0 };
        last = now;
    }
    last
}

// ---------------------------------------------------------------------------------------------
// Soak

/// Runs `attempts` failing attempts with zero delay; at each attempt of `marks` the attempt
/// waits until the test has measured retry, and retry must have no zombie child (within 5 s,
/// for an orphan that ended a moment ago). Returns the measurements.
fn soak(flags: &[&str], env: &[(&str, &str)], attempts: u32, marks: &[u32]) -> Vec<(u32, Usage)> {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let list: Vec<String> = marks.iter().map(u32::to_string).collect();
    // Every attempt also leaves a background subshell behind: an orphan retry must reap. A
    // marked attempt reads its stdin to the end first, so a stdin feeder has finished.
    let script = format!(
        "( : ) & case $RETRY_ATTEMPT in {}) cat > /dev/null; echo > {d}/mark.$RETRY_ATTEMPT; \
         while [ ! -e {d}/go.$RETRY_ATTEMPT ]; do sleep 0.01; done;; esac; echo x; exit 1",
        list.join("|")
    );
    let mut child = retry_std()
        .args(["-q", "-b", "0", "-n", &(attempts - 1).to_string()])
        .args(flags)
        .args(["--", "sh", "-c", &script])
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(b"some input\n");
    drop(stdin);
    let pid = child.id();
    let mut seen = Vec::new();
    for &mark in marks {
        wait_for_lines(&dir.path().join(format!("mark.{mark}")), 1);
        // Zombies: an orphan that ended a moment ago may still be on its way to being reaped.
        let start = Instant::now();
        while !zombie_children(pid as i32).is_empty() {
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "zombie children of retry at attempt {mark}: {:?}",
                zombie_children(pid as i32)
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        seen.push((mark, settled_usage(pid)));
        std::fs::write(dir.path().join(format!("go.{mark}")), "").unwrap();
    }
    let status = wait_with_limit(&mut child);
    assert_eq!(status.code(), Some(1), "{status:?}");
    seen
}

/// Descriptors and threads exactly equal from the first mark to the last; resident memory
/// grown by at most `rss_margin_kib` (allocator noise, not a per-attempt leak).
fn assert_flat(seen: &[(u32, Usage)], rss_margin_kib: u64) {
    eprintln!("soak: {seen:?}");
    let (first, last) = (seen[0].1, seen[seen.len() - 1].1);
    assert_eq!(first.fds, last.fds, "open descriptors grew: {seen:?}");
    assert_eq!(first.threads, last.threads, "threads grew: {seen:?}");
    assert!(
        last.rss_kib <= first.rss_kib + rss_margin_kib,
        "resident memory grew: {seen:?}"
    );
}

#[test]
fn a_thousand_attempts_leave_descriptors_threads_and_memory_flat() {
    let seen = soak(&[], &[], 1000, &[100, 1000]);
    // 900 attempts leaking even 600 bytes each would exceed this.
    assert_flat(&seen, 512);
}

#[test]
fn pipeline_io_over_3000_attempts_stays_flat_too() {
    // Each attempt's I/O threads allocate 1 MiB copy buffers, and glibc gives new threads
    // arenas of their own (up to 8 per core), which keep some of those pages: resident memory
    // then steps up by about 1 MiB at a time until every arena has its share, sooner or later
    // depending on the machine's load (RELIABILITY.md, finding 2; benches/soak.sh measures that
    // default). With one arena, what is left is the program's own growth, and noise of about
    // one buffer (the running attempt's buffers come from the heap or not, by its state).
    let seen = soak(
        &[
            "--replay-stdin",
            "--stdout-on-success",
            "--retry-if-output",
            "never-matches",
        ],
        &[("MALLOC_ARENA_MAX", "1")],
        3000,
        &[100, 3000],
    );
    // 2,900 attempts leaking even 750 bytes each would exceed this.
    assert_flat(&seen, 2048);
}

// ---------------------------------------------------------------------------------------------
// Process trees

#[test]
fn fifty_timeouts_of_a_shell_with_background_children_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let tag = token(1);
    // `sleep 100.TAG`: a 100-second sleep that can be found by its command line.
    let script = format!(
        "sleep 100.{tag} & echo $! >> {p}; sleep 100.{tag} & echo $! >> {p}; \
         echo $$ >> {p}; wait",
        p = pids.display()
    );
    retry()
        .args(["-q", "-b", "0", "-n", "49", "-t", "50ms", "--", "sh", "-c"])
        .arg(&script)
        .assert()
        .code(124);
    let recorded = std::fs::read_to_string(&pids).unwrap();
    assert!(recorded.lines().count() >= 50, "{recorded}");
    wait_none_running(&tag);
}

#[test]
fn a_tree_that_ignores_term_gets_kill_after_kill_after_and_137() {
    let tag = token(2);
    let started = Instant::now();
    let out = retry()
        .args(["-n", "0", "-t", "200ms", "--kill-after", "300ms", "--"])
        .args(["sh", "-c"])
        .arg(format!(
            "trap '' TERM; sh -c 'trap \"\" TERM; sleep 100.{tag}' & \
             while :; do sleep 0.05; done"
        ))
        .assert()
        .failure()
        .stderr(predicate::str::contains("KILL"));
    // KILL was needed: retry dies of KILL, as coreutils `timeout` (a shell's 137).
    assert_eq!(out.get_output().status.signal(), Some(libc::SIGKILL));
    // TERM at 200 ms, KILL 300 ms later.
    assert!(started.elapsed() >= Duration::from_millis(500));
    wait_none_running(&tag);
}

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
