//! The `failure-rate` model: what retries cost a service that fails, and what a retry budget and
//! a circuit breaker save. After Marc Brooker's "Fixing retries with token buckets and circuit
//! breakers" (2022, <https://brooker.co.za/blog/2022/02/28/retries.html>): requests arrive
//! independently, every call fails with probability X whatever came before, and each
//! [`Strategy`] is judged by the share of requests that succeed and by the load it puts on the
//! service, in calls per request.
//!
//! The model, in simulated time (nothing real waits):
//! - [`FailureRateSpec::requests`] requests arrive as a Poisson process of
//!   [`FailureRateSpec::arrivals_per_sec`] ([`ARRIVALS_PER_SEC`] by default), each a run of
//!   `retry`. A call takes two network hops of `|Normal(10 ms, 2 ms)|` (as in the other
//!   models) and fails with probability [`FailureRateSpec::failure_rate`].
//! - After a failed call a run asks the [`GiveUpRule`](retry_tool_backoff::GiveUpRule) of a
//!   real run (`--max-retries`, `--deadline`) and waits the delay of the policy's schedule.
//! - `budget` and `breaker` share one
//!   [`SharedState`](retry_tool_backoff::SharedState) between all requests, as runs with one
//!   `--budget KEY` do, and call its operations in the order a real run does
//!   ([`SharedState::begin`](retry_tool_backoff::SharedState::begin) on arrival,
//!   `cooldown` before each attempt, `attempt_end` after it, `finish` at the end), with the
//!   simulated time as their clock. No call carries a server's hint, so the shared cooldown
//!   never holds anyone back here.
//!
//! Each (strategy, failure rate) pair is one run with its own random stream, derived from the
//! seed, the strategy and the failure rate, so a point's numbers are the same alone or in a
//! [`sweep_failure_rates`], on any number of threads.

mod bounds;
mod engine;
mod plot;
mod table;

use std::fmt;
use std::time::Duration;

use retry_tool_backoff::{BreakerPolicy, BudgetPolicy, Jitter, Limits, Policy, Throttle, breaker};

use crate::client::no_backoff;
use crate::{Mode, SpecError, parallel};

pub use bounds::MAX_REQUESTS;
pub use plot::render_failure_rate_svg;
pub use table::write_failure_rate_table;

/// Requests arriving per second, on average, unless told otherwise.
pub const ARRIVALS_PER_SEC: f64 = 10.0;

/// The breaker's threshold in the `breaker` row unless told otherwise: it opens after this many
/// runs in a row gave up (`retry --budget KEY --breaker 5`).
pub const BREAKER_THRESHOLD: u32 = 5;

/// The breaker's cooldown in the `breaker` row unless told otherwise: `--breaker-cooldown`'s
/// default, 60 s ([`breaker::DEFAULT_COOLDOWN`]).
pub const BREAKER_COOLDOWN: Duration = breaker::DEFAULT_COOLDOWN;

/// The failure rates of a [`sweep_failure_rates`]: 0, 0.05, ..., 1 (21 points).
pub const SWEEP_POINTS: u32 = 21;

/// What a run does about a failed call. The names are the variants' in kebab case
/// ([`Strategy::name`]); the order of [`VARIANTS`](strum::VariantArray::VARIANTS) is the order of
/// the table's rows and of the chart's colours.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    strum::Display,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[strum(serialize_all = "kebab-case")]
pub enum Strategy {
    /// One call per request, never a retry (`retry -n 0`).
    NoRetry,
    /// Up to [`FailureRateSpec::max_retries`] retries per request (`retry -n N`).
    Retries,
    /// As `retries`, and a retry only while the shared token bucket allows it
    /// (`retry -n N --budget KEY`; gRFC A6's defaults unless told otherwise).
    Budget,
    /// As `budget`, and the shared circuit breaker: after [`FailureRateSpec::breaker`]'s
    /// threshold of runs in a row gave up, runs are refused without a call until its cooldown
    /// has passed, then one probe (`retry -n N --budget KEY --breaker 5`).
    Breaker,
}

impl Strategy {
    /// The strategy's name: `no-retry`, `retries`, `budget` or `breaker`.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// A number naming the strategy in the derivation of random streams (FNV-1a of the name).
    fn stream_id(self) -> u64 {
        self.name().bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
    }
}

