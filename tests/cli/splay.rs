//! `--splay` and the budget's shared cooldown through the binary: waits before an attempt that
//! `--dry-run` shows (the splay), that count against `--deadline`, that a stop signal ends, and
//! that a server's hint seen by one run imposes on every run with the KEY.

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;

use serde_json::Value;

use crate::budget::events;
use crate::helpers::{retry, retry_std, send, wait_with_limit};

/// `retry --dry-run ARGS`'s stdout.
fn dry_run(args: &[&str]) -> String {
    let out = retry().arg("--dry-run").args(args).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Seconds in a cell (`3.4s`, `1m 4s`).
fn secs(cell: &str) -> f64 {
    crate::helpers::human_secs(cell)
}

/// The splay row of a `--dry-run` table: (delay, cumulative).
fn splay_row(table: &str) -> (f64, f64) {
    let rows = crate::helpers::dry_run_cells(table);
    let (first, delay, total) = rows.first().expect("a splay row");
    assert_eq!(first, "splay", "{table}");
    (secs(delay), secs(total))
}

#[test]
fn dry_run_shows_the_splay_drawn_from_the_seed() {
    let table = dry_run(&["--splay", "10s", "--seed", "5", "-j", "none", "-n", "2"]);
    let (splay, cumulative) = splay_row(&table);
    assert!((0.0..=10.0).contains(&splay), "{table}");
    assert_eq!(splay, cumulative);
    // The retries' cumulative delays start from it.
    let rows = crate::helpers::dry_run_cells(&table);
    assert_eq!(rows.len(), 3, "{table}");
    assert!((secs(&rows[1].2) - (splay + 1.0)).abs() < 0.0015, "{table}");
    assert!((secs(&rows[2].2) - (splay + 3.0)).abs() < 0.0015, "{table}");
    // Seeded: the same seed draws the same splay, others others.
    assert_eq!(
        table,
        dry_run(&["--splay", "10s", "--seed", "5", "-j", "none", "-n", "2"])
    );
    let others: Vec<f64> = (6..10)
        .map(|seed| splay_row(&dry_run(&["--splay", "10s", "--seed", &seed.to_string()])).0)
        .collect();
    assert!(others.iter().any(|s| *s != splay), "{others:?}");
    // Without --splay, no row and the same table as ever.
    assert!(!dry_run(&["--seed", "5"]).contains("splay"));
    assert!(!dry_run(&["--seed", "5", "--splay", "0"]).contains("splay"));
}

#[test]
fn the_splay_counts_against_the_deadline() {
    // Shorter than the deadline, or refused.
    for (args, env, says) in [
        (
            &["--splay", "5s", "-d", "5s"][..],
            None,
            "--splay (5s) must be shorter",
        ),
        (
            &["-d", "1m"][..],
            Some("2m"),
            "--splay (2m from RETRY_SPLAY)",
        ),
        (
            &["--preset", "api-core", "--splay", "3m"][..],
            None,
            "the deadline (2m)",
        ),
    ] {
        let mut cmd = retry();
        if let Some(v) = env {
            cmd.env("RETRY_SPLAY", v);
        }
        let out = cmd.args(args).args(["--", "true"]).output().unwrap();
        assert_eq!(out.status.code(), Some(125), "{args:?}");
        let text = String::from_utf8_lossy(&out.stderr);
        assert!(text.starts_with("retry: ") && text.contains(says), "{text}");
    }
    // --dry-run leaves out the retries that the splay pushes to the deadline.
    let table = dry_run(&[
        "--splay", "10s", "-d", "12s", "-j", "none", "-n", "9", "--seed", "1",
    ]);
    let (splay, _) = splay_row(&table);
    let expected = [1.0, 3.0, 7.0, 15.0]
        .iter()
        .filter(|sum| splay + *sum < 12.0)
        .count();
    assert_eq!(table.lines().count(), 2 + expected, "{table}");

    // A run: the attempt starts after the splay and is stopped at the deadline counted from
    // retry's start. Find a seed whose splay of up to 2s is at least 1.5s.
    let seed = (0..1000)
        .find(|s| {
            splay_row(&dry_run(&[
                "--splay",
                "2s",
                "--seed",
                &s.to_string(),
                "-n",
                "0",
            ]))
            .0 >= 1.5
        })
        .expect("a seed with a long splay")
        .to_string();
    // With the splay counted, `sleep 2` starting at 1.5s or later is stopped at 2.5s (124);
    // were it not, it would end at 3.5s at most, before a deadline of 1.5 + 2.5 s.
    let out = retry()
        .args(["--splay", "2s", "--seed", &seed, "-d", "2.5s", "-n", "0"])
        .args(["--log-format", "json", "--", "sleep", "2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(124), "{out:?}");
    let ev = events(&out.stderr);
    let splay = ev.iter().find(|e| e["event"] == "splay").unwrap();
    assert!(splay["delay"].as_f64().unwrap() >= 1.5, "{splay}");
    let end = ev.iter().find(|e| e["event"] == "attempt_end").unwrap();
    assert_eq!(end["outcome"], "deadline", "{end}");
}

#[test]
fn a_run_waits_the_splay_the_dry_run_shows() {
    let table = dry_run(&["--splay", "500ms", "--seed", "11"]);
    let (shown, _) = splay_row(&table);
    let out = retry()
        .args([
            "--splay",
            "500ms",
            "--seed",
            "11",
            "--log-format",
            "json",
            "-v",
        ])
        .args(["--", "true"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let ev = events(&out.stderr);
    let names: Vec<&str> = ev.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["start", "splay", "attempt_start", "attempt_end", "success"]
    );
    let splay = ev[1]["delay"].as_f64().unwrap();
    assert!((splay - shown).abs() < 0.0006, "{splay} vs {shown}");
    // The attempt starts no sooner (elapsed is rounded to the millisecond).
    assert!(
        ev[2]["elapsed"].as_f64().unwrap() + 0.001 >= splay,
        "{ev:?}"
    );
    // In text, with -v.
    let out = retry()
        .args(["--splay", "1ms", "-v", "--", "true"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    let line = text
        .lines()
        .find(|l| l.starts_with("retry: splay: waiting "))
        .unwrap_or_else(|| panic!("{text}"));
    let shown = line
        .strip_prefix("retry: splay: waiting ")
        .and_then(|l| l.strip_suffix(" before the first attempt"))
        .unwrap_or_else(|| panic!("{line}"));
    assert!(crate::helpers::human_secs(shown) < 0.001, "{line}");
}

#[test]
fn a_stop_signal_during_the_splay_ends_retry_by_it() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    let mut child = retry_std()
        .args(["--splay", "1h", "--log-format", "json", "--", "touch"])
        .arg(&marker)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    // Synchronise on the splay event: retry is then waiting.
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let event: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let is_splay = event["event"] == "splay";
        seen.push(event);
        if is_splay {
            break;
        }
    }
    assert!(seen.iter().any(|e| e["event"] == "splay"), "{seen:?}");
    send(child.id(), libc::SIGTERM);
    let status = wait_with_limit(&mut child);
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    let rest: Vec<Value> = lines
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["event"], "interrupted");
    assert!(!marker.exists(), "the command ran");
}

#[test]
fn a_servers_hint_seen_by_one_run_makes_every_run_with_the_key_wait() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let budget = |extra: &[&str]| {
        let mut a = vec!["--budget".to_string(), "H".into(), "--budget-store".into()];
        a.push(store.display().to_string());
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    // A run sees "retry after 4 seconds" and gives up: the hint stays, shared.
    let out = retry()
        .args(budget(&["-n", "0", "--delay-from-output", r"after: (\d+)"]))
        .args(["--", "sh", "-c", "echo after: 4; exit 1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    // A run whose deadline comes first does not run the command: 75 at once.
    let marker = dir.path().join("marker");
    let out = retry()
        .args(budget(&["-d", "1s", "--log-format", "json", "--"]))
        .arg("touch")
        .arg(&marker)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(75), "{out:?}");
    assert!(!marker.exists());
    let ev = events(&out.stderr);
    let refused = ev.iter().find(|e| e["event"] == "refused").unwrap();
    let reason = refused["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("the shared cooldown of budget H lasts until ")
            && reason.ends_with(", past the deadline"),
        "{reason}"
    );
    assert_eq!(refused["status"], 75);
    // Another run waits for it before its first attempt, then runs.
    let out = retry()
        .args(budget(&["--log-format", "json", "--"]))
        .arg("touch")
        .arg(&marker)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(marker.exists());
    let ev = events(&out.stderr);
    let cooldown = ev.iter().find(|e| e["event"] == "cooldown").unwrap();
    assert_eq!(cooldown["attempt"], 1);
    let waited = cooldown["delay"].as_f64().unwrap();
    assert!(waited > 0.5 && waited <= 4.0, "{cooldown}");
    let start = ev.iter().find(|e| e["event"] == "attempt_start").unwrap();
    assert!(
        start["elapsed"].as_f64().unwrap() + 0.001 >= waited,
        "{ev:?}"
    );
    // The cooldown has passed: the next run goes at once.
    let out = retry()
        .args(budget(&["--log-format", "json", "--", "true"]))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!events(&out.stderr).iter().any(|e| e["event"] == "cooldown"));
}

#[test]
fn max_hint_bounds_the_shared_cooldown_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let run = |extra: &[&str], cmd: &str| {
        retry()
            .args(["-n", "0", "--budget", "M", "--budget-store"])
            .arg(&store)
            .args(["--delay-from-output", r"after: (\d+)"])
            .args(extra)
            .args(["--", "sh", "-c", cmd])
            .output()
            .unwrap()
    };
    // A hint longer than the --max-hint of the run that saw it is not shared.
    let out = run(&["--max-hint", "50s"], "echo after: 100; exit 1");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let out = run(&["--log-format", "json"], "exit 0");
    assert!(out.status.success(), "{out:?}");
    assert!(!events(&out.stderr).iter().any(|e| e["event"] == "cooldown"));
    // Shared, it stops a run whose --max-hint is shorter at once.
    let out = run(&[], "echo after: 100; exit 1");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let marker = dir.path().join("marker");
    let out = run(
        &["--max-hint", "10s"],
        &format!("touch '{}'", marker.display()),
    );
    assert_eq!(out.status.code(), Some(75), "{out:?}");
    assert!(!marker.exists());
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.starts_with("retry: the shared cooldown of budget M lasts until ")
            && text.contains(", longer than --max-hint (10s): not running sh (status 75)"),
        "{text}"
    );
}
