//! `retry --simulate REQUESTS --model failure-rate`: the four policies' table through the binary,
//! the `retries` row against its closed form, the budget at failure rate 1, `--plot`'s sweep,
//! and every refusal (125, one line naming the flag and the value).

use crate::helpers::retry;

/// One row: a policy at a failure rate.
#[derive(Clone, Debug, PartialEq)]
struct Row {
    policy: String,
    failure_rate: f64,
    success_pct: f64,
    load: f64,
    retries_per_request: f64,
    spent_pct: f64,
    refused_pct: f64,
}

/// The words of `line`: the arguments of a test.
fn w(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// Runs `args`, expects success and nothing on stderr; the heading line and the rows.
fn simulate(args: &[&str]) -> (String, Vec<Row>) {
    let out = retry()
        .args(args)
        .assert()
        .success()
        .stderr("")
        .get_output()
        .clone();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let heading = lines.next().expect("a heading line").to_string();
    assert!(heading.starts_with("# failure-rate "), "{text}");
    let rows = lines
        .filter(|l| !l.is_empty() && !l.starts_with("policy "))
        .map(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(cells.len(), 7, "{l:?} in\n{text}");
            let num = |i: usize| cells[i].parse::<f64>().unwrap();
            Row {
                policy: cells[0].to_string(),
                failure_rate: num(1),
                success_pct: num(2),
                load: num(3),
                retries_per_request: num(4),
                spent_pct: num(5),
                refused_pct: num(6),
            }
        })
        .collect();
    (heading, rows)
}

fn row<'a>(rows: &'a [Row], policy: &str) -> &'a Row {
    rows.iter()
        .find(|r| r.policy == policy)
        .unwrap_or_else(|| panic!("no {policy} row in {rows:?}"))
}

#[test]
fn a_row_per_policy_and_retries_match_the_closed_form() {
    for n in [5u32, 2] {
        for x in [0.1, 0.5, 0.9] {
            let args =
                format!("--simulate 10000 --model failure-rate --failure-rate {x} -n {n} --seed 3");
            let (heading, rows) = simulate(&w(&args));
            assert!(heading.contains(&format!("at most {n}")), "{heading}");
            let policies: Vec<&str> = rows.iter().map(|r| r.policy.as_str()).collect();
            assert_eq!(policies, ["no-retry", "retries", "budget", "breaker"]);
            assert!(rows.iter().all(|r| r.failure_rate == x), "{rows:?}");
            // Closed form: load sum of x^k for k = 0..=n, success 1 - x^(n+1).
            let load: f64 = (0..=n).map(|k| x.powi(k as i32)).sum();
            let success = 100.0 * (1.0 - x.powi(n as i32 + 1));
            let r = row(&rows, "retries");
            assert!(
                (r.load - load).abs() <= 0.03 * load,
                "n {n} x {x}: {r:?}, closed form {load}"
            );
            assert!(
                (r.success_pct - success).abs() <= 3.0,
                "n {n} x {x}: {r:?}, closed form {success}"
            );
            assert!((r.retries_per_request - (load - 1.0)).abs() <= 0.03 * load);
            let none = row(&rows, "no-retry");
            assert_eq!((none.load, none.retries_per_request), (1.0, 0.0));
            assert!(
                (none.success_pct - 100.0 * (1.0 - x)).abs() <= 3.0,
                "{none:?}"
            );
            // Neither the budget nor the breaker costs more than plain retries.
            for p in ["budget", "breaker"] {
                assert!(row(&rows, p).load <= r.load + 0.01, "{rows:?}");
            }
            assert_eq!(row(&rows, "budget").refused_pct, 0.0);
        }
    }
}

#[test]
fn at_failure_rate_1_retries_multiply_the_load_and_the_budget_does_not() {
    let (_, rows) = simulate(&w(
        "--simulate 10000 --model failure-rate --failure-rate 1 -n 5 --seed 1",
    ));
    let retries = row(&rows, "retries");
    assert_eq!((retries.load, retries.success_pct), (6.0, 0.0));
    let budget = row(&rows, "budget");
    assert!(budget.load < 1.01, "{budget:?}");
    assert_eq!(budget.spent_pct, 100.0);
    let breaker = row(&rows, "breaker");
    assert!(
        breaker.load < 0.1 && breaker.refused_pct > 90.0,
        "{breaker:?}"
    );
    // The default retry count is a real run's: 5.
    let (heading, rows) = simulate(&w("--simulate 500 --model failure-rate --failure-rate 1"));
    assert!(heading.contains("retries: at most 5,"), "{heading}");
    assert_eq!(row(&rows, "retries").load, 6.0);
}

#[test]
fn the_same_seed_gives_the_same_table() {
    let args = "--simulate 3000 --model failure-rate --failure-rate 0.3 --seed";
    let one = simulate(&w(&format!("{args} 8")));
    assert_eq!(one, simulate(&w(&format!("{args} 8"))));
    assert_ne!(one.1, simulate(&w(&format!("{args} 9"))).1);
    assert!(one.0.ends_with("seed 8"), "{}", one.0);
}

