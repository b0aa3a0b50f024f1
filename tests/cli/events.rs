//! `--log-format json`: one JSON object per line on stderr for each event, with elapsed seconds.

use serde_json::Value;

use crate::helpers::{refuses, retry};

/// Runs retry with `args` in JSON mode; returns its status and the parsed stderr lines (every
/// line must be a JSON object with "event" and "elapsed").
fn events(args: &[&str]) -> (Option<i32>, Vec<Value>) {
    let out = retry()
        .args(["--log-format", "json"])
        .args(args)
        .output()
        .unwrap();
    let events = String::from_utf8(out.stderr)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}"));
            assert!(v["event"].is_string(), "{l}");
            assert!(v["elapsed"].as_f64().is_some_and(|e| e >= 0.0), "{l}");
            v
        })
        .collect();
    (out.status.code(), events)
}

fn names(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect()
}

#[test]
fn a_run_that_succeeds_on_the_second_attempt() {
    let (code, ev) = events(&[
        "-b",
        "10ms",
        "-j",
        "none",
        "--",
        "sh",
        "-c",
        "test $RETRY_ATTEMPT -ge 2",
    ]);
    assert_eq!(code, Some(0));
    assert_eq!(
        names(&ev),
        [
            "start",
            "attempt_start",
            "attempt_end",
            "wait",
            "attempt_start",
            "attempt_end",
            "success"
        ]
    );
    assert_eq!(ev[0]["program"], "sh");
    assert_eq!(ev[2]["status"], 1);
    assert_eq!(ev[2]["outcome"], "exited");
    assert_eq!(ev[3]["delay"], 0.01);
    assert_eq!(ev[5]["status"], 0);
    assert_eq!(ev[6]["attempts"], 2);
    let elapsed: Vec<f64> = ev.iter().map(|e| e["elapsed"].as_f64().unwrap()).collect();
    assert!(elapsed.windows(2).all(|w| w[0] <= w[1]), "{elapsed:?}");
    assert!(elapsed[4] >= 0.01, "the wait shows in the elapsed time");
}

#[test]
fn giving_up_signals_and_timeouts_are_events() {
    let (code, ev) = events(&["-b", "0", "-n", "1", "--", "sh", "-c", "kill -TERM $$"]);
    assert_eq!(code, None, "retry dies of the signal");
    let ends: Vec<&Value> = ev.iter().filter(|e| e["event"] == "attempt_end").collect();
    assert_eq!(ends[0]["outcome"], "signaled");
    assert_eq!(ends[0]["signal"], "SIGTERM");
    assert_eq!(ends[0]["status"], 143);
    let give_up = ev.last().unwrap();
    assert_eq!(give_up["event"], "give_up");
    assert_eq!(give_up["attempts"], 2);
    assert_eq!(give_up["status"], 143);

    let (code, ev) = events(&["-t", "100ms", "-n", "0", "--", "sleep", "10"]);
    assert_eq!(code, Some(124));
    let end = ev.iter().find(|e| e["event"] == "attempt_end").unwrap();
    assert_eq!(end["outcome"], "timed_out");
    assert_eq!(end["killed"], false);
}

#[test]
fn every_jitter_is_named_as_given() {
    // retry names the modes itself (the backoff crate's have no names): each as --jitter
    // takes it, in the start event and in --verbose's start line.
    for mode in [
        "none",
        "full",
        "equal",
        "decorrelated",
        "additive",
        "proportional",
    ] {
        let (code, ev) = events(&["-j", mode, "--", "true"]);
        assert_eq!(code, Some(0));
        assert_eq!(ev[0]["event"], "start");
        assert_eq!(ev[0]["jitter"], mode);
        let out = retry()
            .args(["--verbose", "-j", mode, "--", "true"])
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(&format!("retry: jitter {mode}, ")), "{err}");
    }
}

#[test]
fn arguments_appear_only_with_verbose() {
    let (_, ev) = events(&["-n", "0", "--", "sh", "-c", "exit 1 # token-123"]);
    assert!(!ev.iter().any(|e| e.to_string().contains("token-123")));
    let (_, ev) = events(&["-v", "-n", "0", "--", "sh", "-c", "exit 1 # token-123"]);
    let start = ev.iter().find(|e| e["event"] == "attempt_start").unwrap();
    assert!(start["command"].as_str().unwrap().contains("token-123"));
}

#[test]
fn quiet_silences_events_but_not_errors() {
    let (code, ev) = events(&["-q", "-b", "0", "--", "false"]);
    assert_eq!((code, ev.len()), (Some(1), 0));
    let (code, ev) = events(&["-q", "--", "no-such-program-xyz"]);
    assert_eq!(code, Some(127));
    assert_eq!(names(&ev), ["error"]);
    assert!(
        ev[0]["message"]
            .as_str()
            .unwrap()
            .contains("no-such-program-xyz")
    );
}

#[test]
fn unknown_log_formats_are_refused() {
    refuses(&["--log-format", "xml", "true"], &["--log-format", "'xml'"]);
}
