//! The "Simulation" heading of the command line: `--simulate` and the flags only it reads,
//! and the simulation's reading of `--jitter` as a list of modes. The policy comes from the
//! usual Backoff and Stopping flags. [`crate::simulate::run_cli`] turns them into a
//! [`retry_tool_simulate::SimSpec`].

// The doc comments below are the help text, written for a terminal: `RETRY_<FLAG>` is not HTML.
#![allow(rustdoc::invalid_html_tags)]

use std::ffi::OsStr;
use std::path::PathBuf;

use clap::builder::{EnumValueParser, PossibleValue, StringValueParser, TypedValueParser};
use clap::{Args, ValueEnum, ValueHint, value_parser};
use retry_tool_simulate::Mode;
use strum::VariantArray;

use super::backoff::JitterArg;
use super::flags::Flag;

/// The flags under the "Simulation" heading, flattened into [`super::Cli`]. None of them
/// reads the environment; all but `--simulate` need `--simulate`.
#[derive(Clone, Debug, Default, Args)]
#[command(next_help_heading = "Simulation")]
pub struct SimulateArgs {
    /// Simulate CLIENTS clients contending for one server (or, with --model failure-rate,
    /// CLIENTS requests to a failing service); runs no COMMAND
    ///
    /// The contention experiment of the AWS Architecture Blog's "Exponential Backoff And
    /// Jitter", on retry's own backoff code: each client needs one success and retries with
    /// the policy of the Backoff and Stopping flags (--preset, --base, --multiplier, --cap,
    /// --max-retries, --deadline, --seed, and their RETRY_<FLAG> variables). --jitter may list
    /// modes to compare, such as none,full,equal,decorrelated,no-backoff (the default here
    /// when nothing sets --jitter); no-backoff retries at once. Retries are unlimited unless
    /// --max-retries, a preset or RETRY_MAX_RETRIES limits them; clients that give up are
    /// counted. Time is simulated: every network hop takes |Normal(10ms, 2ms)|. Prints a table
    /// of means: completion time (simulated ms), calls, calls per client, rejected calls and
    /// clients that gave up, a row per mode. The same --seed gives the same numbers. The
    /// flags that only concern a real run (--timeout, the Conditions, Output and Hooks flags,
    /// --splay, --budget, --budget-store) play no part. --model failure-rate asks another
    /// question: see --failure-rate.
    #[arg(id = "simulate", long = "simulate", value_name = "CLIENTS", allow_hyphen_values = true,
          value_parser = value_parser!(u32).range(1..), conflicts_with = "dry_run")]
    pub clients: Option<u32>,

    /// Runs averaged per point of the simulation [default: 100]
    ///
    /// Each run draws its own network delays and jitter; the table shows the means.
    #[arg(allow_hyphen_values = true, long, value_name = "R", value_parser = value_parser!(u32).range(1..),
          requires = "simulate")]
    pub runs: Option<u32>,

    /// What the simulated clients contend for: occ, rate-limit or failure-rate [default: occ]
    ///
    /// occ is the published simulator's model (aws-samples/aws-arch-backoff-simulator): one
    /// row under optimistic concurrency; a call reads the row, then writes it with the version
    /// read, and fails if another client wrote in between; calls counts writes. rate-limit is
    /// a server admitting --capacity requests per second (a token bucket holding one second's
    /// worth) and rejecting the rest, as with HTTP 429; calls counts requests. failure-rate is
    /// a service whose calls fail with probability --failure-rate, and compares retry
    /// policies rather than jitter modes.
    #[arg(long, value_name = "MODEL", value_enum, requires = "simulate")]
    pub model: Option<ModelName>,

    /// Requests per second the rate-limit server admits (needed by --model rate-limit)
    ///
    /// A finite number > 0, such as 50 or 0.5. Only --model rate-limit takes it: with occ it
    /// is an error rather than silently ignored.
    #[arg(allow_hyphen_values = true, long, value_name = "RPS", value_parser = parse_capacity,
          required_if_eq("model", "rate-limit"), requires = "simulate")]
    pub capacity: Option<f64>,

    /// The probability that a call fails, from 0 to 1, for --model failure-rate
    ///
    /// Simulates CLIENTS requests arriving at random (Poisson, 10 per second), every call
    /// failing with this probability, and compares four policies, a row each: no-retry;
    /// retries (up to --max-retries, default 5 as for a run, with the backoff of the usual
    /// flags and one --jitter mode); budget (the same, and a retry only while the token bucket
    /// shared by all requests allows it: gRFC A6, 10 tokens, 0.1 back per success); breaker
    /// (the budget, and a circuit breaker opening after 5 requests in a row gave up, for 60s,
    /// then one probe); --budget-max-tokens, --budget-token-ratio, --budget-refill, --breaker
    /// and --breaker-cooldown change them as they change a run's. Columns: success %, load (calls per request), retries per request,
    /// requests whose retry the budget refused (spent %) and requests the breaker refused
    /// (refused %). Needs --model failure-rate; --plot sweeps it instead.
    #[arg(allow_hyphen_values = true, long, value_name = "X", value_parser = parse_failure_rate,
          requires = "simulate")]
    pub failure_rate: Option<f64>,

    /// Sweep the clients from 10 up to CLIENTS and draw an SVG chart to FILE
    ///
    /// The blog's figure: calls and completion time against the number of clients (10, 20,
    /// ..., CLIENTS), a line per mode, on logarithmic axes. The table then has a row per
    /// client count, one table per mode. With --model failure-rate: the failure rate swept
    /// from 0 to 1 in 21 steps, success and load against it, a line per policy. FILE is
    /// created (or emptied) before the sweep starts, so an unwritable path fails at once.
    #[arg(long, value_name = "FILE.svg", value_hint = ValueHint::FilePath,
          requires = "simulate")]
    pub plot: Option<PathBuf>,

    /// `--jitter` (or `RETRY_JITTER`) read as the list of modes to compare, in order; `None`
    /// when neither is set. [`super::parse`] fills it when `--simulate` is given, with
    /// the parser of [`SimulateArgs::jitter_as_modes`]; a run reads `--jitter` as one mode.
    #[arg(skip)]
    pub modes: Option<Vec<Mode>>,
}

