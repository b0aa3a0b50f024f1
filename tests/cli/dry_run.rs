//! `--dry-run`: the planned schedule, run nothing.

use crate::helpers::{dry_run_cells, human_secs, retry};

/// Parses the table: (retry number, delay seconds, cumulative seconds) per row, each duration
/// in the closing line's form (`1m 4s`, `250ms`); no other line but the header and the ones
/// after the rows (`stop`, the rows not shown).
fn rows(stdout: &str) -> Vec<(u64, f64, f64)> {
    let rows = dry_run_cells(stdout);
    let after = stdout.lines().skip(1 + rows.len());
    for line in after {
        assert!(
            line.starts_with("stop   ") || line.starts_with("...    "),
            "{line:?} in:\n{stdout}"
        );
    }
    rows.iter()
        .map(|(n, delay, total)| (n.parse().unwrap(), human_secs(delay), human_secs(total)))
        .collect()
}

fn dry_run(args: &[&str]) -> String {
    let out = retry().arg("--dry-run").args(args).assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

#[test]
fn no_jitter_schedule_is_exact() {
    let r = rows(&dry_run(&["-j", "none", "-b", "1", "-c", "10", "-n", "6"]));
    let delays: Vec<f64> = r.iter().map(|x| x.1).collect();
    assert_eq!(delays, vec![1.0, 2.0, 4.0, 8.0, 10.0, 10.0]);
    let totals: Vec<f64> = r.iter().map(|x| x.2).collect();
    assert_eq!(totals, vec![1.0, 3.0, 7.0, 15.0, 25.0, 35.0]);
    let numbers: Vec<u64> = r.iter().map(|x| x.0).collect();
    assert_eq!(numbers, vec![1, 2, 3, 4, 5, 6]);
}

#[test]
fn default_is_five_retries_of_full_jitter_under_the_cap() {
    let r = rows(&dry_run(&[]));
    assert_eq!(r.len(), 5);
    for (n, delay, _) in &r {
        let v = f64::min(64.0, 2f64.powi(*n as i32 - 1));
        assert!(*delay <= v + 0.0005, "retry {n}: {delay} > {v}");
    }
}

#[test]
fn same_seed_same_schedule_and_seeds_differ() {
    let a = dry_run(&["--seed", "42", "-n", "10"]);
    assert_eq!(a, dry_run(&["--seed", "42", "-n", "10"]));
    assert_ne!(a, dry_run(&["--seed", "43", "-n", "10"]));
}

#[test]
fn unlimited_shows_twenty_rows() {
    assert_eq!(rows(&dry_run(&["-n", "unlimited", "-b", "1ms"])).len(), 20);
    assert_eq!(rows(&dry_run(&["-n", "0"])).len(), 0);
}

#[test]
fn rows_reaching_the_deadline_are_not_shown() {
    // none: cumulative 1, 3, 7, 15, 31: a deadline of 15s keeps 1, 3 and 7 only.
    let r = rows(&dry_run(&["-j", "none", "-n", "unlimited", "-d", "15s"]));
    let totals: Vec<f64> = r.iter().map(|x| x.2).collect();
    assert_eq!(totals, vec![1.0, 3.0, 7.0]);
}

#[test]
fn runs_nothing_even_with_a_command() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    retry()
        .args(["--dry-run", "--", "touch"])
        .arg(&marker)
        .assert()
        .success();
    assert!(!marker.exists());
}

#[test]
fn every_mode_stays_under_the_cap() {
    for mode in ["none", "full", "equal", "decorrelated", "additive"] {
        let r = rows(&dry_run(&[
            "-j", mode, "-b", "1", "-c", "5", "-n", "30", "-m", "3",
        ]));
        assert_eq!(r.len(), 30);
        assert!(r.iter().all(|x| x.1 <= 5.0), "{mode}: {r:?}");
    }
}

#[test]
fn a_huge_retry_count_shows_a_thousand_rows_and_says_how_many_more() {
    let text = dry_run(&["-n", "18446744073709551615", "-b", "1s", "-j", "none"]);
    assert_eq!(rows(&text).len(), 1000);
    assert_eq!(
        text.lines().last().unwrap(),
        "...    18446744073709550615 more rows not shown (-n 18446744073709551615)"
    );
    // Up to the limit, every row and no such line.
    let text = dry_run(&["-n", "1000", "-b", "1s", "-j", "none"]);
    assert_eq!(rows(&text).len(), 1000);
    assert!(!text.contains("..."), "{text}");
    // With a deadline, the rows it lets through.
    let text = dry_run(&[
        "-n", "1500", "-b", "1s", "-c", "1s", "-j", "none", "-d", "1200s",
    ]);
    assert_eq!(
        text.lines().last().unwrap(),
        "...    199 more rows not shown, before --deadline 20m"
    );
}

