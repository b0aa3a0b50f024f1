//! `retry -n 0` as coreutils `timeout`, its parameters: retry's own errors are 125 apart from 126
//! and 127 (timeout-parameters.sh), durations too large are no limit and too small still time out
//! (timeout-large-parameters.sh), every duration form on every duration flag. Statuses and
//! signals are in `timeout_compat.rs`.

use std::time::{Duration, Instant};

use crate::helpers::retry;
use crate::timeout_compat::once;

// timeout-parameters.sh: retry's own errors are 125, apart from 126 and 127.

#[test]
fn bad_values_are_125_and_a_command_that_cannot_run_126_or_127() {
    for args in [
        &["-t", "invalid", "--", "sleep", "0"][..],
        &["--kill-after=invalid", "-t", "1", "--", "sleep", "0"],
        &["-t", "42D", "--", "sleep", "0"],
        &["--signal=invalid", "-t", "1", "--", "sleep", "0"],
        &["-s", "65", "-t", "1", "--", "sleep", "0"],
        &["-t", "-1.18973149535723176502e+4932", "--", "sleep", "0"],
    ] {
        once(args).assert().code(125);
    }
    once(&["-t", "10.34", "--", "sleep", "0"]).assert().code(0);
    once(&["-t", "9.999999999", "--", "sleep", "0"])
        .assert()
        .code(0);
    once(&["-t", "10", "--", "."]).assert().code(126);
    once(&["-t", "10", "--", "no_such_command_xyz"])
        .assert()
        .code(127);
}

// timeout-large-parameters.sh: too large is no limit, too small still times out.

#[test]
fn durations_too_large_for_the_clock_are_no_limit() {
    for huge in [
        "4294967296",
        "9223372036854775808",
        "9223372036854775808d",
        "2.34e+5d",
        "1.18973149535723176502e+4932",
        "inf",
        "infinity",
        "infs",
    ] {
        once(&["-t", huge, "--", "sleep", "0"]).assert().code(0);
        once(&["-t", huge, "-k", huge, "--", "sh", "-c", "exit 3"])
            .assert()
            .code(3);
    }
}

#[test]
fn a_duration_too_small_to_represent_rounds_up_and_times_out() {
    for tiny in ["1e-10000", "1e-5000", "2e-10"] {
        let started = Instant::now();
        once(&["-t", tiny, "--", "sleep", "10"]).assert().code(124);
        assert!(
            started.elapsed() < Duration::from_secs(9),
            "{tiny}: no timeout"
        );
    }
}

#[test]
fn every_duration_form_is_taken_by_every_duration_flag() {
    let forms = [
        ".5s",
        ".5",
        "5.",
        "1e3ms",
        "2.34e+5d",
        "1E-3",
        "+5",
        "-0",
        "1m30s",
        "2h 37min",
        "250ms",
        "5us",
        "7ns",
        "1e-10000",
        "inf",
        "9223372036854775808d",
    ];
    for flag in [
        "--timeout",
        "--deadline",
        "--idle-timeout",
        "-k",
        "--reset-after",
        "--max-hint",
        "--cap",
    ] {
        for form in forms {
            retry()
                .args(["--dry-run", "-b", "0", flag, form])
                .assert()
                .success();
        }
    }
    // The first delay and the splay must be finite; any finite form does.
    for form in &forms[..forms.len() - 2] {
        retry()
            .args(["--dry-run", "-b", form, "-c", "inf", "--splay", form])
            .assert()
            .success();
    }
    let out = retry()
        .args([
            "--dry-run",
            "-n",
            "1",
            "-j",
            "none",
            "-b",
            ".5s",
            "-c",
            "inf",
        ])
        .assert()
        .success()
        .get_output()
        .clone();
    assert!(String::from_utf8_lossy(&out.stdout).contains("500ms"));
    once(&["-t", ".5s", "--", "sleep", "10"]).assert().code(124);
}
