//! Property tests for the backoff maths: bounds and means per jitter mode, the cap never
//! exceeded, growth monotone in the retry index and the cap, no overflow or panic with huge
//! multipliers and millions of retries, and the give-up rule ([`GiveUpRule`]).

use std::time::Duration;

use proptest::prelude::*;
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use retry_tool_backoff::{GiveUp, GiveUpRule, Jitter, Limits, Policy};

/// Every mode.
const MODES: [Jitter; 6] = [
    Jitter::None,
    Jitter::Full,
    Jitter::Equal,
    Jitter::Decorrelated,
    Jitter::Additive,
    Jitter::Proportional,
];

fn jitter() -> impl Strategy<Value = Jitter> {
    prop::sample::select(MODES.to_vec())
}

/// (base, cap) in seconds with base <= cap, from 0 to a year.
fn base_cap() -> impl Strategy<Value = (f64, f64)> {
    (0.0..3.2e7f64, 0.0..1.0f64).prop_map(|(cap, frac)| (cap * frac, cap))
}

fn policy(base: f64, mult: f64, cap: f64, jitter: Jitter) -> Policy {
    Policy::new(
        Duration::from_secs_f64(base),
        mult,
        Duration::from_secs_f64(cap),
        jitter,
    )
    .unwrap()
}

const TOLERANCE: f64 = 1e-9;

proptest! {
    #[test]
    fn every_delay_within_its_mode_bounds(
        (base, cap) in base_cap(),
        mult in 1.0..10.0f64,
        j in jitter(),
        seed: u64,
    ) {
        let p = policy(base, mult, cap, j);
        let (base, cap) = (p.base().as_secs_f64(), p.cap().as_secs_f64());
        let mut s = p.schedule();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut prev_decorrelated = base;
        for n in 0..60u64 {
            let d = s.next_delay(&mut rng).as_secs_f64();
            let v = p.expo_secs(n);
            prop_assert!(d <= cap + TOLERANCE, "delay {d} above cap {cap}");
            prop_assert!(d >= 0.0);
            match j {
                Jitter::None => prop_assert!((d - v).abs() <= TOLERANCE * v.max(1.0)),
                Jitter::Full => prop_assert!(d <= v + TOLERANCE),
                Jitter::Equal => {
                    prop_assert!(d >= v / 2.0 - TOLERANCE && d <= v + TOLERANCE)
                }
                Jitter::Decorrelated => {
                    prop_assert!(d >= base.min(cap) - TOLERANCE);
                    prop_assert!(d <= (3.0 * prev_decorrelated).min(cap) + TOLERANCE * cap.max(1.0));
                    prev_decorrelated = d;
                }
                Jitter::Additive => {
                    prop_assert!(d >= v - TOLERANCE * v.max(1.0));
                    prop_assert!(d <= (v + base).min(cap) + TOLERANCE * cap.max(1.0));
                }
                Jitter::Proportional => {
                    // v * (1 + U(-0.2, +0.2)), never above the cap.
                    prop_assert!(d >= v * 0.8 - TOLERANCE * v.max(1.0), "{d} below 0.8 * {v}");
                    prop_assert!(d <= (v * 1.2).min(cap) + TOLERANCE * cap.max(1.0));
                }
            }
        }
    }

    #[test]
    fn expo_grows_and_saturates(
        (base, cap) in base_cap(),
        mult in 1.0..1e300f64,
        n in 0u64..u64::MAX,
    ) {
        let p = policy(base, mult, cap, Jitter::None);
        let v = p.expo_secs(n);
        prop_assert!(v.is_finite());
        prop_assert!(v <= p.cap().as_secs_f64());
        prop_assert!(v >= p.base().as_secs_f64().min(p.cap().as_secs_f64()) - TOLERANCE);
        prop_assert!(p.expo_secs(n.saturating_add(1)) >= v);
    }

    #[test]
    fn same_seed_same_schedule((base, cap) in base_cap(), j in jitter(), seed: u64) {
        let p = policy(base, 2.0, cap, j);
        let draw = |seed| {
            let mut s = p.schedule();
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            (0..20).map(|_| s.next_delay(&mut rng)).collect::<Vec<_>>()
        };
        prop_assert_eq!(draw(seed), draw(seed));
    }

    #[test]
    fn growth_is_monotone_in_the_cap(
        (base, cap) in base_cap(),
        more in 0.0..1e6f64,
        mult in 1.0..10.0f64,
        n in 0u64..200,
    ) {
        let low = policy(base, mult, cap, Jitter::None);
        let high = policy(base, mult, cap + more, Jitter::None);
        prop_assert!(high.expo_secs(n) >= low.expo_secs(n));
    }

    /// The rule never grants more than `max_retries`, never a delay ending at or past the
    /// deadline, and otherwise grants exactly the schedule's delays (hint floors aside).
    #[test]
    fn the_give_up_rule_keeps_its_limits(
        (base, cap) in (0.0..50.0f64, 0.0..1.0f64).prop_map(|(c, f)| (c * f, c)),
        j in jitter(),
        max_retries in prop::option::of(0u64..30),
        deadline in prop::option::of(0.0..300.0f64),
        steps in prop::collection::vec((0.0..20.0f64, prop::option::of(0.0..100.0f64)), 0..40),
        seed: u64,
    ) {
        let p = policy(base, 2.0, cap, j);
        let limits = Limits {
            max_retries,
            deadline: deadline.map(Duration::from_secs_f64),
        };
        let mut rule = GiveUpRule::new(p.schedule(), limits);
        let mut schedule = p.schedule();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut twin = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut elapsed = Duration::ZERO;
        for (work, hint) in steps {
            // An attempt ran for `work` seconds, then failed.
            elapsed += Duration::from_secs_f64(work);
            let hint = hint.map(Duration::from_secs_f64);
            let before = rule.granted();
            match rule.next_delay(elapsed, hint, &mut rng) {
                Ok(delay) => {
                    let expected = schedule.next_delay(&mut twin).max(hint.unwrap_or_default());
                    prop_assert_eq!(delay, expected);
                    prop_assert!(max_retries.is_none_or(|m| before < m));
                    prop_assert!(limits.deadline.is_none_or(|d| elapsed + delay < d));
                    prop_assert_eq!(rule.granted(), before + 1);
                    elapsed += delay;
                }
                Err(why) => {
                    prop_assert_eq!(rule.granted(), before);
                    match why {
                        GiveUp::RetriesUsedUp => prop_assert_eq!(Some(before), max_retries),
                        GiveUp::DeadlinePassed => {
                            prop_assert!(limits.deadline.is_some_and(|d| elapsed >= d));
                        }
                        GiveUp::DelayPastDeadline(delay) => {
                            prop_assert!(limits.deadline.is_some_and(|d| elapsed + delay >= d));
                        }
                    }
                    break;
                }
            }
        }
    }
}

