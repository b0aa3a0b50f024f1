//! retry's own errors: status 125 and one clear line naming the flag and the value.

use predicates::prelude::*;

use crate::helpers::{refuses, retry};

#[test]
fn bad_durations_name_the_flag_and_value() {
    refuses(&["--base", "abc", "true"], &["--base", "abc"]);
    refuses(&["-c", "-5s", "true"], &["--cap", "-5s"]);
    // Too large for the clock is no limit now (as for coreutils timeout); negative is refused.
    refuses(
        &["--deadline", "-1e-10000", "true"],
        &["--deadline", "-1e-10000"],
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

#[test]
fn a_misspelt_flag_or_value_gets_clap_s_suggestion_and_a_pointer_to_help() {
    let line = refuses(&["--jiter", "full", "--", "true"], &["--jiter"]);
    assert!(line.contains("did you mean '--jitter'?"), "{line}");
    assert!(line.trim_end().ends_with("(try 'retry --help')"), "{line}");
    let line = refuses(&["-j", "fulll", "--", "true"], &["--jitter", "fulll"]);
    assert!(line.contains("did you mean 'full'?"), "{line}");
    let line = refuses(&["--log-format", "jsn", "true"], &["jsn"]);
    assert!(line.contains("did you mean 'json'?"), "{line}");
}

#[test]
fn no_command_shows_the_usage_line() {
    let line = refuses(&[], &["COMMAND"]);
    assert!(
        line.contains("usage: retry [OPTIONS] [--] COMMAND [ARGS]..."),
        "{line}"
    );
}

#[test]
fn a_command_that_is_a_misplaced_value_gets_a_hint() {
    // A duration with a space, unquoted: `minutes` becomes the command.
    let out = retry()
        .args(["--cap", "5", "minutes", "--", "x"])
        .assert()
        .code(127)
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("'minutes' is not a command; quote a value with spaces: --cap '5 minutes'"),
        "{stderr}"
    );
    // Debian's retry takes the number of tries first.
    let out = retry()
        .args(["3", "curl", "-fsS", "http://127.0.0.1:9/"])
        .assert()
        .code(127)
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("'3' is not a command; the number of retries is -n 3"),
        "{stderr}"
    );
    // A command that is simply missing gets no such hint.
    let out = retry()
        .args(["-n", "0", "--", "no-such-command-xyz"])
        .assert()
        .code(127)
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!stderr.contains("is not a command"), "{stderr}");
}

#[test]
fn short_help_is_one_screen_with_examples_and_exit_statuses() {
    let out = retry().arg("-h").assert().success().get_output().clone();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines().count() <= 40,
        "{} lines:\n{text}",
        text.lines().count()
    );
    for needle in [
        "Usage: retry [OPTIONS] [--] COMMAND [ARGS]...",
        "<COMMAND>...",
        "Examples:",
        "retry -- curl -fsS",
        "Exit status:",
        "124, 137",
        "125",
        "75",
        "retry --help",
        "retry --generate man | man -l -",
    ] {
        assert!(text.contains(needle), "-h lacks {needle:?}:\n{text}");
    }
    assert!(
        !text.contains("[COMMAND]"),
        "COMMAND shown as optional:\n{text}"
    );
    let out = retry()
        .arg("--help")
        .assert()
        .success()
        .get_output()
        .clone();
    let long = String::from_utf8(out.stdout).unwrap();
    let examples = long.rfind("Examples:").unwrap();
    assert!(
        examples > long.find("--budget-store").unwrap(),
        "examples come last"
    );
}

#[test]
fn no_message_carries_an_os_error_number() {
    let dir = tempfile::tempdir().unwrap();
    /// Arguments, and variables to set.
    type Case<'a> = (Vec<String>, Vec<(&'a str, String)>);
    let cases: Vec<Case> = vec![
        (vec!["--".into(), "no-such-command-xyz".into()], vec![]),
        (vec!["--".into(), "/etc/passwd".into()], vec![]),
        (
            vec!["--".into(), "true".into()],
            vec![
                ("GITHUB_ACTIONS", "true".into()),
                (
                    "GITHUB_OUTPUT",
                    dir.path().join("no/such/dir").display().to_string(),
                ),
            ],
        ),
        (
            vec![
                "--simulate".into(),
                "10".into(),
                "--plot".into(),
                dir.path().join("no/such/dir/p.svg").display().to_string(),
            ],
            vec![],
        ),
        (
            vec![
                "--budget".into(),
                "k".into(),
                "--budget-store".into(),
                "/proc/version/x".into(),
                "--".into(),
                "true".into(),
            ],
            vec![],
        ),
    ];
    for (args, vars) in cases {
        for format in ["text", "json"] {
            let out = retry()
                .args(["--log-format", format])
                .args(&args)
                .envs(vars.iter().map(|(k, v)| (*k, v.as_str())))
                .write_stdin("input")
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!stderr.is_empty(), "{args:?}: no message at all");
            assert!(!stderr.contains("os error"), "{args:?} {format}: {stderr}");
        }
    }
}
