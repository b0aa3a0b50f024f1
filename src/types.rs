//! Small value types that the command line parses and the rest of retry reads: shared here so
//! that [`crate::cli`], [`crate::preset`], [`crate::config`] and [`crate::report`] use them
//! without depending on one another.

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
