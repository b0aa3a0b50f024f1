//! Words that must be true: `--reset-after inf` (or a value too large, which is inf) named as
//! given in the crash-loop give-up and `--dry-run`; a stop while waiting for `--lock` before any
//! run; a DURATION too large for `--base`, `--splay` and `--delays` said to be too large, not
//! "not finite"; `--http-retry-on -1` named as no status; a loop shape with `--simulate`
//! refused rather than ignored.

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Stdio};

use crate::helpers::{refused, refuses, retry, retry_std, send, wait_for_lines, wait_with_limit};

#[test]
fn reset_after_inf_is_named_as_given_when_the_crash_loop_gives_up() {
    for given in ["inf", "1e19", "0"] {
        let out = retry()
            .args(["--forever", "--reset-after", given, "-n", "1", "-b", "0"])
            .args(["--", "sh", "-c", "exit 3"])
            .assert()
            .code(3)
            .get_output()
            .clone();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(
            stderr.contains("no restarts left: 2 runs (--reset-after 0 or inf: every run counts"),
            "--reset-after {given}: {stderr}"
        );
        let out = retry()
            .args(["--dry-run", "--forever", "--reset-after", given, "-n", "1"])
            .assert()
            .success()
            .get_output()
            .clone();
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(
            stdout.contains("(--reset-after 0 or inf: they never start again from the first)"),
            "--reset-after {given}: {stdout}"
        );
    }
}

/// A run holding `--lock lock` until `release` exists, its attempt's pid written to `held`.
fn holder(lock: &std::path::Path, held: &std::path::Path, release: &std::path::Path) -> Child {
    let child = retry_std()
        .arg("--lock")
        .arg(lock)
        .args(["-q", "--", "sh", "-c"])
        .arg(format!(
            "echo $$ > {}; while [ ! -e {} ]; do sleep 0.01; done",
            held.display(),
            release.display()
        ))
        .spawn()
        .unwrap();
    wait_for_lines(held, 1);
    child
}

#[test]
fn a_stop_while_waiting_for_the_lock_says_no_run_happened() {
    let dir = tempfile::tempdir().unwrap();
    let (lock, held, release) = (
        dir.path().join("job.lock"),
        dir.path().join("held"),
        dir.path().join("release"),
    );
    /// Lets the holder end even when the test fails half-way.
    struct Release<'a>(&'a std::path::Path);
    impl Drop for Release<'_> {
        fn drop(&mut self) {
            let _ = std::fs::write(self.0, "");
        }
    }
    let mut first = holder(&lock, &held, &release);
    let _release = Release(&release);
    for shape in [&["--forever"][..], &[]] {
        let mut waiting = retry_std()
            .arg("--lock")
            .arg(&lock)
            .args(["--lock-wait", "1h"])
            .args(shape)
            .args(["--", "true"])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(waiting.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        assert!(line.contains("waiting up to 1h"), "{line}");
        send(waiting.id(), libc::SIGTERM);
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
        assert_eq!(wait_with_limit(&mut waiting).signal(), Some(libc::SIGTERM));
        assert_eq!(
            rest, "retry: stopped by SIGTERM while waiting for --lock: not running true\n",
            "{shape:?}"
        );
    }
    std::fs::write(&release, "").unwrap();
    assert_eq!(wait_with_limit(&mut first).code(), Some(0));
}

#[test]
fn a_duration_too_large_is_said_to_be_too_large_with_the_limit() {
    let limit = "past 9223372036854775807.999999999s";
    refuses(
        &["-b", "1e19", "--", "true"],
        &[
            "--base (1e19) is too large",
            limit,
            "the first delay must be finite",
        ],
    );
    refuses(
        &["--splay", "99999999999999999999h", "--", "true"],
        &["--splay (99999999999999999999h) is too large", limit],
    );
    refuses(
        &["--delays", "1s,1e19", "--", "true"],
        &["delay 2 (1e19) is too large", limit],
    );
    // The largest value kept is taken (a cap as large), and inf is still "must be finite".
    retry()
        .args([
            "--dry-run",
            "-b",
            "9223372036854775807",
            "-c",
            "inf",
            "-n",
            "1",
        ])
        .assert()
        .success();
    let line = refuses(
        &["-b", "inf", "--", "true"],
        &["--base (inf) must be finite"],
    );
    assert!(!line.contains("too large"), "{line}");
}

#[test]
fn a_negative_http_status_is_not_an_empty_item() {
    for (value, item) in [("-1", "-1"), ("404,-1", "-1"), ("500-", "500-")] {
        let line = refuses(
            &["--http-retry-on", value, "--", "true"],
            &[
                "--http-retry-on",
                &format!("'{item}' is not an HTTP status (100-599), nor a range"),
            ],
        );
        assert!(!line.contains("empty item"), "{line}");
    }
}

#[test]
fn a_loop_shape_with_simulate_is_refused() {
    for (args, flag) in [
        (&["--forever"][..], "--forever"),
        (&["--successes", "3"], "--successes (3)"),
        (&["--until-fail"], "--until-fail"),
    ] {
        refused(
            retry().args(["--simulate", "10", "-n", "2"]).args(args),
            &[
                &format!("{flag} cannot be given with --simulate (10)"),
                "first success",
            ],
        );
    }
    refused(
        retry().args([
            "--simulate",
            "10",
            "--model",
            "failure-rate",
            "--failure-rate",
            "0.5",
            "--forever",
        ]),
        &["--forever cannot be given with --simulate (10)"],
    );
    // RETRY_FOREVER exported for a service's runs plays no part in a simulation.
    retry()
        .env("RETRY_FOREVER", "1")
        .args(["--simulate", "10", "-n", "2", "--runs", "1"])
        .assert()
        .success();
}
