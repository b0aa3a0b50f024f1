//! `retry --simulate` on the command line: from the parsed flags to a [`SimSpec`], then the
//! tables to stdout and the chart to the `--plot` file.
//!
//! The policy is the one a real run would use: [`Backoff::from_cli`] resolves it, with the
//! same flags, presets, `RETRY_<FLAG>` variables and checks. Two things differ when
//! simulating: the built-in default of 5 retries becomes unlimited (a preset's or a variable's
//! limit still applies), and `--jitter` lists modes ([`SimulateArgs::modes`]), the blog's five
//! when nothing sets it.

use std::fs::File;
use std::path::PathBuf;

use anyhow::{Result, bail};
use retry_tool_simulate::{
    DEFAULT_RUNS, Mode, Model, SimSpec, SpecError, SweepPoint, render_svg, simulate, sweep,
    write_table,
};

use crate::cli::{Cli, Flag, ModelName, Origins, SimulateArgs};
use crate::config::{self, Backoff};
use crate::status::Exit;

use super::common::{count_without_command, create_plot, curve, print, write_plot};
use super::failure_rate;

/// Runs the simulation that `cli` asks for (`--simulate` is given) and returns how retry ends:
/// 0, or [`Exit::OwnFailure`] after a one-line `retry: ...` message naming the flag at fault. A
/// closed stdout (`| head`) just ends the output.
pub fn run_cli(cli: Cli, origins: &Origins) -> Exit {
    let start = std::time::Instant::now();
    let format = cli.output.log_format;
    let done = match cli.simulate.model {
        Some(ModelName::FailureRate) => failure_rate::run(cli, origins),
        _ => prepare(cli, origins).and_then(Job::run),
    };
    match done {
        Ok(()) => Exit::Code(0),
        Err(e) => {
            // One line, or a JSON `error` event with `--log-format json`.
            crate::report::error(format, start, &format!("{e:#}"));
            Exit::OwnFailure
        }
    }
}

/// A checked simulation request.
#[derive(Debug)]
struct Job {
    spec: SimSpec,
    /// `--plot`: the sweep's chart goes to this file, already created.
    plot: Option<(PathBuf, File)>,
}

/// Checks everything, then creates the `--plot` file, before anything runs.
fn prepare(cli: Cli, origins: &Origins) -> Result<Job> {
    let args = cli.simulate.clone();
    let clients = count_without_command(&cli, origins)?;
    if let Some(x) = args.failure_rate {
        bail!("--failure-rate ({x}) needs --model failure-rate");
    }
    let model = match (args.model.unwrap_or(ModelName::Occ), args.capacity) {
        (ModelName::Occ, None) => Model::Occ,
        (ModelName::Occ | ModelName::FailureRate, Some(c)) => {
            bail!("--capacity ({c}) needs --model rate-limit")
        }
        (ModelName::RateLimit, Some(capacity_rps)) => Model::RateLimit { capacity_rps },
        (ModelName::RateLimit, None) => bail!("--model rate-limit needs --capacity RPS"),
        // `run_cli` sends it to its own path.
        (ModelName::FailureRate, None) => bail!("--model failure-rate is not a contention model"),
    };
    let modes = config::by_precedence(&cli, origins, Flag::Jitter, args.modes.clone(), |s| {
        s.jitter.map(|j| vec![Mode::from(j)])
    })
    .unwrap_or_else(|| SimSpec::aws_blog(clients).modes);
    let backoff = Backoff::from_cli(&cli, origins)?;
    let spec = SimSpec {
        policy: backoff.policy,
        max_retries: backoff.max_retries.and_then(|limit| limit.0),
        deadline: backoff.deadline,
        model,
        modes,
        clients,
        runs: args.runs.unwrap_or(DEFAULT_RUNS),
        seed: backoff.seed.unwrap_or_else(crate::entropy::seed),
        threads: 0,
    };
    let checked = match args.plot {
        Some(_) => spec.validate_sweep(),
        None => spec.validate(),
    };
    checked.map_err(|e| flag_error(&args, e))?;
    let plot = create_plot(args.plot)?;
    Ok(Job { spec, plot })
}

impl Job {
    /// Simulates (one point, or the sweep for `--plot`), writes the chart, prints the tables.
    fn run(self) -> Result<()> {
        let spec = &self.spec;
        let points = match self.plot {
            Some(_) => sweep(spec)?,
            None => vec![SweepPoint {
                clients: spec.clients,
                stats: simulate(spec)?,
            }],
        };
        let title = describe(spec, &points);
        if let Some(plot) = self.plot {
            write_plot(plot, &render_svg(&points, &title)?)?;
        }
        print(&title, |out| write_table(out, &points))
    }
}

/// A refused simulation's message, after the flag at fault: `--simulate` for too many
/// clients, `--capacity` for too small a capacity. The parsers refuse every other bad value
/// already; for them this is a safety net.
fn flag_error(args: &SimulateArgs, e: SpecError) -> anyhow::Error {
    match e {
        SpecError::TooManyClients { .. } => anyhow::anyhow!("--simulate: {e}"),
        SpecError::CapacityTooSmall { .. } => anyhow::anyhow!("--capacity: {e}"),
        SpecError::DuplicateMode(_) | SpecError::NoModes => {
            anyhow::anyhow!("--jitter: {e}")
        }
        _ if args.runs == Some(0) => anyhow::anyhow!("--runs: {e}"),
        _ => anyhow::anyhow!("--simulate: {e}"),
    }
}

