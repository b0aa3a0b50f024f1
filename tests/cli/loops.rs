//! The loop shapes of issue 21 through the binary: `--delays` (the listed delays in order, the
//! last repeating, jitter within bounds, refused with `--base`), `--successes N` (a streak
//! broken by a failure and restarted), `--until-fail` (the failing run's status and output);
//! each in `--dry-run` and the JSON events, and each wait ended at once by TERM.

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;

use serde_json::Value;

use crate::helpers::{refuses, refuses_env, retry, retry_std, send, wait_with_limit};

/// Runs retry with `args` in JSON mode: its status, stdout and parsed events.
fn events(args: &[&str]) -> (Option<i32>, String, Vec<Value>) {
    let out = retry()
        .args(["--log-format", "json"])
        .args(args)
        .output()
        .unwrap();
    let events = String::from_utf8(out.stderr)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .collect();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        events,
    )
}

/// The events named `name`.
fn named<'a>(events: &'a [Value], name: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["event"] == name).collect()
}

/// A command whose attempt N exits with `statuses[N - 1]` (0 past the end), echoing
/// `attempt N` on stdout.
fn script(statuses: &[u8]) -> String {
    let cases: String = statuses
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{}) exit {s};; ", i + 1))
        .collect();
    format!("echo attempt $RETRY_ATTEMPT; case $RETRY_ATTEMPT in {cases}*) exit 0;; esac")
}

#[test]
fn listed_delays_are_waited_in_order_the_last_repeating() {
    let (code, _, ev) = events(&[
        "--delays",
        "0.01,0.03,0.02",
        "-n",
        "5",
        "--",
        "sh",
        "-c",
        "exit 3",
    ]);
    assert_eq!(code, Some(3));
    let delays: Vec<f64> = named(&ev, "wait")
        .iter()
        .map(|e| e["delay"].as_f64().unwrap())
        .collect();
    // No jitter unless asked: the list as written, the last one repeating.
    assert_eq!(delays, [0.01, 0.03, 0.02, 0.02, 0.02]);
    let start = named(&ev, "start")[0];
    assert_eq!(start["delays"], serde_json::json!([0.01, 0.03, 0.02]));
    assert_eq!(start["jitter"], "none");
}

#[test]
fn jitter_applies_to_each_listed_delay_within_its_bounds() {
    let list: [f64; 3] = [0.02, 0.01, 0.04];
    for (mode, bounds) in [
        ("full", (0.0, 1.0)),
        ("equal", (0.5, 1.0)),
        ("proportional", (0.8, 1.2)),
    ] {
        let (code, _, ev) = events(&[
            "--delays",
            "0.02,0.01,0.04",
            "-j",
            mode,
            "-n",
            "6",
            "--",
            "false",
        ]);
        assert_eq!(code, Some(1));
        let delays: Vec<f64> = named(&ev, "wait")
            .iter()
            .map(|e| e["delay"].as_f64().unwrap())
            .collect();
        assert_eq!(delays.len(), 6);
        for (n, d) in delays.iter().enumerate() {
            let v = list[n.min(2)];
            // Never past the largest listed delay (the cap), whatever the jitter.
            let (lo, hi) = (v * bounds.0, (v * bounds.1).min(0.04));
            assert!(
                *d >= lo - 1e-6 && *d <= hi + 1e-6,
                "{mode}: wait {n} of {d} not in [{lo}, {hi}]"
            );
        }
    }
}

