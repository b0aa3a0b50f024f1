//! Robustness over a long run, in quick versions of `benches/soak.sh` (figures in
//! RELIABILITY.md): 1,000 failing attempts in one run leave retry's open descriptors, threads
//! and resident memory flat at attempts 100 and 1,000, and no zombie child; the same with
//! pipeline I/O over 3,000 attempts.
//!
//! Not here: what one timeout or signal leaves of a process tree (`robust_trees.rs`).

use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::helpers::proc::{all_pids, stat};
use crate::helpers::{retry_std, wait_for_lines, wait_with_limit};

// ---------------------------------------------------------------------------------------------
// /proc

/// Children of `parent` that are zombies (ended, not yet reaped).
fn zombie_children(parent: i32) -> Vec<i32> {
    all_pids()
        .into_iter()
        .filter(|&p| stat(p).is_some_and(|s| s.state == 'Z' && s.ppid == parent))
        .collect()
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
