//! The retry modes a simulation compares: every jitter mode of [`crate::backoff`] plus
//! `no-backoff`, and the parsing of a comma-separated list of them.

use std::fmt;
use std::str::FromStr;

use crate::backoff::Jitter;

use super::SpecError;

/// How a simulated client waits between a failed call and its next attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Retry at once, with no delay: the AWS blog's baseline ("No Backoff"), whose work grows
    /// with the square of the number of clients.
    NoBackoff,
    /// Wait as the project's [`crate::backoff::Schedule`] says, with this jitter mode;
    /// `Backoff(Jitter::None)` is the blog's plain (capped) exponential backoff.
    Backoff(Jitter),
}

impl Mode {
    /// Every mode, in the order the help lists them: the jitter modes of
    /// [`Jitter::ALL`], then `no-backoff`.
    pub const ALL: [Mode; Jitter::ALL.len() + 1] = {
        let mut all = [Mode::NoBackoff; Jitter::ALL.len() + 1];
        let mut i = 0;
        while i < Jitter::ALL.len() {
            all[i] = Mode::Backoff(Jitter::ALL[i]);
            i += 1;
        }
        all
    };

    /// The mode's name on the command line: a jitter name, or `no-backoff`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::NoBackoff => "no-backoff",
            Mode::Backoff(j) => j.name(),
        }
    }

    /// Parses a comma-separated list such as `none,full,equal,decorrelated,no-backoff`
    /// (spaces around names are ignored). The order is kept: it is the order of the output.
    ///
    /// # Errors
    /// [`SpecError::UnknownMode`] for a name that is not a mode (an empty name included),
    /// [`SpecError::DuplicateMode`] for a mode listed twice.
    pub fn parse_list(list: &str) -> Result<Vec<Mode>, SpecError> {
        let mut modes = Vec::new();
        for name in list.split(',').map(str::trim) {
            let mode: Mode = name.parse()?;
            if modes.contains(&mode) {
                return Err(SpecError::DuplicateMode(name.to_string()));
            }
            modes.push(mode);
        }
        Ok(modes)
    }

    /// A number that names the mode in the derivation of random streams: a hash of its name
    /// (FNV-1a), so it depends neither on the mode's place in a list (`full` gives the same
    /// numbers alone or beside others) nor on the order of [`Mode::ALL`].
    pub(crate) fn stream_id(self) -> u64 {
        self.name().bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Mode {
    type Err = SpecError;

    /// Parses one mode name (see [`Mode::ALL`]).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| SpecError::UnknownMode(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for m in Mode::ALL {
            assert_eq!(m.name().parse::<Mode>(), Ok(m));
        }
    }

    #[test]
    fn parses_the_full_list_in_order() {
        let names: Vec<&str> = Mode::ALL.iter().map(|m| m.name()).collect();
        assert_eq!(Mode::parse_list(&names.join(",")).unwrap(), Mode::ALL);
        assert_eq!(
            Mode::parse_list("none, full,equal ,decorrelated,additive,no-backoff").unwrap(),
            vec![
                Mode::Backoff(Jitter::None),
                Mode::Backoff(Jitter::Full),
                Mode::Backoff(Jitter::Equal),
                Mode::Backoff(Jitter::Decorrelated),
                Mode::Backoff(Jitter::Additive),
                Mode::NoBackoff,
            ]
        );
        assert_eq!(Mode::ALL.last(), Some(&Mode::NoBackoff));
        assert_eq!(
            Mode::parse_list("no-backoff,full").unwrap(),
            vec![Mode::NoBackoff, Mode::Backoff(Jitter::Full)]
        );
    }

    #[test]
    fn rejects_unknown_empty_and_repeated_names() {
        let e = Mode::parse_list("full,fulll").unwrap_err();
        assert_eq!(e, SpecError::UnknownMode("fulll".into()));
        assert!(e.to_string().contains("no-backoff"), "{e}");
        assert!(Mode::parse_list("").is_err());
        assert!(Mode::parse_list("full,").is_err());
        assert_eq!(
            Mode::parse_list("full,none,full").unwrap_err(),
            SpecError::DuplicateMode("full".into())
        );
    }

    #[test]
    fn stream_ids_are_distinct() {
        let mut ids: Vec<u64> = Mode::ALL.iter().map(|m| m.stream_id()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), Mode::ALL.len());
    }
}
