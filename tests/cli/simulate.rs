//! `retry --simulate`: the AWS blog's contention experiment through the binary. The tables, the
//! published ranking at 100 clients, the `rate-limit` model, give-ups, `--plot`, a closed
//! stdout and every refusal (125, one line naming the flag).
//!
//! Runs are few (the engine's own tests in `crates/simulate/` check the statistics at length),
//! so each test takes well under a second even in a debug build.

use std::process::Stdio;

use crate::helpers::{refuses_env, retry, retry_std, wait_with_limit};

/// One row of a table: a mode at a client count, every number a mean over the runs.
#[derive(Clone, Debug, PartialEq)]
struct Row {
    mode: String,
    clients: u32,
    time_ms: f64,
    calls: f64,
    calls_per_client: f64,
    rejected: f64,
    gave_up: f64,
}

/// The header line (`# ...`) and the rows of every table of `text`.
fn parse(text: &str) -> (String, Vec<Row>) {
    let mut lines = text.lines();
    let header = lines.next().expect("a header line").to_string();
    assert!(header.starts_with("# "), "{text}");
    let rows = lines
        .filter(|l| !l.is_empty() && !l.starts_with("mode "))
        .map(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(cells.len(), 7, "{l:?} in\n{text}");
            let num = |i: usize| cells[i].parse::<f64>().unwrap();
            Row {
                mode: cells[0].to_string(),
                clients: cells[1].parse().unwrap(),
                time_ms: num(2),
                calls: num(3),
                calls_per_client: num(4),
                rejected: num(5),
                gave_up: num(6),
            }
        })
        .collect();
    (header, rows)
}

/// The words of `line`, split at spaces: the arguments of a test.
fn w(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// Runs a simulation with `args`, expects success and nothing on stderr; its stdout.
fn simulate(args: &[&str]) -> String {
    let out = retry()
        .args(args)
        .assert()
        .success()
        .stderr("")
        .get_output()
        .clone();
    String::from_utf8(out.stdout).unwrap()
}

/// The rows of a simulation with `args`.
fn rows(args: &[&str]) -> Vec<Row> {
    parse(&simulate(args)).1
}

/// The row of `mode`.
fn row<'a>(rows: &'a [Row], mode: &str) -> &'a Row {
    rows.iter()
        .find(|r| r.mode == mode)
        .unwrap_or_else(|| panic!("no {mode} in {rows:?}"))
}

#[test]
fn one_point_is_a_table_with_a_row_per_mode_in_order() {
    let text = simulate(&w(
        "--simulate 20 --runs 5 --seed 1 -j none,full,no-backoff",
    ));
    let (header, rows) = parse(&text);
    assert!(header.starts_with("# occ, 20 clients: "), "{header}");
    assert!(header.contains("retries unlimited"), "{header}");
    assert!(header.contains("mean of 5 runs, seed 1"), "{header}");
    let headings = text.lines().nth(1).unwrap();
    for column in [
        "mode",
        "clients",
        "time ms",
        "calls/client",
        "rejected",
        "gave up",
    ] {
        assert!(headings.contains(column), "{headings}");
    }
    let modes: Vec<&str> = rows.iter().map(|r| r.mode.as_str()).collect();
    assert_eq!(modes, ["none", "full", "no-backoff"]);
    for r in &rows {
        assert_eq!(r.clients, 20);
        assert!(r.calls >= 20.0 && r.calls_per_client >= 1.0, "{r:?}");
        assert_eq!(r.gave_up, 0.0, "{r:?}");
        assert!(r.time_ms > 0.0, "{r:?}");
    }
}

#[test]
fn the_same_seed_gives_the_same_numbers_another_seed_others() {
    let args = "--simulate 30 --runs 4 --base 5ms --cap 2s --seed";
    let one = simulate(&w(&format!("{args} 7")));
    assert_eq!(one, simulate(&w(&format!("{args} 7"))));
    let other = simulate(&w(&format!("{args} 8")));
    assert_ne!(parse(&one).1, parse(&other).1);
}

