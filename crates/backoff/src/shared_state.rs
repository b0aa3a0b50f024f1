//! The state shared by every run with one retry-budget KEY, and the run's operations on it:
//! the token bucket ([`crate::throttle`]), the circuit breaker ([`crate::breaker`]) and the
//! shared cooldown. Pure: std only, no I/O, no clock; times are wall-clock epoch milliseconds
//! passed in, because runs are separate processes (and, with Redis, separate hosts) with
//! nothing else in common.
//!
//! Each operation is one read-modify-write of a [`SharedState`], which the `retry` command
//! performs atomically on the state it keeps in a file (under `flock`) or in Redis; its
//! simulator (`retry --simulate --model failure-rate`) calls the very same operations on a
//! state in memory, with a simulated clock.
//!
//! Every time in a state is at most [`MAX_TIME_MS`] (the last millisecond of year 9999, the
//! last one RFC 3339 can write): the operations clamp the times they are given and the times
//! they compute to it, so a stored state never holds a time that cannot be printed, and every
//! stored integer stays below 2^53 (exact in a double, as Redis's Lua has numbers).

use crate::breaker::{Admission, BreakerPolicy, BreakerState, CircuitBreaker, RunEnd};
use crate::throttle::{Throttle, TokenBucket};

pub use crate::epoch::{MAX_TIME_MS, later};

/// One run's settings for its KEY: the `retry` command's `--budget` flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BudgetPolicy {
    /// Retry throttling (always on with a budget).
    pub throttle: Throttle,
    /// The circuit breaker (`--breaker N`); `None`: no breaker, run ends are not counted.
    pub breaker: Option<BreakerPolicy>,
}

/// How one attempt counts for retry throttling (gRFC A6: only failures that would be
/// retried count as failures, so a malformed request does not drain the budget).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// The attempt succeeded: adds `tokenRatio`.
    Success,
    /// The attempt failed in a way that is retried: takes 1 token.
    Failure,
    /// Neither (a status that is not retried, an interrupted attempt): no change.
    Neutral,
}

/// All a KEY's shared state. No serialisation here: the `retry` command's stores map it to
/// versioned JSON field by field, through the public fields and [`TokenBucket::parts`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SharedState {
    /// The token count; `None` until first used (a fresh bucket is full).
    pub bucket: Option<TokenBucket>,
    /// The circuit breaker.
    pub breaker: CircuitBreaker,
    /// Shared cooldown: no attempt of any run with this KEY before this time (epoch ms),
    /// stored from a server's hint.
    pub not_before_ms: Option<u64>,
    /// How long the hint that set [`SharedState::not_before_ms`] asked to wait, in milliseconds
    /// from the moment it was stored (`None` in a state an older version wrote). No run waits
    /// for the shared cooldown longer than this from the moment it reads it, so a host whose
    /// clock is behind the one that stored the hint does not wait the difference too.
    pub hint_len_ms: Option<u64>,
    /// When the state was last changed (epoch ms); informational. An operation that changes
    /// nothing else leaves it too, so that a store need not write the state back (the file
    /// store then takes no lock at all).
    pub updated_ms: u64,
}

/// What a run learns before its first attempt.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Begin {
    /// Whether the breaker lets the run through.
    pub admission: Admission,
    /// Wait until this time (epoch ms) before the first attempt: the shared cooldown.
    pub wait_until_ms: Option<u64>,
    /// Tokens left, for reporting.
    pub tokens: f64,
    /// The breaker's state after admission (`None` without a breaker), for reporting.
    pub breaker: Option<BreakerState>,
}

/// What a run learns after an attempt.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AfterAttempt {
    /// Whether the budget allows a retry (A6: decided when the failure is recorded).
    pub retry_allowed: bool,
    /// Tokens left, for reporting.
    pub tokens: f64,
    /// Do not start the next attempt before this time (epoch ms): the shared cooldown,
    /// including a hint this attempt just stored.
    pub wait_until_ms: Option<u64>,
}

impl SharedState {
    fn bucket(&mut self, throttle: &Throttle, now_ms: u64) -> &mut TokenBucket {
        self.bucket
            .get_or_insert_with(|| TokenBucket::full(throttle, now_ms))
    }

