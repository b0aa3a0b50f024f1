//! `--metrics-file`: the Prometheus textfile a run leaves, checked by Prometheus's own tools:
//! `promtool check metrics` (the `prometheus` package) and a real node_exporter
//! (`prometheus-node-exporter`) reading it with its textfile collector on a loopback port.
//! Counters carry over between runs, the last success stays, a file that does not parse is
//! replaced with a warning, and a file that cannot be written turns a success into 125. Runs
//! sharing the file and node_exporter serving it are in `metrics_shared.rs`.

use std::path::Path;
use std::time::{Duration, Instant};

use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;

use crate::helpers::prometheus::promtool;
use crate::helpers::{
    HANG_LIMIT, refused, refuses, release, retry, retry_std, send, wait_with_limit,
};
use crate::tools::{self, require};

/// The value of the sample whose name and labels are written `series` (as in the file).
pub(crate) fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .map(|v| v.trim().parse().unwrap())
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// The file at `path`, which `promtool check metrics` must accept.
pub(crate) fn accepted(path: &Path) -> String {
    let text = read(path);
    promtool(&text).unwrap();
    text
}

#[test]
fn a_run_leaves_a_file_promtool_accepts_and_the_next_run_adds_to_it() {
    if !require(&[tools::PROMTOOL]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("backup.prom");
    let flag = ["--metrics-file", file.to_str().unwrap()];
    retry()
        .args(flag)
        .args([
            "-b",
            "0",
            "--",
            "sh",
            "-c",
            "[ -e ok ] || { : > ok; exit 1; }",
        ])
        .current_dir(dir.path())
        .assert()
        .success()
        .stderr(contains("warning").not());
    let first = accepted(&file);
    // The job is the command's file name; the run took two attempts.
    assert_eq!(value(&first, "retry_last_attempts{job=\"sh\"}"), Some(2.0));
    assert_eq!(
        value(&first, "retry_last_exit_status{job=\"sh\"}"),
        Some(0.0)
    );
    assert_eq!(
        value(&first, "retry_runs_total{job=\"sh\",result=\"success\"}"),
        Some(1.0)
    );
    assert_eq!(value(&first, "retry_attempts_total{job=\"sh\"}"), Some(2.0));
    let ended = value(&first, "retry_last_run_timestamp_seconds{job=\"sh\"}").unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    assert!((now - ended).abs() < 600.0, "{ended} vs {now}");
    let success = value(&first, "retry_last_success_timestamp_seconds{job=\"sh\"}").unwrap();
    assert_eq!(success, ended);
    // A run that gives up: counted, its status recorded, the last success kept.
    retry()
        .args(flag)
        .args(["-b", "0", "-n", "2", "--", "sh", "-c", "exit 3"])
        .assert()
        .code(3);
    let second = accepted(&file);
    assert_eq!(
        value(&second, "retry_last_exit_status{job=\"sh\"}"),
        Some(3.0)
    );
    assert_eq!(value(&second, "retry_last_attempts{job=\"sh\"}"), Some(3.0));
    assert_eq!(
        value(&second, "retry_runs_total{job=\"sh\",result=\"gave_up\"}"),
        Some(1.0)
    );
    assert_eq!(
        value(&second, "retry_runs_total{job=\"sh\",result=\"success\"}"),
        Some(1.0)
    );
    assert_eq!(
        value(&second, "retry_attempts_total{job=\"sh\"}"),
        Some(5.0)
    );
    assert_eq!(
        value(&second, "retry_last_success_timestamp_seconds{job=\"sh\"}"),
        Some(success)
    );
    // No temporary file left beside it.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn the_variable_and_the_job_flag_and_a_name_not_ending_in_prom() {
    if !require(&[tools::PROMTOOL]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("nightly.txt");
    retry()
        .env("RETRY_METRICS_FILE", &file)
        .args(["--metrics-job", "nightly \"db\"", "--", "true"])
        .assert()
        .success()
        .stderr(contains("warning").and(contains("does not end in .prom")));
    let text = accepted(&file);
    assert_eq!(
        value(
            &text,
            "retry_runs_total{job=\"nightly \\\"db\\\"\",result=\"success\"}"
        ),
        Some(1.0),
        "{text}"
    );
    refuses(
        &[
            "--metrics-file",
            "x.prom",
            "--metrics-job",
            "",
            "--",
            "true",
        ],
        &["--metrics-job"],
    );
}

#[test]
fn a_file_that_does_not_parse_is_replaced_and_said_so() {
    if !require(&[tools::PROMTOOL]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("job.prom");
    std::fs::write(&file, "retry_runs_total{job=\"true\" 12\n").unwrap();
    retry()
        .args(["--metrics-file", file.to_str().unwrap(), "--", "true"])
        .assert()
        .success()
        .stderr(contains("did not parse").and(contains("replaced")));
    let text = accepted(&file);
    assert_eq!(
        value(&text, "retry_runs_total{job=\"true\",result=\"success\"}"),
        Some(1.0)
    );
}

#[test]
fn a_file_that_cannot_be_written_turns_a_success_into_125_and_keeps_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("no-such-dir/job.prom");
    retry()
        .args(["--metrics-file", file.to_str().unwrap(), "--", "true"])
        .assert()
        .code(125)
        .stderr(contains("--metrics-file").and(contains("no-such-dir")));
    retry()
        .args(["--metrics-file", file.to_str().unwrap(), "-n", "0"])
        .args(["--", "sh", "-c", "exit 4"])
        .assert()
        .code(4)
        .stderr(contains("--metrics-file"));
    // A FIFO where the directory should be: refused at once, not waited on.
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    retry()
        .args(["--metrics-file", fifo.join("x.prom").to_str().unwrap()])
        .args(["--", "true"])
        .timeout(HANG_LIMIT)
        .assert()
        .code(125);
}

#[test]
fn a_fifo_or_a_device_in_the_files_place_is_refused_and_left_as_it_is() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let ran = dir.path().join("ran");
    let touch = ["--", "touch", ran.to_str().unwrap()];
    // There when the run starts: one line naming the flag, 125, the command not run.
    let fifo = dir.path().join("fifo.prom");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let stderr = refused(
        retry()
            .args(["--metrics-file", fifo.to_str().unwrap()])
            .args(touch),
        &[
            "--metrics-file",
            "fifo.prom",
            "it is a FIFO, not a regular file",
        ],
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!ran.exists());
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    // Made by the attempt: the success becomes 125 and the FIFO stays.
    let later = dir.path().join("later.prom");
    retry()
        .args(["--metrics-file", later.to_str().unwrap(), "--", "mkfifo"])
        .arg(&later)
        .timeout(HANG_LIMIT)
        .assert()
        .code(125)
        .stderr(contains("it is a FIFO, not a regular file: left as it is"));
    assert!(std::fs::metadata(&later).unwrap().file_type().is_fifo());
    // A device node (as /dev/null is): made where the tests may (root on Linux), else not tried.
    #[cfg(target_os = "linux")]
    a_device_node_is_refused(dir.path(), &touch);
    assert!(!ran.exists());
}

#[cfg(target_os = "linux")]
fn a_device_node_is_refused(dir: &Path, touch: &[&str]) {
    use std::os::unix::fs::FileTypeExt;
    let null = dir.join("null.prom");
    let dev = nix::sys::stat::makedev(1, 3);
    let mode = nix::sys::stat::Mode::from_bits_truncate(0o666);
    if nix::sys::stat::mknod(&null, nix::sys::stat::SFlag::S_IFCHR, mode, dev).is_ok() {
        refused(
            retry()
                .args(["--metrics-file", null.to_str().unwrap()])
                .args(touch),
            &["--metrics-file", "it is a character device"],
        );
        assert!(
            std::fs::metadata(&null)
                .unwrap()
                .file_type()
                .is_char_device()
        );
    } else {
        println!("mknod refused (not root): the device case is not tried");
    }
}

#[test]
fn a_run_ended_by_term_is_counted_as_stopped() {
    if !require(&[tools::PROMTOOL]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("job.prom");
    let marker = dir.path().join("started");
    let script = format!(": > '{}'; exec sleep 600", marker.display());
    let mut child = retry_std()
        .args(["--metrics-file", file.to_str().unwrap()])
        .args(["--", "sh", "-c", &script])
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !marker.exists() {
        assert!(start.elapsed() < HANG_LIMIT, "the attempt never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    send(child.id(), libc::SIGTERM);
    let status = wait_with_limit(&mut child);
    assert!(!status.success(), "{status:?}");
    let text = accepted(&file);
    assert_eq!(
        value(&text, "retry_runs_total{job=\"sh\",result=\"stopped\"}"),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        value(&text, "retry_last_exit_status{job=\"sh\"}"),
        Some(143.0)
    );
    // Never succeeded: present, and 0 (issue 30).
    assert_eq!(
        value(&text, "retry_last_success_timestamp_seconds{job=\"sh\"}"),
        Some(0.0)
    );
}

#[test]
fn the_last_success_is_0_in_every_file_until_a_run_succeeds() {
    if !require(&[tools::PROMTOOL]) {
        return;
    }
    // `time() - retry_last_success_timestamp_seconds > N` must fire for a job that has never
    // worked: the series is in the first file a failing run leaves, as 0, stays 0 while runs
    // fail, and becomes the success's time once one succeeds.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("never.prom");
    let series = "retry_last_success_timestamp_seconds{job=\"sh\"}";
    for _ in 0..2 {
        release()
            .args(["--metrics-file", file.to_str().unwrap()])
            .args(["-n", "1", "-b", "0", "--", "sh", "-c", "exit 4"])
            .assert()
            .code(4);
        let text = accepted(&file);
        assert_eq!(value(&text, series), Some(0.0), "{text}");
        assert!(text.contains(&format!(
            "# TYPE {} gauge\n",
            "retry_last_success_timestamp_seconds"
        )));
    }
    release()
        .args(["--metrics-file", file.to_str().unwrap()])
        .args(["--", "sh", "-c", "exit 0"])
        .assert()
        .success();
    let text = accepted(&file);
    let success = value(&text, series).unwrap();
    assert_eq!(
        Some(success),
        value(&text, "retry_last_run_timestamp_seconds{job=\"sh\"}")
    );
    assert!(success > 1_000_000_000.0, "{text}");
}

#[test]
fn a_run_the_breaker_refuses_is_counted_as_refused_with_no_attempt() {
    if !require(&[tools::PROMTOOL]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("job.prom");
    let store = dir.path().join("store");
    let run = |cmd: &str| {
        let mut c = retry();
        c.args(["--metrics-file", file.to_str().unwrap()])
            .args(["-n", "0", "--budget", "K", "--breaker", "1"])
            .args(["--breaker-cooldown", "1h", "--budget-store"])
            .arg(&store)
            .args(["--", "sh", "-c", cmd]);
        c
    };
    run("exit 2").assert().code(2);
    run("exit 0").assert().code(75);
    let text = accepted(&file);
    for (series, want) in [
        ("retry_runs_total{job=\"sh\",result=\"gave_up\"}", 1.0),
        ("retry_runs_total{job=\"sh\",result=\"refused\"}", 1.0),
        ("retry_runs_total{job=\"sh\",result=\"success\"}", 0.0),
        ("retry_last_attempts{job=\"sh\"}", 0.0),
        ("retry_last_exit_status{job=\"sh\"}", 75.0),
        ("retry_attempts_total{job=\"sh\"}", 1.0),
    ] {
        assert_eq!(value(&text, series), Some(want), "{series}: {text}");
    }
}

#[test]
fn another_jobs_file_is_replaced_with_a_warning_naming_both_jobs() {
    if !require(&[tools::PROMTOOL]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("job.prom");
    let run = |job: &str| {
        let out = retry()
            .args(["--metrics-file", file.to_str().unwrap()])
            .args(["--metrics-job", job, "--", "true"])
            .assert()
            .success()
            .get_output()
            .clone();
        String::from_utf8(out.stderr).unwrap()
    };
    assert_eq!(run("a"), "");
    assert_eq!(run("a"), "", "the same job: carried over, nothing to say");
    let stderr = run("b");
    assert!(
        stderr.contains(r#"the previous file held the series of job "a", not "b""#),
        "{stderr}"
    );
    let text = accepted(&file);
    assert_eq!(
        value(&text, "retry_runs_total{job=\"b\",result=\"success\"}"),
        Some(1.0)
    );
}