#[test]
fn the_schedule_is_shown_exactly_to_the_millisecond() {
    // 1, 1.5, 2.25, 3.375 s: rounded to a tenth they read 2.3s, 3.4s and sums 4.8s, 8.1s.
    assert_eq!(
        dry_run(&["-b", "1s", "-m", "1.5", "-j", "none", "-n", "4"]),
        "retry         delay     cumulative\n\
         1                1s             1s\n\
         2              1.5s           2.5s\n\
         3             2.25s          4.75s\n\
         4            3.375s         8.125s\n"
    );
    // Past a minute, every part down to the millisecond; below one, microseconds, then
    // nanoseconds: no delay reads as 0s.
    let cells = dry_run_cells(&dry_run(&[
        "-b", "61.0625", "-c", "1d", "-m", "1441", "-j", "none", "-n", "2",
    ]));
    assert_eq!(cells[0].1, "1m 1.063s", "{cells:?}");
    assert_eq!(cells[1].1, "1d", "{cells:?}");
    assert_eq!(cells[1].2, "1d 1m 1.063s", "{cells:?}");
    for (base, shown) in [("0.0005", "500us"), ("1e-9", "1ns"), ("1.0625", "1.063s")] {
        let cells = dry_run_cells(&dry_run(&["-b", base, "-j", "none", "-n", "1"]));
        assert_eq!(cells[0].1, shown, "-b {base}");
    }
    // The limits after the table are exact too.
    let text = dry_run(&[
        "-b",
        "1s",
        "-j",
        "none",
        "-n",
        "unlimited",
        "-c",
        "1s",
        "-d",
        "2.25s",
        "-t",
        "1.125s",
    ]);
    assert!(
        text.contains("at --timeout 1.125s or --deadline 2.25s"),
        "{text}"
    );
}

/// The JSON objects `--dry-run --log-format json ARGS` prints on stdout, one a line.
fn dry_run_json(args: &[&str]) -> Vec<serde_json::Value> {
    let out = retry()
        .args(["--dry-run", "--log-format", "json"])
        .args(args)
        .assert()
        .success();
    let out = out.get_output();
    assert!(out.stderr.is_empty(), "{:?}", out.stderr);
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .collect()
}

#[test]
fn with_log_format_json_the_rows_are_json_objects_with_exact_seconds() {
    let events = dry_run_json(&[
        "-b", "1s", "-m", "1.5", "-j", "none", "-n", "4", "-t", "2.5s",
    ]);
    let retries: Vec<_> = events
        .iter()
        .filter(|e| e["event"] == "dry_run_retry")
        .map(|e| {
            (
                e["retry"].as_u64().unwrap(),
                e["delay"].as_f64().unwrap(),
                e["cumulative"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        retries,
        [
            (1, 1.0, 1.0),
            (2, 1.5, 2.5),
            (3, 2.25, 4.75),
            (4, 3.375, 8.125)
        ]
    );
    let note = events.last().unwrap();
    assert_eq!(note["event"], "dry_run_note");
    assert_eq!(note["about"], "stop");
    assert!(
        note["message"]
            .as_str()
            .unwrap()
            .starts_with("at --timeout 2.5s: SIGTERM"),
        "{note}"
    );
    assert_eq!(events.len(), 5, "{events:?}");

    // The splay row, the rows not shown and the loop's lines, as the text has them.
    let events = dry_run_json(&[
        "--splay",
        "1ms",
        "--seed",
        "7",
        "-b",
        "1e-9",
        "-n",
        "unlimited",
        "--forever",
        "--lock",
        "/tmp/x.lock",
    ]);
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(names[0], "dry_run_splay");
    assert_eq!(names[1..21], ["dry_run_retry"; 20]);
    assert_eq!(
        names[21..],
        ["dry_run_more", "dry_run_note", "dry_run_note"]
    );
    let splay = events[0]["delay"].as_f64().unwrap();
    assert!(splay > 0.0 && splay < 0.001, "{}", events[0]);
    assert_eq!(events[0]["cumulative"], events[0]["delay"]);
    assert_eq!(events[21]["rows"], serde_json::Value::Null);
    assert_eq!(events[22]["about"], "forever");
    assert_eq!(events[23]["about"], "lock");
    assert!(events.iter().all(|e| e["elapsed"].is_f64()), "{events:?}");
    // Nanoseconds are kept: a JSON number is exact to the nanosecond here.
    let first = dry_run_json(&["-b", "1e-9", "-j", "none", "-n", "1"]);
    assert_eq!(first[0]["delay"].as_f64(), Some(1e-9));
    let counted = dry_run_json(&[
        "-b", "1s", "-c", "1s", "-j", "none", "-n", "1500", "-d", "1200s",
    ]);
    let more = counted.last().unwrap();
    assert_eq!(more["event"], "dry_run_more");
    assert_eq!(more["rows"], 199);
    assert_eq!(more["over"], false);
    assert_eq!(
        more["message"],
        "199 more rows not shown, before --deadline 20m"
    );
}
