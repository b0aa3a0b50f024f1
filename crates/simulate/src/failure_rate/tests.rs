//! The `failure-rate` model against its closed forms and Brooker's findings.

use std::time::Duration;

use strum::VariantArray;

use super::*;

fn spec(requests: u32, failure_rate: f64) -> FailureRateSpec {
    FailureRateSpec {
        seed: 11,
        ..FailureRateSpec::new(requests, failure_rate)
    }
}

fn row(point: &RatePoint, strategy: Strategy) -> RateStats {
    *point.stats.iter().find(|s| s.strategy == strategy).unwrap()
}

/// Within `within` (a fraction) of `want`.
fn near(got: f64, want: f64, within: f64) -> bool {
    (got - want).abs() <= within * want.abs().max(1e-9)
}

#[test]
fn retries_match_the_closed_form() {
    for n in [1u64, 3, 5] {
        for x in [0.1, 0.3, 0.5, 0.7, 0.9, 1.0] {
            let s = FailureRateSpec {
                max_retries: Some(n),
                ..spec(10_000, x)
            };
            let point = simulate_failure_rate(&s).unwrap();
            let r = row(&point, Strategy::Retries);
            let load: f64 = (0..=n).map(|k| x.powi(k as i32)).sum();
            let success = 1.0 - x.powi(n as i32 + 1);
            assert!(
                near(r.load(), load, 0.03),
                "n {n} x {x}: load {}, closed form {load}",
                r.load()
            );
            // Success is a share: compare it in points of the scale, not relatively (it tends to 0).
            assert!(
                (r.success() - success).abs() < 0.03,
                "n {n} x {x}: success {}, closed form {success}",
                r.success()
            );
            let none = row(&point, Strategy::NoRetry);
            assert_eq!(none.calls, 10_000);
            assert!((none.success() - (1.0 - x)).abs() < 0.03, "{x} {none:?}");
        }
    }
}

#[test]
fn at_failure_rate_1_retries_multiply_the_load_and_the_budget_does_not() {
    let point = simulate_failure_rate(&spec(10_000, 1.0)).unwrap();
    // -n 5: six calls per request, none succeeding.
    let retries = row(&point, Strategy::Retries);
    assert_eq!((retries.calls, retries.succeeded), (60_000, 0));
    assert_eq!(retries.load(), 6.0);
    // The bucket grants its four retries from full, then none: a load of 1.0004.
    let budget = row(&point, Strategy::Budget);
    assert_eq!(budget.calls, 10_004);
    assert!(budget.load() < 1.01, "{budget:?}");
    assert_eq!(budget.spent, 10_000);
    // The breaker refuses most requests outright: less than one call per request.
    let breaker = row(&point, Strategy::Breaker);
    assert!(breaker.load() < 0.1, "{breaker:?}");
    assert!(breaker.refused > 9_000, "{breaker:?}");
}

#[test]
fn the_budget_behaves_like_retries_when_failures_are_rare() {
    // Below tokenRatio / (1 + tokenRatio) (9 %) the bucket stays above half full.
    let point = simulate_failure_rate(&spec(10_000, 0.05)).unwrap();
    let (retries, budget) = (
        row(&point, Strategy::Retries),
        row(&point, Strategy::Budget),
    );
    assert!(
        near(budget.load(), retries.load(), 0.01),
        "{budget:?} {retries:?}"
    );
    assert!(budget.success() > 0.999, "{budget:?}");
    assert!(budget.spent < 10, "{budget:?}");
    // Above it, the bucket runs dry: about one call per request, like no retries.
    let point = simulate_failure_rate(&spec(10_000, 0.5)).unwrap();
    let budget = row(&point, Strategy::Budget);
    assert!(budget.load() < 1.1, "{budget:?}");
    assert!(row(&point, Strategy::Retries).load() > 1.9);
}

#[test]
fn no_failures_no_retries_whatever_the_strategy() {
    let point = simulate_failure_rate(&spec(5_000, 0.0)).unwrap();
    for s in &point.stats {
        assert_eq!(
            (s.calls, s.succeeded, s.refused),
            (5_000, 5_000, 0),
            "{s:?}"
        );
    }
}

#[test]
fn same_seed_same_numbers_on_any_thread_count_and_alone_or_in_a_sweep() {
    let base = spec(800, 0.35);
    let sweep = |threads| {
        sweep_failure_rates(&FailureRateSpec {
            threads,
            ..base.clone()
        })
        .unwrap()
    };
    let one = sweep(1);
    assert_eq!(one, sweep(2));
    assert_eq!(one, sweep(5));
    assert_eq!(one.len(), SWEEP_POINTS as usize);
    let rates: Vec<f64> = one.iter().map(|p| p.failure_rate).collect();
    assert_eq!((rates[0], rates[10], rates[20]), (0.0, 0.5, 1.0));
    assert_eq!(rates[7], 0.35);
    // The point at 0.35 is the sweep's.
    assert_eq!(simulate_failure_rate(&base).unwrap(), one[7]);
    let modes: Vec<Strategy> = one[0].stats.iter().map(|s| s.strategy).collect();
    assert_eq!(modes, Strategy::VARIANTS);
    let other = sweep_failure_rates(&FailureRateSpec { seed: 12, ..base }).unwrap();
    assert_ne!(one, other);
}

#[test]
fn refuses_bad_specs() {
    for x in [-0.1, 1.01, f64::NAN] {
        let e = spec(10, x).validate().unwrap_err();
        assert!(matches!(e, SpecError::FailureRate(_)), "{e:?}");
        assert!(e.to_string().contains("from 0 to 1"), "{e}");
        // A sweep does not use the spec's rate.
        assert_eq!(spec(10, x).validate_sweep(), Ok(()));
    }
    assert_eq!(spec(0, 0.5).validate(), Err(SpecError::NoRequests));
    let bad_rate = FailureRateSpec {
        arrivals_per_sec: 0.0,
        ..spec(10, 0.5)
    };
    assert_eq!(bad_rate.validate(), Err(SpecError::ArrivalRate(0.0)));
    assert_eq!(
        simulate_failure_rate(&spec(0, 0.5)),
        Err(SpecError::NoRequests)
    );
}

#[test]
fn no_backoff_and_a_deadline_are_a_real_runs() {
    // Retrying at once: the same counts as with backoff (time does not change the odds).
    let s = FailureRateSpec {
        mode: Mode::NoBackoff,
        ..spec(10_000, 0.5)
    };
    let r = row(&simulate_failure_rate(&s).unwrap(), Strategy::Retries);
    assert!(near(r.load(), 1.96875, 0.03), "{r:?}");
    // A 2 s deadline with base 1 s: at most a retry or two.
    let s = FailureRateSpec {
        deadline: Some(Duration::from_secs(2)),
        ..spec(2_000, 1.0)
    };
    let r = row(&simulate_failure_rate(&s).unwrap(), Strategy::Retries);
    assert!(r.load() < 3.0 && r.load() > 1.0, "{r:?}");
}
