//! The pipeline's settings, which the configuration fills from the command line and the
//! supervisor hands to [`super::RunIo::new`]: what of the attempts' stdin and output passes
//! through retry, and why.

use std::time::Duration;

use regex::bytes::Regex;

/// Pipeline I/O settings: `--replay-stdin`, `--stdout-on-success`, the output conditions,
/// `--http-hints` and `--idle-timeout`.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// Record stdin once and give every attempt the same bytes.
    pub replay_stdin: bool,
    /// `--max-replay`: the most bytes of stdin recorded, `None` for unlimited.
    pub max_replay: Option<u64>,
    /// Hold each attempt's stdout until it succeeds.
    pub stdout_on_success: bool,
    /// `--chronic`: hold all output, and print it only if the run does not succeed.
    pub chronic: bool,
    /// `--max-output`: the most bytes `--chronic` holds, `None` for unlimited.
    pub max_output: Option<u64>,
    /// A matching output line makes the attempt a failure.
    pub retry_if_output: Vec<Regex>,
    /// A matching output line stops the retrying.
    pub stop_if_output: Vec<Regex>,
    /// Server hints: capture group 1 is a number of seconds or an HTTP-date for the next delay.
    pub delay_from_output: Vec<Regex>,
    /// `--http-hints`: read HTTP response header lines in the output for server hints.
    pub http_hints: bool,
    /// `--idle-timeout`: an attempt that writes nothing on stdout or stderr this long is
    /// stopped; `None` when absent or 0.
    pub idle_timeout: Option<Duration>,
    /// CI folds are on (the configuration sets it from the CI system found): the attempt's
    /// output passes through retry, which ends a last line left without a newline, so that
    /// every fold marker starts a line of the log.
    pub end_lines: bool,
    /// `--transient`: each line is read for the classes of transient failure it names.
    pub transient: bool,
    /// `--transient-pattern`: a line that matches names the class `pattern`.
    pub transient_patterns: Vec<Regex>,
}

impl Settings {
    /// Whether any output condition (or `--http-hints`) needs the attempt's output read line
    /// by line.
    pub fn matches_output(&self) -> bool {
        self.http_hints
            || self.transient
            || !(self.retry_if_output.is_empty()
                && self.stop_if_output.is_empty()
                && self.delay_from_output.is_empty())
    }

    /// Whether the attempt's stdout and stderr both pass through retry (held, matched, timed or
    /// line-ended): then, when retry's stdout and stderr are one file, the attempt gets one pipe
    /// for both ([`super::RunIo::piped`]), so that their bytes keep the order they were
    /// written in.
    pub fn reads_output(&self) -> bool {
        self.chronic || self.end_lines || self.matches_output() || self.idle_timeout.is_some()
    }

    /// Whether the attempt simply inherits retry's descriptors (no copies at all).
    pub fn is_plain(&self) -> bool {
        !self.replay_stdin && !self.stdout_on_success && !self.reads_output()
    }
}
