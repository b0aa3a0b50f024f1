//! Why a simulation was refused: each message names the offending quantity and value, so the
//! command line can print it as it is and exit 125.

use std::fmt;

use super::Mode;

/// An invalid simulation request, found before anything runs.
#[derive(Debug, Clone, PartialEq)]
pub enum SpecError {
    /// The number of clients was 0.
    NoClients,
    /// The number of runs per point was 0.
    NoRuns,
    /// The mode list was empty.
    NoModes,
    /// A name in the mode list is not a mode (the name, possibly empty).
    UnknownMode(String),
    /// A mode was listed twice (its name).
    DuplicateMode(String),
    /// The rate-limit capacity (requests per second) was not a finite number > 0.
    Capacity(f64),
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecError::NoClients => f.write_str("the number of clients to simulate must be >= 1"),
            SpecError::NoRuns => f.write_str("the number of runs must be >= 1"),
            SpecError::NoModes => f.write_str("the list of modes to simulate is empty"),
            SpecError::UnknownMode(name) => {
                let names: Vec<_> = Mode::ALL.iter().map(|m| m.name()).collect();
                write!(
                    f,
                    "unknown mode '{name}' in the mode list (expected a comma-separated list of {})",
                    names.join(", ")
                )
            }
            SpecError::DuplicateMode(name) => {
                write!(f, "mode '{name}' is listed twice in the mode list")
            }
            SpecError::Capacity(c) => write!(
                f,
                "capacity must be a finite number of requests per second > 0, got {c}"
            ),
        }
    }
}

impl std::error::Error for SpecError {}