#[test]
fn plot_sweeps_the_failure_rate_and_writes_an_svg() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("chart.svg");
    let mut args = w("--simulate 2000 --model failure-rate -n 3 --seed 2 --plot");
    args.push(svg.to_str().unwrap());
    let (heading, rows) = simulate(&args);
    assert!(heading.starts_with("# failure-rate 0.00 to 1.00 in 21 steps, 2000 requests"));
    // A table per policy, a row per failure rate.
    assert_eq!(rows.len(), 4 * 21);
    for (i, policy) in ["no-retry", "retries", "budget", "breaker"]
        .iter()
        .enumerate()
    {
        let table = &rows[21 * i..21 * (i + 1)];
        assert!(table.iter().all(|r| r.policy == *policy), "{table:?}");
        let rates: Vec<f64> = table.iter().map(|r| r.failure_rate).collect();
        assert_eq!((rates[0], rates[1], rates[20]), (0.0, 0.05, 1.0));
    }
    assert_eq!(rows[21 + 20].load, 4.0);
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(
        chart.starts_with("<svg"),
        "{}",
        &chart[..80.min(chart.len())]
    );
    assert!(chart.trim_end().ends_with("</svg>"));
    for text in [
        "no-retry",
        "retries",
        "budget",
        "breaker",
        "Load on the service",
        "2000 requests",
    ] {
        assert!(chart.contains(text), "{text} is not in the chart");
    }
}

/// Runs `args`, expects status 125, nothing on stdout and one stderr line `retry: ...` with
/// every string of `needles`.
fn refuses(args: &[&str], needles: &[&str]) {
    let out = retry().args(args).assert().code(125).get_output().clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "not one line: {stderr:?}");
    assert!(stderr.starts_with("retry: "), "{stderr:?}");
    for n in needles {
        assert!(stderr.contains(n), "{stderr:?} lacks {n:?}");
    }
    assert!(out.stdout.is_empty(), "{args:?}");
}

#[test]
fn bad_input_names_the_flag_and_value() {
    let fr = "--simulate 100 --model failure-rate";
    let cases: Vec<(String, &[&str])> = vec![
        (
            format!("{fr} --failure-rate 1.5"),
            &["--failure-rate", "1.5", "0 to 1"],
        ),
        (
            format!("{fr} --failure-rate -0.1"),
            &["--failure-rate", "-0.1"],
        ),
        (
            format!("{fr} --failure-rate half"),
            &["--failure-rate", "half"],
        ),
        (
            format!("{fr} --failure-rate NaN"),
            &["--failure-rate", "NaN"],
        ),
        (
            fr.to_string(),
            &["--model failure-rate needs --failure-rate"],
        ),
        (
            "--simulate 100 --failure-rate 0.5".to_string(),
            &["--failure-rate (0.5) needs --model failure-rate"],
        ),
        (
            "--simulate 100 --model rate-limit --capacity 5 --failure-rate 0.5".to_string(),
            &["--failure-rate (0.5) needs --model failure-rate"],
        ),
        ("--failure-rate 0.5 true".to_string(), &["--simulate"]),
        (
            format!("{fr} --failure-rate 0.5 --capacity 3"),
            &["--capacity (3)"],
        ),
        (format!("{fr} --failure-rate 0.5 --runs 4"), &["--runs (4)"]),
        (
            format!("{fr} --failure-rate 0.5 -j none,full"),
            &["--jitter", "none,full", "one mode"],
        ),
        (
            format!("{fr} --failure-rate 1 -n unlimited"),
            &["--max-retries", "never ends"],
        ),
        (
            format!("{fr} --plot /dev/null -n unlimited"),
            &["--max-retries", "never ends"],
        ),
        (
            format!("{fr} --failure-rate 0.5 --plot /dev/null"),
            &["--failure-rate (0.5) and --plot"],
        ),
        (
            "--simulate 2000000 --model failure-rate --failure-rate 0.5".to_string(),
            &["--simulate", "2000000 requests", "at most 1000000"],
        ),
        (
            "--simulate 100000 --model failure-rate --failure-rate 1 -n 1000".to_string(),
            &["--simulate", "too much work", "at most"],
        ),
        (
            format!("{fr} --failure-rate 0.5 true"),
            &["--simulate runs no command"],
        ),
    ];
    for (args, needles) in &cases {
        refuses(&w(args), needles);
    }
}

#[test]
fn unlimited_retries_run_below_failure_rate_1_or_with_a_deadline() {
    let (_, rows) = simulate(&w(
        "--simulate 2000 --model failure-rate --failure-rate 0.5 -n unlimited --seed 1",
    ));
    // Geometric: 2 calls per request on average, every request succeeding.
    let r = row(&rows, "retries");
    assert!(
        (r.load - 2.0).abs() < 0.1 && r.success_pct == 100.0,
        "{r:?}"
    );
    let (heading, rows) = simulate(&w(
        "--simulate 500 --model failure-rate --failure-rate 1 -n unlimited -d 10s -j no-backoff --seed 1",
    ));
    assert!(heading.contains("deadline 10s, no backoff"), "{heading}");
    assert!(row(&rows, "retries").load > 6.0, "{rows:?}");
}

#[test]
fn a_list_of_modes_from_the_environment_is_refused_saying_so() {
    let out = retry()
        .env("RETRY_JITTER", "full,equal")
        .args(w("--simulate 100 --model failure-rate --failure-rate 0.5"))
        .assert()
        .code(125)
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stderr,
        "retry: --jitter (from RETRY_JITTER): --model failure-rate takes one mode, got full,equal\n"
    );
    // One mode from the environment is used.
    let out = retry()
        .env("RETRY_JITTER", "equal")
        .args(w(
            "--simulate 100 --model failure-rate --failure-rate 0.5 --seed 1",
        ))
        .assert()
        .success()
        .get_output()
        .clone();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines().next().unwrap().contains("equal jitter"),
        "{text}"
    );
}
