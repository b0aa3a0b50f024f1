//! Backoff maths: the jitter modes and the delay schedule. Pure: no processes, no clock.
//!
//! Notation follows `../shared/reference/backoff.md`: `n` is the retry index (the first retry is
//! `n = 0`), `expo(n) = min(cap, base * multiplier^n)`, `U(a, b)` a uniform draw.
//! Growth stops at the cap: every value is computed in `f64` seconds and clamped, so millions of
//! retries or a multiplier of `1e300` neither overflow nor panic.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use rand::{Rng, RngExt};

/// How a delay is randomised around the exponential curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Jitter {
    /// Capped exponential, no randomness: `expo(n)`.
    ///
    /// Source: AWS Architecture Blog, "Exponential Backoff And Jitter" (2015), summarised in
    /// seed `003_988f89b1b5f86b4a.txt`; APUE 16.4 `connect_retry`.
    None,
    /// Full jitter: `U(0, expo(n))`.
    ///
    /// Source: AWS Architecture Blog (its recommendation; seed `003_988f89b1b5f86b4a.txt`);
    /// also google-api-core and the AWS SDK standard retry mode.
    Full,
    /// Equal jitter: `v/2 + U(0, v/2)` with `v = expo(n)`.
    ///
    /// Source: AWS Architecture Blog (seed `003_988f89b1b5f86b4a.txt`).
    Equal,
    /// Decorrelated jitter: `s = min(cap, U(base, 3*s))`, `s` starting at `base`; the
    /// multiplier plays no part.
    ///
    /// Source: AWS Architecture Blog and its simulator (aws-samples/aws-arch-backoff-simulator),
    /// seed `003_988f89b1b5f86b4a.txt`. The lower bound is `base`, as in the simulator's code.
    Decorrelated,
    /// Additive: `min(cap, base * multiplier^n + U(0, base))`.
    ///
    /// Source: Google Cloud's retry guides, `min((2^n) + random_number_milliseconds,
    /// maximum_backoff)` with base 1 s (seeds `000_7b0e69d4c8ec7be0.txt`,
    /// `001_57f36dd16a76c96d.txt`, `002_97c4b78393fd7495.txt`).
    Additive,
    /// Proportional: `min(cap, v * (1 + U(-0.2, +0.2)))` with `v = expo(n)`, a spread of
    /// [`PROPORTIONAL_SPREAD`] either side of the curve.
    ///
    /// Source: gRPC connection backoff (`doc/connection-backoff.md` in grpc/grpc: initial 1 s,
    /// multiplier 1.6, jitter 0.2, maximum 120 s). gRPC lets the jitter carry a delay up to
    /// 1.2 times its maximum; here, as for every mode, no delay exceeds the cap.
    Proportional,
}

/// The spread of [`Jitter::Proportional`]: a delay is drawn within this fraction either side
/// of `expo(n)` (gRPC's `JITTER = 0.2`).
pub const PROPORTIONAL_SPREAD: f64 = 0.2;

impl Jitter {
    /// Every mode, in the order the help lists them.
    pub const ALL: [Jitter; 6] = [
        Jitter::None,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
        Jitter::Additive,
        Jitter::Proportional,
    ];

    /// The mode's name on the command line.
    pub fn name(self) -> &'static str {
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

impl fmt::Display for Jitter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Jitter {
    type Err = String;

    /// Parses a mode name (`none`, `full`, `equal`, `decorrelated`, `additive`,
    /// `proportional`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Jitter::ALL
            .into_iter()
            .find(|j| j.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Jitter::ALL.iter().map(|j| j.name()).collect();
                format!("unknown jitter mode (expected one of {})", names.join(", "))
            })
    }
}

/// A validated backoff policy.
///
/// Invariants, checked by [`Policy::new`]: `0 <= base <= cap`, `multiplier` finite and `>= 1`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Policy {
    base: f64,
    multiplier: f64,
    cap: f64,
    jitter: Jitter,
}

/// Why a policy was refused; the message names the offending quantity.
#[derive(Debug, Clone, PartialEq)]
pub enum PolicyError {
    /// The multiplier was below 1, infinite or NaN.
    Multiplier(f64),
    /// The cap was smaller than the base.
    CapBelowBase,
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicyError::Multiplier(m) => {
                write!(f, "multiplier must be a finite number >= 1, got {m}")
            }
            PolicyError::CapBelowBase => f.write_str("cap must be >= base"),
        }
    }
}

impl std::error::Error for PolicyError {}

impl Policy {
    /// Builds a policy. `base` is the first delay and `cap` the largest single delay, both
    /// durations; `multiplier` is the growth per retry.
    ///
    /// # Errors
    /// [`PolicyError::Multiplier`] unless `multiplier` is finite and `>= 1`;
    /// [`PolicyError::CapBelowBase`] if `cap < base`.
    pub fn new(
        base: Duration,
        multiplier: f64,
        cap: Duration,
        jitter: Jitter,
    ) -> Result<Policy, PolicyError> {
        if !(multiplier.is_finite() && multiplier >= 1.0) {
            return Err(PolicyError::Multiplier(multiplier));
        }
        if cap < base {
            return Err(PolicyError::CapBelowBase);
        }
        Ok(Policy {
            base: base.as_secs_f64(),
            multiplier,
            cap: cap.as_secs_f64(),
            jitter,
        })
    }

    /// The jitter mode.
    pub fn jitter(&self) -> Jitter {
        self.jitter
    }

    /// The first delay.
    pub fn base(&self) -> Duration {
        to_duration(self.base)
    }

