//! One simulated client's retry decisions, shared by every model.
//!
//! After a failed call the client asks a [`GiveUpRule`] of `retry_tool_backoff`, the very rule a
//! real run of `retry` follows: give up when the retries are used up, or when the deadline has
//! passed, or when the next delay would end at or past the deadline; otherwise wait the delay
//! of the policy's [`Schedule`](retry_tool_backoff::Schedule). Times are simulated milliseconds
//! from the start of the run, when every client makes its first call.

use std::time::Duration;

use rand::Rng;
use retry_tool_backoff::{GiveUpRule, Jitter, Limits, Policy};

/// A client's backoff state for one run.
#[derive(Clone, Debug)]
pub(crate) struct Retrier {
    rule: GiveUpRule,
}

impl Retrier {
    /// A client that backs off as `policy` says (a policy of zero delays for `no-backoff`) and
    /// gives up at `limits`.
    ///
    /// With `first_is_attempt_one`, the first backoff is the schedule's second delay (retry
    /// index 1, i.e. `expo(1) = base * multiplier`): the published simulator increments its
    /// `attempt` before the first backoff. Decorrelated jitter ignores the index (its first
    /// delay there is `U(base, 3 * base)`, as in `ExpoBackoffDecorr`), so nothing is skipped
    /// for it: skipping would also advance its state.
    pub(crate) fn new<R: Rng + ?Sized>(
        policy: &Policy,
        limits: Limits,
        first_is_attempt_one: bool,
        rng: &mut R,
    ) -> Retrier {
        let mut schedule = policy.schedule();
        if first_is_attempt_one && policy.jitter() != Jitter::Decorrelated {
            schedule.next_delay(rng);
        }
        Retrier {
            rule: GiveUpRule::new(schedule, limits),
        }
    }

    /// After a call that failed at `now_ms`: the wait in ms before the next call starts, or
    /// `None` if the client gives up.
    pub(crate) fn after_failure<R: Rng + ?Sized>(
        &mut self,
        now_ms: f64,
        rng: &mut R,
    ) -> Option<f64> {
        let elapsed = Duration::from_secs_f64(now_ms / 1000.0);
        let delay = self.rule.next_delay(elapsed, None, rng).ok()?;
        Some(delay.as_secs_f64() * 1000.0)
    }
}

/// The policy of a `no-backoff` client: every delay zero, and no draw from the generator.
pub(crate) fn no_backoff() -> Policy {
    Policy::new(Duration::ZERO, 1.0, Duration::ZERO, Jitter::None).expect("constant, valid policy")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::Xoshiro256PlusPlus;

    fn policy(jitter: Jitter) -> Policy {
        Policy::new(
            Duration::from_millis(5),
            2.0,
            Duration::from_secs(2),
            jitter,
        )
        .unwrap()
    }

    const NEVER: Limits = Limits {
        max_retries: None,
        deadline: None,
    };

    #[test]
    fn attempt_one_mapping_starts_at_twice_the_base() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let p = policy(Jitter::None);
        let mut r = Retrier::new(&p, NEVER, true, &mut rng);
        let waits: Vec<f64> = (0..4)
            .map(|_| r.after_failure(0.0, &mut rng).unwrap())
            .collect();
        assert_eq!(waits, vec![10.0, 20.0, 40.0, 80.0]);
        let mut r = Retrier::new(&p, NEVER, false, &mut rng);
        assert_eq!(r.after_failure(0.0, &mut rng), Some(5.0));
    }

    #[test]
    fn decorrelated_first_wait_is_between_base_and_three_bases() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
        let p = policy(Jitter::Decorrelated);
        for _ in 0..200 {
            let mut r = Retrier::new(&p, NEVER, true, &mut rng);
            let w = r.after_failure(0.0, &mut rng).unwrap();
            assert!((5.0..=15.0).contains(&w), "{w}");
        }
    }

    #[test]
    fn no_backoff_waits_zero_and_draws_nothing() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut r = Retrier::new(&no_backoff(), NEVER, true, &mut rng);
        assert_eq!(r.after_failure(7.0, &mut rng), Some(0.0));
        assert_eq!(rng, Xoshiro256PlusPlus::seed_from_u64(3));
    }

    #[test]
    fn gives_up_when_retries_are_used_up() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
        let limits = Limits {
            max_retries: Some(2),
            deadline: None,
        };
        let mut r = Retrier::new(&no_backoff(), limits, false, &mut rng);
        assert!(r.after_failure(0.0, &mut rng).is_some());
        assert!(r.after_failure(0.0, &mut rng).is_some());
        assert!(r.after_failure(0.0, &mut rng).is_none());
        let none = Limits {
            max_retries: Some(0),
            deadline: None,
        };
        let mut r = Retrier::new(&no_backoff(), none, false, &mut rng);
        assert!(r.after_failure(0.0, &mut rng).is_none());
    }

    #[test]
    fn gives_up_when_the_wait_would_reach_the_deadline() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let limits = Limits {
            max_retries: None,
            deadline: Some(Duration::from_millis(100)),
        };
        let mut r = Retrier::new(&policy(Jitter::None), limits, false, &mut rng);
        assert_eq!(r.after_failure(90.0, &mut rng), Some(5.0));
        // The next wait is 10 ms: 90 + 10 reaches the deadline.
        assert_eq!(r.after_failure(90.0, &mut rng), None);
        let mut r = Retrier::new(&no_backoff(), limits, false, &mut rng);
        assert_eq!(r.after_failure(100.0, &mut rng), None);
    }
}
