//! The jitter modes: how a delay is randomised around the capped exponential curve, and the one
//! list of them with their names ([`Jitter::ALL`], [`Jitter::name`]), which a command line
//! offers and reads back (the `retry` binary's `--jitter`, its simulator's modes, its reports);
//! the parsing stays with the caller.

/// How a delay is randomised around the exponential curve `expo(n) = min(cap, base *
/// multiplier^n)`, `n` the retry index from 0; `U(a, b)` is a uniform draw, re-drawn for every
/// retry. Every mode keeps every delay within `[0, cap]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Jitter {
    /// Capped exponential, no randomness: `expo(n)`.
    ///
    /// Source: AWS Architecture Blog, "Exponential Backoff And Jitter" (Marc Brooker, 2015),
    /// <https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/>; W. R.
    /// Stevens and S. Rago, *Advanced Programming in the UNIX Environment*, 16.4
    /// (`connect_retry`).
    None,
    /// Full jitter: `U(0, expo(n))`.
    ///
    /// Source: the AWS Architecture Blog post (its recommendation); the same in google-api-core
    /// (<https://github.com/googleapis/python-api-core/blob/main/google/api_core/retry/retry_base.py>)
    /// and the AWS SDKs' standard retry mode
    /// (<https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html>).
    Full,
    /// Equal jitter: `v/2 + U(0, v/2)` with `v = expo(n)`.
    ///
    /// Source: the AWS Architecture Blog post.
    Equal,
    /// Decorrelated jitter: `s = min(cap, U(base, 3*s))`, `s` starting at `base`; the
    /// multiplier plays no part.
    ///
    /// Source: the AWS Architecture Blog post and its simulator,
    /// <https://github.com/aws-samples/aws-arch-backoff-simulator> (`src/backoff_simulator.py`,
    /// `ExpoBackoffDecorr`): the lower bound is `base`, as in the simulator's code.
    Decorrelated,
    /// Additive: `min(cap, base * multiplier^n + U(0, base))`.
    ///
    /// Source: Google Cloud's retry guides, `min((2^n) + random_number_milliseconds,
    /// maximum_backoff)` with base 1 s and a random part of at most 1 s:
    /// <https://cloud.google.com/memorystore/docs/redis/exponential-backoff>,
    /// <https://cloud.google.com/memorystore/docs/valkey/exponential-backoff>,
    /// <https://cloud.google.com/iam/docs/retry-strategy>.
    Additive,
    /// Proportional: `min(cap, v * (1 + U(-0.2, +0.2)))` with `v = expo(n)`, a spread of
    /// [`PROPORTIONAL_SPREAD`] either side of the curve.
    ///
    /// Source: gRPC connection backoff (initial 1 s, multiplier 1.6, jitter 0.2, maximum
    /// 120 s), <https://github.com/grpc/grpc/blob/master/doc/connection-backoff.md>. gRPC lets
    /// the jitter carry a delay up to 1.2 times its maximum; here, as for every mode, no delay
    /// exceeds the cap.
    Proportional,
}

impl Jitter {
    /// Every mode, in the order a command line lists them (a new mode goes here and in
    /// [`Jitter::name`], whose match the compiler checks).
    pub const ALL: [Jitter; 6] = [
        Jitter::None,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
        Jitter::Additive,
        Jitter::Proportional,
    ];

    /// The mode's name, lower case (`none`, `full`, `equal`, `decorrelated`, `additive`,
    /// `proportional`): what a command line takes and a report prints.
    pub const fn name(self) -> &'static str {
        match self {
            Jitter::None => "none",
            Jitter::Full => "full",
            Jitter::Equal => "equal",
            Jitter::Decorrelated => "decorrelated",
            Jitter::Additive => "additive",
            Jitter::Proportional => "proportional",
        }
    }
}

/// The spread of [`Jitter::Proportional`]: a delay is drawn within this fraction either side
/// of `expo(n)` (gRPC's `JITTER = 0.2`).
pub const PROPORTIONAL_SPREAD: f64 = 0.2;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_is_listed_with_its_name() {
        let names: Vec<&str> = Jitter::ALL.iter().map(|j| j.name()).collect();
        assert_eq!(
            names,
            [
                "none",
                "full",
                "equal",
                "decorrelated",
                "additive",
                "proportional"
            ]
        );
    }
}
