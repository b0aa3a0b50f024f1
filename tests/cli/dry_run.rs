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