#[test]
fn delays_show_in_dry_run_and_come_from_retry_delays() {
    let out = retry()
        .env("RETRY_DELAYS", "1s,5s,30s,2m")
        .args(["--dry-run", "-n", "6", "--", "true"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let delays: Vec<&str> = text
        .lines()
        .skip(1)
        .take(6)
        .map(|l| l.split_whitespace().nth(1).unwrap())
        .collect();
    assert_eq!(delays, ["1s", "5s", "30s", "2m", "2m", "2m"], "{text}");
}

#[test]
fn delays_with_the_formula_or_bad_lists_are_refused() {
    refuses(
        &["--delays", "1s,5s", "--base", "2s", "--", "true"],
        &["--delays (1s,5s)", "--base (2s)"],
    );
    refuses(
        &["--delays", "1s", "--cap", "9", "--", "true"],
        &["--delays", "--cap"],
    );
    refuses_env(
        &[("RETRY_MULTIPLIER", "3")],
        &["--delays", "1", "--", "true"],
        &["--delays (1)", "--multiplier (3 from RETRY_MULTIPLIER)"],
    );
    refuses_env(
        &[("RETRY_DELAYS", "1,x")],
        &["--", "true"],
        &["--delays", "1,x", "delay 2 (x)"],
    );
    for (bad, says) in [
        ("", "comma-separated"),
        ("1s,,2s", "delay 2 is empty"),
        ("1s,inf", "must be finite"),
        ("1e400", "must be finite"),
        ("-1s", "delay 1 (-1s)"),
        (
            "1s 5s 30s",
            "delay 1 (1s 5s 30s) holds more than one duration",
        ),
        ("1s,1m 30s", "delay 2 (1m 30s) holds more than one duration"),
    ] {
        refuses(&["--delays", bad, "--", "true"], &["--delays", says]);
    }
    let many = vec!["1"; 1001].join(",");
    refuses(
        &["--delays", &many, "--", "true"],
        &["1001 delays: at most 1000"],
    );
}

#[test]
fn a_streak_broken_by_a_failure_starts_again() {
    // Success, failure, then three successes: done on attempt 5 with one retry.
    let cmd = script(&[0, 4, 0, 0, 0]);
    let out = retry()
        .args(["--successes", "3", "-b", "0.01", "-j", "none", "-n", "1"])
        .args(["--", "sh", "-c", &cmd])
        .assert()
        .success()
        .get_output()
        .clone();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 5, "{stdout}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("attempt 1 of 6: sh succeeded, 1 of 3 in a row"),
        "{stderr}"
    );
    assert!(
        stderr.contains("attempt 2 of 6: sh exited with status 4"),
        "{stderr}"
    );
    assert!(
        stderr.contains("attempt 4 of 6: sh succeeded, 2 of 3 in a row"),
        "{stderr}"
    );
    assert!(
        stderr.contains("sh succeeded 3 times in a row, on attempts 3 to 5 of 6"),
        "{stderr}"
    );
}

#[test]
fn a_streak_never_complete_gives_up_with_the_last_status_and_the_longest_streak() {
    let cmd = script(&[0, 0, 5, 0, 6]);
    let out = retry()
        .args([
            "--successes",
            "3",
            "-b",
            "0",
            "-n",
            "1",
            "--",
            "sh",
            "-c",
            &cmd,
        ])
        .assert()
        .code(6)
        .get_output()
        .clone();
    let stderr = crate::helpers::timeless(&String::from_utf8(out.stderr).unwrap());
    assert!(
        stderr.contains(
            "gave up after 5 attempts in T: no retries left; the longest streak was 2 of 3 \
             successes in a row"
        ),
        "{stderr}"
    );
}

#[test]
fn a_streak_the_deadline_cuts_short_ends_124_naming_the_streak_once() {
    let out = retry()
        .args(["--successes", "3", "-b", "30s", "-d", "20s", "--", "true"])
        .assert()
        .code(124)
        .get_output()
        .clone();
    let stderr = crate::helpers::timeless(&String::from_utf8(out.stderr).unwrap());
    assert!(
        stderr.ends_with(
            "retry: gave up after 1 attempt in T: the next wait (30s) would end at or past the \
             deadline; the longest streak was 1 of 3 successes in a row\n"
        ),
        "{stderr}"
    );
}

#[test]
fn streak_events_say_how_many_successes_in_a_row() {
    let cmd = script(&[0, 1, 0, 0]);
    let (code, _, ev) = events(&[
        "--successes",
        "2",
        "-b",
        "0",
        "-n",
        "3",
        "--",
        "sh",
        "-c",
        &cmd,
    ]);
    assert_eq!(code, Some(0));
    assert_eq!(named(&ev, "start")[0]["successes"], 2);
    let streak: Vec<(u64, u64)> = named(&ev, "streak")
        .iter()
        .map(|e| {
            (
                e["attempt"].as_u64().unwrap(),
                e["successes"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(streak, [(1, 1), (3, 1)]);
    let success = named(&ev, "success");
    assert_eq!(success.len(), 1);
    assert_eq!(success[0]["successes"], 2);
    assert_eq!(success[0]["attempts"], 4);
    // The failure's retry is a retry as any other.
    assert_eq!(named(&ev, "wait").len(), 1);
}

#[test]
fn until_fail_ends_with_the_failing_runs_status_and_keeps_every_output() {
    let cmd = script(&[0, 0, 0, 9]);
    let out = retry()
        .args([
            "--until-fail",
            "-n",
            "200",
            "-b",
            "0",
            "--",
            "sh",
            "-c",
            &cmd,
        ])
        .assert()
        .code(9)
        .get_output()
        .clone();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "attempt 1\nattempt 2\nattempt 3\nattempt 4\n"
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("run 3 of 201: sh succeeded; running it again"),
        "{stderr}"
    );
    assert!(
        stderr.contains("failed on run 4 of 201 after") && stderr.contains("status 9"),
        "{stderr}"
    );
}

#[test]
fn until_fail_without_a_failure_exits_0_and_runs_on_give_up() {
    let dir = tempfile::tempdir().unwrap();
    let hook = dir.path().join("hook");
    let out = retry()
        .args(["--until-fail", "-n", "3", "-b", "0", "--on-give-up"])
        .arg(format!("echo $RETRY_ATTEMPT > {}", hook.display()))
        .args(["--", "true"])
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("no failure in 4 runs"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), "4\n");
}

#[test]
fn until_fail_events_name_the_run_that_failed() {
    let cmd = script(&[0, 0, 2]);
    let (code, _, ev) = events(&["--until-fail", "-b", "0", "--", "sh", "-c", &cmd]);
    assert_eq!(code, Some(2));
    assert_eq!(named(&ev, "start")[0]["until_fail"], true);
    assert_eq!(named(&ev, "rerun").len(), 2);
    let end = named(&ev, "until_fail");
    assert_eq!(end.len(), 1);
    assert_eq!(end[0]["outcome"], "failed");
    assert_eq!(end[0]["attempt"], 3);
    assert_eq!(end[0]["status"], 2);
    let (code, _, ev) = events(&["--until-fail", "-b", "0", "-n", "1", "--", "true"]);
    assert_eq!(code, Some(0));
    let end = named(&ev, "until_fail");
    assert_eq!(end[0]["outcome"], "no_failure");
    assert_eq!(end[0]["runs"], 2);
}

#[test]
fn shapes_show_in_dry_run_and_refuse_what_they_cannot_go_with() {
    let dry = |args: &[&str]| {
        let out = retry()
            .args(["--dry-run", "-n", "2", "-b", "1s"])
            .args(args)
            .args(["--", "true"])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        String::from_utf8(out).unwrap()
    };
    assert!(dry(&["--successes", "3"]).contains("successes: 3 in a row, each 1s after the last"),);
    assert!(dry(&["--until-fail"]).contains("until-fail: the retries above follow successes"));
    assert!(!dry(&[]).contains("successes:"));
    refuses(
        &["--successes", "2", "--until-fail", "--", "true"],
        &["--successes (2)", "--until-fail"],
    );
    refuses(&["--successes", "0", "--", "true"], &["--successes", "0"]);
    refuses(
        &["--successes", "99999999999999999999999", "--", "true"],
        &["--successes", "99999999999999999999999"],
    );
    refuses(
        &["--until-fail", "--retry-on", "1", "--", "true"],
        &["--retry-on (1)", "--until-fail"],
    );
}

/// Starts retry with `args`, reads stderr up to the line containing `waiting_line`, sends TERM
/// and checks that retry ended at once by it.
fn term_during(args: &[&str], waiting_line: &str) {
    let mut child = retry_std()
        .args(args)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    while !seen.contains(waiting_line) {
        let mut line = String::new();
        assert_ne!(stderr.read_line(&mut line).unwrap(), 0, "{seen}");
        seen.push_str(&line);
    }
    send(child.id(), libc::SIGTERM);
    let status = wait_with_limit(&mut child);
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{args:?}: {status:?}");
}

#[test]
fn term_ends_each_new_wait_at_once() {
    term_during(
        &["--successes", "2", "-b", "1h", "-c", "1h", "--", "true"],
        "1 of 2 in a row; next attempt in 1h",
    );
    term_during(
        &[
            "--until-fail",
            "-b",
            "1h",
            "-c",
            "1h",
            "-j",
            "none",
            "--",
            "true",
        ],
        "running it again in 1h",
    );
    term_during(&["--delays", "1h", "--", "false"], "retrying in 1h");
}
