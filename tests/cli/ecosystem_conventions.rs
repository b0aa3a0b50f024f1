//! retry's conventions among other tools: help headings with short and long texts, `--version`,
//! no styling off a terminal, with NO_COLOR or in an error (variables and presets are in
//! `ecosystem.rs`).

use std::process::Command;

use predicates::prelude::*;

use crate::helpers::pty::{Attach, read_until_closed, spawn_on_pty};
use crate::helpers::{retry, wait_with_limit};

// ---- conventions ----

#[test]
fn help_groups_flags_under_headings_with_short_and_long_texts() {
    let long = String::from_utf8(
        retry()
            .arg("--help")
            .assert()
            .success()
            .get_output()
            .stdout
            .clone(),
    )
    .unwrap();
    let short = String::from_utf8(
        retry()
            .arg("-h")
            .assert()
            .success()
            .get_output()
            .stdout
            .clone(),
    )
    .unwrap();
    let mut at = 0;
    for heading in ["Backoff:", "Stopping:", "Conditions:", "Output:"] {
        let found = long[at..]
            .find(&format!("\n{heading}\n"))
            .unwrap_or_else(|| panic!("{heading} missing or out of order"));
        at += found + 1;
        // -h is one screen: the flags most people need, under one heading.
        assert!(
            !short.contains(&format!("\n{heading}\n")),
            "-h has {heading}"
        );
    }
    assert!(short.contains("\nOptions:\n") && short.lines().count() <= 40);
    // -h has the one-line help only; --help adds the long text.
    assert!(short.contains("First delay"));
    assert!(!short.contains("humantime syntax"));
    assert!(long.contains("humantime syntax"));
    assert!(long.len() > 2 * short.len());
    // Each preset cites its source; the environment variables are shown.
    for source in [
        "Google Cloud retry guides",
        "AWS SDK standard retry mode",
        "grpc/grpc doc/connection-backoff.md",
        "google-api-core",
    ] {
        assert!(long.contains(source), "--help lacks {source:?}");
    }
    assert!(long.contains("RETRY_MAX_RETRIES") && long.contains("RETRY_PRESET"));
    // --generate is listed: `retry --generate man | man -l -` reads this retry's manual.
    assert!(long.contains("--generate <WHAT>"));
}

#[test]
fn version_prints_name_and_version() {
    retry()
        .arg("--version")
        .assert()
        .success()
        .stdout(format!("retry {}\n", env!("CARGO_PKG_VERSION")));
    retry()
        .arg("-V")
        .assert()
        .success()
        .stdout(predicate::str::starts_with("retry "));
}

/// Runs retry with `args` and `vars` with its stdout on a pty (stderr and stdin not), and
/// returns what it printed.
fn on_a_terminal(vars: &[(&str, &str)], args: &[&str]) -> String {
    let mut cmd = Command::new(crate::helpers::bin());
    crate::helpers::clear_outside_env(&mut cmd);
    crate::helpers::default_signals(&mut cmd);
    cmd.env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .env("TERM", "xterm-256color")
        .envs(vars.iter().copied())
        .args(args);
    let (mut child, mut master) = spawn_on_pty(cmd, Attach::Stdout);
    let out = read_until_closed(&mut master);
    assert!(wait_with_limit(&mut child).success());
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn help_is_styled_only_on_a_terminal_and_never_with_no_color() {
    let styled = on_a_terminal(&[], &["-h"]);
    assert!(styled.contains("Options"), "{styled:?}");
    assert!(
        styled.contains('\x1b'),
        "no styling on a terminal: {styled:?}"
    );
    let plain = on_a_terminal(&[("NO_COLOR", "1")], &["-h"]);
    assert!(plain.contains("Options"), "{plain:?}");
    assert!(
        !plain.contains('\x1b'),
        "styled despite NO_COLOR: {plain:?}"
    );
    // Not a terminal: no escapes, whatever TERM says.
    retry()
        .env("TERM", "xterm-256color")
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("\x1b").not());
}

#[test]
fn errors_are_never_styled() {
    let out = retry()
        .env("TERM", "xterm-256color")
        .env("CLICOLOR_FORCE", "1")
        .args(["--bogus", "true"])
        .assert()
        .code(125)
        .get_output()
        .clone();
    assert!(!String::from_utf8(out.stderr).unwrap().contains('\x1b'));
}