/// Everything a `failure-rate` simulation needs. Check it with [`FailureRateSpec::validate`];
/// the functions that run it do so too.
#[derive(Clone, Debug, PartialEq)]
pub struct FailureRateSpec {
    /// Base, multiplier and cap of the backoff (`--base`, `--multiplier`, `--cap`).
    pub policy: Policy,
    /// How a run waits between attempts: a jitter mode of [`FailureRateSpec::policy`], or
    /// [`Mode::NoBackoff`] (retry at once).
    pub mode: Mode,
    /// Retries per request after its first call (`--max-retries`; `None`: unlimited, which
    /// needs a deadline: at failure rate 1 a request would never end).
    pub max_retries: Option<u64>,
    /// A run gives up instead of retrying when the next retry would start at or after this
    /// simulated time from its arrival (`--deadline`).
    pub deadline: Option<Duration>,
    /// The probability that a call fails, in `[0, 1]` (`--failure-rate`); a
    /// [`sweep_failure_rates`] ignores it.
    pub failure_rate: f64,
    /// Requests simulated per point (`--simulate REQUESTS`), `>= 1`.
    pub requests: u32,
    /// Mean arrivals per second of simulated time: finite and `> 0`.
    pub arrivals_per_sec: f64,
    /// The token bucket of `budget` and `breaker` (gRFC A6's example values by default).
    pub throttle: Throttle,
    /// The circuit breaker of `breaker`: [`BREAKER_THRESHOLD`] and [`BREAKER_COOLDOWN`] by
    /// default.
    pub breaker: BreakerPolicy,
    /// The seed of every random stream (`--seed`).
    pub seed: u64,
    /// Threads to run on; 0 means one per core. The numbers do not depend on it.
    pub threads: usize,
}

impl FailureRateSpec {
    /// `requests` requests failing with probability `failure_rate`, with the defaults of a
    /// real run of `retry`: base 1 s, multiplier 2, cap 64 s, full jitter, 5 retries, no
    /// deadline; [`ARRIVALS_PER_SEC`]; gRFC A6's token bucket; a breaker of
    /// [`BREAKER_THRESHOLD`] runs and [`BREAKER_COOLDOWN`]; seed 0.
    pub fn new(requests: u32, failure_rate: f64) -> FailureRateSpec {
        FailureRateSpec {
            policy: Policy::new(
                Duration::from_secs(1),
                2.0,
                Duration::from_secs(64),
                Jitter::Full,
            )
            .expect("constant, valid policy"),
            mode: Mode::Backoff(Jitter::Full),
            max_retries: Some(5),
            deadline: None,
            failure_rate,
            requests,
            arrivals_per_sec: ARRIVALS_PER_SEC,
            throttle: Throttle::default(),
            breaker: BreakerPolicy::new(BREAKER_THRESHOLD, BREAKER_COOLDOWN)
                .expect("constant, valid breaker"),
            seed: 0,
            threads: 0,
        }
    }

    /// Checks the request, as one point ([`simulate_failure_rate`]), before anything runs.
    ///
    /// # Errors
    /// [`SpecError::NoRequests`] for 0 requests, [`SpecError::FailureRate`] for a failure rate
    /// outside `[0, 1]`, [`SpecError::ArrivalRate`] for an arrival rate that is not a finite
    /// number `> 0`, [`SpecError::EndlessRetries`] for unlimited retries without a deadline
    /// at failure rate 1, [`SpecError::TooManyRequests`] for a request past
    /// [`MAX_REQUESTS`] or [`crate::MAX_CALLS_PER_RUN`].
    pub fn validate(&self) -> Result<(), SpecError> {
        self.check(false)
    }

    /// Checks the request as a [`sweep_failure_rates`] (failure rates 0 to 1; the spec's own is
    /// not used).
    ///
    /// # Errors
    /// Those of [`FailureRateSpec::validate`].
    pub fn validate_sweep(&self) -> Result<(), SpecError> {
        self.check(true)
    }

    fn check(&self, sweep: bool) -> Result<(), SpecError> {
        if self.requests == 0 {
            return Err(SpecError::NoRequests);
        }
        if !sweep && !(0.0..=1.0).contains(&self.failure_rate) {
            return Err(SpecError::FailureRate(self.failure_rate));
        }
        if !crate::bounds::is_rate(self.arrivals_per_sec) {
            return Err(SpecError::ArrivalRate(self.arrivals_per_sec));
        }
        bounds::check(self, &self.rates(sweep))
    }

    /// The failure rates simulated: the spec's own, or the sweep's.
    fn rates(&self, sweep: bool) -> Vec<f64> {
        if sweep {
            sweep_rates()
        } else {
            vec![self.failure_rate]
        }
    }

    /// The settings a run of `strategy` uses.
    fn setup(&self, strategy: Strategy, failure_rate: f64) -> engine::Setup {
        let budget = BudgetPolicy {
            throttle: self.throttle,
            breaker: None,
        };
        engine::Setup {
            failure_rate,
            requests: self.requests,
            arrivals_per_ms: self.arrivals_per_sec / 1000.0,
            policy: self
                .mode
                .jitter()
                .map_or_else(no_backoff, |j| self.policy.with_jitter(j)),
            limits: Limits {
                max_retries: match strategy {
                    Strategy::NoRetry => Some(0),
                    _ => self.max_retries,
                },
                deadline: self.deadline,
            },
            budget: match strategy {
                Strategy::NoRetry | Strategy::Retries => None,
                Strategy::Budget => Some(budget),
                Strategy::Breaker => Some(BudgetPolicy {
                    breaker: Some(self.breaker),
                    ..budget
                }),
            },
        }
    }
}

