//! Bounds on a simulation's size, so that an accepted request finishes in reasonable time and
//! memory: a run's cost grows with the clients (with the square of them without backoff) and,
//! under `rate-limit`, with the clients over the capacity, in ways a user cannot guess; the
//! number of runs and of modes only multiplies it, which a user can.
//!
//! The work of a request is estimated before anything runs, as the calls of one run of every
//! mode at every point; [`MAX_CALLS_PER_RUN`] bounds it. The estimate errs on the high side for
//! the common policies (tested against real runs below); it is a guard, not a prediction.

use std::time::Duration;

use retry_tool_backoff::{Jitter, Policy};

use crate::net::HOP_MEAN_MS;
use crate::{Mode, Model, SimSpec, SpecError, sweep_counts};

/// The most clients a simulation holds. Each takes about 130 bytes (its state and its pending
/// event) on each thread that runs the simulation, so this is about 130 MB per thread.
pub const MAX_CLIENTS: u32 = 1_000_000;

/// The most calls one run of every mode at every point may be estimated to make (for the
/// `failure-rate` model: every strategy at every failure rate, see
/// [`crate::failure_rate::MAX_REQUESTS`]). The estimate is high for most settings; a request at
/// the limit (`retry --simulate 4440`: the blog's five modes, retry's default policy, 100 runs)
/// is timed in docs/performance.md; `--runs` multiplies the time.
pub const MAX_CALLS_PER_RUN: f64 = 1e7;

/// Checks that `spec` fits [`MAX_CLIENTS`] and [`MAX_CALLS_PER_RUN`], as one point or (with
/// `sweep`) as the sweep of [`sweep_counts`]. `spec` is otherwise valid.
pub(crate) fn check(spec: &SimSpec, sweep: bool) -> Result<(), SpecError> {
    let points = |clients: u32| {
        if sweep {
            sweep_counts(clients)
        } else {
            vec![clients]
        }
    };
    let counts = &points(spec.clients);
    if spec.clients > MAX_CLIENTS {
        return Err(SpecError::TooManyClients {
            clients: spec.clients,
            max: MAX_CLIENTS,
            calls: None,
        });
    }
    let calls = work(spec, counts, spec.model);
    if calls <= MAX_CALLS_PER_RUN {
        return Ok(());
    }
    if let Model::RateLimit { capacity_rps } = spec.model {
        let unlimited = Model::RateLimit {
            capacity_rps: f64::MAX,
        };
        if work(spec, counts, unlimited) <= MAX_CALLS_PER_RUN {
            // The capacity is at fault: find the smallest that fits.
            let fits = |c: f64| {
                let model = Model::RateLimit { capacity_rps: c };
                work(spec, counts, model) <= MAX_CALLS_PER_RUN
            };
            let (mut lo, mut hi) = (capacity_rps, capacity_rps.max(1.0));
            while !fits(hi) {
                lo = hi;
                hi *= 2.0;
            }
            for _ in 0..60 {
                let mid = lo + (hi - lo) / 2.0;
                if fits(mid) { hi = mid } else { lo = mid }
            }
            return Err(SpecError::CapacityTooSmall {
                capacity: capacity_rps,
                min: hi,
                calls,
            });
        }
    }
    // The clients are at fault: the most that fit.
    Err(SpecError::TooManyClients {
        clients: spec.clients,
        max: most_that_fit(spec.clients, |n| {
            work(spec, &points(n), spec.model) <= MAX_CALLS_PER_RUN
        }),
        calls: Some(calls),
    })
}

/// The most of `asked` (clients, requests) that `fits`, at least 1, for a request that does
/// not fit: the work grows with them, so a bisection finds it. The one search of both models'
/// checks (this file's and `failure_rate/bounds.rs`).
pub(crate) fn most_that_fit(asked: u32, fits: impl Fn(u32) -> bool) -> u32 {
    let (mut lo, mut hi) = (0u32, asked);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) { lo = mid } else { hi = mid }
    }
    lo.max(1)
}

/// Whether `per_sec` is a rate a simulation can run at (a rate-limit capacity, an arrival
/// rate): a finite number `> 0`.
pub(crate) fn is_rate(per_sec: f64) -> bool {
    per_sec.is_finite() && per_sec > 0.0
}

