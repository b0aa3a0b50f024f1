//! CODES lists (`1,75,100-199`, `SIGPIPE`), and the decision: success, retry or stop.
//!
//! A status is a number 0..=255: an exit code, or `128 + N` for a death by signal N (the shell's
//! convention), with 124 and 137 for a timed-out attempt as in coreutils `timeout`.

use std::fmt;

/// The statuses that are never retried unless `--retry-on` names them: 126 (cannot execute)
/// and 127 (not found). Death by SIGPIPE (141) is retried: an attempt's own connection may
/// have closed; a reader of retry's own output that went away ends the run instead (the
/// supervisor polls retry's stdout and stderr for it).
pub const DEFAULT_STOP: [u8; 2] = [126, 127];

/// A set of statuses 0..=255.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct CodeSet([u64; 4]);

impl CodeSet {
    /// The empty set.
    pub const fn empty() -> CodeSet {
        CodeSet([0; 4])
    }

    /// Adds `code`.
    pub fn insert(&mut self, code: u8) {
        self.0[usize::from(code / 64)] |= 1 << (code % 64);
    }

    /// Whether `code` is in the set.
    pub fn contains(&self, code: u8) -> bool {
        self.0[usize::from(code / 64)] & (1 << (code % 64)) != 0
    }

    /// The union of two sets.
    pub fn union(mut self, other: CodeSet) -> CodeSet {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a |= b;
        }
        self
    }
}

impl fmt::Debug for CodeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set()
            .entries((0..=255u8).filter(|c| self.contains(*c)))
            .finish()
    }
}

impl std::str::FromStr for CodeSet {
    type Err = String;

    /// Parses a CODES list: comma-separated statuses, inclusive ranges `a-b`, and signal
    /// names (`SIGPIPE` or `PIPE`, any case) standing for `128 + N`.
    fn from_str(text: &str) -> Result<CodeSet, String> {
        let mut set = CodeSet::empty();
        if text.trim().is_empty() {
            return Err("empty list of statuses".into());
        }
        for item in text.split(',') {
            let item = item.trim();
            let (lo, hi) = match item.split_once('-') {
                Some((a, b)) => (parse_status(a)?, parse_status(b)?),
                None => {
                    let c = parse_status(item)?;
                    (c, c)
                }
            };
            if lo > hi {
                return Err(format!("range '{item}' runs backwards"));
            }
            for c in lo..=hi {
                set.insert(c);
            }
        }
        Ok(set)
    }
}

/// One status: a number 0..=255 or a signal name.
fn parse_status(text: &str) -> Result<u8, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("empty item in list of statuses".into());
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return text
            .parse::<u8>()
            .map_err(|_| format!("status '{text}' is out of range (0-255)"));
    }
    signal_number(text)
        .map(|n| 128 + n)
        .ok_or_else(|| format!("'{text}' is neither a status (0-255) nor a signal name"))
}

/// The number of the signal named `name` (`SIGTERM`, `TERM`, any case).
pub fn signal_number(name: &str) -> Option<u8> {
    let upper = name.trim().to_ascii_uppercase();
    let full = if upper.starts_with("SIG") {
        upper
    } else {
        format!("SIG{upper}")
    };
    u8::try_from(crate::signal_names::number(&full)?).ok()
}

/// The name of signal `n` (`SIGTERM`), or `signal N` when it has none.
pub fn signal_name(n: i32) -> String {
    match crate::signal_names::name(n) {
        Some(name) => name.to_string(),
        None => format!("signal {n}"),
    }
}

/// What to do after an attempt ended with a given status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Status 0: done.
    Success,
    /// A failure worth another attempt.
    Retry,
    /// A failure that retrying will not fix (or that the user said to stop on).
    Stop,
}

/// Which statuses are retried: `--retry-on` and `--stop-on`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Conditions {
    /// `--retry-on`: when given, only these statuses are retried (it replaces "any non-zero",
    /// and may name statuses of [`DEFAULT_STOP`] to retry them after all).
    pub retry_on: Option<CodeSet>,
    /// `--stop-on`: never retried; wins over `retry_on`.
    pub stop_on: CodeSet,
}

impl Conditions {
    /// The verdict for `status`.
    pub fn verdict(&self, status: u8) -> Verdict {
        if status == 0 {
            Verdict::Success
        } else if self.stop_on.contains(status) {
            Verdict::Stop
        } else if let Some(retry_on) = self.retry_on {
            if retry_on.contains(status) {
                Verdict::Retry
            } else {
                Verdict::Stop
            }
        } else if DEFAULT_STOP.contains(&status) {
            Verdict::Stop
        } else {
            Verdict::Retry
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(text: &str) -> CodeSet {
        text.parse().unwrap()
    }

    #[test]
    fn parses_lists_ranges_and_signals() {
        let s = set("1,75,100-102,SIGPIPE,term");
        let got: Vec<u8> = (0..=255).filter(|c| s.contains(*c)).collect();
        assert_eq!(got, vec![1, 75, 100, 101, 102, 141, 143]);
        assert!(set("PIPE").contains(141));
        assert!(set("0-255").contains(255));
    }

    #[test]
    fn rejects_bad_lists() {
        for bad in [
            "", "1,,2", "256", "5-3", "-1", "SIGNOPE", "1-", "a-b", " , ",
        ] {
            assert!(bad.parse::<CodeSet>().is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn default_decision() {
        let c = Conditions::default();
        assert_eq!(c.verdict(0), Verdict::Success);
        assert_eq!(c.verdict(1), Verdict::Retry);
        assert_eq!(c.verdict(124), Verdict::Retry);
        for s in DEFAULT_STOP {
            assert_eq!(c.verdict(s), Verdict::Stop);
        }
    }

    #[test]
    fn retry_on_replaces_and_stop_on_wins() {
        let c = Conditions {
            retry_on: Some(set("1,127")),
            stop_on: set("1"),
        };
        assert_eq!(c.verdict(1), Verdict::Stop);
        assert_eq!(c.verdict(127), Verdict::Retry);
        assert_eq!(c.verdict(2), Verdict::Stop);
        assert_eq!(c.verdict(0), Verdict::Success);
    }

    #[test]
    fn names_signals() {
        assert_eq!(signal_name(15), "SIGTERM");
        assert_eq!(signal_number("sigkill"), Some(9));
    }
}