/// One line saying what was simulated, for the table's heading and the chart's title: the
/// model, the clients of `points`, the policy, the runs and the seed.
fn describe(spec: &SimSpec, points: &[SweepPoint]) -> String {
    let clients = match points {
        [first, .., last] => format!("{} to {} clients", first.clients, last.clients),
        [_] | [] if spec.clients == 1 => "1 client".to_string(),
        _ => format!("{} clients", spec.clients),
    };
    let mut text = format!("{}, {clients}: {}, ", spec.model, curve(&spec.policy));
    match spec.max_retries {
        Some(n) => text.push_str(&format!("at most {n} retries")),
        None => text.push_str("retries unlimited"),
    }
    if let Some(d) = spec.deadline {
        text.push_str(&format!(", deadline {d:?}"));
    }
    text.push_str(&format!("; mean of {} runs, seed {}", spec.runs, spec.seed));
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{self, Stop};
    use retry_tool_backoff::Jitter;

    /// Prepares `args` (after `retry`) as the command line would, reading no `RETRY_*`
    /// variable.
    fn job(args: &[&str]) -> Result<Job> {
        let parsed = match cli::parse_hermetic(args) {
            Ok(parsed) => parsed,
            Err(Stop::Usage(message)) => bail!("{message}"),
            Err(Stop::Display(e)) => panic!("{e}"),
        };
        prepare(parsed.cli, &parsed.origins)
    }

    #[test]
    fn the_policy_comes_from_the_usual_flags() {
        let spec = job(&[
            "--simulate",
            "7",
            "-b",
            "5ms",
            "-c",
            "2s",
            "-m",
            "3",
            "--seed",
            "9",
        ])
        .unwrap()
        .spec;
        assert_eq!(spec.policy.base().as_millis(), 5);
        assert_eq!(spec.policy.cap().as_secs(), 2);
        assert_eq!(spec.policy.multiplier(), 3.0);
        assert_eq!((spec.clients, spec.seed, spec.runs), (7, 9, DEFAULT_RUNS));
        assert_eq!(spec.model, Model::Occ);
        // Nothing sets --jitter: the blog's five modes.
        assert_eq!(spec.modes, SimSpec::aws_blog(7).modes);
    }

    #[test]
    fn retries_are_unlimited_unless_something_limits_them() {
        assert_eq!(job(&["--simulate", "3"]).unwrap().spec.max_retries, None);
        let spec = job(&["--simulate", "3", "-n", "4"]).unwrap().spec;
        assert_eq!(spec.max_retries, Some(4));
        // A preset's limit applies: the user asked for that policy.
        let spec = job(&["--simulate", "3", "--preset", "aws"]).unwrap().spec;
        assert_eq!(spec.max_retries, Some(2));
        assert_eq!(spec.modes, [Mode::Backoff(Jitter::Full)]);
        let spec = job(&["--simulate", "3", "--preset", "api-core"])
            .unwrap()
            .spec;
        assert_eq!(spec.max_retries, None);
        assert_eq!(spec.deadline.map(|d| d.as_secs()), Some(120));
    }

    #[test]
    fn jitter_lists_modes_in_order() {
        let spec = job(&["--simulate", "3", "-j", "no-backoff,equal"])
            .unwrap()
            .spec;
        assert_eq!(spec.modes, [Mode::NoBackoff, Mode::Backoff(Jitter::Equal)]);
    }

    #[test]
    fn refusals_name_the_flag() {
        let err = |args: &[&str]| job(args).unwrap_err().to_string();
        assert!(err(&["--simulate", "3", "true"]).contains("--simulate runs no command"));
        assert!(err(&["--simulate", "3", "--capacity", "5"]).contains("--capacity (5)"));
        let e = err(&["--simulate", "3", "--failure-rate", "0.5"]);
        assert!(
            e.contains("--failure-rate (0.5) needs --model failure-rate"),
            "{e}"
        );
        let e = err(&["--simulate", "3", "-b", "2s", "-c", "1s"]);
        assert!(e.contains("--cap"), "{e}");
    }

    #[test]
    fn rate_limit_takes_the_capacity() {
        let spec = job(&[
            "--simulate",
            "3",
            "--model",
            "rate-limit",
            "--capacity",
            "2.5",
        ])
        .unwrap()
        .spec;
        assert_eq!(spec.model, Model::RateLimit { capacity_rps: 2.5 });
    }

    #[test]
    fn describes_the_run() {
        let spec = SimSpec {
            seed: 4,
            max_retries: Some(3),
            ..SimSpec::aws_blog(190)
        };
        let point = |clients| SweepPoint {
            clients,
            stats: vec![],
        };
        let sweep: Vec<SweepPoint> = retry_tool_simulate::sweep_counts(190)
            .into_iter()
            .map(point)
            .collect();
        assert_eq!(
            describe(&spec, &sweep),
            "occ, 10 to 190 clients: base 5ms, multiplier 2, cap 2s, at most 3 retries; \
             mean of 100 runs, seed 4"
        );
        let one = describe(&spec, &[point(190)]);
        assert!(one.starts_with("occ, 190 clients: "), "{one}");
        let single = SimSpec { clients: 1, ..spec };
        assert!(describe(&single, &[point(1)]).starts_with("occ, 1 client: "));
    }
}