/// Estimated calls of one run of every mode of `spec` at every client count of `counts`,
/// under `model`.
fn work(spec: &SimSpec, counts: &[u32], model: Model) -> f64 {
    counts
        .iter()
        .flat_map(|&n| spec.modes.iter().map(move |&m| (m, n)))
        .map(|(mode, n)| f64::from(n) * calls_per_client(spec, mode, n, model))
        .sum()
}

/// Estimated calls of one client of `n` in a run of `mode`.
///
/// The server serves the clients one after another over a time `drain`: `max(0, n - burst) /
/// capacity` seconds for `rate-limit`, about one write per two hops for `occ`. A client served
/// half-way through keeps calling until then, once per round trip plus its mean delay once the
/// delays have grown to the cap: taken as half the cap (a third for decorrelated jitter, which
/// falls back towards the base now and then), or half the base when they never grow
/// (multiplier 1).
///
/// Clients whose delays are all equal once grown (`none`, and `additive`, which has no jitter
/// left at the cap) or zero retry in step: under `occ` they collide so that the work grows with
/// the square of the clients (the blog's figure; `n / 4` calls each covers it), and under
/// `rate-limit` each wave, a cap apart, gets only the tokens of one wave. A retry limit or a
/// deadline cuts every estimate short.
fn calls_per_client(spec: &SimSpec, mode: Mode, n: u32, model: Model) -> f64 {
    let hop = HOP_MEAN_MS / 1000.0;
    let n = f64::from(n);
    let policy = mode.jitter().map(|j| spec.policy.with_jitter(j));
    let (steps, wait) = policy.map_or((0.0, 0.0), |p| growth(&p));
    let in_step = wait == 0.0
        || matches!(
            mode,
            Mode::Backoff(Jitter::None) | Mode::Backoff(Jitter::Additive)
        );
    let mut calls = match model {
        Model::Occ if in_step => n / 4.0 + 1.0,
        Model::Occ => {
            let (round_trip, drain) = (4.0 * hop, n * 2.0 * hop);
            1.0 + steps + drain / 2.0 / (round_trip + wait)
        }
        Model::RateLimit { capacity_rps } => {
            let round_trip = 2.0 * hop;
            let burst = capacity_rps.max(1.0);
            let drain = (n - burst).max(0.0) / capacity_rps;
            let spread = 1.0 + steps + drain / 2.0 / (round_trip + wait);
            if in_step && wait > 0.0 {
                let per_wave = burst.min(capacity_rps * (round_trip + 2.0 * wait));
                spread.max(1.0 + steps + n / per_wave / 2.0)
            } else {
                spread
            }
        }
    };
    let round_trip = match model {
        Model::Occ => 4.0 * hop,
        Model::RateLimit { .. } => 2.0 * hop,
    };
    if let Some(m) = spec.max_retries {
        calls = calls.min(m as f64 + 1.0);
    }
    if let Some(d) = spec.deadline {
        calls = calls.min(d.as_secs_f64() / round_trip + 1.0);
    }
    calls
}