    /// Tokens at `now_ms` under `throttle` (a fresh state is full), without a change.
    pub fn tokens(&self, throttle: &Throttle, now_ms: u64) -> f64 {
        let now_ms = now_ms.min(MAX_TIME_MS);
        self.bucket
            .unwrap_or_else(|| TokenBucket::full(throttle, now_ms))
            .tokens_at(throttle, now_ms)
    }

    /// The shared cooldown still to wait at `now_ms`, at most the hint's length from now; a
    /// past one is cleared.
    fn live_cooldown(&mut self, now_ms: u64) -> Option<u64> {
        if self.not_before_ms.is_none_or(|t| t <= now_ms) {
            self.not_before_ms = None;
            self.hint_len_ms = None;
            return None;
        }
        let t = self.not_before_ms?;
        Some(self.hint_len_ms.map_or(t, |len| t.min(later(now_ms, len))))
    }

    /// Before the first attempt: asks the breaker (claiming the probe lease with `probe_id`
    /// when half-open) and reads the shared cooldown. First attempts are never throttled.
    pub fn begin(&mut self, policy: &BudgetPolicy, now_ms: u64, probe_id: u64) -> Begin {
        let now_ms = now_ms.min(MAX_TIME_MS);
        let before = *self;
        let admission = match &policy.breaker {
            Some(bp) => self.breaker.admit(bp, now_ms, probe_id),
            None => Admission::Run,
        };
        let begin = Begin {
            admission,
            wait_until_ms: self.live_cooldown(now_ms),
            tokens: self.tokens(&policy.throttle, now_ms),
            breaker: policy.breaker.map(|_| self.breaker.state(now_ms)),
        };
        self.touch(before, now_ms);
        begin
    }

    /// Sets [`SharedState::updated_ms`] to `now_ms` if the state changed since `before`.
    fn touch(&mut self, before: SharedState, now_ms: u64) {
        if *self != before {
            self.updated_ms = now_ms;
        }
    }

    /// Before any attempt, after waiting: the shared cooldown still to wait (a hint another
    /// run stored meanwhile). A probe (`probe_id`) renews its lease.
    pub fn cooldown(
        &mut self,
        policy: &BudgetPolicy,
        now_ms: u64,
        probe_id: Option<u64>,
    ) -> Option<u64> {
        let now_ms = now_ms.min(MAX_TIME_MS);
        if let (Some(bp), Some(id)) = (&policy.breaker, probe_id) {
            self.breaker.renew(bp, now_ms, id);
        }
        self.live_cooldown(now_ms)
    }

    /// After each attempt: records its outcome in the token bucket (A6), stores a server's
    /// hint (`hint_ms`, epoch ms) as the shared cooldown when it is later than the current
    /// one, renews a probe's lease, and says whether a retry is allowed.
    pub fn attempt_end(
        &mut self,
        policy: &BudgetPolicy,
        now_ms: u64,
        outcome: AttemptOutcome,
        hint_ms: Option<u64>,
        probe_id: Option<u64>,
    ) -> AfterAttempt {
        let now_ms = now_ms.min(MAX_TIME_MS);
        self.updated_ms = now_ms;
        let throttle = policy.throttle;
        let bucket = self.bucket(&throttle, now_ms);
        let retry_allowed = match outcome {
            AttemptOutcome::Success => {
                bucket.record_success(&throttle, now_ms);
                bucket.retry_allowed()
            }
            AttemptOutcome::Failure => bucket.record_failure(&throttle, now_ms),
            AttemptOutcome::Neutral => {
                bucket.tokens_at(&throttle, now_ms) > throttle.max_tokens() / 2.0
            }
        };
        let tokens = bucket.tokens_at(&throttle, now_ms);
        let hint_ms = hint_ms.map(|h| h.min(MAX_TIME_MS));
        if let Some(hint) = hint_ms.filter(|&h| h > now_ms)
            && self.not_before_ms.is_none_or(|t| hint > t)
        {
            self.not_before_ms = Some(hint);
            self.hint_len_ms = Some(hint - now_ms);
        }
        AfterAttempt {
            retry_allowed,
            tokens,
            wait_until_ms: self.cooldown(policy, now_ms, probe_id),
        }
    }

