//! One simulated client's retry decisions, shared by every model.
//!
//! After a failed call the client decides exactly as `retry` itself does (see
//! `Supervisor::run` in `src/supervise.rs`): give up when the retries are used up, or when the
//! deadline has passed, or when the next delay would end at or past the deadline; otherwise
//! wait the delay that the project's [`Schedule`] gives. Times are simulated milliseconds from
//! the start of the run, when every client makes its first call.

use rand::Rng;

use crate::backoff::{Jitter, Policy, Schedule};

/// When clients give up; both absent means never (the blog's model).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Limits {
    /// Retries allowed after the first call (`--max-retries`); `None` is unlimited.
    pub(crate) max_retries: Option<u64>,
    /// No retry may start at or after this time, in ms (`--deadline`).
    pub(crate) deadline_ms: Option<f64>,
}

/// A client's backoff state for one run.
#[derive(Clone, Debug)]
pub(crate) struct Retrier {
    /// `None` for `no-backoff`.
    schedule: Option<Schedule>,
    retries: u64,
}

impl Retrier {
    /// A client that backs off as `policy` says, or retries at once when `policy` is `None`.
    ///
    /// With `first_is_attempt_one`, the first backoff is the schedule's second delay (retry
    /// index 1, i.e. `expo(1) = base * multiplier`): the published simulator increments its
    /// `attempt` before the first backoff. Decorrelated jitter ignores the index (its first
    /// delay there is `U(base, 3 * base)`, as in `ExpoBackoffDecorr`), so nothing is skipped
    /// for it: skipping would also advance its state.
    pub(crate) fn new<R: Rng + ?Sized>(
        policy: Option<&Policy>,
        first_is_attempt_one: bool,
        rng: &mut R,
    ) -> Retrier {
        let schedule = policy.map(|p| {
            let mut s = p.schedule();
            if first_is_attempt_one && p.jitter() != Jitter::Decorrelated {
                s.next_delay(rng);
            }
            s
        });
        Retrier {
            schedule,
            retries: 0,
        }
    }

    /// After a call that failed at `now_ms`: the wait in ms before the next call starts, or
    /// `None` if the client gives up.
    pub(crate) fn after_failure<R: Rng + ?Sized>(
        &mut self,
        now_ms: f64,
        limits: &Limits,
        rng: &mut R,
    ) -> Option<f64> {
        if limits.max_retries.is_some_and(|m| self.retries >= m) {
            return None;
        }
        if limits.deadline_ms.is_some_and(|d| now_ms >= d) {
            return None;
        }
        let wait = match &mut self.schedule {
            Some(s) => s.next_delay(rng).as_secs_f64() * 1000.0,
            None => 0.0,
        };
        if limits.deadline_ms.is_some_and(|d| now_ms + wait >= d) {
            return None;
        }
        self.retries += 1;
        Some(wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::Xoshiro256PlusPlus;
    use std::time::Duration;

    fn policy(jitter: Jitter) -> Policy {
        Policy::new(
            Duration::from_millis(5),
            2.0,
            Duration::from_secs(2),
            jitter,
        )
        .unwrap()
    }

    #[test]
    fn attempt_one_mapping_starts_at_twice_the_base() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let p = policy(Jitter::None);
        let mut r = Retrier::new(Some(&p), true, &mut rng);
        let waits: Vec<f64> = (0..4)
            .map(|_| r.after_failure(0.0, &Limits::default(), &mut rng).unwrap())
            .collect();
        assert_eq!(waits, vec![10.0, 20.0, 40.0, 80.0]);
        let mut r = Retrier::new(Some(&p), false, &mut rng);
        let first = r.after_failure(0.0, &Limits::default(), &mut rng);
        assert_eq!(first, Some(5.0));
    }

    #[test]
    fn decorrelated_first_wait_is_between_base_and_three_bases() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
        let p = policy(Jitter::Decorrelated);
        for _ in 0..200 {
            let mut r = Retrier::new(Some(&p), true, &mut rng);
            let w = r.after_failure(0.0, &Limits::default(), &mut rng).unwrap();
            assert!((5.0..=15.0).contains(&w), "{w}");
        }
    }

    #[test]
    fn no_backoff_waits_zero() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut r = Retrier::new(None, true, &mut rng);
        assert_eq!(
            r.after_failure(7.0, &Limits::default(), &mut rng),
            Some(0.0)
        );
    }

    #[test]
    fn gives_up_when_retries_are_used_up() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
        let limits = Limits {
            max_retries: Some(2),
            deadline_ms: None,
        };
        let mut r = Retrier::new(None, false, &mut rng);
        assert!(r.after_failure(0.0, &limits, &mut rng).is_some());
        assert!(r.after_failure(0.0, &limits, &mut rng).is_some());
        assert!(r.after_failure(0.0, &limits, &mut rng).is_none());
        let none = Limits {
            max_retries: Some(0),
            deadline_ms: None,
        };
        let mut r = Retrier::new(None, false, &mut rng);
        assert!(r.after_failure(0.0, &none, &mut rng).is_none());
    }

    #[test]
    fn gives_up_when_the_wait_would_reach_the_deadline() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let p = policy(Jitter::None);
        let limits = Limits {
            max_retries: None,
            deadline_ms: Some(100.0),
        };
        let mut r = Retrier::new(Some(&p), false, &mut rng);
        assert_eq!(r.after_failure(90.0, &limits, &mut rng), Some(5.0));
        // The next wait is 10 ms: 90 + 10 reaches the deadline.
        assert_eq!(r.after_failure(90.0, &limits, &mut rng), None);
        let mut r = Retrier::new(None, false, &mut rng);
        assert_eq!(r.after_failure(100.0, &limits, &mut rng), None);
    }
}
