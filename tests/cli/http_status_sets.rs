//! `--http-retry-on`'s sets and where the statuses show, through the binary users run against
//! the local server and curl (`http_status.rs`'s): `any`, the `5xx` class,
//! `RETRY_HTTP_RETRY_ON` and the flag over it, the values refused (125, one line); the JSON
//! events' `http_status` and the GitHub step summary's status cell.

use crate::helpers::http::{HttpServer, Reply};
use crate::helpers::{refused, release};
use crate::http_status::{curl, paths, run, run_with, server, succeeded_second_time};
use crate::tools::{self, require};

#[test]
fn any_retries_a_404_until_the_retries_run_out() {
    if !require(&[tools::CURL]) {
        return;
    }
    let (server, _) = server();
    let url = format!("{}/gone", server.url());
    let r = run(&["-n", "2", "--http-retry-on", "any"], &curl(&[], &url));
    assert_eq!(r.code, Some(22), "{}", r.stderr);
    assert_eq!(paths(&server), ["/gone", "/gone", "/gone"]);
    assert_eq!(
        r.lines()[1..],
        [
            "attempt 2 of 3: curl exited with status 22 (HTTP 404); retrying in 0s",
            "attempt 3 of 3: curl exited with status 22 (HTTP 404)",
            "gave up after 3 attempts in T: no retries left (last response: HTTP 404)",
        ],
        "{}",
        r.stderr
    );
}

#[test]
fn the_5xx_class_leaves_a_429_unretried_and_retries_a_503() {
    if !require(&[tools::CURL]) {
        return;
    }
    let (server, _) = server();
    // A set given is kept to, whatever the 429's Retry-After says.
    let limited = format!("{}/limited", server.url());
    let r = run(&["-n", "2", "--http-retry-on", "5xx"], &curl(&[], &limited));
    assert_eq!(r.code, Some(22), "{}", r.stderr);
    assert_eq!(
        r.lines()[1],
        "gave up after 1 attempt in T: HTTP 429 is not retried"
    );
    let flaky = format!("{}/flaky", server.url());
    let r = run(&["-n", "2", "--http-retry-on", "5xx"], &curl(&[], &flaky));
    succeeded_second_time(&r, "curl exited with status 22 (HTTP 503)", 3, "in 0s");
    assert_eq!(paths(&server), ["/limited", "/flaky", "/flaky"]);
}

