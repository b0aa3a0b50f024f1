//! The clap definition: parsing and help text only. [`crate::config`] validates what it parses.

use std::ffi::OsString;
use std::str::FromStr;
use std::time::Duration;

use clap::Parser;
use regex::bytes::Regex;

use crate::backoff::Jitter;
use crate::codes::CodeSet;
use crate::duration::parse_duration;

/// Run a command again, with exponential backoff and jitter, until it succeeds.
///
/// retry runs COMMAND; when it fails, waits a backoff delay and runs it again, until it
/// succeeds, the retries are used up, or the deadline passes. It exits with the last attempt's
/// status (dying of the same signal if the attempt did), or 125 for its own errors.
#[derive(Debug, Parser)]
#[command(name = "retry", version, about, long_about, max_term_width = 100)]
#[command(override_usage = "retry [OPTIONS] [--] COMMAND [ARGS]...")]
pub struct Cli {
    /// First delay [default: 1s]
    ///
    /// The delay before the first retry: humantime syntax (250ms, 1.5s, 2m30s) or a bare
    /// number of seconds. Later delays grow by --multiplier up to --cap.
    #[arg(allow_hyphen_values = true, short, long, value_name = "DURATION", value_parser = parse_duration,
          default_value = "1s", hide_default_value = true, help_heading = "Backoff")]
    pub base: Duration,

    /// Growth per retry; must be >= 1 [default: 2]
    ///
    /// The delay before retry n (from 0) is base * multiplier^n, capped at --cap, before
    /// jitter. Ignored by decorrelated jitter.
    #[arg(allow_hyphen_values = true, short, long, value_name = "FACTOR", value_parser = parse_multiplier,
          default_value = "2", hide_default_value = true, help_heading = "Backoff")]
    pub multiplier: f64,

    /// Largest single delay; must be >= base [default: 64s]
    ///
    /// No delay ever exceeds the cap, whatever the jitter.
    #[arg(allow_hyphen_values = true, short, long, value_name = "DURATION", value_parser = parse_duration,
          default_value = "64s", hide_default_value = true, help_heading = "Backoff")]
    pub cap: Duration,

    /// Jitter mode: none, full, equal, decorrelated, additive [default: full]
    ///
    /// With v = min(cap, base * multiplier^n): none waits v; full U(0, v); equal
    /// v/2 + U(0, v/2); decorrelated s = min(cap, U(base, 3*s)) from s = base (AWS
    /// Architecture Blog, "Exponential Backoff And Jitter"); additive
    /// min(cap, base * multiplier^n + U(0, base)) (Google Cloud's retry guides).
    #[arg(allow_hyphen_values = true, short, long, value_name = "MODE", value_parser = Jitter::from_str,
          default_value = "full", hide_default_value = true, help_heading = "Backoff")]
    pub jitter: Jitter,

    /// Seed the jitter, to reproduce a schedule [default: from the OS]
    ///
    /// For reproducing a schedule only: a fixed seed on many clients brings back the
    /// thundering herd that jitter exists to prevent.
    #[arg(
        allow_hyphen_values = true,
        long,
        value_name = "N",
        help_heading = "Backoff"
    )]
    pub seed: Option<u64>,

    /// Retries after the first attempt, or "unlimited" [default: 5]
    ///
    /// The default 5 means at most 6 attempts in all.
    #[arg(allow_hyphen_values = true, short = 'n', long, value_name = "N|unlimited", value_parser = RetryLimit::from_str,
          default_value = "5", hide_default_value = true, help_heading = "Stopping")]
    pub max_retries: RetryLimit,

    /// Total time budget from the start
    ///
    /// Measured on a monotonic clock. An attempt still running when it passes is stopped like
    /// a timeout; no attempt starts after it; if the next delay would end at or past it,
    /// retry gives up at once instead of sleeping.
    #[arg(allow_hyphen_values = true, short, long, value_name = "DURATION", value_parser = parse_duration,
          help_heading = "Stopping")]
    pub deadline: Option<Duration>,

    /// Time limit for each attempt
    ///
    /// A timed-out attempt gets TERM (its whole process tree), then KILL after --kill-after;
    /// its status is 124, or 137 if KILL was needed, and it is retried like any failure.
    #[arg(allow_hyphen_values = true, short, long, value_name = "DURATION", value_parser = parse_duration,
          help_heading = "Stopping")]
    pub timeout: Option<Duration>,

    /// Grace between TERM and KILL when an attempt is stopped [default: 10s]
    #[arg(allow_hyphen_values = true, long, value_name = "DURATION", value_parser = parse_duration,
          default_value = "10s", hide_default_value = true, help_heading = "Stopping")]
    pub kill_after: Duration,

    /// Only these statuses are retried [default: any non-zero]
    ///
    /// CODES: comma-separated statuses and inclusive ranges, e.g. 1,75,100-199. A death by
    /// signal N is status 128+N, and a signal name (SIGPIPE or PIPE) stands for it. May name
    /// statuses of the default stop set (126, 127, 141) to retry them after all.
    #[arg(allow_hyphen_values = true, long, value_name = "CODES", value_parser = CodeSet::from_str,
          help_heading = "Conditions")]
    pub retry_on: Option<CodeSet>,

    /// These statuses are never retried [default: 126,127,141]
    ///
    /// Added to the default stop set (126 cannot execute, 127 not found, 141 SIGPIPE); wins
    /// over --retry-on. Same CODES syntax.
    #[arg(allow_hyphen_values = true, long, value_name = "CODES", value_parser = CodeSet::from_str,
          help_heading = "Conditions")]
    pub stop_on: Option<CodeSet>,

    /// An attempt with a matching output line counts as failed, even with status 0
    ///
    /// Matched per line against the attempt's stdout and stderr (regex crate syntax), while
    /// the output still streams through. May be repeated. If retry gives up after an attempt
    /// that exited 0 but failed this way, it exits 1.
    #[arg(long, value_name = "REGEX", value_parser = parse_regex, help_heading = "Conditions")]
    pub retry_if_output: Vec<Regex>,

    /// An attempt with a matching output line is not retried, whatever its status
    ///
    /// Matched per line against stdout and stderr. May be repeated.
    #[arg(long, value_name = "REGEX", value_parser = parse_regex, help_heading = "Conditions")]
    pub stop_if_output: Vec<Regex>,

    /// Take the next delay from a server hint in a failed attempt's output
    ///
    /// A line matching REGEX whose first capture group is a number of seconds (decimal), as in
    /// an HTTP "Retry-After: 30" header from `curl -sS -D - ...`, makes the next delay at least
    /// that long, even past --cap (the server knows best). If it would pass --deadline, retry
    /// gives up at once. May be repeated.
    #[arg(long, value_name = "REGEX", value_parser = parse_capturing_regex,
          help_heading = "Conditions")]
    pub delay_from_output: Vec<Regex>,

    /// Give every attempt the same stdin: read it once, replay it from the start
    ///
    /// Attempt 1 streams stdin as it arrives; later attempts get the full recorded copy.
    /// Memory stays bounded: past 8 MiB the copy spills to an unlinked temporary file (mode
    /// 0600 in TMPDIR), gone however retry ends.
    #[arg(long, help_heading = "Output")]
    pub replay_stdin: bool,

    /// Hold each attempt's stdout; print it only if that attempt succeeds
    ///
    /// stdout then carries exactly one attempt's output. A failed attempt's held stdout goes
    /// to stderr, so nothing is lost. Memory stays bounded as with --replay-stdin.
    #[arg(long, help_heading = "Output")]
    pub stdout_on_success: bool,

    /// Print the planned schedule and exit; runs nothing
    ///
    /// One row per planned retry: its number, the delay, and the cumulative delay (at most
    /// 20 rows when unlimited; rows that reach --deadline are left out). Use --seed to
    /// reproduce a schedule.
    #[arg(long, help_heading = "Output")]
    pub dry_run: bool,

    /// Silence retry's own progress lines (never its errors)
    #[arg(short, long, conflicts_with = "verbose", help_heading = "Output")]
    pub quiet: bool,

    /// More detail: the command's arguments, each attempt's start and duration, the seed
    #[arg(short, long, help_heading = "Output")]
    pub verbose: bool,

    /// The command to run, and its arguments
    #[arg(value_name = "COMMAND", required_unless_present = "dry_run",
          trailing_var_arg = true, num_args = 1..)]
    pub command: Vec<OsString>,
}