impl SimulateArgs {
    /// `--jitter` as a simulation reads it: a comma-separated list of modes, parsed by
    /// [`Mode::parse_list`] (exact names, none twice), completions offering every mode.
    pub fn jitter_as_modes(arg: clap::Arg) -> clap::Arg {
        arg.value_parser(ModesParser)
    }

    /// The list of modes a simulation's `--jitter` gave ([`SimulateArgs::jitter_as_modes`]),
    /// taken out of `matches` before the rest is read into [`super::Cli`].
    pub fn take_modes(matches: &mut clap::ArgMatches) -> Option<Vec<Mode>> {
        matches.remove_one::<Vec<Mode>>(Flag::Jitter.id())
    }

    /// `--jitter` as every line is read first: one [`JitterArg`], refused as clap refuses any
    /// value outside the enum, except a value only a simulation takes (a list of modes,
    /// `no-backoff`), read as [`RunJitter::ForSimulate`]: a simulation takes it as its list, a
    /// run refuses it in its own words. So a line that parses is parsed once, whatever
    /// `--jitter` holds and whether `--simulate` is given.
    pub fn jitter_for_a_run(arg: clap::Arg) -> clap::Arg {
        arg.value_parser(RunJitterParser)
    }

    /// What a run's `--jitter` gave ([`SimulateArgs::jitter_for_a_run`]), taken out of
    /// `matches` before the rest is read into [`super::Cli`].
    pub fn take_run_jitter(matches: &mut clap::ArgMatches) -> Option<RunJitter> {
        matches.remove_one::<RunJitter>(Flag::Jitter.id())
    }
}

