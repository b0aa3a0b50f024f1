//! The "Protecting the service" heading: `--splay`, and the retry budget, circuit breaker and
//! shared cooldown that `--budget KEY` shares between runs (`--budget-store`, `--breaker`,
//! `--breaker-cooldown`, `--budget-max-tokens`, `--budget-token-ratio`, `--budget-refill`).
//! Values are parsed here; [`crate::config`] checks how they go together.

// The doc comments below are the help text, written for a terminal: `RETRY_<FLAG>` is not HTML.
#![allow(rustdoc::invalid_html_tags, rustdoc::broken_intra_doc_links)]

use std::ffi::OsString;
use std::time::Duration;

use clap::builder::{OsStringValueParser, TypedValueParser};
use clap::{Args, ValueHint, value_parser};

use crate::duration::parse_duration;
use crate::types::BudgetKey;
use retry_tool_backoff::throttle::MAX_TOKENS_LIMIT;

/// The "Protecting the service" heading: what keeps a fleet of runs from overloading a service
/// that is failing.
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "Protecting the service")]
pub struct ProtectArgs {
    /// Wait a random time, up to DURATION, before the first attempt
    ///
    /// U(0, DURATION), drawn from the --seed of the jitter, so that jobs started together (cron
    /// at minute 0) reach the service spread over DURATION. Counted against --deadline, which
    /// must be longer; interruptible like any wait; --dry-run shows it. 0: none.
    #[arg(allow_hyphen_values = true, long, env = "RETRY_SPLAY", value_name = "DURATION",
          value_parser = parse_duration)]
    pub splay: Option<Duration>,

    /// Share a retry budget, circuit breaker and cooldown with every run using KEY
    ///
    /// Retry throttling as gRFC A6 specifies it: a token count per KEY starts at
    /// --budget-max-tokens (10); each failed attempt that would be retried takes 1 token, each
    /// successful attempt gives --budget-token-ratio (0.1) back; a retry is allowed only while
    /// more than half the maximum is left. First attempts are never refused by the count: a
    /// refused retry ends the run with the last attempt's status ("retry budget for KEY is
    /// spent"). An empty bucket needs 51 successes before it grants a retry again (see
    /// --budget-refill). A server's hint (--http-hints, --delay-from-output; up to
    /// --max-hint) seen by one run makes every run with KEY wait until then before its next
    /// attempt, first attempts included. With
    /// --breaker, runs that gave up open a circuit breaker. The state lives in --budget-store;
    /// any trouble with it gives one warning and the run goes on without a budget. KEY: any
    /// text of 1 to 255 bytes, such as the service's host name.
    #[arg(long, env = "RETRY_BUDGET", value_name = "KEY",
          value_parser = OsStringValueParser::new().try_map(|v: OsString| BudgetKey::from_os(&v)))]
    pub budget: Option<BudgetKey>,

    /// Where --budget keeps its state: a directory or a redis:// URL [default:
    /// $XDG_RUNTIME_DIR/retry]
    ///
    /// The default is $XDG_RUNTIME_DIR/retry, else retry-UID in $TMPDIR (or /tmp). A directory of the user's own (created 0700; refused if another user owns it, others
    /// may write to it, or it is a symlink) holds a file per KEY, 0600, updated under flock(2)
    /// held only for the update: runs on one host share it; local file systems only, not NFS.
    /// A URL redis://[user:password@]host[:port][/db] (or valkey://) shares it between hosts: every host of a fleet then
    /// shares one budget and one breaker per KEY, in the key retry:budget:KEY (kept 30 days
    /// after its last use). Put a URL with a password in RETRY_BUDGET_STORE rather than on the
    /// command line, where ps shows it; retry never prints the password. A lock not obtained
    /// within 100ms, a corrupt state, or a server that cannot be reached within 300ms gives one
    /// warning line and the run goes on as without a budget.
    #[arg(long, env = "RETRY_BUDGET_STORE", hide_env_values = true, value_name = "DIR|URL",
          value_parser = OsStringValueParser::new(), value_hint = ValueHint::DirPath)]
    pub budget_store: Option<OsString>,

    /// Open the circuit breaker after N runs in a row with --budget's KEY gave up
    ///
    /// While it is open, runs do not run the command: they exit 75 (EX_TEMPFAIL) at once with
    /// a line saying until when. After --breaker-cooldown, exactly one run goes through as a
    /// probe (half-open; the others still exit 75): its success closes the breaker, its giving
    /// up opens it again. A run stopped by a signal does not count.
    #[arg(allow_hyphen_values = true, long, env = "RETRY_BREAKER", value_name = "N",
          value_parser = value_parser!(u32).range(1..))]
    pub breaker: Option<u32>,

    /// How long the circuit breaker stays open [default: 60s]
    ///
    /// Then one run is let through as a probe. 0: the probe goes at once; at most 100 years.
    #[arg(allow_hyphen_values = true, long, env = "RETRY_BREAKER_COOLDOWN",
          value_name = "DURATION", value_parser = parse_duration)]
    pub breaker_cooldown: Option<Duration>,

    /// The retry budget's size: gRFC A6's maxTokens [default: 10]
    ///
    /// A number from 0.001 to 1000000, kept to three decimals. A fresh KEY starts full; a
    /// retry is allowed only while more than half of it is left, so a full bucket of 10 grants
    /// 4 retries in a row of failures.
    #[arg(allow_hyphen_values = true, long, env = "RETRY_BUDGET_MAX_TOKENS", value_name = "N",
          value_parser = parse_max_tokens)]
    pub budget_max_tokens: Option<f64>,

    /// Tokens a successful attempt gives back: gRFC A6's tokenRatio [default: 0.1]
    ///
    /// A number from 0.001 up to --budget-max-tokens, kept to three decimals: 0.1 lets one
    /// retry through for every 10 successes.
    #[arg(allow_hyphen_values = true, long, env = "RETRY_BUDGET_TOKEN_RATIO", value_name = "X",
          value_parser = parse_token_ratio)]
    pub budget_token_ratio: Option<f64>,

    /// Give one token back every DURATION, whatever the attempts do [default: never]
    ///
    /// An extension to gRFC A6, after Finagle's RetryBudget, whose minimum of retries per
    /// second keeps a reserve for clients that make few requests. Without it, a KEY used by a
    /// sparse job (hourly cron) that has emptied its bucket gets a retry back only after 51
    /// successful attempts; with --budget-refill 1h it gets one token an hour. 0: never.
    #[arg(allow_hyphen_values = true, long, env = "RETRY_BUDGET_REFILL", value_name = "DURATION",
          value_parser = parse_duration)]
    pub budget_refill: Option<Duration>,
}