    /// At the end of a run that was let through: counts it in the breaker (`probe_id`: the id
    /// it claimed the lease with, if admitted as the probe). `None` without a breaker.
    pub fn finish(
        &mut self,
        policy: &BudgetPolicy,
        now_ms: u64,
        end: RunEnd,
        probe_id: Option<u64>,
    ) -> Option<BreakerState> {
        let now_ms = now_ms.min(MAX_TIME_MS);
        let bp = policy.breaker.as_ref()?;
        let before = *self;
        let state = self.breaker.finish(bp, now_ms, end, probe_id);
        self.touch(before, now_ms);
        Some(state)
    }

    /// The latest time (epoch ms) something in this state is still pending: the breaker's
    /// open period or lease, or the shared cooldown. A store keeps the state at least that long.
    pub fn horizon_ms(&self) -> Option<u64> {
        self.breaker.horizon_ms().max(self.not_before_ms)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn fresh_state_is_full_and_first_attempts_run() {
        let policy = BudgetPolicy::default();
        let mut s = SharedState::default();
        let b = s.begin(&policy, 5, 1);
        assert_eq!(b.admission, Admission::Run);
        assert_eq!(b.tokens, 10.0);
        assert_eq!(b.wait_until_ms, None);
        assert_eq!(b.breaker, None);
    }

    #[test]
    fn failures_spend_and_successes_refund() {
        let policy = BudgetPolicy::default();
        let mut s = SharedState::default();
        let allowed: Vec<bool> = (0..5)
            .map(|_| {
                s.attempt_end(&policy, 0, AttemptOutcome::Failure, None, None)
                    .retry_allowed
            })
            .collect();
        assert_eq!(allowed, [true, true, true, true, false]);
        let neutral = s.attempt_end(&policy, 0, AttemptOutcome::Neutral, None, None);
        assert_eq!(neutral.tokens, 5.0);
        assert!(!neutral.retry_allowed);
        for _ in 0..10 {
            s.attempt_end(&policy, 0, AttemptOutcome::Success, None, None);
        }
        assert_eq!(s.tokens(&policy.throttle, 0), 6.0);
        // First attempts are never blocked, however empty the bucket.
        for _ in 0..20 {
            s.attempt_end(&policy, 0, AttemptOutcome::Failure, None, None);
        }
        assert_eq!(s.begin(&policy, 0, 1).admission, Admission::Run);
    }

    #[test]
    fn a_hint_becomes_the_shared_cooldown() {
        let policy = BudgetPolicy::default();
        let mut s = SharedState::default();
        let after = s.attempt_end(&policy, 1_000, AttemptOutcome::Failure, Some(31_000), None);
        assert_eq!(after.wait_until_ms, Some(31_000));
        // An earlier hint does not shorten it; a past one is ignored.
        s.attempt_end(&policy, 2_000, AttemptOutcome::Failure, Some(10_000), None);
        s.attempt_end(&policy, 2_000, AttemptOutcome::Failure, Some(1_000), None);
        // Another run's first attempt waits for it too.
        assert_eq!(s.begin(&policy, 3_000, 9).wait_until_ms, Some(31_000));
        assert_eq!(s.cooldown(&policy, 31_000, None), None);
        assert_eq!(s.not_before_ms, None);
    }

    #[test]
    fn operations_that_change_nothing_leave_the_state_as_it_was() {
        let policy = BudgetPolicy::default();
        let mut s = SharedState::default();
        s.begin(&policy, 5, 1);
        assert_eq!(s, SharedState::default(), "a store need not write it back");
        s.finish(&policy, 6, RunEnd::GaveUp, None);
        assert_eq!(s, SharedState::default());
        s.attempt_end(&policy, 7, AttemptOutcome::Failure, None, None);
        assert_eq!(s.updated_ms, 7);
        let with_breaker = BudgetPolicy {
            breaker: Some(BreakerPolicy::new(3, Duration::from_secs(10)).unwrap()),
            ..policy
        };
        let before = s;
        s.begin(&with_breaker, 8, 1);
        assert_eq!(s, before, "a closed breaker admits without a change");
        s.finish(&with_breaker, 9, RunEnd::GaveUp, None);
        assert_eq!((s.breaker.consecutive, s.updated_ms), (1, 9));
    }

    #[test]
    fn no_time_passes_year_9999() {
        let policy = BudgetPolicy {
            breaker: Some(BreakerPolicy::new(1, Duration::MAX).unwrap()),
            ..BudgetPolicy::default()
        };
        let mut s = SharedState::default();
        s.finish(&policy, u64::MAX, RunEnd::GaveUp, None);
        assert_eq!(s.breaker.open_until_ms, Some(MAX_TIME_MS));
        assert_eq!(s.updated_ms, MAX_TIME_MS);
        let mut s = SharedState::default();
        s.finish(&policy, 1_000, RunEnd::GaveUp, None);
        assert_eq!(s.breaker.open_until_ms, Some(MAX_TIME_MS));
        let after = s.attempt_end(&policy, 0, AttemptOutcome::Failure, Some(u64::MAX), None);
        assert_eq!(after.wait_until_ms, Some(MAX_TIME_MS));
        assert_eq!(s.hint_len_ms, Some(MAX_TIME_MS));
    }

    #[test]
    fn a_shared_cooldown_never_lasts_longer_than_its_hint_from_now() {
        let policy = BudgetPolicy::default();
        let mut s = SharedState::default();
        // Stored by a host whose clock reads 1_000_000: 30 s.
        s.attempt_end(
            &policy,
            9_000_000,
            AttemptOutcome::Failure,
            Some(9_030_000),
            None,
        );
        assert_eq!(
            (s.not_before_ms, s.hint_len_ms),
            (Some(9_030_000), Some(30_000))
        );
        // Read by a host whose clock is an hour behind: 30 s from its now, not an hour and 30 s.
        let behind = 9_000_000 - 3_600_000;
        assert_eq!(
            s.begin(&policy, behind, 1).wait_until_ms,
            Some(behind + 30_000)
        );
        assert_eq!(
            s.not_before_ms,
            Some(9_030_000),
            "the stored time is not changed"
        );
        // A state of an older version (no length) is taken as it is.
        s.hint_len_ms = None;
        assert_eq!(s.begin(&policy, behind, 1).wait_until_ms, Some(9_030_000));
        // A later hint replaces both; an earlier one neither.
        s.attempt_end(
            &policy,
            9_010_000,
            AttemptOutcome::Failure,
            Some(9_070_000),
            None,
        );
        assert_eq!(
            (s.not_before_ms, s.hint_len_ms),
            (Some(9_070_000), Some(60_000))
        );
        s.attempt_end(
            &policy,
            9_020_000,
            AttemptOutcome::Failure,
            Some(9_030_000),
            None,
        );
        assert_eq!(
            (s.not_before_ms, s.hint_len_ms),
            (Some(9_070_000), Some(60_000))
        );
        // Once past, both are cleared.
        assert_eq!(s.cooldown(&policy, 9_070_000, None), None);
        assert_eq!((s.not_before_ms, s.hint_len_ms), (None, None));
    }

    #[test]
    fn breaker_counts_runs_only_when_asked() {
        let mut s = SharedState::default();
        assert_eq!(
            s.finish(&BudgetPolicy::default(), 0, RunEnd::GaveUp, None),
            None
        );
        assert_eq!(s.breaker, CircuitBreaker::default());
        let policy = BudgetPolicy {
            breaker: Some(BreakerPolicy::new(1, Duration::from_secs(10)).unwrap()),
            ..BudgetPolicy::default()
        };
        assert_eq!(
            s.finish(&policy, 0, RunEnd::GaveUp, None),
            Some(BreakerState::Open { until_ms: 10_000 })
        );
        assert_eq!(s.horizon_ms(), Some(10_000));
        let b = s.begin(&policy, 10_000, 4);
        assert_eq!(b.admission, Admission::Probe);
        // The probe renews its lease as it goes.
        s.cooldown(&policy, 200_000, Some(4));
        assert_eq!(s.breaker.probe.map(|p| p.expires_ms), Some(500_000));
    }
}