/// A `--jitter` value as [`SimulateArgs::jitter_for_a_run`] reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunJitter {
    /// One mode, as a run takes it.
    One(JitterArg),
    /// A value only `--simulate` takes: a list of modes, or `no-backoff`.
    ForSimulate(Vec<Mode>),
}

impl RunJitter {
    /// The value as a simulation's list of modes.
    pub fn modes(self) -> Vec<Mode> {
        match self {
            RunJitter::One(one) => vec![Mode::from(one.0)],
            RunJitter::ForSimulate(modes) => modes,
        }
    }

    /// The names of the modes, comma-separated, as `--jitter` takes them.
    pub fn names(&self) -> String {
        match self {
            RunJitter::One(one) => one.0.name().to_string(),
            RunJitter::ForSimulate(modes) => {
                let names: Vec<&str> = modes.iter().map(|m| m.name()).collect();
                names.join(",")
            }
        }
    }
}

/// Parses a run's `--jitter` for clap: [`JitterArg`]'s own parser, and a simulation's list
/// where that refuses.
#[derive(Clone, Copy, Debug)]
struct RunJitterParser;

impl TypedValueParser for RunJitterParser {
    type Value = RunJitter;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<RunJitter, clap::Error> {
        match EnumValueParser::<JitterArg>::new().parse_ref(cmd, arg, value) {
            Ok(one) => Ok(RunJitter::One(one)),
            Err(e) => match value.to_str().map(Mode::parse_list) {
                Some(Ok(modes)) => Ok(RunJitter::ForSimulate(modes)),
                _ => Err(e),
            },
        }
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            JitterArg::value_variants()
                .iter()
                .filter_map(ValueEnum::to_possible_value),
        ))
    }
}

/// Parses a list of modes for clap, and tells it their names.
#[derive(Clone, Copy, Debug)]
struct ModesParser;

impl TypedValueParser for ModesParser {
    type Value = Vec<Mode>;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<Vec<Mode>, clap::Error> {
        StringValueParser::new()
            .try_map(|s| Mode::parse_list(&s))
            .parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            Mode::VARIANTS.iter().map(|m| PossibleValue::new(m.name())),
        ))
    }
}

/// `--model`: the name of a [`retry_tool_simulate::Model`]; `rate-limit` takes its capacity from
/// `--capacity`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModelName {
    /// One row under optimistic concurrency, as the published simulator
    Occ,
    /// A server admitting --capacity requests per second
    RateLimit,
    /// A service whose calls fail with probability --failure-rate
    FailureRate,
}

/// `--capacity`: a finite number of requests per second `> 0`.
fn parse_capacity(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(c) if c.is_finite() && c > 0.0 => Ok(c),
        Ok(_) => Err("must be a finite number of requests per second > 0".into()),
        Err(_) => Err("expected a number of requests per second > 0".into()),
    }
}

/// `--failure-rate`: a probability, from 0 to 1.
fn parse_failure_rate(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        Ok(_) => Err("must be a probability from 0 to 1".into()),
        Err(_) => Err("expected a probability from 0 to 1, such as 0.5".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_bounds() {
        assert_eq!(parse_capacity("50"), Ok(50.0));
        assert_eq!(parse_capacity("0.5"), Ok(0.5));
        for bad in ["0", "-1", "inf", "NaN", "x", ""] {
            assert!(parse_capacity(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn failure_rate_bounds() {
        for (text, x) in [("0", 0.0), ("1", 1.0), ("0.35", 0.35), ("1e-3", 0.001)] {
            assert_eq!(parse_failure_rate(text), Ok(x));
        }
        for bad in ["-0.1", "1.01", "2", "inf", "NaN", "x", "", "50%"] {
            assert!(parse_failure_rate(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn model_names() {
        let names: Vec<String> = ModelName::value_variants()
            .iter()
            .map(|m| m.to_possible_value().unwrap().get_name().to_string())
            .collect();
        assert_eq!(names, ["occ", "rate-limit", "failure-rate"]);
    }
}
