//! `retry --simulate REQUESTS --model failure-rate`: from the parsed flags to a
//! [`FailureRateSpec`], then the table to stdout and the chart to the `--plot` file.
//!
//! The retries are a real run's: `--max-retries` (default 5, as for a run), `--deadline`, and the
//! backoff of the usual flags with one `--jitter` mode (`no-backoff` allowed). So are the token
//! bucket (`--budget-max-tokens`, `--budget-token-ratio`, `--budget-refill`) and the breaker
//! (`--breaker`, `--breaker-cooldown`), with the defaults of [`FailureRateSpec::new`] for what
//! is not given: a real run's, but a threshold of [`BREAKER_THRESHOLD`] runs, since the
//! `breaker` row needs one.

use std::fs::File;
use std::path::PathBuf;

use anyhow::{Result, bail};
use retry_tool_simulate::failure_rate::{
    BREAKER_THRESHOLD, FailureRateSpec, RatePoint, render_failure_rate_svg, simulate_failure_rate,
    sweep_failure_rates, write_failure_rate_table,
};
use retry_tool_simulate::{Mode, SpecError};

use crate::cli::{Cli, Flag, Origins};
use crate::config::{self, Backoff, DEFAULT_MAX_RETRIES};

use super::common::{count_without_command, create_plot, curve, print, write_plot};

/// Runs the simulation `cli` asks for (`--model failure-rate`).
///
/// # Errors
/// A one-line message naming the flag at fault, before anything runs; or a failure to write
/// the chart or the table.
pub(super) fn run(cli: Cli, origins: &Origins) -> Result<()> {
    prepare(cli, origins)?.run()
}

/// A checked request.
#[derive(Debug)]
struct Job {
    spec: FailureRateSpec,
    /// `--plot`: sweep the failure rate and draw the chart to this file, already created.
    plot: Option<(PathBuf, File)>,
}

/// Checks everything, then creates the `--plot` file, before anything runs.
fn prepare(cli: Cli, origins: &Origins) -> Result<Job> {
    let args = cli.simulate.clone();
    let requests = count_without_command(&cli, origins)?;
    if let Some(c) = args.capacity {
        bail!("--capacity ({c}) needs --model rate-limit");
    }
    if let Some(r) = args.runs {
        bail!(
            "--runs ({r}): --model failure-rate simulates one run of REQUESTS requests per point; \
             raise REQUESTS instead"
        );
    }
    let failure_rate = match (args.failure_rate, &args.plot) {
        (Some(x), None) => x,
        // The sweep does not use it.
        (None, Some(_)) => 0.0,
        (Some(x), Some(_)) => bail!(
            "--failure-rate ({x}) and --plot: the chart sweeps the failure rate from 0 to 1; \
             give one or the other"
        ),
        (None, None) => bail!(
            "--model failure-rate needs --failure-rate X (or --plot FILE.svg to sweep it from 0 \
             to 1)"
        ),
    };
    let modes = config::by_precedence(&cli, origins, Flag::Jitter, args.modes.clone(), |s| {
        s.jitter.map(|j| vec![Mode::from(j)])
    });
    let backoff = Backoff::from_cli(&cli, origins)?;
    let defaults = FailureRateSpec::new(requests, failure_rate);
    let throttle = config::throttle(&cli.protect, origins)?;
    let breaker = config::breaker(&cli.protect, origins, Some(BREAKER_THRESHOLD))?
        .unwrap_or(defaults.breaker);
    let mode = match modes.as_deref() {
        None => Mode::from(backoff.policy.jitter()),
        Some(&[one]) => one,
        Some(list) => {
            let names: Vec<&str> = list.iter().map(|m| m.name()).collect();
            let from = if origins.is_env(Flag::Jitter) {
                " (from RETRY_JITTER)"
            } else {
                ""
            };
            bail!(
                "--jitter{from}: --model failure-rate takes one mode, got {}",
                names.join(",")
            );
        }
    };
    let spec = FailureRateSpec {
        policy: backoff.policy,
        mode,
        max_retries: backoff
            .max_retries
            .map_or(Some(DEFAULT_MAX_RETRIES), |limit| limit.0),
        deadline: backoff.deadline,
        seed: backoff.seed.unwrap_or_else(rand::random),
        throttle,
        breaker,
        ..defaults
    };
    let checked = match args.plot {
        Some(_) => spec.validate_sweep(),
        None => spec.validate(),
    };
    checked.map_err(flag_error)?;
    Ok(Job {
        spec,
        plot: create_plot(args.plot)?,
    })
}

/// A refused request's message, after the flag at fault.
fn flag_error(e: SpecError) -> anyhow::Error {
    match e {
        SpecError::EndlessRetries => anyhow::anyhow!("--max-retries: {e}"),
        SpecError::FailureRate(_) => anyhow::anyhow!("--failure-rate: {e}"),
        _ => anyhow::anyhow!("--simulate: {e}"),
    }
}