/// A number of tokens for `--budget-max-tokens`: finite, at least 0.001, at most
/// [`MAX_TOKENS_LIMIT`].
fn parse_max_tokens(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(n) if n.is_finite() && (0.001..=MAX_TOKENS_LIMIT).contains(&n) => Ok(n),
        Ok(_) => Err(format!("must be a number from 0.001 to {MAX_TOKENS_LIMIT}")),
        Err(_) => Err("expected a number of tokens".into()),
    }
}

/// A number of tokens for `--budget-token-ratio`: finite, at least 0.001 (the upper bound,
/// `--budget-max-tokens`, is checked with the settings together).
fn parse_token_ratio(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(n) if n.is_finite() && (0.001..=MAX_TOKENS_LIMIT).contains(&n) => Ok(n),
        Ok(_) => Err("must be a number from 0.001 up to --budget-max-tokens".into()),
        Err(_) => Err("expected a number of tokens".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_numbers() {
        assert_eq!(parse_max_tokens("10"), Ok(10.0));
        assert_eq!(parse_max_tokens("0.001"), Ok(0.001));
        for bad in ["0", "-1", "0.0001", "inf", "NaN", "2e6", "x", ""] {
            assert!(parse_max_tokens(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_token_ratio("0.1"), Ok(0.1));
        for bad in ["0", "-0.1", "0.0001", "inf", "x"] {
            assert!(parse_token_ratio(bad).is_err(), "{bad}");
        }
    }
}
