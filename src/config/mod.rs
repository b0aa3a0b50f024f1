//! The validated run settings, built from the parsed command line; what the rest of retry sees.
//!
//! Also where presets, `RETRY_<FLAG>` variables and defaults meet: for each setting, a flag on
//! the command line wins, then `--preset` on the command line, then the `RETRY_<FLAG>` variable,
//! then `RETRY_PRESET`, then the built-in default. A preset named on the command line is more
//! specific than a policy a CI pipeline exported for every step, hence its place.
//!
//! By concern: `precedence.rs` reads that order, `backoff.rs` the backoff and stopping
//! settings a simulation reads too, `loops.rs` the loop's shape and the lock, `protect.rs`
//! `--splay` and `--budget`; this file puts the whole [`Config`] together.

mod backoff;
mod loops;
mod precedence;
mod protect;
mod rules;
mod stop_plan;
#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::time::Duration;

use anyhow::Result;

use crate::ci::Ci;
use crate::cli::{Cli, Flag, Origins};
use crate::codes::{CodeSet, Conditions};
use crate::duration::{is_unlimited, limit};
use crate::pipeline;
use crate::stop_signal::StopSignal;
use crate::transient::{Class, Classes};
use crate::types::{ColorWhen, HookFailure, LogFormat};
use retry_tool_backoff::Policy;

pub use self::backoff::{Backoff, DEFAULT_BASE, DEFAULT_CAP, DEFAULT_JITTER, DEFAULT_MULTIPLIER};
pub use self::loops::LockSettings;
pub use self::precedence::by_precedence;
pub use self::protect::{BudgetSettings, Protect, breaker, throttle};
pub use self::rules::Rules;
pub use crate::types::{Shape, Verbosity};

/// Commands run around the retrying (`sh -c`).
#[derive(Clone, Debug, Default)]
pub struct Hooks {
    /// `--on-retry`: before each retry.
    pub on_retry: Option<String>,
    /// `--on-retry-fail stop`: a failing `on_retry` gives up.
    pub stop_on_failure: bool,
    /// `--on-give-up`: once, when giving up.
    pub on_give_up: Option<String>,
}

/// Everything a run needs, validated.
#[derive(Clone, Debug)]
pub struct Config {
    /// The backoff policy (base, multiplier, cap, jitter).
    pub policy: Policy,
    /// What the decision after each attempt reads: the loop's shape, the retries, what stops
    /// it ([`Rules`]).
    pub rules: Rules,
    /// Total time budget from the start (monotonic clock); `None` when absent, 0 or `inf`.
    pub deadline: Option<Duration>,
    /// Time limit for each attempt; `None` when absent, 0 (as coreutils `timeout`: "a
    /// duration of 0 disables the associated timeout") or `inf`.
    pub timeout: Option<Duration>,
    /// Grace between TERM and KILL when an attempt is stopped; zero: never KILL (as coreutils
    /// `timeout --kill-after 0`; `inf` is read as zero).
    pub kill_after: Duration,
    /// `--signal`: what a timeout, idle timeout or the deadline sends to the attempt's tree.
    pub stop_signal: StopSignal,
    /// Which statuses are retried.
    pub conditions: Conditions,
    /// Print the schedule instead of running anything.
    pub dry_run: bool,
    /// The jitter seed, when the user fixed one.
    pub seed: Option<u64>,
    /// How much to report.
    pub verbosity: Verbosity,
    /// Text or JSON progress.
    pub log_format: LogFormat,
    /// `--color`: when retry's own words are coloured.
    pub color: ColorWhen,
    /// `--on-retry` and `--on-give-up`.
    pub hooks: Hooks,
    /// Pipeline I/O: stdin replay, held stdout, output conditions, server hints, idleness.
    pub pipeline: pipeline::Settings,
    /// The CI system told of the run (folds, GitHub Actions' annotations, outputs and step
    /// summary); empty outside CI, with `--no-ci`, and for GitHub Actions with `--no-github`.
    pub ci: Ci,
    /// The program and its arguments; empty only with `dry_run`.
    pub command: Vec<OsString>,
    /// Why the program may not be a command at all, said when it is not found (a bare number,
    /// a value with a space left unquoted).
    pub not_found_hint: Option<String>,
    /// `--splay` and `--budget`: protecting the service.
    pub protect: Protect,
    /// `--lock` and `--lock-wait`: one run at a time; `None` without `--lock`.
    pub lock: Option<LockSettings>,
    /// `--metrics-file` and the `OTEL_*` trace export: what the run leaves behind.
    pub telemetry: crate::telemetry::Settings,
}