impl Job {
    /// Simulates (one failure rate, or the sweep for `--plot`), writes the chart, prints the
    /// tables.
    fn run(self) -> Result<()> {
        let spec = &self.spec;
        let points = match self.plot {
            Some(_) => sweep_failure_rates(spec)?,
            None => vec![simulate_failure_rate(spec)?],
        };
        if let Some(plot) = self.plot {
            write_plot(plot, &render_failure_rate_svg(&points, &chart_title(spec))?)?;
        }
        print(&describe(spec, &points), |out| {
            write_failure_rate_table(out, &points)
        })
    }
}

/// One line saying what was simulated, for the table's heading.
fn describe(spec: &FailureRateSpec, points: &[RatePoint]) -> String {
    let rates = match points {
        [first, .., last] => format!("{first} to {last} in {} steps", points.len()),
        _ => spec.failure_rate.to_string(),
    };
    let p = &spec.policy;
    let mut retries = match spec.max_retries {
        Some(n) => format!("at most {n}"),
        None => "unlimited".to_string(),
    };
    if let Some(d) = spec.deadline {
        retries.push_str(&format!(", deadline {d:?}"));
    }
    match spec.mode {
        Mode::NoBackoff => retries.push_str(", no backoff"),
        mode => retries.push_str(&format!(", {mode} jitter, {}", curve(p))),
    }
    let (t, b) = (&spec.throttle, &spec.breaker);
    format!(
        "failure-rate {rates}, {} requests at {}/s; retries: {retries}; budget: {} tokens, {} per \
         success{}; breaker: {} in a row, {:?} cooldown; seed {}",
        spec.requests,
        spec.arrivals_per_sec,
        t.max_tokens(),
        t.token_ratio(),
        refill(t),
        b.threshold(),
        b.cooldown(),
        spec.seed
    )
}

/// The chart's title: [`describe`] without the failure rates (the horizontal axis) and the
/// multiplier, to fit the width.
fn chart_title(spec: &FailureRateSpec) -> String {
    let p = &spec.policy;
    let retries = match spec.max_retries {
        Some(n) => format!("-n {n}"),
        None => "-n unlimited".to_string(),
    };
    let deadline = spec
        .deadline
        .map_or(String::new(), |d| format!(", deadline {d:?}"));
    let backoff = match spec.mode {
        Mode::NoBackoff => "no backoff".to_string(),
        mode => match p.delays() {
            Some(delays) => format!("{mode} jitter, delays {delays:?}"),
            None => format!("{mode} jitter, base {:?}, cap {:?}", p.base(), p.cap()),
        },
    };
    let (t, b) = (&spec.throttle, &spec.breaker);
    format!(
        "{} requests at {}/s, {retries}{deadline}, {backoff}; budget {} tokens, {} per success{}; \
         breaker {} in a row, {:?}; seed {}",
        spec.requests,
        spec.arrivals_per_sec,
        t.max_tokens(),
        t.token_ratio(),
        refill(t),
        b.threshold(),
        b.cooldown(),
        spec.seed
    )
}

