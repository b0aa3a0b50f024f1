//! The "Loop shape" heading: `--successes`, `--until-fail` and `--forever`, loops other than
//! "until it succeeds". The first two have no `RETRY_<FLAG>` variable: a shape exported for a
//! whole CI job would turn every retry of it inside out. `--forever` has one
//! (`RETRY_FOREVER=1`), for a service manager's unit or a container's environment, where the
//! command that keeps running is the only one. [`crate::config`] checks how they go together.

// The doc comments below are the help text, written for a terminal: `RETRY_<FLAG>` is not HTML.
#![allow(rustdoc::invalid_html_tags)]

use clap::builder::BoolishValueParser;
use clap::{Args, value_parser};

/// The "Loop shape" heading: when the loop is done, other than at the first success.
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "Loop shape")]
pub struct LoopArgs {
    /// Done only after N successful attempts in a row [default: 1]
    ///
    /// For "wait until the service is stably up": `retry --successes 3 -b 2s -d 5m -- curl -fsS
    /// http://localhost/health`. Between successes retry waits the first delay of the schedule
    /// as written (--base, or the first of --delays), without jitter, and runs no hook; a
    /// failure ends the streak and backs off as usual. Retries count failures only: -n 5 allows
    /// 5 failed attempts however many successes come between them, so a run makes at most
    /// (retries + 1) * N attempts (RETRY_MAX_ATTEMPTS). Exit 0 once the streak is complete; on
    /// giving up, the last attempt's status, or 124 when the deadline comes after a success,
    /// before the streak is complete (as coreutils timeout: time ran out). Like joshdk/retry's
    /// -consecutive.
    #[arg(long, value_name = "N", value_parser = value_parser!(u64).range(1..))]
    pub successes: Option<u64>,

    /// Run the command again while it succeeds; stop at the first failure
    ///
    /// The roles reversed, for hunting a flaky test: `retry --until-fail -n 200 -b 0 -- cargo
    /// test flaky_case`. The first failed run ends it, with that run's status and its output
    /// kept as any attempt's. The retries are the runs after a success: -n 200 allows 201 runs,
    /// the delays are the schedule's, --on-retry runs before each of them and --on-give-up when
    /// -n or --deadline run out without a failure; retry then exits 0. A run the deadline stops
    /// is not a failure (it ran out of time): give --timeout to count a hang as one. -n
    /// unlimited without --deadline runs until the command fails, however long that takes. Not
    /// with --successes, --reset-after, --retry-on, --stop-on or --budget. Like joshdk/retry's
    /// -invert.
    #[arg(long)]
    pub until_fail: bool,

    /// Keep the command running: run it again whatever it exits with
    ///
    /// For a tunnel, a port-forward or a worker that should stay up: `retry --forever -- ssh -N
    /// tunnel`. It ends only at a stop signal (passed on to the command, as always), at
    /// --deadline, at a status that is not retried (--stop-on, --retry-on; --http-retry-on), or
    /// in a crash loop: the delays grow with each run that ends within --reset-after (default
    /// here 1m) and start again from the first after a run that lasted longer; -n N (default
    /// here unlimited) gives up after N + 1 such short runs in a row, with the last status.
    /// The progress lines say "restarting", the closing line how many restarts there were.
    /// Not with --successes or --until-fail. RETRY_FOREVER=true (or 1, yes, on) sets it too.
    /// Like autossh, systemd's Restart=always, recur --forever.
    #[arg(long, env = "RETRY_FOREVER", value_parser = BoolishValueParser::new())]
    pub forever: bool,
}
