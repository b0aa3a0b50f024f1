//! `--forever` through the binary users run: commands that exit 0 or 1 at once (the delays
//! grow to the cap and a crash loop ends the run with the last status, 1 for a 0), a run longer than
//! `--reset-after` (the backoff starts again), `--stop-on`, the deadline, the defaults
//! (`-n` unlimited, `--reset-after 1m`), the JSON events, the refusals, `--lock`, `--budget` and
//! `--chronic`. Signals: `forever_signals.rs`. Each run notes its number and start time in a
//! file; delays are checked against the schedule with wide margins (at least 90% of the delay,
//! at most 5 s more).

use std::path::{Path, PathBuf};

use crate::helpers::{refused, release, retry};

/// A run of retry: its status, stdout and stderr.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// `retry ARGS -- sh -c SCRIPT`, the release binary, with `LOG` set to `log`.
fn run(args: &[&str], script: &str, log: &Path) -> Run {
    let out = release()
        .env("LOG", log)
        .args(args)
        .args(["--", "sh", "-c", script])
        .output()
        .unwrap();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// What each run wrote to the log: `RETRY_ATTEMPT` and its start time in seconds.
const NOTE: &str = "echo \"$RETRY_ATTEMPT $(date +%s.%N)\" >> \"$LOG\"";

fn log_in(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("runs")
}

/// The runs noted in `log`: their numbers and start times.
fn runs(log: &Path) -> Vec<(u64, f64)> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let (n, t) = l.split_once(' ').unwrap();
            (n.parse().unwrap(), t.parse().unwrap())
        })
        .collect()
}

/// The delays the progress lines announce ("restarting in 200ms"), in order.
fn announced(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter_map(|l| l.split_once("; restarting in ").map(|(_, d)| d.to_string()))
        .collect()
}

/// Asserts that the gaps between the runs' starts are at least 90% of `delays` (seconds) and
/// at most 5 s more (wide: a loaded machine).
fn gaps_follow(runs: &[(u64, f64)], delays: &[f64]) {
    assert_eq!(runs.len(), delays.len() + 1, "{runs:?}");
    for (pair, delay) in runs.windows(2).zip(delays) {
        let gap = pair[1].1 - pair[0].1;
        assert!(
            gap >= delay * 0.9 && gap <= delay + 5.0,
            "gap {gap:.3} s for a delay of {delay} s: {runs:?}"
        );
    }
}

