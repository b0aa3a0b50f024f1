//! What a newcomer meets in the first hour (issue 30), through the release binary: a flag
//! without its value, refused values shown as typed, one human form for durations in text,
//! `--dry-run`'s rows past the twentieth, the pointer to this retry's manual, the jitter modes
//! in the completions, and the documentation's claims and examples.

use crate::helpers::{refused, release};

/// `retry ARGS` (the release build) refused, naming each of `needles`.
fn refuses(args: &[&str], needles: &[&str]) -> String {
    refused(release().args(args), needles)
}

/// `retry ARGS` with `vars` set (the release build) refused, naming each of `needles`.
fn refuses_env(vars: &[(&str, &str)], args: &[&str], needles: &[&str]) -> String {
    refused(release().envs(vars.iter().copied()).args(args), needles)
}

#[test]
fn a_flag_given_no_value_says_it_needs_one() {
    for (args, flag) in [
        (&["-b", "--", "true"][..], "--base"),
        (&["--cap", "--", "true"], "--cap"),
        (&["-n", "--", "true"], "--max-retries"),
        (&["-s", "--", "true"], "--signal"),
        (&["-j", "--", "true"], "--jitter"),
        (&["--max-output", "--", "true"], "--max-output"),
        (&["--retry-on", "--", "true"], "--retry-on"),
        (&["--lock", "--", "true"], "--lock"),
        (&["--preset", "--", "true"], "--preset"),
        (&["-b"], "--base"),
    ] {
        let line = refuses(args, &[flag, "needs a value"]);
        assert!(!line.contains("invalid value '--'"), "{args:?}: {line}");
    }
    // What looks like the next flag is named as such, with the way to give such a value.
    let line = refuses(&["-b", "-x", "true"], &["--base", "needs a value", "'-x'"]);
    assert!(line.contains("--base=-x"), "{line}");
    let line = refuses(
        &["-t", "--verbose", "true"],
        &["--timeout", "needs a value"],
    );
    assert!(line.contains("'--verbose'"), "{line}");
    // A negative number is a value, refused as one.
    refuses(
        &["-b", "-5", "true"],
        &["--base", "-5", "cannot be negative"],
    );
}

#[test]
fn refused_durations_are_shown_as_typed() {
    refuses(
        &[
            "--breaker",
            "2",
            "--breaker-cooldown",
            "10000y",
            "--",
            "true",
        ],
        &["--breaker-cooldown (10000y)"],
    );
    refuses_env(
        &[("RETRY_BREAKER_COOLDOWN", "101 years")],
        &["--breaker", "2", "--", "true"],
        &["(101 years from RETRY_BREAKER_COOLDOWN)"],
    );
    refuses(
        &["--delays", "1s,5s", "-b", "1000ms", "--", "true"],
        &["--base (1000ms)"],
    );
    refuses(
        &["--lock-wait", "90s", "--", "true"],
        &["--lock-wait (90s)"],
    );
    refuses(
        &["--until-fail", "--reset-after", "1e400", "--", "true"],
        &["--reset-after (1e400)"],
    );
}
