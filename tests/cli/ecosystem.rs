//! retry among other tools: `RETRY_<FLAG>` environment variables, `--preset` (the published
//! policies) and their precedence. The conventions (help headings, `--version`, no colour off a
//! terminal or with NO_COLOR) are in `ecosystem_conventions.rs`.
//!
//! Precedence, highest first: a flag, `--preset` on the command line, a `RETRY_<FLAG>`
//! variable, `RETRY_PRESET`, the built-in default.

use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

use predicates::prelude::*;

use crate::helpers::{dry_run_cells, human_secs, refused, retry};

/// `--dry-run` with these variables and flags: (retry number, delay, cumulative) per row, in
/// seconds.
fn schedule(vars: &[(&str, &str)], args: &[&str]) -> Vec<(u64, f64, f64)> {
    let out = retry()
        .envs(vars.iter().copied())
        .arg("--dry-run")
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    dry_run_cells(&text)
        .iter()
        .map(|(n, delay, total)| (n.parse().unwrap(), human_secs(delay), human_secs(total)))
        .collect()
}

fn delays(vars: &[(&str, &str)], args: &[&str]) -> Vec<f64> {
    schedule(vars, args).iter().map(|r| r.1).collect()
}

fn totals(vars: &[(&str, &str)], args: &[&str]) -> Vec<f64> {
    schedule(vars, args).iter().map(|r| r.2).collect()
}

/// The rounding of a duration of about `secs` seconds as the dry-run table writes it (the
/// closing line's form): to the millisecond below a second, the tenth below a minute, the
/// second below an hour.
fn rounding(secs: f64) -> f64 {
    match secs {
        s if s < 1.0 => 0.0005,
        s if s < 60.0 => 0.05,
        _ => 0.5,
    }
}

/// Expects status 125 and one stderr line `retry: ...` holding every needle; runs nothing.
fn refuses_and_runs_nothing(vars: &[(&str, &str)], args: &[&str], needles: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    refused(
        retry()
            .envs(vars.iter().copied())
            .args(args)
            .args(["--", "touch"])
            .arg(&marker),
        needles,
    );
    assert!(!marker.exists(), "the command ran");
}

// ---- RETRY_<FLAG> variables ----

#[test]
fn env_sets_base_cap_and_max_retries() {
    let vars = [
        ("RETRY_BASE", "2"),
        ("RETRY_CAP", "5s"),
        ("RETRY_MAX_RETRIES", "4"),
    ];
    assert_eq!(delays(&vars, &["-j", "none"]), vec![2.0, 4.0, 5.0, 5.0]);
}

#[test]
fn env_sets_jitter_and_multiplier() {
    let vars = [("RETRY_JITTER", "none"), ("RETRY_MULTIPLIER", "3")];
    assert_eq!(delays(&vars, &["-n", "3"]), vec![1.0, 3.0, 9.0]);
}

#[test]
fn env_deadline_cuts_the_dry_run_rows() {
    // none: cumulative 1, 3, 7, 15: a deadline of 15s keeps 1, 3 and 7.
    let vars = [("RETRY_DEADLINE", "15s")];
    assert_eq!(
        totals(&vars, &["-j", "none", "-n", "unlimited"]),
        vec![1.0, 3.0, 7.0]
    );
}

#[test]
fn env_seed_reproduces_a_schedule() {
    let seeded = schedule(&[("RETRY_SEED", "42")], &["-n", "8"]);
    assert_eq!(seeded, schedule(&[], &["--seed", "42", "-n", "8"]));
}

#[test]
fn flags_override_env() {
    let vars = [
        ("RETRY_BASE", "2"),
        ("RETRY_MAX_RETRIES", "4"),
        ("RETRY_JITTER", "full"),
        ("RETRY_DEADLINE", "1s"),
    ];
    let args = ["-b", "3", "-n", "2", "-j", "none", "-c", "100", "-d", "1h"];
    assert_eq!(delays(&vars, &args), vec![3.0, 6.0]);
}

