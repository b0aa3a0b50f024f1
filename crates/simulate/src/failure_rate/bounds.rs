//! Bounds on a `failure-rate` simulation's size, as for the other models (`crate::bounds`): the
//! requests a run holds in memory, and the calls of every strategy at every failure rate,
//! estimated before anything runs.
//!
//! The estimate per request at failure rate X: 1 call for `no-retry`; for `retries`, the mean
//! of a geometric number of calls cut at the attempts allowed, `sum of X^k for k < A`, where `A`
//! is `max_retries + 1`, or what fits in the deadline at one round trip per call (unlimited
//! without either); for `budget` and `breaker`, no more than that, nor than the token bucket
//! allows: a retry needs a failure that leaves more than `maxTokens / 2`, and only successes
//! (`tokenRatio` each) refill, so retries are at most `maxTokens / 2 + tokenRatio * calls`,
//! and calls at most `(requests + maxTokens / 2) / (1 - tokenRatio)` (with `tokenRatio < 1`
//! and no refill with time).

use crate::bounds::most_that_fit;
use crate::net::HOP_MEAN_MS;
use crate::{MAX_CALLS_PER_RUN, SpecError};

use super::FailureRateSpec;

/// The most requests a simulation holds. Each request in flight takes about 200 bytes (its
/// backoff state and its pending event); at worst all are in flight at once.
pub const MAX_REQUESTS: u32 = 1_000_000;

/// Checks that `spec` fits [`MAX_REQUESTS`] and [`MAX_CALLS_PER_RUN`] at the failure rates
/// `rates`. `spec` is otherwise valid.
pub(super) fn check(spec: &FailureRateSpec, rates: &[f64]) -> Result<(), SpecError> {
    if spec.requests > MAX_REQUESTS {
        return Err(SpecError::TooManyRequests {
            requests: spec.requests,
            max: MAX_REQUESTS,
            calls: None,
        });
    }
    let calls = work(spec, spec.requests, rates);
    if calls.is_infinite() {
        return Err(SpecError::EndlessRetries);
    }
    if calls <= MAX_CALLS_PER_RUN {
        return Ok(());
    }
    Err(SpecError::TooManyRequests {
        requests: spec.requests,
        max: most_that_fit(spec.requests, |n| work(spec, n, rates) <= MAX_CALLS_PER_RUN),
        calls: Some(calls),
    })
}

/// Estimated calls of every strategy at every rate of `rates` for `requests` requests.
fn work(spec: &FailureRateSpec, requests: u32, rates: &[f64]) -> f64 {
    let r = f64::from(requests);
    let attempts = attempts_allowed(spec);
    let budget_cap = {
        let t = &spec.throttle;
        let ratio = t.token_ratio();
        if ratio < 1.0 && t.refill_every().is_none() {
            (r + t.max_tokens() / 2.0) / (1.0 - ratio)
        } else {
            f64::INFINITY
        }
    };
    rates
        .iter()
        .map(|&x| {
            let retries = r * expected_calls(x, attempts);
            r + retries + 2.0 * retries.min(budget_cap)
        })
        .sum()
}

/// Attempts a request may make: `max_retries + 1`, and no more than fit in the deadline at one
/// round trip each; infinite with neither.
fn attempts_allowed(spec: &FailureRateSpec) -> f64 {
    let by_count = spec.max_retries.map_or(f64::INFINITY, |n| n as f64 + 1.0);
    let round_trip_s = 2.0 * HOP_MEAN_MS / 1000.0;
    let by_deadline = spec
        .deadline
        .map_or(f64::INFINITY, |d| d.as_secs_f64() / round_trip_s + 1.0);
    by_count.min(by_deadline)
}

/// The mean calls of a request that makes at most `attempts` calls, each failing with
/// probability `x`: `sum of x^k for k < attempts` (the closed form of the `retries` row).
pub(super) fn expected_calls(x: f64, attempts: f64) -> f64 {
    if x >= 1.0 {
        attempts
    } else if attempts.is_infinite() {
        1.0 / (1.0 - x)
    } else {
        (1.0 - x.powf(attempts)) / (1.0 - x)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::failure_rate::{Strategy, sweep_failure_rates, sweep_rates};

    #[test]
    fn the_closed_form() {
        assert_eq!(expected_calls(0.0, 6.0), 1.0);
        assert_eq!(expected_calls(1.0, 6.0), 6.0);
        assert!((expected_calls(0.5, 6.0) - 1.96875).abs() < 1e-12);
        assert_eq!(expected_calls(0.5, f64::INFINITY), 2.0);
        assert!(expected_calls(1.0, f64::INFINITY).is_infinite());
    }

    /// The estimate is above what the sweep really makes, for each strategy at each rate.
    #[test]
    fn the_estimate_is_above_real_runs() {
        let spec = FailureRateSpec {
            seed: 7,
            ..FailureRateSpec::new(3000, 0.5)
        };
        let attempts = attempts_allowed(&spec);
        for point in sweep_failure_rates(&spec).unwrap() {
            let x = point.failure_rate;
            // The mean, and a margin for the draw's own spread.
            let retries = 3000.0 * expected_calls(x, attempts) * 1.05;
            for s in &point.stats {
                let estimate = match s.strategy {
                    Strategy::NoRetry => 3000.0,
                    Strategy::Retries => retries,
                    Strategy::Budget | Strategy::Breaker => retries.min((3000.0 + 5.0) / 0.9),
                };
                assert!(estimate >= s.calls as f64, "{x} {s:?}");
            }
        }
    }

    #[test]
    fn refuses_endless_retries_and_too_much_work() {
        let unlimited = FailureRateSpec {
            max_retries: None,
            ..FailureRateSpec::new(100, 0.5)
        };
        assert_eq!(unlimited.validate(), Ok(()));
        assert_eq!(
            FailureRateSpec {
                failure_rate: 1.0,
                ..unlimited.clone()
            }
            .validate(),
            Err(SpecError::EndlessRetries)
        );
        assert_eq!(unlimited.validate_sweep(), Err(SpecError::EndlessRetries));
        let with_deadline = FailureRateSpec {
            deadline: Some(Duration::from_secs(10)),
            ..unlimited
        };
        assert_eq!(with_deadline.validate_sweep(), Ok(()));

        let big = FailureRateSpec::new(MAX_REQUESTS + 1, 0.5);
        assert!(matches!(
            big.validate(),
            Err(SpecError::TooManyRequests { calls: None, .. })
        ));
        let many = FailureRateSpec {
            max_retries: Some(1000),
            ..FailureRateSpec::new(100_000, 1.0)
        };
        let Err(SpecError::TooManyRequests { max, calls, .. }) = many.validate() else {
            panic!("1000 retries of 100000 requests accepted");
        };
        assert!(calls.unwrap() > MAX_CALLS_PER_RUN);
        let fits = |n| {
            check(
                &FailureRateSpec {
                    requests: n,
                    ..many.clone()
                },
                &[1.0],
            )
        };
        assert!(fits(max).is_ok());
        assert!(fits(max + 1).is_err());
        // The sweep of the chart in docs/simulator.md fits, several times over.
        let chart = FailureRateSpec::new(10_000, 0.0);
        assert!(work(&chart, 10_000, &sweep_rates()) < MAX_CALLS_PER_RUN / 4.0);
    }
}