/// The failure rates of a sweep: `i / 20` for `i` in `0..=20`, so that `0.05 * i` typed on the
/// command line gives the same number (and the same random stream).
pub fn sweep_rates() -> Vec<f64> {
    let last = f64::from(SWEEP_POINTS - 1);
    (0..SWEEP_POINTS).map(|i| f64::from(i) / last).collect()
}

/// One strategy at one failure rate: the counts of one run of [`RateStats::requests`] requests.
/// `succeeded + gave_up + refused == requests`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateStats {
    /// The strategy simulated.
    pub strategy: Strategy,
    /// The probability that a call failed.
    pub failure_rate: f64,
    /// Requests simulated.
    pub requests: u32,
    /// Requests that got a successful call.
    pub succeeded: u64,
    /// Requests that gave up: retries used up, the deadline, or the budget spent.
    pub gave_up: u64,
    /// Of those, the requests whose retry the token bucket refused.
    pub spent: u64,
    /// Requests the breaker refused without a call.
    pub refused: u64,
    /// Calls the service received, first attempts and retries.
    pub calls: u64,
    /// Simulated time from the start to the last event, in milliseconds.
    pub duration_ms: f64,
}

impl RateStats {
    /// The share of requests that succeeded, in `[0, 1]`.
    pub fn success(&self) -> f64 {
        self.succeeded as f64 / f64::from(self.requests)
    }

    /// The load on the service: calls per request (1 without retries; at most
    /// `max_retries + 1`).
    pub fn load(&self) -> f64 {
        self.calls as f64 / f64::from(self.requests)
    }

    /// Retries per request: calls beyond each admitted request's first.
    pub fn retries_per_request(&self) -> f64 {
        let first = u64::from(self.requests) - self.refused;
        self.calls.saturating_sub(first) as f64 / f64::from(self.requests)
    }
}

/// Every strategy at one failure rate, in the order of
/// [`Strategy::VARIANTS`](strum::VariantArray::VARIANTS).
#[derive(Clone, Debug, PartialEq)]
pub struct RatePoint {
    /// The probability that a call failed.
    pub failure_rate: f64,
    /// One entry per strategy.
    pub stats: Vec<RateStats>,
}

impl fmt::Display for RatePoint {
    /// The failure rate as the table shows it: `0.35`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.2}", self.failure_rate)
    }
}

/// Simulates every strategy at [`FailureRateSpec::failure_rate`].
///
/// # Errors
/// As [`FailureRateSpec::validate`].
pub fn simulate_failure_rate(spec: &FailureRateSpec) -> Result<RatePoint, SpecError> {
    spec.validate()?;
    Ok(run_rates(spec, &[spec.failure_rate]).remove(0))
}

/// Simulates every strategy at every failure rate of [`sweep_rates`]: the data of Brooker's
/// figures (success and load against the failure rate, a line per strategy).
///
/// # Errors
/// As [`FailureRateSpec::validate_sweep`].
pub fn sweep_failure_rates(spec: &FailureRateSpec) -> Result<Vec<RatePoint>, SpecError> {
    spec.validate_sweep()?;
    Ok(run_rates(spec, &sweep_rates()))
}

/// Runs every strategy at each of `rates` (valid), on [`FailureRateSpec::threads`] threads.
fn run_rates(spec: &FailureRateSpec, rates: &[f64]) -> Vec<RatePoint> {
    use strum::VariantArray;
    let strategies = Strategy::VARIANTS;
    let jobs = rates.len() * strategies.len();
    let stats = parallel::map_with(jobs, spec.threads, engine::Workspace::new, |ws, j| {
        let (rate, strategy) = (
            rates[j / strategies.len()],
            strategies[j % strategies.len()],
        );
        let mut rng = engine::stream(spec.seed, strategy.stream_id(), rate);
        let counts = engine::run(ws, &spec.setup(strategy, rate), &mut rng);
        RateStats {
            strategy,
            failure_rate: rate,
            requests: spec.requests,
            succeeded: counts.succeeded,
            gave_up: counts.gave_up,
            spent: counts.spent,
            refused: counts.refused,
            calls: counts.calls,
            duration_ms: counts.end_ms,
        }
    });
    rates
        .iter()
        .zip(stats.chunks(strategies.len()))
        .map(|(&failure_rate, s)| RatePoint {
            failure_rate,
            stats: s.to_vec(),
        })
        .collect()
}

#[cfg(test)]
mod tests;
