//! Small value types that the command line parses and the rest of retry reads, and the small
//! enums of the validated settings that retry's words show ([`Verbosity`], [`Shape`]): shared
//! here so that [`crate::cli`], [`crate::preset`], [`crate::config`], [`crate::report`] and
//! [`crate::budget`] use them without depending on one another.

use std::ffi::OsStr;
use std::fmt;
use std::str::FromStr;

/// `--max-retries`: a count of retries after the first attempt, or `unlimited` (`None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryLimit(pub Option<u64>);

impl FromStr for RetryLimit {
    type Err = String;

    /// Parses `unlimited` (any case) or a whole number `0..=u64::MAX`.
    ///
    /// # Errors
    /// The one-line reason, for clap to show with the flag and the value.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("unlimited") {
            return Ok(RetryLimit(None));
        }
        s.parse::<u64>()
            .map(|n| RetryLimit(Some(n)))
            .map_err(|_| "expected a number of retries (0 or more) or 'unlimited'".into())
    }
}

/// `--log-format`: the format of retry's own progress on stderr.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Lines for people: `retry: attempt 1 of 6: ...`.
    #[default]
    Text,
    /// One JSON object per event and line, for machines.
    Json,
}

/// `--color`: when retry colours its own words on stderr.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    /// When stderr is a terminal whose `TERM` is not `dumb`, unless `NO_COLOR` is set to
    /// something; or whenever `CLICOLOR_FORCE` is (no-color.org, the CLICOLOR convention).
    #[default]
    Auto,
    /// Always, even into a pipe or a file.
    Always,
    /// Never.
    Never,
}

/// `--on-retry-fail`: what a failing `--on-retry` hook does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum HookFailure {
    /// Report it and go on retrying.
    #[default]
    Continue,
    /// Give up at once.
    Stop,
}

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

/// When the loop is done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Shape {
    /// At the first success (retry's loop without `--successes`, `--until-fail` or
    /// `--forever`).
    #[default]
    Plain,
    /// `--successes N`, N >= 2: after N successful attempts in a row. Retries count failures
    /// only.
    Streak(u64),
    /// `--until-fail`: at the first failure; the retries are the runs after a success.
    UntilFail,
    /// `--forever`: never done by itself; the command runs again whatever it exits with, until
    /// a stop signal, the deadline, a status that is not retried, or a crash loop (`-n`).
    Forever,
}

impl Shape {
    /// The most attempts a run that may make `retries` retries makes: each retry, and the first
    /// attempt, may start a streak of up to N attempts (N - 1 successes and a failure, or N
    /// successes), so `(retries + 1) * N` for `--successes N`, `retries + 1` otherwise;
    /// saturating.
    pub fn attempts(self, retries: u64) -> u64 {
        retries
            .saturating_add(1)
            .saturating_mul(self.attempts_per_retry())
    }

    /// The attempts one retry may lead to: N for `--successes N`, 1 otherwise.
    pub fn attempts_per_retry(self) -> u64 {
        match self {
            Shape::Streak(n) => n,
            Shape::Plain | Shape::UntilFail | Shape::Forever => 1,
        }
    }
}

/// The longest budget KEY accepted, in bytes.
pub const MAX_KEY_BYTES: usize = 255;

/// A validated budget KEY (`--budget KEY`); its forms in the stores, as a file name and as a
/// Redis key, are the budget module's.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BudgetKey(Vec<u8>);

impl BudgetKey {
    /// Accepts any bytes, 1 to [`MAX_KEY_BYTES`] long (`/`, `..`, NUL, newlines, non-UTF-8:
    /// all are encoded safely by the stores).
    ///
    /// # Errors
    /// A message (without the flag's name) for an empty or overlong KEY.
    pub fn new(bytes: impl Into<Vec<u8>>) -> Result<BudgetKey, String> {
        let bytes = bytes.into();
        if bytes.is_empty() {
            return Err("a budget KEY cannot be empty".into());
        }
        if bytes.len() > MAX_KEY_BYTES {
            return Err(format!(
                "a budget KEY is at most {MAX_KEY_BYTES} bytes, not {}",
                bytes.len()
            ));
        }
        Ok(BudgetKey(bytes))
    }

    /// As [`BudgetKey::new`], from a command-line argument.
    ///
    /// # Errors
    /// As [`BudgetKey::new`].
    pub fn from_os(arg: &OsStr) -> Result<BudgetKey, String> {
        BudgetKey::new(arg.as_encoded_bytes())
    }

    /// The KEY's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Display for BudgetKey {
    /// The KEY for messages: lossy UTF-8 with control characters escaped.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in String::from_utf8_lossy(&self.0).chars() {
            if c.is_control() {
                write!(f, "{}", c.escape_default())?;
            } else {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_limit() {
        assert_eq!("unlimited".parse(), Ok(RetryLimit(None)));
        assert_eq!("UNLIMITED".parse(), Ok(RetryLimit(None)));
        assert_eq!("3".parse(), Ok(RetryLimit(Some(3))));
        assert!("-1".parse::<RetryLimit>().is_err());
        assert!("".parse::<RetryLimit>().is_err());
    }
}
