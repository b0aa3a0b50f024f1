//! The "Conditions" heading: `--retry-on`, `--stop-on`, the output-matching flags and the
//! server's answers (`--http-hints`, `--http-retry-on`, `--max-hint`).

// The doc comments below are the help text, written for a terminal: `RETRY_<FLAG>` is not HTML.
#![allow(rustdoc::invalid_html_tags)]

use std::str::FromStr;
use std::time::Duration;

use clap::Args;
use clap::builder::BoolishValueParser;
use regex::bytes::Regex;

use crate::codes::CodeSet;
use crate::duration::parse_duration;
use crate::http_status::HttpStatuses;
use crate::transient::{Class, Classes};

/// The "Conditions" heading: which attempts failed, and which failures are retried.
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "Conditions")]
pub struct ConditionArgs {
    /// Only these statuses are retried [default: any non-zero]
    ///
    /// CODES: comma-separated statuses and inclusive ranges, e.g. 1,75,100-199. A death by
    /// signal N is status 128+N, and a signal name (SIGPIPE or PIPE) stands for it. May name
    /// statuses of the default stop set (126, 127) to retry them after all.
    #[arg(allow_hyphen_values = true, long, env = "RETRY_RETRY_ON", value_name = "CODES",
          value_parser = CodeSet::from_str)]
    pub retry_on: Option<CodeSet>,

    /// These statuses are never retried [default: 126,127]
    ///
    /// Added to the default stop set (126 cannot execute, 127 not found); wins over
    /// --retry-on. Same CODES syntax. With --forever, 0 restarts only on failure.
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
    /// A line matching REGEX whose first capture group is a number of seconds (decimal) or an
    /// HTTP-date makes the next delay at least that long, even past --cap, as with
    /// --http-hints (which needs no regex for HTTP headers). Match headers with (?i): HTTP/2
    /// sends their names in lower case. A capture that is neither is reported on one line and
    /// ignored. May be repeated.
    #[arg(long, value_name = "REGEX", value_parser = parse_capturing_regex)]
    pub delay_from_output: Vec<Regex>,

    /// Wait at least as long as the server asks in HTTP headers in a failed attempt's output
    ///
    /// Reads the response header lines that `curl -sS -D - ...`, `curl -i`, `curl -v` or
    /// `wget -S` print (HTTP/1.1 or HTTP/2, names in any case) on stdout or stderr, which still stream through
    /// as they come: Retry-After (seconds or an HTTP-date, RFC 9110 section 10.2.3), RateLimit
    /// with r=0 and t=SECONDS (IETF draft-ietf-httpapi-ratelimit-headers), X-RateLimit-Reset
    /// (epoch seconds) with X-RateLimit-Remaining: 0 (GitHub's API) and x-amz-retry-after
    /// (milliseconds, AWS). The next delay is then at least the longest of them, even past
    /// --cap, and the progress line names it; a hint in the past adds nothing. A hint that
    /// would pass --deadline, or asks for more than --max-hint, makes retry give up at once.
    /// Only a response's header block is read (from an HTTP status line to the blank line
    /// after it, or to the first line wget -S did not indent): a body's lines never count,
    /// whatever they say.
    /// RETRY_HTTP_HINTS=true (or 1, yes, on) sets it too.
    #[arg(long, env = "RETRY_HTTP_HINTS", value_parser = BoolishValueParser::new())]
    pub http_hints: bool,

    /// With --http-hints, only these HTTP statuses are retried [default: 408,425,429,500-599]
    ///
    /// A failed attempt whose last response (after redirects, the final one read) has another
    /// error status (4xx, 5xx) is not retried, as for --stop-on: a 404, 401, 403, 400 or 422
    /// will not change by asking again; with the default set, unless its headers ask for a
    /// wait (Retry-After, a spent rate limit), which says when to come back (a set given is
    /// kept to). STATUSES: codes, ranges and classes,
    /// e.g. 429,5xx or 408,500-504; "any" retries every status. A failure without an error
    /// status (a refused connection, a DNS failure, a timeout, a body cut short after a 200)
    /// is retried as before; a success is one whatever it printed. The status is read from
    /// the headers in the output (`curl -fsS -D /dev/stderr URL`, `curl -fsS -v`, `wget -S`,
    /// or `-i` without -f), or from curl's own last line, `curl: (22) The requested URL
    /// returned error: 404`.
    #[arg(allow_hyphen_values = true, long, env = "RETRY_HTTP_RETRY_ON",
          value_name = "STATUSES", value_parser = HttpStatuses::from_str)]
    pub http_retry_on: Option<HttpStatuses>,

    /// Longest server hint honoured [default: 1h]
    ///
    /// A server that asks for a longer wait (--http-hints, --delay-from-output) makes retry
    /// give up at once, with a line naming the hint, instead of sleeping for days. 0 means no
    /// limit.
    #[arg(allow_hyphen_values = true, long, env = "RETRY_MAX_HINT", value_name = "DURATION",
          value_parser = parse_duration)]
    pub max_hint: Option<Duration>,

    /// Retry only failures known to be transient (classes: all, or a list)
    ///
    /// Retry only failures known to be transient, of these classes (default: all): timeout,
    /// dns, connect, reset, tls, http, rate-limit, busy, pattern. Any other failure ends the
    /// run at once with its status. The man page lists what each class matches.
    #[arg(long, env = "RETRY_TRANSIENT", value_name = "CLASSES", num_args = 0..=1,
          require_equals = true, default_missing_value = "all", value_parser = parse_transient)]
    pub transient: Option<Classes>,

    /// A line matching REGEX makes a failure transient; implies --transient
    ///
    /// A line of the attempt's output that matches REGEX makes its failure transient (class
    /// `pattern`); implies --transient. Repeatable.
    #[arg(long, env = "RETRY_TRANSIENT_PATTERN", value_name = "REGEX", value_parser = parse_regex)]
    pub transient_pattern: Vec<Regex>,
}

/// `--transient`'s value: `all`, `1` or `true` for every class, `0` or `false` for none (the
/// rule off, as without the flag), or a comma-separated list of classes.
fn parse_transient(s: &str) -> Result<Classes, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "all" | "1" | "true" | "yes" | "on" => Ok(Classes::all()),
        "0" | "false" | "no" | "off" => Ok(Classes::default()),
        list => Classes::parse_list(list).map_err(|name| {
            let names: Vec<&str> = Class::ALL.iter().map(|c| c.name()).collect();
            format!(
                "'{name}' is not a class of transient failure ({})",
                names.join(", ")
            )
        }),
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
            "needs a capture group for the seconds or the HTTP-date, e.g. \
             'Retry-After: (\\d+)'"
                .into(),
        );
    }
    Ok(re)
}
