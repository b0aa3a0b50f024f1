//! Property tests of the pure budget state: the token count stays within `[0, maxTokens]`
//! whatever happens (other settings, a clock going backwards, refill), a retry is allowed
//! exactly when the count is above half, K always-failing runs sharing a fresh KEY make at most
//! K + 4 attempts at the A6 defaults whatever the interleaving, the breaker lets at most one
//! probe through per lease, and the stored form round-trips.

use std::time::Duration;

use proptest::prelude::*;
use retry::budget::{
    Admission, AttemptOutcome, BreakerPolicy, BreakerState, CircuitBreaker, MAX_TIME_MS, Policy,
    ProbeLease, RunEnd, SharedState, Throttle, TokenBucket, codec,
};

fn throttle() -> impl Strategy<Value = Throttle> {
    (
        prop::sample::select(vec![1.0f64, 2.5, 3.0, 10.0, 100.0, 1000.0]),
        prop::sample::select(vec![0.001f64, 0.1, 0.5, 1.0]),
        prop::option::of(1u64..100_000),
    )
        .prop_map(|(max, ratio, refill)| {
            let t = Throttle::new(max, ratio.min(max)).unwrap();
            match refill {
                Some(ms) => t.with_refill(Duration::from_millis(ms)).unwrap(),
                None => t,
            }
        })
}

fn outcome() -> impl Strategy<Value = AttemptOutcome> {
    prop::sample::select(vec![
        AttemptOutcome::Success,
        AttemptOutcome::Failure,
        AttemptOutcome::Neutral,
    ])
}