#[test]
fn quick_successes_back_off_to_the_cap_and_a_crash_loop_ends_with_status_1() {
    let dir = tempfile::tempdir().unwrap();
    let log = log_in(&dir);
    let args = [
        "--forever",
        "-n",
        "3",
        "-b",
        "0.1",
        "-m",
        "2",
        "-c",
        "0.3",
        "-j",
        "none",
    ];
    let r = run(&args, NOTE, &log);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let runs = runs(&log);
    assert_eq!(
        runs.iter().map(|r| r.0).collect::<Vec<_>>(),
        [1, 2, 3, 4],
        "RETRY_ATTEMPT counts every run"
    );
    assert_eq!(
        announced(&r.stderr),
        ["100ms", "200ms", "300ms"],
        "{}",
        r.stderr
    );
    gaps_follow(&runs, &[0.1, 0.2, 0.3]);
    let last = r.stderr.lines().last().unwrap();
    assert!(
        last.starts_with("retry: gave up after 4 runs (3 restarts) in ")
            && last.ends_with(": 4 runs in a row ended within --reset-after (1m): a crash loop"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("retrying"), "{}", r.stderr);
}

#[test]
fn quick_failures_are_a_crash_loop_too_and_end_with_the_last_status() {
    let dir = tempfile::tempdir().unwrap();
    let log = log_in(&dir);
    let script = format!("{NOTE}; exit 7");
    let r = run(&["--forever", "-n", "1", "-b", "0"], &script, &log);
    assert_eq!(r.code, Some(7), "{}", r.stderr);
    assert_eq!(runs(&log).len(), 2);
    assert!(
        r.stderr
            .contains("sh exited with status 7; restarting in 0s"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("gave up after 2 runs (1 restart)"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_run_longer_than_reset_after_starts_the_backoff_and_the_crash_loop_afresh() {
    let dir = tempfile::tempdir().unwrap();
    let log = log_in(&dir);
    // Run 3 lasts 1.2 s, past --reset-after 0.5 s; the others end at once.
    let script = format!("{NOTE}; [ \"$RETRY_ATTEMPT\" != 3 ] || sleep 1.2");
    let args = [
        "--forever",
        "--reset-after",
        "0.5",
        "-n",
        "2",
        "-b",
        "0.1",
        "-m",
        "3",
        "-c",
        "10",
        "-j",
        "none",
    ];
    let r = run(&args, &script, &log);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    // Two short runs, the long one (the delay after it is the first again), then three short
    // ones in a row (-n 2 allows three) end it.
    assert_eq!(
        announced(&r.stderr),
        ["100ms", "300ms", "100ms", "300ms", "900ms"],
        "{}",
        r.stderr
    );
    let runs = runs(&log);
    assert_eq!(runs.len(), 6, "{}", r.stderr);
    assert!(
        r.stderr.contains("gave up after 6 runs (5 restarts)"),
        "{}",
        r.stderr
    );
    let gap = runs[3].1 - runs[2].1;
    assert!(
        (1.2 * 0.9 + 0.1..=1.3 + 5.0).contains(&gap),
        "run 3 to 4: {gap}"
    );
}

#[test]
fn a_status_in_stop_on_ends_it_with_that_status() {
    let dir = tempfile::tempdir().unwrap();
    let log = log_in(&dir);
    let script = format!("{NOTE}; [ \"$RETRY_ATTEMPT\" -lt 3 ] || exit 3");
    let r = run(&["--forever", "--stop-on", "3", "-b", "0"], &script, &log);
    assert_eq!(r.code, Some(3), "{}", r.stderr);
    assert_eq!(runs(&log).len(), 3);
    assert!(
        r.stderr.contains("gave up after 3 runs (2 restarts) in ")
            && r.stderr.contains(": status 3 is not retried"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_deadline_stops_a_running_command_with_124() {
    let dir = tempfile::tempdir().unwrap();
    let log = log_in(&dir);
    let script = format!("{NOTE}; exec sleep 60");
    let r = run(&["--forever", "-d", "1s", "-k", "1s"], &script, &log);
    assert_eq!(r.code, Some(124), "{}", r.stderr);
    assert_eq!(runs(&log).len(), 1);
    assert!(r.stderr.contains("the deadline"), "{}", r.stderr);
}

#[test]
fn unlimited_runs_and_reset_after_1m_by_default_and_a_preset_s_limit_does_not_apply() {
    for args in [
        &["--forever", "--dry-run"][..],
        &["--forever", "--dry-run", "--preset", "aws"],
    ] {
        let out = retry().args(args).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("the retries go on without end (-n unlimited)")
                && text.contains("follow runs that end within --reset-after (1m)"),
            "{args:?}: {text}"
        );
    }
    // Given, by flag or variable, -n limits the crash loop.
    let dir = tempfile::tempdir().unwrap();
    let log = log_in(&dir);
    let out = release()
        .env("LOG", &log)
        .env("RETRY_MAX_RETRIES", "1")
        .args(["--forever", "-b", "0", "--", "sh", "-c", NOTE])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(runs(&log).len(), 2);
}

#[test]
fn json_events_count_the_restarts() {
    let r = run(
        &["--forever", "-n", "2", "-b", "0", "--log-format", "json"],
        "true",
        Path::new("/dev/null"),
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let events: Vec<serde_json::Value> = r
        .stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let named = |name: &'static str| -> Vec<&serde_json::Value> {
        events.iter().filter(|e| e["event"] == name).collect()
    };
    assert_eq!(named("start")[0]["forever"], true);
    assert_eq!(named("wait").len(), 2);
    let give_up = named("give_up")[0];
    assert_eq!(give_up["restarts"], 2, "{give_up}");
    assert_eq!(give_up["attempts"], 3, "{give_up}");
    assert_eq!(give_up["status"], 1, "{give_up}");
}

#[test]
fn successes_and_until_fail_are_refused_with_it() {
    refused(
        retry().args(["--forever", "--successes", "3", "--", "true"]),
        &["--successes (3)", "--forever"],
    );
    refused(
        retry().args(["--forever", "--until-fail", "--", "true"]),
        &["--until-fail", "--forever"],
    );
    refused(
        retry()
            .env("RETRY_FOREVER", "1")
            .args(["--until-fail", "--", "true"]),
        &["--until-fail", "--forever from RETRY_FOREVER"],
    );
    refused(
        retry().env("RETRY_FOREVER", "maybe").args(["--", "true"]),
        &["maybe", "--forever"],
    );
}

#[test]
fn with_chronic_a_crash_loop_of_successes_shows_what_it_held() {
    let dir = tempfile::tempdir().unwrap();
    let log = log_in(&dir);
    let script = format!("{NOTE}; echo \"out $RETRY_ATTEMPT\"");
    let r = run(
        &["--forever", "--chronic", "-n", "1", "-b", "0"],
        &script,
        &log,
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert_eq!(r.stdout, "out 1\nout 2\n", "{}", r.stderr);
    assert!(r.stderr.contains("a crash loop"), "{}", r.stderr);
}

#[test]
fn with_a_budget_the_restarts_after_failures_spend_it() {
    let dir = tempfile::tempdir().unwrap();
    let log = log_in(&dir);
    let script = format!("{NOTE}; exit 1");
    let out = release()
        .env("LOG", &log)
        .env("TMPDIR", dir.path())
        .args([
            "--forever",
            "--budget",
            "forever-test",
            "-b",
            "0",
            "-n",
            "50",
        ])
        .args(["--", "sh", "-c", &script])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("retry budget for forever-test is spent"),
        "{stderr}"
    );
    assert!(runs(&log).len() < 51, "{stderr}");
}
