//! The give-up rule: whether a failed attempt gets a retry, and after which delay.
//!
//! One rule for every caller (a real run of `retry`, its `--dry-run` table, the contention
//! simulator): give up when the retries are used up, when the deadline has passed, or when the
//! next delay would end at or past the deadline (there is no point in sleeping until the
//! deadline only to stop then: curl's `--retry-max-time` stops the same way). Otherwise wait the
//! delay that the [`Schedule`] gives, lengthened to a server's hint if there is one.
//!
//! Time is whatever the caller measures from the start of the run: a monotonic clock for a real
//! run, the sum of the delays for a dry run, simulated milliseconds in a simulation.

use std::fmt;
use std::time::Duration;

use rand::Rng;

use crate::policy::Schedule;

/// When retrying stops; both `None` means never.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Retries allowed after the first attempt; `None` for unlimited.
    pub max_retries: Option<u64>,
    /// Total time from the start of the run: no retry starts at or after it.
    pub deadline: Option<Duration>,
}

/// Why a [`GiveUpRule`] grants no further retry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GiveUp {
    /// `max_retries` retries were granted already.
    RetriesUsedUp,
    /// The deadline has passed: the time since the start is at or past it.
    DeadlinePassed,
    /// The next delay (this one, hint included) would end at or past the deadline.
    DelayPastDeadline(Duration),
}

impl fmt::Display for GiveUp {
    /// The reason as `retry` prints it after "giving up after N attempts: ". Durations are
    /// seconds with three decimals.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GiveUp::RetriesUsedUp => f.write_str("no retries left"),
            GiveUp::DeadlinePassed => f.write_str("the deadline has passed"),
            GiveUp::DelayPastDeadline(delay) => write!(
                f,
                "the next delay ({:.3}s) would end at or past the deadline",
                delay.as_secs_f64()
            ),
        }
    }
}

/// The retries of one run: a [`Schedule`] of delays under [`Limits`]. Use one rule per run.
#[derive(Clone, Debug)]
pub struct GiveUpRule {
    schedule: Schedule,
    limits: Limits,
    granted: u64,
}

impl GiveUpRule {
    /// A rule that grants retries under `limits`, waiting the delays of `schedule`.
    pub fn new(schedule: Schedule, limits: Limits) -> GiveUpRule {
        GiveUpRule {
            schedule,
            limits,
            granted: 0,
        }
    }

    /// The limits it enforces.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Retries granted so far.
    pub fn granted(&self) -> u64 {
        self.granted
    }

    /// The time left until the deadline, `elapsed` after the start of the run: `None` without
    /// a deadline, zero once it has passed. The one judge of the deadline: the wait before a
    /// retry, an attempt's own limit, a lock or a shared cooldown waited for all ask it.
    pub fn time_left(&self, elapsed: Duration) -> Option<Duration> {
        self.limits.deadline.map(|d| d.saturating_sub(elapsed))
    }

    /// Whether the deadline has passed `elapsed` after the start of the run (never without
    /// one).
    pub fn deadline_passed(&self, elapsed: Duration) -> bool {
        self.time_left(elapsed).is_some_and(|left| left.is_zero())
    }

    /// Whether a wait of `wait` from `elapsed` after the start of the run would end at or past
    /// the deadline (never without one).
    pub fn ends_past_deadline(&self, elapsed: Duration, wait: Duration) -> bool {
        self.time_left(elapsed).is_some_and(|left| wait >= left)
    }

    /// Whether [`GiveUpRule::next_delay`] will give up however the next attempt ends, when that
    /// attempt starts `elapsed` after the start of the run: the retries are used up, or the
    /// deadline comes before the least delay the schedule can draw next
    /// ([`Schedule::least_next_delay`]; a later decision, or a hint, only lengthens it). Then
    /// the attempt about to start is known to be the run's last. Touches nothing.
    pub fn surely_gives_up(&self, elapsed: Duration) -> bool {
        if self.limits.max_retries.is_some_and(|m| self.granted >= m) {
            return true;
        }
        self.ends_past_deadline(elapsed, self.schedule.least_next_delay())
    }