proptest! {
    #[test]
    fn tokens_stay_within_zero_and_max(
        steps in prop::collection::vec((throttle(), outcome(), 0u64..10_000_000_000), 1..200),
    ) {
        let mut state = SharedState::default();
        for (t, o, now) in steps {
            let policy = Policy { throttle: t, breaker: None };
            let after = state.attempt_end(&policy, now, o, None, None);
            prop_assert!(after.tokens >= 0.0 && after.tokens <= t.max_tokens(), "{after:?} {t:?}");
            // A6: a retry is allowed exactly while the count is above half the maximum.
            prop_assert_eq!(after.retry_allowed, after.tokens > t.max_tokens() / 2.0);
            let (milli, max_milli, _) = state.bucket.unwrap().parts();
            prop_assert!(milli <= max_milli);
        }
    }

    #[test]
    fn successes_never_lower_and_failures_never_raise_without_refill(
        ops in prop::collection::vec(outcome(), 1..300),
    ) {
        let t = Throttle::default();
        let mut b = TokenBucket::full(&t, 0);
        for o in ops {
            let before = b.tokens();
            match o {
                AttemptOutcome::Success => {
                    b.record_success(&t, 0);
                    prop_assert!(b.tokens() >= before);
                    prop_assert!((b.tokens() - (before + 0.1).min(10.0)).abs() < 1e-9);
                }
                AttemptOutcome::Failure => {
                    b.record_failure(&t, 0);
                    prop_assert!((b.tokens() - (before - 1.0).max(0.0)).abs() < 1e-9);
                }
                AttemptOutcome::Neutral => {}
            }
        }
    }

    /// K runs with `-n N` of an always-failing command share a fresh KEY; their steps are
    /// interleaved in any order. Every attempt's failure takes a token and, atomically, says
    /// whether a retry is allowed. In all: at most K + 4 attempts at the defaults, exactly
    /// K + 4 when N >= 4 (no run is ever refused a first attempt).
    #[test]
    fn always_failing_runs_make_at_most_k_plus_four_attempts(
        k in 1usize..60,
        n in 0u32..8,
        order in prop::collection::vec(any::<prop::sample::Index>(), 0..1000),
    ) {
        let policy = Policy::default();
        let mut state = SharedState::default();
        // Per run: attempts made, and whether it is still going.
        let mut runs = vec![(0u32, true); k];
        let mut pick = order.into_iter();
        let mut now = 0;
        while runs.iter().any(|r| r.1) {
            let live: Vec<usize> = (0..k).filter(|&i| runs[i].1).collect();
            let i = live[pick.next().map_or(0, |ix| ix.index(live.len()))];
            now += 1;
            if runs[i].0 == 0 {
                let b = state.begin(&policy, now, i as u64);
                prop_assert_eq!(b.admission, Admission::Run);
            }
            runs[i].0 += 1;
            let after = state.attempt_end(&policy, now, AttemptOutcome::Failure, None, None);
            if runs[i].0 > n || !after.retry_allowed {
                runs[i].1 = false;
            }
        }
        let total: u32 = runs.iter().map(|r| r.0).sum();
        let bound = k as u32 + Throttle::default().retries_from_full() as u32;
        prop_assert_eq!(Throttle::default().retries_from_full(), 4);
        prop_assert!(total <= bound, "{total} > {bound}");
        if n >= 4 {
            prop_assert_eq!(total, bound);
        }
        prop_assert!(total <= k as u32 * (n + 1));
    }

    /// Whatever runs ask, finish, renew or abandon, two runs are never both admitted as the
    /// probe within one lease (without a renewal or finish in between), and a refusal always
    /// ends within one cooldown or one lease from now.
    #[test]
    fn at_most_one_probe_per_lease(
        threshold in 1u32..4,
        cooldown_ms in 0u64..10_000,
        lease_ms in 1u64..10_000,
        ops in prop::collection::vec((0u8..4, 0u64..8, 0u64..3_000), 1..300),
    ) {
        let policy = BreakerPolicy::new(threshold, Duration::from_millis(cooldown_ms))
            .unwrap()
            .with_probe_lease(Duration::from_millis(lease_ms))
            .unwrap();
        let mut b = CircuitBreaker::default();
        let mut now = 0u64;
        // The live probe as the model sees it: (id, claimed or renewed at).
        let mut probe: Option<(u64, u64)> = None;
        for (op, run, dt) in ops {
            now += dt;
            match op {
                0 => match b.admit(&policy, now, run) {
                    Admission::Probe => {
                        if let Some((holder, at)) = probe {
                            prop_assert!(holder == run || now >= at + lease_ms,
                                "run {run} probes at {now} while {holder} holds a lease from {at}");
                        }
                        probe = Some((run, now));
                    }
                    Admission::Refuse { until_ms, .. } => {
                        prop_assert!(until_ms > now);
                        prop_assert!(until_ms <= now + cooldown_ms.max(lease_ms));
                    }
                    Admission::Run => {
                        let closed = matches!(b.state(now), BreakerState::Closed { .. });
                        prop_assert!(closed);
                    }
                },
                1 => {
                    let end = [RunEnd::Succeeded, RunEnd::GaveUp, RunEnd::Abandoned][(run % 3) as usize];
                    let id = Some(run);
                    let holder = probe.is_some_and(|(h, _)| h == run);
                    b.finish(&policy, now, end, id);
                    if holder || end == RunEnd::Succeeded {
                        probe = None;
                    }
                }
                2 => {
                    if b.renew(&policy, now, run) {
                        prop_assert!(probe.is_some_and(|(h, _)| h == run));
                        probe = Some((run, now));
                    }
                }
                _ => {
                    b.finish(&policy, now, RunEnd::GaveUp, None);
                }
            }
            if let Some(p) = b.probe {
                prop_assert!(p.expires_ms <= now + lease_ms);
            }
        }
    }

    #[test]
    fn any_clock_never_panics_and_keeps_bounds(
        times in prop::collection::vec(any::<u64>(), 1..100),
        hints in prop::collection::vec(prop::option::of(any::<u64>()), 100),
    ) {
        let policy = Policy {
            throttle: Throttle::default().with_refill(Duration::from_secs(1)).unwrap(),
            breaker: Some(BreakerPolicy::new(1, Duration::from_secs(60)).unwrap()),
        };
        let mut s = SharedState::default();
        for (i, now) in times.into_iter().enumerate() {
            let begin = s.begin(&policy, now, i as u64);
            if let Admission::Refuse { until_ms, .. } = begin.admission {
                prop_assert!(until_ms.saturating_sub(now) <= 300_000);
            }
            let after = s.attempt_end(&policy, now, AttemptOutcome::Failure, hints[i], Some(i as u64));
            prop_assert!((0.0..=10.0).contains(&after.tokens));
            if let Some(w) = after.wait_until_ms {
                prop_assert!(w > now);
            }
            s.finish(&policy, now, RunEnd::GaveUp, Some(i as u64));
        }
    }

    #[test]
    fn stored_form_round_trips(
        bucket in prop::option::of((any::<u32>(), any::<u32>())),
        consecutive: u32,
        open_until in any::<bool>(),
        probe in prop::option::of(any::<u64>()),
        not_before_ms in prop::option::of(0..=MAX_TIME_MS),
        hint_len_ms in prop::option::of(0..=MAX_TIME_MS),
        updated_ms in 0..=MAX_TIME_MS,
        times in (0..=MAX_TIME_MS, 0..=MAX_TIME_MS, 0..=MAX_TIME_MS),
    ) {
        let (stamp_ms, open_until_ms, expires_ms) = times;
        let state = SharedState {
            bucket: bucket.map(|(m, max)| TokenBucket::from_parts(m, max, stamp_ms)),
            breaker: CircuitBreaker {
                consecutive,
                open_until_ms: open_until.then_some(open_until_ms),
                probe: probe.map(|id| ProbeLease { id, expires_ms }),
            },
            not_before_ms,
            hint_len_ms,
            updated_ms,
        };
        prop_assert_eq!(codec::decode(&codec::encode(&state)).unwrap(), state);
    }
}
