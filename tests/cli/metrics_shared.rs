//! `--metrics-file` shared: 40 runs ending together lose no count and leave no torn file, a real
//! node_exporter serves a cron job's file, and TERM ends a run waiting for another run's hold on
//! the file at once. What one run writes is in `metrics.rs`.

use std::io::Read;
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::helpers::prometheus::NodeExporter;
use crate::helpers::{HANG_LIMIT, retry, retry_std, send, wait_with_limit};
use crate::metrics::{accepted, value};
use crate::tools::{self, require};

#[test]
fn forty_runs_ending_together_lose_no_count_and_never_leave_a_torn_file() {
    if !require(&[tools::PROMTOOL]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("job.prom");
    let go = dir.path().join("go");
    // Every run waits for the same file, then ends: their ends meet.
    let script = format!("while [ ! -e '{}' ]; do sleep 0.01; done", go.display());
    let mut runs: Vec<Child> = (0..40)
        .map(|_| {
            retry_std()
                .args(["--metrics-file", file.to_str().unwrap()])
                .args(["--metrics-job", "many", "--", "sh", "-c", &script])
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // A reader that reads the file over and over while they write: every read is whole.
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let (file, done) = (file.clone(), Arc::clone(&done));
        std::thread::spawn(move || {
            let mut reads = Vec::new();
            while !done.load(Ordering::SeqCst) {
                if let Ok(text) = std::fs::read_to_string(&file)
                    && reads.last() != Some(&text)
                {
                    reads.push(text);
                }
            }
            reads
        })
    };
    std::fs::write(&go, "").unwrap();
    for run in &mut runs {
        let status = wait_with_limit(run);
        let mut stderr = String::new();
        run.stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        assert!(status.success(), "{status:?}: {stderr}");
        assert_eq!(stderr, "");
    }
    done.store(true, Ordering::SeqCst);
    let reads = reader.join().unwrap();
    assert!(!reads.is_empty());
    for text in &reads {
        // Whole: every series there, the file as a run wrote it.
        retry::telemetry::metrics::Carried::read(text, "many").unwrap();
        assert_eq!(text.matches("# TYPE").count(), 7, "{text}");
        let last_line = text.lines().last().unwrap_or_default();
        assert!(
            text.ends_with('\n') && last_line.starts_with("retry_attempts_total{job=\"many\"} "),
            "{text}"
        );
    }
    let last = accepted(&file);
    assert_eq!(
        value(&last, "retry_runs_total{job=\"many\",result=\"success\"}"),
        Some(40.0),
        "{last}"
    );
    assert_eq!(
        value(&last, "retry_attempts_total{job=\"many\"}"),
        Some(40.0)
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 2, "temporary files left: {left:?}");
}

#[test]
fn node_exporter_serves_the_file_of_a_cron_job() {
    if !require(&[tools::PROMTOOL, tools::NODE_EXPORTER]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("backup.prom");
    for code in ["0", "5"] {
        retry()
            .args(["--metrics-file", file.to_str().unwrap()])
            .args(["--metrics-job", "backup", "-n", "0", "--", "sh", "-c"])
            .arg(format!("exit {code}"))
            .assert()
            .code(code.parse::<i32>().unwrap());
    }
    let mut exporter = NodeExporter::start(dir.path());
    let scraped = exporter.scrape();
    // node_exporter read the file without an error, and serves its series.
    assert!(
        scraped.contains("node_textfile_scrape_error 0"),
        "{scraped}"
    );
    for series in [
        "retry_runs_total{job=\"backup\",result=\"success\"} 1",
        "retry_runs_total{job=\"backup\",result=\"gave_up\"} 1",
        "retry_attempts_total{job=\"backup\"} 2",
        "retry_last_exit_status{job=\"backup\"} 5",
    ] {
        assert!(scraped.contains(series), "{series} not in {scraped}");
    }
    assert!(
        scraped.contains("retry_last_success_timestamp_seconds{job=\"backup\"} "),
        "{scraped}"
    );
}

/// Whether process `pid` has a thread named `name` (`/proc/PID/task/*/comm`).
fn has_thread(pid: u32, name: &str) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks.flatten().any(|t| {
                std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == name)
            })
        })
        .unwrap_or(false)
}

#[test]
fn term_while_another_run_holds_the_file_ends_retry_at_once() {
    if !require(&[tools::PROMTOOL]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("job.prom");
    // Another run's turn: the lock on the directory, held by the test.
    let held = std::fs::File::open(dir.path()).unwrap();
    // SAFETY: flock on a descriptor we own.
    let locked = unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&held), libc::LOCK_EX) };
    assert_eq!(locked, 0);
    let mut child = retry_std()
        .args(["--metrics-file", file.to_str().unwrap(), "--", "true"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // retry waits for its turn in a helper thread (for at most 10 s, the lock's limit).
    let start = Instant::now();
    while !has_thread(child.id(), "metrics-lock") {
        assert!(
            start.elapsed() < HANG_LIMIT,
            "retry never waited for the lock"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let sent = Instant::now();
    send(child.id(), libc::SIGTERM);
    let status = wait_with_limit(&mut child);
    let took = sent.elapsed();
    // Well under the lock's 10 s: TERM ended the wait.
    assert!(took < Duration::from_secs(6), "{took:?}");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    // The run had ended: its status stands, and the file is still written whole (without
    // the turn it could not wait for), which retry says.
    assert!(status.success(), "{status:?}: {stderr}");
    assert!(
        stderr.contains("a stop signal came while another run was writing it: written without waiting for its turn"),
        "{stderr}"
    );
    drop(held);
    let text = accepted(&file);
    assert_eq!(
        value(&text, "retry_runs_total{job=\"true\",result=\"success\"}"),
        Some(1.0)
    );
}