    /// After a failed attempt, `elapsed` after the start of the run: the delay before the next
    /// retry, or why to give up.
    ///
    /// In this order: [`GiveUp::RetriesUsedUp`] once `max_retries` retries were granted;
    /// [`GiveUp::DeadlinePassed`] if `elapsed >= deadline`; otherwise the schedule's next delay
    /// is drawn from `rng` and raised to `at_least` (a server's hint such as HTTP
    /// `Retry-After`, RFC 9110 section 10.2.3, which may pass the cap), and
    /// [`GiveUp::DelayPastDeadline`] is returned if `elapsed + delay >= deadline` (a sum past
    /// what a `Duration` holds counts as past). Only a granted retry counts; neither check
    /// before the draw touches `rng` or the schedule.
    ///
    /// # Errors
    /// The [`GiveUp`] reason, when no retry is granted.
    pub fn next_delay<R: Rng + ?Sized>(
        &mut self,
        elapsed: Duration,
        at_least: Option<Duration>,
        rng: &mut R,
    ) -> Result<Duration, GiveUp> {
        if self.limits.max_retries.is_some_and(|m| self.granted >= m) {
            return Err(GiveUp::RetriesUsedUp);
        }
        if self.deadline_passed(elapsed) {
            return Err(GiveUp::DeadlinePassed);
        }
        let mut delay = self.schedule.next_delay(rng);
        if let Some(floor) = at_least {
            delay = delay.max(floor);
        }
        if self.ends_past_deadline(elapsed, delay) {
            return Err(GiveUp::DelayPastDeadline(delay));
        }
        self.granted += 1;
        Ok(delay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Jitter, Policy};
    use rand::SeedableRng;
    use rand::rngs::Xoshiro256PlusPlus;

    fn doubling(limits: Limits) -> GiveUpRule {
        let p = Policy::new(
            Duration::from_secs(1),
            2.0,
            Duration::from_secs(60),
            Jitter::None,
        )
        .unwrap();
        GiveUpRule::new(p.schedule(), limits)
    }

    const SECS: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn unlimited_grants_the_schedule() {
        let mut b = doubling(Limits::default());
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let got: Vec<_> = (0..4)
            .map(|_| b.next_delay(SECS(1_000_000), None, &mut rng).unwrap())
            .collect();
        assert_eq!(got, [SECS(1), SECS(2), SECS(4), SECS(8)]);
        assert_eq!(b.granted(), 4);
    }

    #[test]
    fn gives_up_when_the_retries_are_used_up() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut b = doubling(Limits {
            max_retries: Some(2),
            deadline: None,
        });
        assert!(b.next_delay(SECS(0), None, &mut rng).is_ok());
        assert!(b.next_delay(SECS(0), None, &mut rng).is_ok());
        assert_eq!(
            b.next_delay(SECS(0), None, &mut rng),
            Err(GiveUp::RetriesUsedUp)
        );
        let mut none = doubling(Limits {
            max_retries: Some(0),
            deadline: None,
        });
        assert_eq!(
            none.next_delay(SECS(0), None, &mut rng),
            Err(GiveUp::RetriesUsedUp)
        );
    }