/// Retries after the first attempt when nothing sets `--max-retries` (6 attempts in all).
pub const DEFAULT_MAX_RETRIES: u64 = 5;
/// The most bytes of stdin `--replay-stdin` records when nothing sets `--max-replay`: 4 GiB,
/// room for any request body or script a command is retried with, yet far from filling a disk.
pub const DEFAULT_MAX_REPLAY: u64 = 4 << 30;
/// The most bytes of output `--chronic` holds when nothing sets `--max-output`: 64 MiB, the
/// last pages of any log a person reads in a mail, 8 MiB of it in memory.
pub const DEFAULT_MAX_OUTPUT: u64 = 64 << 20;
/// `--reset-after` with `--forever` when nothing sets it: a run that lasted a minute was no
/// crash (systemd's `RestartSteps` and recur's `--reset` count the same way).
pub const DEFAULT_FOREVER_RESET_AFTER: Duration = Duration::from_secs(60);
/// The grace between TERM and KILL when nothing sets `--kill-after`.
pub const DEFAULT_KILL_AFTER: Duration = Duration::from_secs(10);
/// The longest server hint honoured when nothing sets `--max-hint`: an hour.
pub const DEFAULT_MAX_HINT: Duration = Duration::from_secs(3600);

/// `--kill-after` as [`Config::kill_after`]: the default when not given; `inf` (never KILL)
/// becomes 0, which already means never KILL.
fn kill_after(given: Option<Duration>) -> Duration {
    match given {
        Some(d) if is_unlimited(d) => Duration::ZERO,
        Some(d) => d,
        None => DEFAULT_KILL_AFTER,
    }
}

/// `--transient`'s classes (`None`: the rule is off): those given (an empty set turns it off),
/// with `pattern` when `--transient-pattern` is; `--transient-pattern` alone implies
/// `--transient` with every class.
fn transient(given: Option<Classes>, patterns: bool) -> Option<Classes> {
    match (given, patterns) {
        (Some(set), false) if set == Classes::default() => None,
        (Some(set), true) => Some(set.with(Class::Pattern)),
        (None, true) => Some(Classes::all()),
        (given, false) => given,
    }
}