#[test]
fn a_status_outside_the_set_is_retried_when_the_server_said_when() {
    if !require(&[tools::CURL]) {
        return;
    }
    // With the default set. GitHub's secondary rate limit: a 403 with Retry-After (its
    // primary one, a 403 with X-RateLimit-Remaining: 0 and the reset time, is
    // http_hints.rs's).
    let server = HttpServer::start(|_, n, _| match n {
        0 => Reply::new(403, "slow down\n").header("Retry-After", "1"),
        _ => Reply::new(200, "fine\n"),
    });
    let url = format!("{}/", server.url());
    let r = run(&["-n", "2"], &curl(&[], &url));
    succeeded_second_time(
        &r,
        "curl exited with status 22 (HTTP 403)",
        3,
        " (Retry-After)",
    );
    assert_eq!(r.stdout, "fine\n");
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn the_set_from_the_environment_and_the_flag_over_it() {
    if !require(&[tools::CURL]) {
        return;
    }
    let (server, _) = server();
    let gone = format!("{}/gone", server.url());
    // RETRY_HTTP_RETRY_ON alone: a 404 is now retried.
    let vars = [("RETRY_HTTP_RETRY_ON", "404")];
    let r = run_with(&vars, &["-n", "1"], &curl(&[], &gone));
    assert_eq!(r.code, Some(22), "{}", r.stderr);
    assert_eq!(
        r.lines().last().unwrap(),
        "gave up after 2 attempts in T: no retries left (last response: HTTP 404)"
    );
    // The flag wins over the variable: 503 only.
    let r = run_with(
        &vars,
        &["-n", "1", "--http-retry-on", "503"],
        &curl(&[], &gone),
    );
    assert_eq!(
        r.lines().last().unwrap(),
        "gave up after 1 attempt in T: HTTP 404 is not retried",
        "{}",
        r.stderr
    );
    assert_eq!(paths(&server), ["/gone", "/gone", "/gone"]);
    // A variable exported for a whole job is no mistake of a run without --http-hints.
    let out = release()
        .env("RETRY_HTTP_RETRY_ON", "404")
        .args(["-n", "0", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
}

#[test]
fn json_events_carry_the_status() {
    if !require(&[tools::CURL]) {
        return;
    }
    let (server, _) = server();
    let flaky = format!("{}/flaky", server.url());
    let r = run(&["-n", "2", "--log-format", "json"], &curl(&[], &flaky));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let events = r.events();
    let ends: Vec<_> = events
        .iter()
        .filter(|e| e["event"] == "attempt_end")
        .map(|e| (e["status"].clone(), e["http_status"].clone()))
        .collect();
    assert_eq!(
        ends,
        [(22.into(), 503.into()), (0.into(), 200.into())],
        "{}",
        r.stderr
    );
    let gone = format!("{}/gone", server.url());
    let r = run(&["-n", "2", "--log-format", "json"], &curl(&[], &gone));
    assert_eq!(r.code, Some(22), "{}", r.stderr);
    let give_up = r
        .events()
        .into_iter()
        .find(|e| e["event"] == "give_up")
        .unwrap();
    assert_eq!(give_up["reason"], "HTTP 404 is not retried", "{give_up}");
    assert_eq!(give_up["status"], 22, "{give_up}");
    assert_eq!(give_up["http_status"], 404, "{give_up}");
}

#[test]
fn the_step_summary_s_status_cell_names_the_status() {
    if !require(&[tools::CURL]) {
        return;
    }
    let (server, _) = server();
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    let summary_var = summary.to_str().unwrap();
    let vars = [
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_STEP_SUMMARY", summary_var),
    ];
    let flaky = format!("{}/flaky", server.url());
    let r = run_with(&vars, &["-n", "2"], &curl(&[], &flaky));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let text = std::fs::read_to_string(&summary).unwrap();
    let cells: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| l.starts_with("| 1 |") || l.starts_with("| 2 |"))
        .map(|l| l.split(" | ").take(2).collect())
        .collect();
    assert_eq!(
        cells,
        [
            ["| 1", "exited with status 22, HTTP 503"],
            ["| 2", "exited with status 0, HTTP 200"]
        ],
        "{text}"
    );
    assert!(
        text.trim_end().ends_with(" (HTTP 200)") && text.contains("\nSucceeded on attempt 2 of 3"),
        "{text}"
    );
}

/// `retry [--http-hints] --http-retry-on VALUE -- true`, refused naming `needles`.
fn refuses_value(value: &str, hints: bool, needles: &[&str]) {
    let mut cmd = release();
    if hints {
        cmd.arg("--http-hints");
    }
    let line = refused(cmd.args(["--http-retry-on", value, "--", "true"]), needles);
    assert!(line.contains("--http-retry-on"), "{line}");
}

#[test]
fn bad_sets_and_a_set_without_http_hints_are_refused() {
    refuses_value("600", true, &["'600' is not an HTTP status (100-599)"]);
    refuses_value("abc", true, &["'abc' is neither an HTTP status"]);
    refuses_value(
        "99999999999999999999",
        true,
        &["'99999999999999999999' is not an HTTP status (100-599)"],
    );
    refuses_value("", true, &["empty list of HTTP statuses"]);
    refuses_value("404", false, &["needs --http-hints"]);
    // From the environment, naming the variable.
    refused(
        release()
            .env("RETRY_HTTP_RETRY_ON", "600")
            .args(["--http-hints", "--", "true"]),
        &["RETRY_HTTP_RETRY_ON", "'600'"],
    );
}