#[test]
fn millions_of_retries_with_a_huge_multiplier_stay_at_the_cap() {
    for j in MODES {
        let p = policy(1.0, 1e300, 64.0, j);
        let mut s = p.schedule();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut max = Duration::ZERO;
        for _ in 0..2_000_000 {
            max = max.max(s.next_delay(&mut rng));
        }
        assert!(max <= Duration::from_secs(64), "{j:?}: {max:?}");
        assert_eq!(p.expo_secs(u64::MAX), 64.0);
    }
}

#[test]
fn full_jitter_spreads_over_the_whole_range() {
    // A statistical sanity check with a fixed seed: full jitter is U(0, v), mean v/2.
    let p = policy(10.0, 2.0, 10.0, Jitter::Full);
    let mut s = p.schedule();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    let draws: Vec<f64> = (0..20_000)
        .map(|_| s.next_delay(&mut rng).as_secs_f64())
        .collect();
    let mean = draws.iter().sum::<f64>() / draws.len() as f64;
    assert!((mean - 5.0).abs() < 0.1, "mean {mean}");
    assert!(draws.iter().any(|d| *d < 0.5) && draws.iter().any(|d| *d > 9.5));
}

#[test]
fn decorrelated_ignores_the_multiplier() {
    let draw = |mult| {
        let p = policy(0.1, mult, 10.0, Jitter::Decorrelated);
        let mut s = p.schedule();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        (0..30).map(|_| s.next_delay(&mut rng)).collect::<Vec<_>>()
    };
    assert_eq!(draw(1.0), draw(7.0));
}

/// The mean of 20 000 delays at the cap-free point `n` (base 1 s, multiplier 1: every delay is
/// drawn around `v = 1`), against each mode's formula.
#[test]
fn every_mode_has_the_mean_of_its_formula() {
    let mean_of = |j: Jitter| {
        let p = policy(1.0, 1.0, 100.0, j);
        let mut s = p.schedule();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(13);
        let n = 20_000;
        (0..n)
            .map(|_| s.next_delay(&mut rng).as_secs_f64())
            .sum::<f64>()
            / f64::from(n)
    };
    // v; U(0, v); v/2 + U(0, v/2); base + U(0, base); v * (1 + U(-0.2, 0.2)).
    for (j, want) in [
        (Jitter::None, 1.0),
        (Jitter::Full, 0.5),
        (Jitter::Equal, 0.75),
        (Jitter::Additive, 1.5),
        (Jitter::Proportional, 1.0),
    ] {
        let got = mean_of(j);
        assert!((got - want).abs() < 0.02, "{j:?}: mean {got}, want {want}");
    }
    // Decorrelated wanders up to the cap and stays near it: far above its base.
    assert!(mean_of(Jitter::Decorrelated) > 30.0);
}
