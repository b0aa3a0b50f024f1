//! The retry modes a simulation compares: every jitter mode of [`retry_tool_backoff`] plus
//! `no-backoff`, and the one parser of a comma-separated list of them.

use std::fmt;

use retry_tool_backoff::Jitter;

/// How a simulated client waits between a failed call and its next attempt: a jitter mode of
/// [`retry_tool_backoff`], or none at all. The names (`none`, `full`, ..., `no-backoff`) are
/// the jitter modes' own ([`Jitter::name`]) and `no-backoff` ([`Mode::name`]); the order of
/// [`Mode::ALL`] (also [`VARIANTS`](strum::VariantArray::VARIANTS)), [`Jitter::ALL`]'s then
/// `no-backoff`, is the order of the help and of the chart's colours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Backing off with this jitter mode; [`Jitter::None`] is capped exponential backoff
    /// without jitter, the AWS blog's "Exponential".
    Backoff(Jitter),
    /// Retry at once, with no delay: the AWS blog's baseline ("No Backoff"), whose work grows
    /// with the square of the number of clients.
    NoBackoff,
}

impl strum::VariantArray for Mode {
    const VARIANTS: &'static [Mode] = &Mode::ALL;
}

impl fmt::Display for Mode {
    /// The mode's name ([`Mode::name`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Mode {
    /// Every mode: each of [`Jitter::ALL`], then [`Mode::NoBackoff`].
    pub const ALL: [Mode; Jitter::ALL.len() + 1] = {
        let mut all = [Mode::NoBackoff; Jitter::ALL.len() + 1];
        let mut i = 0;
        while i < Jitter::ALL.len() {
            all[i] = Mode::Backoff(Jitter::ALL[i]);
            i += 1;
        }
        all
    };

    /// The mode's name, as a list names it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Backoff(jitter) => jitter.name(),
            Mode::NoBackoff => "no-backoff",
        }
    }

    /// The mode named `name` (exactly), if any.
    fn named(name: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The jitter mode a client backs off with; `None` for [`Mode::NoBackoff`].
    pub fn jitter(self) -> Option<Jitter> {
        match self {
            Mode::Backoff(jitter) => Some(jitter),
            Mode::NoBackoff => None,
        }
    }

    /// Parses a comma-separated list such as `none,full,equal,decorrelated,no-backoff`: exact
    /// names (no spaces, no other case), in the order of the output, none twice.
    ///
    /// # Errors
    /// [`ModeListError::Unknown`] for a name that is not a mode (an empty name included),
    /// [`ModeListError::Twice`] for a mode listed twice.
    pub fn parse_list(list: &str) -> Result<Vec<Mode>, ModeListError> {
        let mut modes = Vec::new();
        for name in list.split(',') {
            modes.push(Mode::named(name).ok_or_else(|| ModeListError::Unknown(name.to_string()))?);
            if let Some(twice) = Mode::repeated(&modes) {
                return Err(ModeListError::Twice(twice.name().to_string()));
            }
        }
        Ok(modes)
    }

    /// The first mode of `modes` that an earlier one repeats: the one rule of a list (the
    /// parsed one of [`Mode::parse_list`], and a [`crate::SimSpec`]'s, whose check refuses it as
    /// [`crate::SpecError::DuplicateMode`]).
    pub(crate) fn repeated(modes: &[Mode]) -> Option<Mode> {
        modes
            .iter()
            .enumerate()
            .find(|&(i, m)| modes[..i].contains(m))
            .map(|(_, &m)| m)
    }

    /// A number that names the mode in the derivation of random streams: a hash of its name
    /// (FNV-1a), so it depends neither on the mode's place in a list (`full` gives the same
    /// numbers alone or beside others) nor on the order of the variants.
    pub(crate) fn stream_id(self) -> u64 {
        self.name().bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
    }
}

/// Why [`Mode::parse_list`] refused a list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModeListError {
    /// A name that is not a mode (possibly empty).
    Unknown(String),
    /// A mode listed twice (its name).
    Twice(String),
}

impl fmt::Display for ModeListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModeListError::Unknown(name) => {
                let names: Vec<&str> = Mode::ALL.iter().map(|m| m.name()).collect();
                write!(
                    f,
                    "unknown mode '{name}' (expected one or more of {}, comma-separated)",
                    names.join(", ")
                )
            }
            ModeListError::Twice(name) => write!(f, "mode '{name}' is listed twice"),
        }
    }
}

impl std::error::Error for ModeListError {}

impl From<Jitter> for Mode {
    fn from(jitter: Jitter) -> Mode {
        Mode::Backoff(jitter)
    }
}

#[cfg(test)]
mod tests {
    use strum::VariantArray;

    use super::*;

    #[test]
    fn names_and_jitter_modes_round_trip() {
        for &m in Mode::VARIANTS {
            assert_eq!(Mode::named(m.name()), Some(m));
            assert_eq!(m.to_string(), m.name());
            if let Some(j) = m.jitter() {
                assert_eq!(Mode::from(j), m);
            }
        }
        let names: Vec<&str> = Mode::VARIANTS.iter().map(|m| m.name()).collect();
        assert_eq!(
            names,
            [
                "none",
                "full",
                "equal",
                "decorrelated",
                "additive",
                "proportional",
                "no-backoff"
            ]
        );
    }

    #[test]
    fn parses_the_full_list_in_order() {
        let names: Vec<&str> = Mode::VARIANTS.iter().map(|m| m.name()).collect();
        assert_eq!(Mode::parse_list(&names.join(",")).unwrap(), Mode::VARIANTS);
        assert_eq!(
            Mode::parse_list("no-backoff,full").unwrap(),
            vec![Mode::NoBackoff, Mode::Backoff(Jitter::Full)]
        );
    }

    #[test]
    fn rejects_unknown_empty_spaced_and_repeated_names() {
        let e = Mode::parse_list("full,fulll").unwrap_err();
        assert_eq!(e, ModeListError::Unknown("fulll".into()));
        assert!(e.to_string().contains("no-backoff"), "{e}");
        for bad in ["", "full,", " full", "full ", "FULL", "none, full"] {
            assert!(Mode::parse_list(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            Mode::parse_list("full,none,full").unwrap_err(),
            ModeListError::Twice("full".into())
        );
        // The first fault of the list, in its order: a repeat before an unknown name.
        assert_eq!(
            Mode::parse_list("full,full,fulll").unwrap_err(),
            ModeListError::Twice("full".into())
        );
    }

    #[test]
    fn stream_ids_are_distinct() {
        let mut ids: Vec<u64> = Mode::VARIANTS.iter().map(|m| m.stream_id()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), Mode::VARIANTS.len());
    }
}