impl Config {
    /// Validates the parsed command line, applying presets, `RETRY_<FLAG>` variables and
    /// defaults.
    ///
    /// Precedence for each setting, highest first: a flag on the command line, `--preset` on
    /// the command line, its `RETRY_<FLAG>` variable, `RETRY_PRESET`, the built-in default.
    /// `origins` says which values of `cli` came from the environment.
    ///
    /// # Errors
    /// A one-line message naming the flags and values at fault (e.g. `--cap` below `--base`),
    /// and where a value came from when it was not the command line.
    pub fn from_cli(cli: Cli, origins: &Origins) -> Result<Config> {
        let mut backoff = Backoff::from_cli(&cli, origins)?;
        let (shape, lock) = loops::from_cli(&cli, origins)?;
        if shape == Shape::Forever {
            // A preset's deadline, like its -n, is about one request's retries: not a limit on
            // a service kept running (nor on its --splay); `--deadline` or RETRY_DEADLINE is.
            backoff.deadline = cli.stopping.deadline.and_then(limit);
        }
        let protect = Protect::from_cli(
            &cli.protect,
            origins,
            &backoff,
            cli.stopping.timeout.and_then(limit),
            kill_after(cli.stopping.kill_after),
        )?;
        let telemetry = crate::telemetry::Settings::new(
            cli.telemetry.metrics_file,
            cli.telemetry.metrics_job,
            cli.telemetry.trace_args,
            &cli.command,
            |name| std::env::var(name).ok(),
        )
        .map_err(anyhow::Error::msg)?;
        let mut telemetry = telemetry;
        if let Some(metrics) = &mut telemetry.metrics {
            // A --forever run may last weeks: the file shows its restarts as they happen.
            metrics.every_run = shape == Shape::Forever;
        }
        let (stopping, conditions, output) = (cli.stopping, cli.conditions, cli.output);
        // A RETRY_HTTP_RETRY_ON exported for every run is no mistake of this one.
        if let Some(set) = conditions.http_retry_on
            && !conditions.http_hints
            && !origins.is_env(Flag::HttpRetryOn)
        {
            anyhow::bail!(
                "{} ({set}) needs {}: the HTTP statuses are read from the response headers it \
                 reads",
                Flag::HttpRetryOn,
                Flag::HttpHints
            );
        }
        let verbosity = if output.quiet {
            Verbosity::Quiet
        } else if output.verbose {
            Verbosity::Verbose
        } else {
            Verbosity::Normal
        };
        let ci = Ci::from_env(output.no_github, output.no_ci, |name| {
            std::env::var(name).ok()
        });
        let transient_classes = transient(
            conditions.transient,
            !conditions.transient_pattern.is_empty(),
        );
        let pipeline = pipeline::Settings {
            replay_stdin: output.replay_stdin,
            max_replay: output
                .max_replay
                .map_or(Some(DEFAULT_MAX_REPLAY), |limit| limit.0),
            stdout_on_success: output.stdout_on_success,
            chronic: output.chronic,
            max_output: output
                .max_output
                .map_or(Some(DEFAULT_MAX_OUTPUT), |limit| limit.0),
            retry_if_output: conditions.retry_if_output,
            stop_if_output: conditions.stop_if_output,
            delay_from_output: conditions.delay_from_output,
            http_hints: conditions.http_hints,
            idle_timeout: stopping.idle_timeout.and_then(limit),
            end_lines: ci.folds.is_some(),
            transient: transient_classes.is_some(),
            transient_patterns: conditions.transient_pattern,
        };
        let rules = Rules {
            shape,
            max_retries: match (shape, stopping.max_retries) {
                // With --forever, -n limits a crash loop, and only when the user gives it: a
                // preset's limit (meant for retries of one request) does not apply.
                (Shape::Forever, given) => given.and_then(|l| l.0),
                _ => backoff
                    .max_retries
                    .map_or(Some(DEFAULT_MAX_RETRIES), |l| l.0),
            },
            base: backoff.policy.base(),
            preserve_status: stopping.preserve_status,
            success_stops: conditions
                .stop_on
                .as_ref()
                .is_some_and(|set| set.contains(0)),
            // 0 lifts the limit, as 0 disables --timeout; so does `inf`.
            http_retry_on: conditions.http_retry_on,
            max_hint: match conditions.max_hint {
                Some(d) if d.is_zero() => Duration::MAX,
                Some(d) => d,
                None => DEFAULT_MAX_HINT,
            },
            reset_after: match (shape, stopping.reset_after) {
                (Shape::Forever, None) => Some(DEFAULT_FOREVER_RESET_AFTER),
                (_, given) => given.and_then(limit),
            },
            transient: transient_classes,
        };
        Ok(Config {
            policy: backoff.policy,
            rules,
            deadline: backoff.deadline,
            timeout: stopping.timeout.and_then(limit),
            kill_after: kill_after(stopping.kill_after),
            stop_signal: stopping.signal.unwrap_or_default(),
            conditions: Conditions {
                retry_on: conditions.retry_on,
                stop_on: conditions.stop_on.unwrap_or(CodeSet::empty()),
            },
            dry_run: output.dry_run,
            seed: backoff.seed,
            verbosity,
            log_format: output.log_format,
            color: output.color,
            hooks: Hooks {
                on_retry: cli.hooks.on_retry,
                stop_on_failure: cli.hooks.on_retry_fail == HookFailure::Stop,
                on_give_up: cli.hooks.on_give_up,
            },
            pipeline,
            ci,
            command: cli.command,
            not_found_hint: cli.not_found_hint,
            protect,
            lock,
            telemetry,
        })
    }

    /// Attempts in all, `None` when unlimited: `max_retries + 1`, or with `--successes N`
    /// `(max_retries + 1) * N`, since retries count failures only ([`Shape::attempts`]).
    pub fn max_attempts(&self) -> Option<u64> {
        self.rules.max_retries.map(|r| self.rules.shape.attempts(r))
    }
}
