//! retry's own errors: status 125 and one clear line naming the flag and the value.

use predicates::prelude::*;

use crate::helpers::{refuses, retry};

#[test]
fn bad_durations_name_the_flag_and_value() {
    refuses(&["--base", "abc", "true"], &["--base", "abc"]);
    refuses(&["-c", "-5s", "true"], &["--cap", "-5s"]);
    refuses(
        &["--deadline", "99999999999999999999h", "true"],
        &["--deadline"],
    );
    refuses(&["--timeout", "NaN", "true"], &["--timeout", "NaN"]);
    refuses(&["--kill-after", "1x", "true"], &["--kill-after", "1x"]);
}

#[test]
fn bad_numbers_name_the_flag_and_value() {
    refuses(&["-m", "0.5", "true"], &["--multiplier", "0.5"]);
    refuses(&["-m", "inf", "true"], &["--multiplier", "inf"]);
    refuses(&["-n", "-1", "true"], &["--max-retries", "-1"]);
    refuses(&["-n", "lots", "true"], &["--max-retries", "lots"]);
    refuses(&["--seed", "x", "true"], &["--seed", "x"]);
    refuses(&["--jitter", "fulll", "true"], &["--jitter", "fulll"]);
}

#[test]
fn bad_codes_name_the_flag_and_value() {
    refuses(&["--retry-on", "1,300", "true"], &["--retry-on", "300"]);
    refuses(&["--stop-on", "SIGNOPE", "true"], &["--stop-on", "SIGNOPE"]);
    refuses(&["--retry-on", "9-3", "true"], &["--retry-on", "9-3"]);
}

#[test]
fn cap_below_base_names_both() {
    refuses(&["-b", "2s", "-c", "1s", "true"], &["--cap", "--base"]);
}

#[test]
fn missing_command_and_unknown_flags() {
    refuses(&[], &["COMMAND"]);
    refuses(&["-n", "3"], &["COMMAND"]);
    refuses(&["--bogus", "true"], &["--bogus"]);
    refuses(&["-q", "-v", "true"], &["--quiet", "--verbose"]);
}

#[test]
fn options_after_the_command_belong_to_the_command() {
    // `retry -n0 echo -n 3`: `-n 3` goes to echo, not to retry.
    retry()
        .args(["-n0", "echo", "-n", "3"])
        .assert()
        .success()
        .stdout("3");
    retry()
        .args(["--", "echo", "--bogus"])
        .assert()
        .success()
        .stdout("--bogus\n");
}

#[test]
fn help_and_version() {
    retry()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("--max-retries").and(predicate::str::contains("Backoff")));
    retry()
        .arg("--version")
        .assert()
        .success()
        .stdout(predicate::str::starts_with("retry "));
}