/// `--max-retries`: a count or `unlimited`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryLimit(pub Option<u64>);

impl FromStr for RetryLimit {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("unlimited") {
            return Ok(RetryLimit(None));
        }
        s.parse::<u64>()
            .map(|n| RetryLimit(Some(n)))
            .map_err(|_| "expected a number of retries (0 or more) or 'unlimited'".into())
    }
}

/// `--multiplier`: a finite number `>= 1`.
fn parse_multiplier(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(m) if m.is_finite() && m >= 1.0 => Ok(m),
        Ok(_) => Err("must be a finite number >= 1".into()),
        Err(_) => Err("expected a number >= 1".into()),
    }
}

/// A REGEX for the output flags (regex crate syntax, matched against bytes), its error on one
/// line.
fn parse_regex(s: &str) -> Result<Regex, String> {
    Regex::new(s).map_err(|e| {
        let text = e.to_string();
        let last = text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        last.trim().trim_start_matches("error: ").to_string()
    })
}

/// A REGEX with at least one capture group (`--delay-from-output`).
fn parse_capturing_regex(s: &str) -> Result<Regex, String> {
    let re = parse_regex(s)?;
    if re.captures_len() < 2 {
        return Err(
            "needs a capture group for the number of seconds, e.g. 'Retry-After: (\\d+)'".into(),
        );
    }
    Ok(re)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn verify_cli() {
        Cli::command().debug_assert();
    }

    #[test]
    fn multiplier_bounds() {
        assert_eq!(parse_multiplier("1"), Ok(1.0));
        assert!(parse_multiplier("0.9").is_err());
        assert!(parse_multiplier("inf").is_err());
        assert!(parse_multiplier("NaN").is_err());
    }

    #[test]
    fn retry_limit() {
        assert_eq!("unlimited".parse(), Ok(RetryLimit(None)));
        assert_eq!("3".parse(), Ok(RetryLimit(Some(3))));
        assert!("-1".parse::<RetryLimit>().is_err());
    }
}
