//! The "Conditions" heading: `--retry-on`, `--stop-on` and the output-matching flags.

// The doc comments below are the help text, written for a terminal: `RETRY_<FLAG>` is not HTML.
#![allow(rustdoc::invalid_html_tags)]

use std::str::FromStr;

use clap::Args;
use regex::bytes::Regex;

use crate::codes::CodeSet;

/// The "Conditions" heading: which attempts failed, and which failures are retried.
#[derive(Debug, Args)]
#[command(next_help_heading = "Conditions")]
pub struct ConditionArgs {
    /// Only these statuses are retried [default: any non-zero]
    ///
    /// CODES: comma-separated statuses and inclusive ranges, e.g. 1,75,100-199. A death by
    /// signal N is status 128+N, and a signal name (SIGPIPE or PIPE) stands for it. May name
    /// statuses of the default stop set (126, 127, 141) to retry them after all.
    #[arg(allow_hyphen_values = true, long, env = "RETRY_RETRY_ON", value_name = "CODES",
          value_parser = CodeSet::from_str)]
    pub retry_on: Option<CodeSet>,

    /// These statuses are never retried [default: 126,127,141]
    ///
    /// Added to the default stop set (126 cannot execute, 127 not found, 141 SIGPIPE); wins
    /// over --retry-on. Same CODES syntax.
    #[arg(allow_hyphen_values = true, long, env = "RETRY_STOP_ON", value_name = "CODES",
          value_parser = CodeSet::from_str)]
    pub stop_on: Option<CodeSet>,

    /// An attempt with a matching output line counts as failed, even with status 0
    ///
    /// Matched per line against the attempt's stdout and stderr (regex crate syntax), while
    /// the output still streams through. May be repeated. If retry gives up after an attempt
    /// that exited 0 but failed this way, it exits 1.
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    pub retry_if_output: Vec<Regex>,

    /// An attempt with a matching output line is not retried, whatever its status
    ///
    /// Matched per line against stdout and stderr. May be repeated.
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    pub stop_if_output: Vec<Regex>,

    /// Take the next delay from a server hint in a failed attempt's output
    ///
    /// A line matching REGEX whose first capture group is a number of seconds (decimal), as in
    /// an HTTP "Retry-After: 30" header from `curl -sS -D - ...`, makes the next delay at least
    /// that long, even past --cap (the server knows best). If it would pass --deadline, retry
    /// gives up at once. Match headers with (?i): HTTP/2 sends their names in lower case. A
    /// capture that is not a number of seconds is reported and ignored. May be repeated.
    #[arg(long, value_name = "REGEX", value_parser = parse_capturing_regex)]
    pub delay_from_output: Vec<Regex>,
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
