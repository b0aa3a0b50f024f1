//! The validated run settings, built from the parsed command line; what the rest of retry sees.

use std::ffi::OsString;
use std::time::Duration;

use anyhow::{Result, bail};
use regex::bytes::Regex;

use crate::backoff::Policy;
use crate::cli::Cli;
use crate::codes::{CodeSet, Conditions};
use crate::duration::format_secs;

/// How much retry says on stderr about its own progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verbosity {
    /// `--quiet`: errors only.
    Quiet,
    /// One line per failed attempt and one when giving up.
    Normal,
    /// `--verbose`: also the arguments, each attempt's start and duration, and the seed.
    Verbose,
}

/// Pipeline I/O settings: `--replay-stdin`, `--stdout-on-success` and the output conditions.
#[derive(Clone, Debug, Default)]
pub struct Pipeline {
    /// Record stdin once and give every attempt the same bytes.
    pub replay_stdin: bool,
    /// Hold each attempt's stdout until it succeeds.
    pub stdout_on_success: bool,
    /// A matching output line makes the attempt a failure.
    pub retry_if_output: Vec<Regex>,
    /// A matching output line stops the retrying.
    pub stop_if_output: Vec<Regex>,
    /// Server hints: capture group 1 is a number of seconds for the next delay.
    pub delay_from_output: Vec<Regex>,
}

impl Pipeline {
    /// Whether any output condition needs the attempt's output to be read.
    pub fn matches_output(&self) -> bool {
        !(self.retry_if_output.is_empty()
            && self.stop_if_output.is_empty()
            && self.delay_from_output.is_empty())
    }

    /// Whether the attempt simply inherits retry's descriptors (no copies at all).
    pub fn is_plain(&self) -> bool {
        !self.replay_stdin && !self.stdout_on_success && !self.matches_output()
    }
}

/// Everything a run needs, validated.
#[derive(Clone, Debug)]
pub struct Config {
    /// The backoff policy (base, multiplier, cap, jitter).
    pub policy: Policy,
    /// Retries after the first attempt; `None` for unlimited.
    pub max_retries: Option<u64>,
    /// Total time budget from the start (monotonic clock).
    pub deadline: Option<Duration>,
    /// Time limit for each attempt.
    pub timeout: Option<Duration>,
    /// Grace between TERM and KILL when an attempt is stopped.
    pub kill_after: Duration,
    /// Which statuses are retried.
    pub conditions: Conditions,
    /// Print the schedule instead of running anything.
    pub dry_run: bool,
    /// The jitter seed, when the user fixed one.
    pub seed: Option<u64>,
    /// How much to report.
    pub verbosity: Verbosity,
    /// Pipeline I/O: stdin replay, held stdout, output conditions.
    pub pipeline: Pipeline,
    /// The program and its arguments; empty only with `dry_run`.
    pub command: Vec<OsString>,
}

impl Config {
    /// Validates the parsed command line.
    ///
    /// # Errors
    /// A one-line message naming the flags and values at fault (e.g. `--cap` below `--base`).
    pub fn from_cli(cli: Cli) -> Result<Config> {
        if cli.cap < cli.base {
            bail!(
                "--cap ({}) must be >= --base ({})",
                format_secs(cli.cap),
                format_secs(cli.base)
            );
        }
        let policy = Policy::new(cli.base, cli.multiplier, cli.cap, cli.jitter)
            .map_err(|e| anyhow::anyhow!("invalid backoff policy: {e}"))?;
        let verbosity = if cli.quiet {
            Verbosity::Quiet
        } else if cli.verbose {
            Verbosity::Verbose
        } else {
            Verbosity::Normal
        };
        Ok(Config {
            policy,
            max_retries: cli.max_retries.0,
            deadline: cli.deadline,
            timeout: cli.timeout,
            kill_after: cli.kill_after,
            conditions: Conditions {
                retry_on: cli.retry_on,
                stop_on: cli.stop_on.unwrap_or(CodeSet::empty()),
            },
            dry_run: cli.dry_run,
            seed: cli.seed,
            verbosity,
            pipeline: Pipeline {
                replay_stdin: cli.replay_stdin,
                stdout_on_success: cli.stdout_on_success,
                retry_if_output: cli.retry_if_output,
                stop_if_output: cli.stop_if_output,
                delay_from_output: cli.delay_from_output,
            },
            command: cli.command,
        })
    }

    /// Attempts in all (`max_retries + 1`), `None` when unlimited.
    pub fn max_attempts(&self) -> Option<u64> {
        self.max_retries.map(|r| r.saturating_add(1))
    }
}