#[test]
fn empty_variables_count_as_unset() {
    let vars = [
        ("RETRY_BASE", ""),
        ("RETRY_MAX_RETRIES", ""),
        ("RETRY_PRESET", ""),
        ("RETRY_JITTER", ""),
    ];
    assert_eq!(
        delays(&vars, &["-j", "none"]),
        vec![1.0, 2.0, 4.0, 8.0, 16.0]
    );
    // An empty RETRY_JITTER is not "none": the default full jitter stays under the curve.
    let full = schedule(&vars, &["--seed", "1"]);
    assert_eq!(full, schedule(&[], &["--seed", "1"]));
}

#[test]
fn env_max_retries_applies_to_real_runs() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    retry()
        .env("RETRY_MAX_RETRIES", "2")
        .env("RETRY_BASE", "0")
        .args(["-q", "--", "sh", "-c"])
        .arg(format!("echo x >> {}; exit 3", log.display()))
        .assert()
        .code(3);
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 3);
}

#[test]
fn env_variables_apply_to_a_command_line_without_options() {
    // `retry -- COMMAND` is read without clap unless a RETRY_ variable is set: these must still
    // be read and checked.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let script = format!("echo x >> {}; exit 3", log.display());
    retry()
        .env("RETRY_MAX_RETRIES", "1")
        .env("RETRY_BASE", "0")
        .args(["sh", "-c", &script])
        .assert()
        .code(3);
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 2);
    retry()
        .env("RETRY_MAX_RETRIES", "lots")
        .args(["--", "true"])
        .assert()
        .code(125)
        .stderr(predicate::str::contains("RETRY_MAX_RETRIES"));
    // An empty variable counts as unset.
    retry()
        .env("RETRY_MAX_RETRIES", "")
        .args(["--", "true"])
        .assert()
        .success();
}