    #[test]
    fn gives_up_at_the_deadline_or_when_the_delay_would_reach_it() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let limits = Limits {
            max_retries: None,
            deadline: Some(SECS(10)),
        };
        let mut b = doubling(limits);
        assert_eq!(b.next_delay(SECS(8), None, &mut rng), Ok(SECS(1)));
        // 8 + 2 reaches the deadline: no point in waiting for it.
        assert_eq!(
            b.next_delay(SECS(8), None, &mut rng),
            Err(GiveUp::DelayPastDeadline(SECS(2)))
        );
        assert_eq!(
            doubling(limits).next_delay(SECS(10), None, &mut rng),
            Err(GiveUp::DeadlinePassed)
        );
        // A delay too long for a Duration ends past any deadline.
        assert_eq!(
            doubling(limits).next_delay(SECS(1), Some(Duration::MAX), &mut rng),
            Err(GiveUp::DelayPastDeadline(Duration::MAX))
        );
    }

    #[test]
    fn the_deadline_is_judged_by_the_time_left() {
        let limits = Limits {
            max_retries: None,
            deadline: Some(SECS(10)),
        };
        let rule = doubling(limits);
        assert_eq!(rule.time_left(SECS(4)), Some(SECS(6)));
        assert_eq!(rule.time_left(SECS(12)), Some(SECS(0)));
        assert!(!rule.deadline_passed(Duration::from_millis(9999)));
        assert!(rule.deadline_passed(SECS(10)));
        assert!(rule.ends_past_deadline(SECS(4), SECS(6)));
        assert!(!rule.ends_past_deadline(SECS(4), Duration::from_millis(5999)));
        assert!(rule.ends_past_deadline(SECS(4), Duration::MAX));
        let none = doubling(Limits {
            max_retries: None,
            deadline: None,
        });
        assert_eq!(none.time_left(SECS(4)), None);
        assert!(!none.deadline_passed(Duration::MAX));
        assert!(!none.ends_past_deadline(Duration::MAX, Duration::MAX));
    }

    #[test]
    fn a_hint_lengthens_the_delay_past_the_cap() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut b = doubling(Limits::default());
        assert_eq!(
            b.next_delay(SECS(0), Some(SECS(90)), &mut rng),
            Ok(SECS(90))
        );
        // A shorter hint changes nothing.
        assert_eq!(b.next_delay(SECS(0), Some(SECS(1)), &mut rng), Ok(SECS(2)));
    }

    #[test]
    fn reasons_read_as_retry_prints_them() {
        assert_eq!(GiveUp::RetriesUsedUp.to_string(), "no retries left");
        assert_eq!(
            GiveUp::DeadlinePassed.to_string(),
            "the deadline has passed"
        );
        assert_eq!(
            GiveUp::DelayPastDeadline(Duration::from_micros(412_400)).to_string(),
            "the next delay (0.412s) would end at or past the deadline"
        );
    }

    #[test]
    fn surely_gives_up_only_when_no_draw_could_be_granted() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        // Retries used up: whatever the time.
        let mut b = doubling(Limits {
            max_retries: Some(1),
            deadline: None,
        });
        assert!(!b.surely_gives_up(Duration::ZERO));
        b.next_delay(Duration::ZERO, None, &mut rng).unwrap();
        assert!(b.surely_gives_up(Duration::ZERO));
        // The deadline 10 s after the start; the delays (no jitter) 1 s, 2 s, 4 s, 8 s.
        let limits = Limits {
            max_retries: None,
            deadline: Some(Duration::from_secs(10)),
        };
        let mut b = doubling(limits);
        assert!(!b.surely_gives_up(Duration::from_millis(8_999)));
        assert!(b.surely_gives_up(Duration::from_secs(9)));
        // And then next_delay agrees: at 9 s the 1 s delay reaches the deadline.
        assert!(
            b.clone()
                .next_delay(Duration::from_secs(9), None, &mut rng)
                .is_err()
        );
        b.next_delay(Duration::ZERO, None, &mut rng).unwrap();
        b.next_delay(Duration::ZERO, None, &mut rng).unwrap();
        // The next delay is 4 s.
        assert!(!b.surely_gives_up(Duration::from_millis(5_999)));
        assert!(b.surely_gives_up(Duration::from_secs(6)));
        // With full jitter the next delay may be 0: only the deadline itself is sure.
        let p = Policy::new(
            Duration::from_secs(1),
            2.0,
            Duration::from_secs(60),
            Jitter::Full,
        )
        .unwrap();
        let b = GiveUpRule::new(p.schedule(), limits);
        assert!(!b.surely_gives_up(Duration::from_millis(9_999)));
        assert!(b.surely_gives_up(Duration::from_secs(10)));
        // Unlimited: never.
        assert!(!doubling(Limits::default()).surely_gives_up(Duration::MAX));
    }
}