/// Of a policy: the retries before its delays reach the cap, and the least mean delay after
/// that (seconds). A zero base never waits. Of a list of delays (`--delays`): the retries
/// before its last delay, which then repeats, and half that (decorrelated jitter walks from
/// the first listed delay to the largest as from a base to a cap, as below).
fn growth(p: &Policy) -> (f64, f64) {
    if let Some(delays) = p.delays()
        && p.jitter() != Jitter::Decorrelated
    {
        let last = delays.last().map_or(0.0, Duration::as_secs_f64);
        return (delays.len().saturating_sub(1) as f64, last / 2.0);
    }
    let (base, cap) = (p.base().as_secs_f64(), p.cap().as_secs_f64());
    if base == 0.0 || p.cap() == Duration::ZERO {
        return (0.0, 0.0);
    }
    // Decorrelated jitter ignores the multiplier: its mean grows by 1.5 or more per retry.
    let factor = match p.jitter() {
        Jitter::Decorrelated => 1.5,
        _ => p.multiplier(),
    };
    // Decorrelated jitter falls back towards the base now and then: its mean stays lower.
    let share = match p.jitter() {
        Jitter::Decorrelated => 3.0,
        _ => 2.0,
    };
    if factor <= 1.0 {
        return (0.0, base / share);
    }
    ((cap / base).ln() / factor.ln(), cap / share)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate;
    use strum::VariantArray;

    fn spec(clients: u32, model: Model) -> SimSpec {
        SimSpec {
            clients,
            model,
            modes: Mode::VARIANTS.to_vec(),
            runs: 1,
            seed: 3,
            ..SimSpec::aws_blog(clients)
        }
    }

    /// The estimate is above what runs really make, for the blog's policy and retry's default.
    #[test]
    fn the_estimate_is_above_real_runs() {
        let defaults = Policy::new(
            Duration::from_secs(1),
            2.0,
            Duration::from_secs(64),
            Jitter::Full,
        )
        .unwrap();
        for policy in [SimSpec::aws_blog(1).policy, defaults] {
            for model in [
                Model::Occ,
                Model::RateLimit { capacity_rps: 50.0 },
                Model::RateLimit { capacity_rps: 2.0 },
            ] {
                let s = SimSpec {
                    policy: policy.clone(),
                    ..spec(300, model)
                };
                for stats in simulate(&s).unwrap() {
                    let estimate = 300.0 * calls_per_client(&s, stats.mode, 300, model);
                    assert!(
                        estimate >= stats.calls,
                        "{model} {}: estimate {estimate}, real {}",
                        stats.mode,
                        stats.calls
                    );
                }
            }
        }
    }

    #[test]
    fn memory_bounds_the_clients() {
        let s = spec(MAX_CLIENTS + 1, Model::Occ);
        let e = check(
            &SimSpec {
                max_retries: Some(0),
                ..s
            },
            false,
        )
        .unwrap_err();
        assert_eq!(
            e,
            SpecError::TooManyClients {
                clients: MAX_CLIENTS + 1,
                max: MAX_CLIENTS,
                calls: None
            }
        );
        assert!(e.to_string().contains("at most 1000000"), "{e}");
    }

    #[test]
    fn quadratic_work_bounds_the_clients_and_names_the_most_that_fit() {
        let s = spec(100_000, Model::Occ);
        let Err(SpecError::TooManyClients { max, calls, .. }) = check(&s, false) else {
            panic!("100000 clients without backoff accepted");
        };
        assert!(calls.unwrap() > MAX_CALLS_PER_RUN);
        assert!((1000..100_000).contains(&max), "{max}");
        assert!(check(&spec(max, Model::Occ), false).is_ok());
        assert!(check(&spec(max + 1, Model::Occ), false).is_err());
        // Without the modes that retry in step, and with retry's default cap of 64 s, many more
        // clients fit.
        let jittered = SimSpec {
            modes: vec![Mode::Backoff(Jitter::Full), Mode::Backoff(Jitter::Equal)],
            policy: Policy::new(
                Duration::from_secs(1),
                2.0,
                Duration::from_secs(64),
                Jitter::Full,
            )
            .unwrap(),
            ..spec(100_000, Model::Occ)
        };
        assert!(check(&jittered, false).is_ok());
        // So do they with a retry limit.
        let limited = SimSpec {
            max_retries: Some(3),
            ..s.clone()
        };
        assert!(check(&limited, false).is_ok());
        // A sweep costs more than its last point.
        assert!(check(&spec(max, Model::Occ), true).is_err());
    }

    #[test]
    fn a_tiny_capacity_is_refused_with_the_least_that_fits() {
        let tiny = Model::RateLimit {
            capacity_rps: 0.001,
        };
        let s = spec(500, tiny);
        let Err(SpecError::CapacityTooSmall { capacity, min, .. }) = check(&s, false) else {
            panic!("a capacity of 0.001 for 500 clients accepted");
        };
        assert_eq!(capacity, 0.001);
        let at = |c: f64| spec(500, Model::RateLimit { capacity_rps: c });
        assert!(check(&at(min * 1.001), false).is_ok());
        assert!(check(&at(min * 0.999), false).is_err());
        // The guide's example (docs/simulator.md) fits.
        assert!(check(&at(50.0), false).is_ok());
    }
}