#[test]
fn env_timeout_stops_an_attempt() {
    let started = Instant::now();
    retry()
        .env("RETRY_TIMEOUT", "200ms")
        .args(["-n", "0", "--", "sleep", "30"])
        .assert()
        .code(124);
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn env_deadline_stops_a_running_attempt() {
    let started = Instant::now();
    retry()
        .env("RETRY_DEADLINE", "300ms")
        .args(["-n", "unlimited", "--", "sleep", "30"])
        .assert()
        .code(124);
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn env_kill_after_escalates_to_kill() {
    let out = retry()
        .env("RETRY_TIMEOUT", "100ms")
        .env("RETRY_KILL_AFTER", "100ms")
        .args(["-n", "0", "--", "sh", "-c", "trap '' TERM; sleep 30"])
        .assert()
        .failure();
    // KILL was needed: retry dies of KILL, as coreutils `timeout` (a shell's 137).
    assert_eq!(out.get_output().status.signal(), Some(libc::SIGKILL));
}

#[test]
fn env_stop_on_and_retry_on_decide_what_is_retried() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let script = format!("echo x >> {}; exit 3", log.display());
    for (var, value) in [("RETRY_STOP_ON", "3"), ("RETRY_RETRY_ON", "1,2")] {
        std::fs::write(&log, "").unwrap();
        retry()
            .env(var, value)
            .args(["-q", "-b", "0", "-n", "4", "--", "sh", "-c", &script])
            .assert()
            .code(3);
        let attempts = std::fs::read_to_string(&log).unwrap().lines().count();
        assert_eq!(attempts, 1, "{var}={value}");
    }
}

#[test]
fn bad_environment_values_name_the_variable_flag_and_value() {
    let cases: &[(&str, &str, &str)] = &[
        ("RETRY_BASE", "abc", "--base"),
        ("RETRY_MULTIPLIER", "0.5", "--multiplier"),
        ("RETRY_CAP", "-5s", "--cap"),
        ("RETRY_JITTER", "fulll", "--jitter"),
        ("RETRY_SEED", "x", "--seed"),
        ("RETRY_MAX_RETRIES", "lots", "--max-retries"),
        ("RETRY_DEADLINE", "soon", "--deadline"),
        ("RETRY_TIMEOUT", "NaN", "--timeout"),
        ("RETRY_KILL_AFTER", "1x", "--kill-after"),
        ("RETRY_RETRY_ON", "1,300", "--retry-on"),
        ("RETRY_STOP_ON", "SIGNOPE", "--stop-on"),
        ("RETRY_PRESET", "azure", "--preset"),
    ];
    for (var, value, flag) in cases {
        refuses_and_runs_nothing(&[(var, value)], &[], &[var, flag, &format!("'{value}'")]);
    }
}

#[test]
fn a_variable_is_not_read_when_its_flag_is_given() {
    assert_eq!(
        delays(
            &[("RETRY_BASE", "abc")],
            &["-b", "2", "-j", "none", "-n", "1"]
        ),
        vec![2.0]
    );
}

#[test]
fn a_policy_from_the_environment_that_contradicts_itself_names_its_source() {
    refuses_and_runs_nothing(
        &[("RETRY_CAP", "500ms")],
        &[],
        &["--cap", "RETRY_CAP", "--base"],
    );
    refuses_and_runs_nothing(
        &[("RETRY_PRESET", "aws")],
        &["-b", "30s"],
        &["--cap", "RETRY_PRESET=aws", "--base"],
    );
    refuses_and_runs_nothing(&[], &["--preset", "aws", "-b", "30s"], &["--preset aws"]);
}

// ---- presets ----

#[test]
fn unknown_presets_are_refused_naming_them() {
    refuses_and_runs_nothing(&[], &["--preset", "azure"], &["--preset", "'azure'", "aws"]);
    refuses_and_runs_nothing(&[], &["--preset", "AWS"], &["--preset", "'AWS'"]);
}

#[test]
fn aws_preset_is_three_attempts_of_full_jitter_capped_at_20s() {
    assert_eq!(
        delays(&[], &["--preset", "aws", "-j", "none"]),
        vec![1.0, 2.0]
    );
    for seed in 0..20 {
        let rows = schedule(&[], &["--preset", "aws", "--seed", &seed.to_string()]);
        assert_eq!(rows.len(), 2, "3 attempts in all: {rows:?}");
        for (n, delay, _) in rows {
            let v = f64::min(20.0, 2f64.powi(n as i32 - 1));
            assert!((0.0..=v + rounding(v)).contains(&delay), "{n}: {delay}");
        }
    }
    // The cap is 20s: with no jitter and more retries, it shows.
    assert_eq!(
        delays(&[], &["--preset", "aws", "-j", "none", "-n", "7"]),
        vec![1.0, 2.0, 4.0, 8.0, 16.0, 20.0, 20.0]
    );
}

#[test]
fn api_core_preset_retries_until_its_120s_deadline() {
    // 1, 2, 4 ... capped at 60: cumulative 1, 3, 7, 15, 31, 63, then 123 reaches the deadline.
    assert_eq!(
        totals(&[], &["--preset", "api-core", "-j", "none"]),
        vec![1.0, 3.0, 7.0, 15.0, 31.0, 63.0]
    );
    for seed in 0..20 {
        let rows = schedule(&[], &["--preset", "api-core", "--seed", &seed.to_string()]);
        // Unlimited retries: only the deadline (or the 20-row limit of the table) ends it.
        assert!(rows.len() >= 6, "{rows:?}");
        for (n, delay, total) in rows {
            let v = f64::min(60.0, 2f64.powi(n as i32 - 1));
            assert!(delay <= v + rounding(v), "{n}: {delay} > {v}");
            // Shown rounded: a total just short of the deadline may read as 2m.
            assert!(
                total - rounding(total) < 120.0,
                "row {n} reaches the deadline: {total}"
            );
        }
    }
}

#[test]
fn gcp_preset_adds_up_to_a_second_to_doubling_delays_capped_at_64s() {
    for seed in 0..20 {
        let rows = schedule(
            &[],
            &["--preset", "gcp", "-n", "10", "--seed", &seed.to_string()],
        );
        assert_eq!(rows.len(), 10);
        for (n, delay, _) in rows {
            let v = 2f64.powi(n as i32 - 1);
            let (lo, hi) = (v.min(64.0), (v + 1.0).min(64.0));
            assert!(
                delay >= lo - rounding(lo) && delay <= hi + rounding(hi),
                "{n}: {delay} not in [{lo}, {hi}]"
            );
        }
    }
}

#[test]
fn grpc_preset_stays_within_twenty_percent_of_1_6_to_the_n_and_under_120s() {
    for seed in 0..20 {
        let rows = schedule(
            &[],
            &["--preset", "grpc", "-n", "20", "--seed", &seed.to_string()],
        );
        assert_eq!(rows.len(), 20);
        for (n, delay, _) in rows {
            let v = f64::min(120.0, 1.6f64.powi(n as i32 - 1));
            assert!(delay >= 0.8 * v - rounding(v), "{n}: {delay} < 0.8 * {v}");
            assert!(delay <= 1.2 * v + rounding(v), "{n}: {delay} > 1.2 * {v}");
            assert!(delay <= 120.0, "{n}: {delay} above the cap");
        }
    }
    // The multiplier, exactly: with a base of 100s the table shows whole seconds.
    assert_eq!(
        delays(
            &[],
            &[
                "--preset", "grpc", "-j", "none", "-n", "3", "-b", "100", "-c", "1000"
            ]
        ),
        vec![100.0, 160.0, 256.0]
    );
}

#[test]
fn proportional_jitter_never_exceeds_the_cap() {
    let rows = schedule(
        &[],
        &[
            "-j",
            "proportional",
            "-b",
            "1",
            "-m",
            "3",
            "-c",
            "5",
            "-n",
            "30",
        ],
    );
    assert_eq!(rows.len(), 30);
    assert!(rows.iter().all(|r| r.1 <= 5.0), "{rows:?}");
    assert!(
        rows.iter().skip(3).all(|r| r.1 >= 4.0 - rounding(4.0)),
        "{rows:?}"
    );
}

#[test]
fn explicit_flags_override_a_preset() {
    assert_eq!(
        delays(
            &[],
            &["--preset", "aws", "-n", "4", "-c", "3", "-j", "none"]
        ),
        vec![1.0, 2.0, 3.0, 3.0]
    );
    assert_eq!(
        totals(&[], &["--preset", "api-core", "-d", "10s", "-j", "none"]),
        vec![1.0, 3.0, 7.0]
    );
    assert_eq!(
        delays(
            &[],
            &[
                "--preset", "grpc", "-m", "2", "-b", "2", "-j", "none", "-n", "2"
            ]
        ),
        vec![2.0, 4.0]
    );
}

// ---- precedence: flag > --preset > RETRY_<FLAG> > RETRY_PRESET > default ----

#[test]
fn a_preset_on_the_command_line_beats_environment_values() {
    let vars = [("RETRY_BASE", "3"), ("RETRY_MAX_RETRIES", "6")];
    assert_eq!(
        delays(&vars, &["--preset", "aws", "-j", "none"]),
        vec![1.0, 2.0]
    );
}

#[test]
fn environment_values_beat_retry_preset() {
    let vars = [
        ("RETRY_PRESET", "aws"),
        ("RETRY_BASE", "3"),
        ("RETRY_CAP", "100"),
    ];
    // aws's 3 attempts stay; the base and cap come from their variables.
    assert_eq!(delays(&vars, &["-j", "none"]), vec![3.0, 6.0]);
}

#[test]
fn retry_preset_alone_sets_the_policy_and_a_flag_preset_replaces_it() {
    let vars = [("RETRY_PRESET", "aws")];
    assert_eq!(delays(&vars, &["-j", "none"]), vec![1.0, 2.0]);
    assert_eq!(
        totals(&vars, &["--preset", "api-core", "-j", "none"]),
        vec![1.0, 3.0, 7.0, 15.0, 31.0, 63.0]
    );
}

#[test]
fn a_flag_beats_everything() {
    let vars = [
        ("RETRY_PRESET", "aws"),
        ("RETRY_BASE", "3"),
        ("RETRY_MAX_RETRIES", "9"),
    ];
    let args = [
        "--preset", "gcp", "-b", "5", "-c", "100", "-n", "2", "-j", "none",
    ];
    assert_eq!(delays(&vars, &args), vec![5.0, 10.0]);
}

#[test]
fn help_states_the_precedence_rule() {
    let out = retry()
        .arg("--help")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let words = String::from_utf8(out).unwrap();
    let words = words.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(
            "Precedence, highest first: a flag on the command line, --preset on the command \
             line, a RETRY_<FLAG> variable, RETRY_PRESET, the built-in default"
        ),
        "{words}"
    );
}