    /// The largest single delay.
    pub fn cap(&self) -> Duration {
        to_duration(self.cap)
    }

    /// The growth factor per retry (finite, `>= 1`).
    pub fn multiplier(&self) -> f64 {
        self.multiplier
    }

    /// `expo(n) = min(cap, base * multiplier^n)`, in seconds, for retry index `n` (from 0).
    ///
    /// Saturates at the cap for any `n`: `multiplier^n` may reach infinity, the minimum does not.
    pub fn expo_secs(&self, n: u64) -> f64 {
        if self.base == 0.0 {
            return 0.0;
        }
        let v = self.base * self.multiplier.powf(n as f64);
        // `!(v < cap)` also catches an infinite v.
        if v < self.cap { v } else { self.cap }
    }

    /// A fresh schedule: the delays before retry 0, 1, 2, ...
    pub fn schedule(&self) -> Schedule {
        Schedule {
            policy: *self,
            retry: 0,
            decorrelated: self.base,
        }
    }
}

/// The delays of one run, in order. Holds the state decorrelated jitter needs, so use one
/// schedule per run of retries.
#[derive(Clone, Debug)]
pub struct Schedule {
    policy: Policy,
    retry: u64,
    decorrelated: f64,
}

impl Schedule {
    /// The delay before the next retry, drawn with `rng`; never more than the cap.
    pub fn next_delay<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Duration {
        let p = &self.policy;
        let n = self.retry;
        self.retry = self.retry.saturating_add(1);
        let secs = match p.jitter {
            Jitter::None => p.expo_secs(n),
            Jitter::Full => uniform(rng, 0.0, p.expo_secs(n)),
            Jitter::Equal => {
                let v = p.expo_secs(n);
                v / 2.0 + uniform(rng, 0.0, v / 2.0)
            }
            Jitter::Decorrelated => {
                let hi = self.decorrelated * 3.0;
                self.decorrelated = uniform(rng, p.base, hi).min(p.cap);
                self.decorrelated
            }
            Jitter::Additive => p.expo_secs(n) + uniform(rng, 0.0, p.base),
            Jitter::Proportional => {
                let v = p.expo_secs(n);
                v * (1.0 + uniform(rng, -PROPORTIONAL_SPREAD, PROPORTIONAL_SPREAD))
            }
        };
        to_duration(secs.clamp(0.0, p.cap))
    }
}

/// A uniform draw from `[lo, hi)` (or exactly `lo` when `hi <= lo`); never panics.
fn uniform<R: Rng + ?Sized>(rng: &mut R, lo: f64, hi: f64) -> f64 {
    let unit: f64 = rng.random();
    lo + (hi - lo).max(0.0) * unit
}

/// Seconds to a `Duration`, saturating instead of panicking on huge or invalid values.
fn to_duration(secs: f64) -> Duration {
    Duration::try_from_secs_f64(secs.max(0.0)).unwrap_or(Duration::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::Xoshiro256PlusPlus;

    fn policy(base: f64, mult: f64, cap: f64, jitter: Jitter) -> Policy {
        Policy::new(
            Duration::from_secs_f64(base),
            mult,
            Duration::from_secs_f64(cap),
            jitter,
        )
        .unwrap()
    }

    #[test]
    fn none_doubles_until_the_cap() {
        let p = policy(1.0, 2.0, 10.0, Jitter::None);
        let mut s = p.schedule();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let got: Vec<f64> = (0..6)
            .map(|_| s.next_delay(&mut rng).as_secs_f64())
            .collect();
        assert_eq!(got, vec![1.0, 2.0, 4.0, 8.0, 10.0, 10.0]);
    }

    #[test]
    fn rejects_bad_policies() {
        let one = Duration::from_secs(1);
        assert_eq!(
            Policy::new(one, 0.5, one, Jitter::Full),
            Err(PolicyError::Multiplier(0.5))
        );
        assert!(Policy::new(one, f64::NAN, one, Jitter::Full).is_err());
        assert!(Policy::new(one, f64::INFINITY, one, Jitter::Full).is_err());
        assert_eq!(
            Policy::new(one, 2.0, Duration::from_millis(10), Jitter::Full),
            Err(PolicyError::CapBelowBase)
        );
    }

    #[test]
    fn zero_base_gives_zero_delays() {
        for j in Jitter::ALL {
            let p = policy(0.0, 2.0, 0.0, j);
            let mut s = p.schedule();
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
            for _ in 0..10 {
                assert_eq!(s.next_delay(&mut rng), Duration::ZERO, "{j}");
            }
        }
    }

    #[test]
    fn proportional_stays_within_twenty_percent_and_under_the_cap() {
        // gRPC's published policy: 1 s, x1.6, +/-20 %, cap 120 s.
        let p = policy(1.0, 1.6, 120.0, Jitter::Proportional);
        let mut s = p.schedule();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        for n in 0..40 {
            let d = s.next_delay(&mut rng).as_secs_f64();
            let v = p.expo_secs(n);
            assert!(
                d >= v * 0.8 - 1e-9 && d <= (v * 1.2).min(120.0) + 1e-9,
                "{n}: {d}"
            );
        }
    }

    #[test]
    fn jitter_names_round_trip() {
        for j in Jitter::ALL {
            assert_eq!(j.name().parse::<Jitter>(), Ok(j));
        }
        assert!(
            "fulll"
                .parse::<Jitter>()
                .unwrap_err()
                .contains("decorrelated")
        );
    }
}
