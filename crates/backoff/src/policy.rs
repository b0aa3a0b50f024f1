//! A validated backoff policy and the schedule of delays it gives, one run at a time.
//!
//! Two curves give the delay before retry `n` before jitter: the capped exponential
//! `expo(n) = min(cap, base * multiplier^n)` ([`Policy::new`]), or an explicit list of delays
//! whose last one repeats ([`Policy::listed`], as systemd's `RestartSteps=` and minfrin/retry's
//! `-d` give them). Every jitter mode then applies to either alike.
//!
//! Every value is computed in `f64` seconds and clamped to `[0, cap]`, so millions of retries
//! or a multiplier of `1e300` neither overflow nor panic.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use rand::{Rng, RngExt};

use crate::jitter::{Jitter, PROPORTIONAL_SPREAD};

/// A validated backoff policy: base, multiplier, cap and jitter mode, or a list of delays and
/// a jitter mode.
///
/// Invariants, checked by [`Policy::new`]: `0 <= base <= cap`, `multiplier` finite and `>= 1`.
/// A [`Policy::listed`] policy has a list that is not empty; its base is the first delay, its
/// cap the largest and its multiplier 1.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    base: f64,
    multiplier: f64,
    cap: f64,
    jitter: Jitter,
    /// The delays before retries 0, 1, 2, ..., in seconds, the last repeating; `None` for the
    /// exponential curve.
    listed: Option<Arc<[f64]>>,
}

/// Why a policy was refused; the message names the offending quantity.
#[derive(Debug, Clone, PartialEq)]
pub enum PolicyError {
    /// The multiplier was below 1, infinite or NaN.
    Multiplier(f64),
    /// The cap was smaller than the base.
    CapBelowBase,
    /// A list of delays had none.
    NoDelays,
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicyError::Multiplier(m) => {
                write!(f, "multiplier must be a finite number >= 1, got {m}")
            }
            PolicyError::CapBelowBase => f.write_str("cap must be >= base"),
            PolicyError::NoDelays => f.write_str("a list of delays needs at least one"),
        }
    }
}

impl std::error::Error for PolicyError {}

