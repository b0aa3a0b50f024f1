//! Why a simulation was refused: each message names the offending quantity and value, so the
//! command line can print it after the flag's name and exit 125.

use std::fmt;

/// An invalid simulation request, found before anything runs.
#[derive(Debug, Clone, PartialEq)]
pub enum SpecError {
    /// The number of clients was 0.
    NoClients,
    /// The number of runs per point was 0.
    NoRuns,
    /// The mode list was empty.
    NoModes,
    /// A mode was listed twice (its name).
    DuplicateMode(String),
    /// The rate-limit capacity (requests per second) was not a finite number > 0.
    Capacity(f64),
    /// More clients than the simulation can hold ([`crate::MAX_CLIENTS`]) or finish in
    /// reasonable time with these modes and settings.
    TooManyClients {
        /// The clients asked for.
        clients: u32,
        /// The most it accepts with the same settings.
        max: u32,
        /// The estimated calls of one run of every mode and point, when the work limit
        /// ([`crate::MAX_CALLS_PER_RUN`]) decided; `None` when memory did.
        calls: Option<f64>,
    },
    /// The number of requests of a `failure-rate` simulation was 0.
    NoRequests,
    /// A `failure-rate` probability outside `[0, 1]` (or not a number).
    FailureRate(f64),
    /// A `failure-rate` arrival rate (requests per second) that is not a finite number > 0.
    ArrivalRate(f64),
    /// Unlimited retries and no deadline at failure rate 1: a request would never end.
    EndlessRetries,
    /// More requests than a `failure-rate` simulation holds in memory
    /// ([`crate::failure_rate::MAX_REQUESTS`]) or finishes in reasonable time with these
    /// settings.
    TooManyRequests {
        /// The requests asked for.
        requests: u32,
        /// The most it accepts with the same settings.
        max: u32,
        /// The estimated calls of every strategy at every failure rate, when the work limit
        /// ([`crate::MAX_CALLS_PER_RUN`]) decided; `None` when memory did.
        calls: Option<f64>,
    },
    /// A rate-limit capacity so small that the clients would retry for too long.
    CapacityTooSmall {
        /// The capacity asked for, in requests per second.
        capacity: f64,
        /// The smallest it accepts with the same settings.
        min: f64,
        /// The estimated calls of one run of every mode and point.
        calls: f64,
    },
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecError::NoClients => f.write_str("the number of clients to simulate must be >= 1"),
            SpecError::NoRuns => f.write_str("the number of runs must be >= 1"),
            SpecError::NoModes => f.write_str("the list of modes to simulate is empty"),
            SpecError::DuplicateMode(name) => write!(f, "mode '{name}' is listed twice"),
            SpecError::Capacity(c) => write!(
                f,
                "capacity must be a finite number of requests per second > 0, got {c}"
            ),
            SpecError::TooManyClients {
                clients,
                max,
                calls: None,
            } => write!(
                f,
                "{clients} clients are more than a simulation holds in memory: at most {max}"
            ),
            SpecError::TooManyClients {
                clients,
                max,
                calls: Some(calls),
            } => write!(
                f,
                "{clients} clients are too much work: about {calls:.1e} calls per run, the limit \
                 is {:.1e}; at most {max} clients with these modes and settings (without \
                 backoff, the work grows with the square of the clients)",
                crate::MAX_CALLS_PER_RUN
            ),
            SpecError::NoRequests => f.write_str("the number of requests to simulate must be >= 1"),
            SpecError::FailureRate(x) => {
                write!(f, "a failure rate is a probability from 0 to 1, got {x}")
            }
            SpecError::ArrivalRate(r) => write!(
                f,
                "the arrival rate must be a finite number of requests per second > 0, got {r}"
            ),
            SpecError::EndlessRetries => f.write_str(
                "with unlimited retries and no deadline, a request that fails every call (failure \
                 rate 1) never ends: limit the retries or set a deadline",
            ),
            SpecError::TooManyRequests {
                requests,
                max,
                calls: None,
            } => write!(
                f,
                "{requests} requests are more than a simulation holds in memory: at most {max}"
            ),
            SpecError::TooManyRequests {
                requests,
                max,
                calls: Some(calls),
            } => write!(
                f,
                "{requests} requests are too much work: about {calls:.1e} calls, the limit is \
                 {:.1e}; at most {max} requests with these settings",
                crate::MAX_CALLS_PER_RUN
            ),
            SpecError::CapacityTooSmall {
                capacity,
                min,
                calls,
            } => write!(
                f,
                "a capacity of {capacity} requests per second is too small: the clients would \
                 make about {calls:.1e} calls per run, the limit is {:.1e}; at least {} requests \
                 per second for these clients, modes and settings",
                crate::MAX_CALLS_PER_RUN,
                three_digits_up(*min)
            ),
        }
    }
}

impl std::error::Error for SpecError {}

/// `x > 0` rounded up to three significant digits, as text: `0.61234` gives `0.613`.
fn three_digits_up(x: f64) -> String {
    let decimals = (2 - x.log10().floor() as i32).max(0);
    let scale = 10f64.powi(decimals);
    format!("{:.*}", decimals as usize, (x * scale).ceil() / scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_up_to_three_digits() {
        assert_eq!(three_digits_up(0.61234), "0.613");
        assert_eq!(three_digits_up(12.01), "12.1");
        assert_eq!(three_digits_up(1234.5), "1235");
        assert_eq!(three_digits_up(0.000_123_01), "0.000124");
    }
}