/// `, 1 back every 60s` when tokens also come back with time (`--budget-refill`); empty
/// otherwise.
fn refill(throttle: &retry_tool_backoff::Throttle) -> String {
    throttle
        .refill_every()
        .map_or(String::new(), |every| format!(", 1 back every {every:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{self, Stop};
    use retry_tool_backoff::Jitter;

    /// Prepares `args` (after `retry`) as the command line would, reading no `RETRY_*`
    /// variable.
    fn job(args: &str) -> Result<Job> {
        let args: Vec<&str> = args.split_whitespace().collect();
        let parsed = match cli::parse_hermetic(&args) {
            Ok(parsed) => parsed,
            Err(Stop::Usage(message)) => bail!("{message}"),
            Err(Stop::Display(e)) => panic!("{e}"),
        };
        prepare(parsed.cli, &parsed.origins)
    }

    #[test]
    fn retries_and_backoff_are_a_real_runs() {
        let spec = job("--simulate 7 --model failure-rate --failure-rate 0.25 --seed 3")
            .unwrap()
            .spec;
        assert_eq!(spec.max_retries, Some(5));
        assert_eq!(spec.mode, Mode::Backoff(Jitter::Full));
        assert_eq!((spec.requests, spec.failure_rate, spec.seed), (7, 0.25, 3));
        assert_eq!(spec.policy.base().as_secs(), 1);
        let spec = job("--simulate 7 --model failure-rate --failure-rate 0 -n 2 -j no-backoff")
            .unwrap()
            .spec;
        assert_eq!((spec.max_retries, spec.mode), (Some(2), Mode::NoBackoff));
        let spec = job("--simulate 7 --model failure-rate --failure-rate 1 --preset aws")
            .unwrap()
            .spec;
        assert_eq!(spec.max_retries, Some(2));
    }

    #[test]
    fn the_budget_and_breaker_flags_tune_the_simulated_ones() {
        let fr = "--simulate 7 --model failure-rate --failure-rate 0.5";
        let spec = job(fr).unwrap().spec;
        assert_eq!(spec.throttle, retry_tool_backoff::Throttle::default());
        assert_eq!(spec.breaker.threshold(), BREAKER_THRESHOLD);
        assert_eq!(spec.breaker.cooldown().as_secs(), 60);
        let spec = job(&format!(
            "{fr} --breaker 2 --breaker-cooldown 5s --budget-max-tokens 20 \
             --budget-token-ratio 0.5 --budget-refill 1m"
        ))
        .unwrap()
        .spec;
        assert_eq!(
            (spec.breaker.threshold(), spec.breaker.cooldown().as_secs()),
            (2, 5)
        );
        assert_eq!(
            (spec.throttle.max_tokens(), spec.throttle.token_ratio()),
            (20.0, 0.5)
        );
        assert_eq!(spec.throttle.refill_every().map(|d| d.as_secs()), Some(60));
        let text = describe(&spec, &[]);
        assert!(text.contains("budget: 20 tokens, 0.5 per success, 1 back every 60s; breaker: 2 in a row, 5s cooldown"), "{text}");
        let spec = job(&format!("{fr} --breaker-cooldown 1s")).unwrap().spec;
        assert_eq!(spec.breaker.threshold(), BREAKER_THRESHOLD);
        assert_eq!(spec.breaker.cooldown().as_secs(), 1);
        assert!(
            job(&format!(
                "{fr} --budget-max-tokens 1 --budget-token-ratio 2"
            ))
            .is_err()
        );
    }

    #[test]
    fn refusals_name_the_flag() {
        let err = |args: &str| job(args).unwrap_err().to_string();
        let fr = "--simulate 7 --model failure-rate";
        assert!(err(fr).contains("needs --failure-rate"));
        let e = err(&format!("{fr} --failure-rate 0.5 --capacity 3"));
        assert!(e.contains("--capacity (3) needs --model rate-limit"), "{e}");
        let e = err(&format!("{fr} --failure-rate 0.5 --runs 3"));
        assert!(e.contains("--runs (3)"), "{e}");
        let e = err(&format!("{fr} --failure-rate 0.5 -j none,full"));
        assert!(e.contains("--jitter: --model failure-rate takes one mode, got none,full"));
        let e = err(&format!("{fr} --failure-rate 1 -n unlimited"));
        assert!(
            e.starts_with("--max-retries: ") && e.contains("never ends"),
            "{e}"
        );
        let e = err(&format!("{fr} --failure-rate 0.5 --plot /dev/null"));
        assert!(e.contains("--failure-rate (0.5) and --plot"), "{e}");
        // Unlimited retries end at a failure rate below 1, or with a deadline.
        assert!(job(&format!("{fr} --failure-rate 0.5 -n unlimited")).is_ok());
        assert!(job(&format!("{fr} --failure-rate 1 -n unlimited -d 1m")).is_ok());
    }

    #[test]
    fn describes_the_run() {
        let spec = FailureRateSpec {
            seed: 4,
            ..FailureRateSpec::new(10_000, 0.5)
        };
        let point = |x| RatePoint {
            failure_rate: x,
            stats: vec![],
        };
        assert_eq!(
            describe(&spec, &[point(0.5)]),
            "failure-rate 0.5, 10000 requests at 10/s; retries: at most 5, full jitter, base 1s, \
             multiplier 2, cap 64s; budget: 10 tokens, 0.1 per success; breaker: 5 in a row, 60s \
             cooldown; seed 4"
        );
        let sweep = describe(&spec, &[point(0.0), point(0.05), point(1.0)]);
        assert!(
            sweep.starts_with("failure-rate 0.00 to 1.00 in 3 steps, 10000 requests"),
            "{sweep}"
        );
        let odd = FailureRateSpec {
            max_retries: None,
            deadline: Some(std::time::Duration::from_secs(30)),
            mode: Mode::NoBackoff,
            ..spec
        };
        let text = describe(&odd, &[point(0.5)]);
        assert!(
            text.contains("retries: unlimited, deadline 30s, no backoff; budget"),
            "{text}"
        );
        assert_eq!(
            chart_title(&odd),
            "10000 requests at 10/s, -n unlimited, deadline 30s, no backoff; budget 10 tokens, 0.1 \
             per success; breaker 5 in a row, 60s; seed 4"
        );
    }
}