#[test]
fn without_a_jitter_flag_it_compares_the_blogs_five_modes() {
    let rows = rows(&w("--simulate 10 --runs 2 --seed 1"));
    let modes: Vec<&str> = rows.iter().map(|r| r.mode.as_str()).collect();
    assert_eq!(modes, w("none full equal decorrelated no-backoff"));
}

#[test]
fn jitter_lists_come_from_the_environment_too() {
    let out = retry()
        .env("RETRY_JITTER", "equal,no-backoff")
        .args(w("--simulate 10 --runs 2 --seed 1"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let (_, rows) = parse(&String::from_utf8(out).unwrap());
    let modes: Vec<&str> = rows.iter().map(|r| r.mode.as_str()).collect();
    assert_eq!(modes, ["equal", "no-backoff"]);
}

/// The published findings at 100 clients, base 5 ms, cap 2 s (the AWS Architecture Blog post,
/// <https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/>), as
/// docs/simulator.md shows them.
#[test]
fn occ_reproduces_the_published_ranking_at_100_clients() {
    let rows = rows(&w("--simulate 100 --base 5ms --cap 2s \
                        --jitter none,full,equal,decorrelated --runs 50 --seed 1"));
    let (none, full) = (row(&rows, "none"), row(&rows, "full"));
    let (equal, decorr) = (row(&rows, "equal"), row(&rows, "decorrelated"));
    // Plain exponential backoff is the worst on work and on time.
    for other in [full, equal, decorr] {
        assert!(none.calls > other.calls, "{rows:#?}");
        assert!(none.time_ms > other.time_ms, "{rows:#?}");
    }
    // Full jitter needs less than half its calls.
    assert!(full.calls < none.calls / 2.0, "{rows:#?}");
    // Decorrelated does more work than full and equal.
    assert!(decorr.calls > full.calls.max(equal.calls), "{rows:#?}");
    // Equal jitter is the slowest of the jittered modes.
    assert!(
        equal.time_ms > full.time_ms.max(decorr.time_ms),
        "{rows:#?}"
    );
    for r in &rows {
        assert_eq!(r.gave_up, 0.0, "{r:?}");
        assert!((r.rejected - (r.calls - 100.0)).abs() < 0.2, "{r:?}");
    }
}

#[test]
fn rate_limit_lets_every_client_through_when_retries_are_unlimited() {
    let text = simulate(&w(
        "--simulate 60 --model rate-limit --capacity 20 --base 50ms \
                            --cap 5s -j none,full,decorrelated,no-backoff --runs 5 --seed 1",
    ));
    let (header, rows) = parse(&text);
    assert!(
        header.starts_with("# rate-limit (20 req/s), 60 clients"),
        "{header}"
    );
    assert_eq!(rows.len(), 4);
    for r in &rows {
        assert_eq!(r.gave_up, 0.0, "{r:?}");
        assert!(r.calls >= 60.0, "{r:?}");
        // 60 clients against a bucket of 20: 40 are turned away at first.
        assert!(r.rejected >= 40.0, "{r:?}");
        // At 20 requests per second, the last 40 need two seconds.
        assert!(r.time_ms >= 1900.0, "{r:?}");
    }
    // Retrying at once hammers the server.
    let (no_backoff, full) = (row(&rows, "no-backoff"), row(&rows, "full"));
    assert!(no_backoff.calls > 5.0 * full.calls, "{rows:#?}");
}

#[test]
fn max_retries_counts_the_clients_that_give_up() {
    for model in ["--model occ", "--model rate-limit --capacity 10"] {
        let args = format!("--simulate 40 -n 1 --runs 5 --seed 2 {model}");
        let (header, rows) = parse(&simulate(&w(&args)));
        assert!(header.contains("at most 1 retries"), "{header}");
        for r in &rows {
            assert!(r.gave_up > 0.0, "{model} {r:?}");
            // Two calls at most each; those who got through made at least one.
            assert!(r.calls <= 80.0, "{model} {r:?}");
            assert!(r.calls >= 40.0 - r.gave_up, "{model} {r:?}");
        }
    }
}

#[test]
fn a_presets_limit_applies_but_not_the_default_of_5() {
    let (header, rows) = parse(&simulate(&w(
        "--preset aws --simulate 30 --runs 3 --seed 1",
    )));
    assert!(header.contains("cap 20s, at most 2 retries"), "{header}");
    assert_eq!(rows.len(), 1, "the preset's jitter: full only");
    let (header, _) = parse(&simulate(&w("--simulate 30 --runs 1 --seed 1")));
    assert!(header.contains("retries unlimited"), "{header}");
}

#[test]
fn a_single_client_never_fails() {
    for model in ["--model occ", "--model rate-limit --capacity 1"] {
        let args = format!("--simulate 1 --runs 5 -j none,full,no-backoff {model}");
        for r in rows(&w(&args)) {
            assert_eq!((r.calls, r.rejected, r.gave_up), (1.0, 0.0, 0.0), "{r:?}");
        }
    }
}

#[test]
fn plot_writes_an_svg_chart_and_a_table_per_mode() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("chart.svg");
    let mut args = w("--simulate 30 --runs 3 --seed 1 --base 5ms --cap 2s \
                      -j full,decorrelated,no-backoff --plot");
    args.push(svg.to_str().unwrap());
    let text = simulate(&args);
    let chart = std::fs::read_to_string(&svg).unwrap();
    let start = &chart[..80.min(chart.len())];
    assert!(
        start.starts_with("<svg") || start.starts_with("<?xml"),
        "{start}"
    );
    assert!(chart.trim_end().ends_with("</svg>"));
    for mode in ["full", "decorrelated", "no-backoff"] {
        assert!(chart.contains(mode), "{mode} is not in the chart");
    }
    assert!(chart.contains("occ, 10 to 30 clients"));
    let (header, rows) = parse(&text);
    assert!(header.starts_with("# occ, 10 to 30 clients"), "{header}");
    // A table per mode, a row per client count.
    assert_eq!(text.split("\n\n").count(), 3, "{text}");
    let counts: Vec<String> = rows
        .iter()
        .map(|r| format!("{} {}", r.mode, r.clients))
        .collect();
    assert_eq!(counts[..3], ["full 10", "full 20", "full 30"]);
    assert_eq!(
        counts[6..],
        ["no-backoff 10", "no-backoff 20", "no-backoff 30"]
    );
}

#[test]
fn a_closed_stdout_ends_the_output_quietly() {
    let mut child = retry_std()
        .args(w("--simulate 60 --runs 3 --plot /dev/null"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before the tables are written.
    drop(child.stdout.take());
    let status = wait_with_limit(&mut child);
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert_eq!(stderr, "");
}

#[test]
fn bad_simulation_input_names_the_flag_and_value() {
    let cases: &[(&str, &[&str])] = &[
        ("--simulate 0", &["--simulate", "'0'"]),
        ("--simulate many", &["--simulate", "many"]),
        ("--simulate -4", &["--simulate", "-4"]),
        ("--simulate 5 --runs 0", &["--runs", "'0'"]),
        ("--simulate 5 --runs -1", &["--runs", "-1"]),
        (
            "--simulate 5 --model rate-limit --capacity 0",
            &["--capacity", "'0'"],
        ),
        (
            "--simulate 5 --model rate-limit --capacity -3",
            &["--capacity", "-3"],
        ),
        (
            "--simulate 5 --model rate-limit --capacity inf",
            &["--capacity", "inf"],
        ),
        ("--simulate 5 --model rate-limit", &["--capacity"]),
        ("--simulate 5 --capacity 3", &["--capacity", "rate-limit"]),
        ("--simulate 5 --model mesh", &["--model", "mesh"]),
        ("--simulate 5 -j full,fulll", &["--jitter", "fulll"]),
        ("--simulate 5 -j full,none,full", &["--jitter", "twice"]),
        ("--simulate 5 -j full,", &["--jitter", "full,"]),
        ("--simulate 5 true", &["--simulate runs no command", "true"]),
        ("--simulate 5 -- true", &["--simulate runs no command"]),
        ("--simulate 5 --dry-run", &["--simulate", "--dry-run"]),
        ("--simulate 5 -b 2s -c 1s", &["--cap", "--base"]),
        // The simulation's flags need --simulate.
        ("--runs 5 true", &["--simulate"]),
        ("--model occ true", &["--simulate"]),
        ("--capacity 5 true", &["--simulate"]),
        ("--plot x.svg true", &["--simulate"]),
    ];
    for (args, needles) in cases {
        refuses_env(&[], &w(args), needles);
    }
    refuses_env(&[], &["--simulate", "5", "-j", ""], &["--jitter"]);
    let vars = [("RETRY_JITTER", "none,bogus")];
    refuses_env(
        &vars,
        &w("--simulate 5"),
        &["RETRY_JITTER", "--jitter", "bogus"],
    );
}

#[test]
fn an_unwritable_plot_is_refused_before_the_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("no/such/dir/chart.svg");
    let bad = bad.to_str().unwrap();
    let mut args = w("--simulate 500 --runs 1000000 --plot");
    args.push(bad);
    // This sweep would take hours: the refusal must come first.
    let start = std::time::Instant::now();
    refuses_env(&[], &args, &["--plot", bad]);
    assert!(start.elapsed().as_secs() < 10);
}

/// Requests too big to finish in reasonable time or memory are refused at once, naming the
/// flag and the limit; the same number of clients is fine with modes that back off.
#[test]
fn too_many_clients_or_too_small_a_capacity_is_refused_at_once() {
    let start = std::time::Instant::now();
    refuses_env(
        &[],
        &w("--simulate 2000000 -n 0"),
        &["--simulate", "at most 1000000"],
    );
    refuses_env(
        &[],
        &w("--simulate 100000"),
        &["--simulate", "100000 clients", "too much work", "at most"],
    );
    refuses_env(
        &[],
        &w("--simulate 500 --model rate-limit --capacity 0.001"),
        &["--capacity", "0.001", "at least 0.", "requests per second"],
    );
    // A sweep costs more than its last point: refused before the chart's file is created.
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("chart.svg");
    let mut args = w("--simulate 1000 --plot");
    args.push(svg.to_str().unwrap());
    refuses_env(&[], &args, &["--simulate", "too much work"]);
    assert!(!svg.exists());
    assert!(start.elapsed().as_secs() < 30, "{:?}", start.elapsed());
    // Twenty thousand clients with full jitter are little work.
    let rows = rows(&w("--simulate 20000 -j full --runs 1 --seed 1"));
    assert_eq!(
        (rows.len(), rows[0].clients, rows[0].gave_up),
        (1, 20000, 0.0)
    );
}

#[test]
fn runs_take_one_jitter_mode_and_never_no_backoff() {
    refuses_env(
        &[],
        &w("-j none,full true"),
        &["--jitter", "none,full", "--simulate"],
    );
    refuses_env(&[], &w("-j no-backoff true"), &["--jitter", "no-backoff"]);
    refuses_env(
        &[],
        &w("--dry-run -j full,equal"),
        &["--jitter", "full,equal"],
    );
    let vars = [("RETRY_JITTER", "full,equal")];
    refuses_env(
        &vars,
        &w("--dry-run"),
        &["--jitter", "full,equal", "RETRY_JITTER"],
    );
    // A --preset on the command line outranks RETRY_JITTER: its list plays no part.
    retry()
        .env("RETRY_JITTER", "full,equal")
        .args(w("--preset aws --dry-run -n 1"))
        .assert()
        .success();
    // One mode still works, from the flag or the environment.
    retry().args(w("-j none --dry-run -n 1")).assert().success();
    retry()
        .env("RETRY_JITTER", "equal")
        .args(w("--dry-run -n 1"))
        .assert()
        .success();
}

#[test]
fn with_log_format_json_a_refused_simulation_is_a_json_error_event() {
    let out = retry()
        .args(["--log-format", "json", "--simulate", "100000000"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let event: serde_json::Value = serde_json::from_str(stderr.trim()).unwrap();
    assert_eq!(event["event"], "error");
    assert!(
        event["message"].as_str().unwrap().contains("--simulate"),
        "{stderr}"
    );
}