impl Policy {
    /// Builds a policy. `base` is the first delay and `cap` the largest single delay;
    /// `multiplier` is the growth per retry.
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
            listed: None,
        })
    }

    /// A policy of explicit delays: `delays[n]` before retry `n` (from 0), the last one for
    /// every retry after the list, then `jitter` applied to each as to a computed `expo(n)`.
    ///
    /// The list takes the place of the exponential curve: its first delay plays the part of
    /// the base (the lower bound of decorrelated jitter, the random part of additive jitter),
    /// its largest that of the cap (no delay exceeds it, whatever the jitter), and there is no
    /// multiplier. So decorrelated jitter, whose published formula `min(cap, U(base, 3*s))`
    /// uses neither `n` nor the multiplier, follows that formula from the first listed delay
    /// up to the largest, the delays between playing no part. As systemd's `RestartSteps=`
    /// (<https://www.freedesktop.org/software/systemd/man/latest/systemd.service.html>) and
    /// minfrin/retry's `--delay` list (<https://github.com/minfrin/retry>).
    ///
    /// # Errors
    /// [`PolicyError::NoDelays`] for an empty list.
    pub fn listed(delays: &[Duration], jitter: Jitter) -> Result<Policy, PolicyError> {
        let secs: Arc<[f64]> = delays.iter().map(Duration::as_secs_f64).collect();
        let (Some(&first), Some(largest)) = (secs.first(), secs.iter().copied().reduce(f64::max))
        else {
            return Err(PolicyError::NoDelays);
        };
        Ok(Policy {
            base: first,
            multiplier: 1.0,
            cap: largest,
            jitter,
            listed: Some(secs),
        })
    }

    /// The same policy with another jitter mode.
    pub fn with_jitter(&self, jitter: Jitter) -> Policy {
        Policy {
            jitter,
            ..self.clone()
        }
    }

    /// The listed delays of a [`Policy::listed`] policy, in order; `None` for the exponential
    /// curve.
    pub fn delays(&self) -> Option<Vec<Duration>> {
        self.listed
            .as_ref()
            .map(|list| list.iter().map(|&s| to_duration(s)).collect())
    }

    /// Whether the delays come from a list ([`Policy::listed`]).
    pub fn is_listed(&self) -> bool {
        self.listed.is_some()
    }

    /// The jitter mode.
    pub fn jitter(&self) -> Jitter {
        self.jitter
    }

    /// The first delay (of a list: its first).
    pub fn base(&self) -> Duration {
        to_duration(self.base)
    }

    /// The largest single delay (of a list: its largest).
    pub fn cap(&self) -> Duration {
        to_duration(self.cap)
    }

    /// The growth factor per retry (finite, `>= 1`; 1 for a list).
    pub fn multiplier(&self) -> f64 {
        self.multiplier
    }

    /// `expo(n) = min(cap, base * multiplier^n)`, in seconds, for retry index `n` (from 0): the
    /// delay before jitter. For a list, its delay `n`, or its last for `n` past its end.
    ///
    /// Saturates at the cap for any `n`: `multiplier^n` may reach infinity, the minimum does not.
    pub fn expo_secs(&self, n: u64) -> f64 {
        if let Some(list) = &self.listed {
            let last = list.len() - 1;
            return list[usize::try_from(n).map_or(last, |n| n.min(last))];
        }
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
            policy: self.clone(),
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
    /// The policy the delays follow.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The least delay [`Schedule::next_delay`] can draw next, whatever the random draws: the
    /// lower end of the next jitter range (0 for full jitter, half the curve for equal, the
    /// base for decorrelated, the curve for additive, 80 % of it for proportional, the curve
    /// itself without jitter), never more than the cap. Touches neither the schedule nor a
    /// random generator. Lets a caller know that no retry can fit before a deadline.
    pub fn least_next_delay(&self) -> Duration {
        let p = &self.policy;
        let v = p.expo_secs(self.retry);
        let secs = match p.jitter {
            Jitter::None | Jitter::Additive => v,
            Jitter::Full => 0.0,
            Jitter::Equal => v / 2.0,
            Jitter::Decorrelated => p.base,
            Jitter::Proportional => v * (1.0 - PROPORTIONAL_SPREAD),
        };
        to_duration(secs.clamp(0.0, p.cap))
    }

    /// The delay before the next retry, drawn with `rng`; never more than the cap. Only the
    /// jittered modes draw from `rng` (`None` leaves it untouched).
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

    const MODES: [Jitter; 6] = [
        Jitter::None,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
        Jitter::Additive,
        Jitter::Proportional,
    ];

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
    fn zero_base_gives_zero_delays_and_draws_nothing_without_jitter() {
        for j in MODES {
            let p = policy(0.0, 2.0, 0.0, j);
            let mut s = p.schedule();
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
            for _ in 0..10 {
                assert_eq!(s.next_delay(&mut rng), Duration::ZERO, "{j:?}");
            }
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let mut s = policy(0.0, 1.0, 0.0, Jitter::None).schedule();
        s.next_delay(&mut rng);
        assert_eq!(rng, Xoshiro256PlusPlus::seed_from_u64(7));
    }

    #[test]
    fn with_jitter_keeps_the_rest() {
        let p = policy(0.5, 3.0, 9.0, Jitter::Full).with_jitter(Jitter::Equal);
        assert_eq!(p, policy(0.5, 3.0, 9.0, Jitter::Equal));
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

    fn secs(list: &[f64]) -> Vec<Duration> {
        list.iter().map(|&s| Duration::from_secs_f64(s)).collect()
    }

    #[test]
    fn a_list_gives_its_delays_in_order_then_its_last_again() {
        let p = Policy::listed(&secs(&[1.0, 5.0, 30.0, 120.0]), Jitter::None).unwrap();
        let mut s = p.schedule();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let got: Vec<f64> = (0..7)
            .map(|_| s.next_delay(&mut rng).as_secs_f64())
            .collect();
        assert_eq!(got, [1.0, 5.0, 30.0, 120.0, 120.0, 120.0, 120.0]);
        assert_eq!(
            rng,
            Xoshiro256PlusPlus::seed_from_u64(1),
            "no draw without jitter"
        );
        assert_eq!(
            (p.base(), p.cap()),
            (Duration::from_secs(1), Duration::from_secs(120))
        );
        assert_eq!(p.delays(), Some(secs(&[1.0, 5.0, 30.0, 120.0])));
        assert!(p.is_listed() && !policy(1.0, 2.0, 4.0, Jitter::None).is_listed());
        // Far past the list, and past what a usize holds, still the last.
        assert_eq!(p.expo_secs(u64::MAX), 120.0);
        // A list may go down, and hold zeros.
        let down = Policy::listed(&secs(&[30.0, 0.0, 2.0]), Jitter::None).unwrap();
        let mut s = down.schedule();
        let got: Vec<f64> = (0..4)
            .map(|_| s.next_delay(&mut rng).as_secs_f64())
            .collect();
        assert_eq!(got, [30.0, 0.0, 2.0, 2.0]);
        assert_eq!(
            Policy::listed(&[], Jitter::Full),
            Err(PolicyError::NoDelays)
        );
    }

    #[test]
    fn jitter_applies_to_each_listed_delay_as_to_a_computed_one() {
        let list = [0.5, 4.0, 2.0, 10.0];
        for j in MODES {
            let p = Policy::listed(&secs(&list), j).unwrap();
            let mut s = p.schedule();
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
            let mut previous: f64 = 0.5;
            for n in 0..200usize {
                let d = s.next_delay(&mut rng).as_secs_f64();
                let v = list[n.min(list.len() - 1)];
                let (lo, hi) = match j {
                    Jitter::None => (v, v),
                    Jitter::Full => (0.0, v),
                    Jitter::Equal => (v / 2.0, v),
                    // U(first, 3 * previous), capped at the largest.
                    Jitter::Decorrelated => (0.5, (3.0 * previous).min(10.0)),
                    Jitter::Additive => (v, (v + 0.5).min(10.0)),
                    Jitter::Proportional => (v * 0.8, (v * 1.2).min(10.0)),
                };
                assert!(
                    d >= lo - 1e-9 && d <= hi + 1e-9,
                    "{j:?} retry {n}: {d} not in [{lo}, {hi}]"
                );
                previous = d;
            }
        }
    }

    #[test]
    fn with_jitter_keeps_the_list() {
        let p = Policy::listed(&secs(&[1.0, 2.0]), Jitter::None).unwrap();
        let q = p.with_jitter(Jitter::Full);
        assert_eq!(q.delays(), p.delays());
        assert_eq!(q.jitter(), Jitter::Full);
    }

    #[test]
    fn the_least_next_delay_is_the_lower_end_of_each_draw() {
        // For every mode, curve and list: every delay drawn is at least what the schedule said
        // before the draw, and for the modes with a fixed lower end it is reached.
        let exact = [
            (Jitter::None, [1.0, 2.0, 4.0, 8.0, 10.0]),
            (Jitter::Full, [0.0; 5]),
            (Jitter::Equal, [0.5, 1.0, 2.0, 4.0, 5.0]),
            (Jitter::Decorrelated, [1.0; 5]),
            (Jitter::Additive, [1.0, 2.0, 4.0, 8.0, 10.0]),
            (Jitter::Proportional, [0.8, 1.6, 3.2, 6.4, 8.0]),
        ];
        for (j, want) in exact {
            let mut s = policy(1.0, 2.0, 10.0, j).schedule();
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
            for (n, &least) in want.iter().enumerate() {
                let got = s.least_next_delay().as_secs_f64();
                assert!(
                    (got - least).abs() < 1e-9,
                    "{j:?} retry {n}: {got} vs {least}"
                );
                let d = s.next_delay(&mut rng).as_secs_f64();
                assert!(d >= got - 1e-9, "{j:?} retry {n}: {d} < {got}");
            }
        }
        for j in MODES {
            let listed = Policy::listed(&secs(&[3.0, 0.5, 7.0]), j).unwrap();
            for p in [policy(0.1, 3.0, 5.0, j), policy(0.0, 2.0, 1.0, j), listed] {
                let mut s = p.schedule();
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
                for n in 0..300 {
                    let least = s.least_next_delay();
                    assert!(least <= p.cap(), "{j:?} retry {n}");
                    let d = s.next_delay(&mut rng);
                    assert!(d >= least, "{j:?} retry {n}: {d:?} < {least:?}");
                }
            }
        }
    }
}
