//! The contention experiment of the AWS Architecture Blog post "Exponential Backoff And
//! Jitter" (Marc Brooker, 2015,
//! <https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/>), run on the
//! backoff code of the `retry` command-line tool ([`retry_tool_backoff`]); `retry --simulate`
//! is its command line.
//!
//! N clients compete for one server; each needs one success and retries failures with a
//! [`Mode`]: one of the jitter modes (the delays come from the same
//! [`Schedule`](retry_tool_backoff::Schedule) that real runs use, one per client per run, and
//! clients give up by the same [`GiveUpRule`](retry_tool_backoff::GiveUpRule)) or `no-backoff`. The
//! simulation is discrete-event, in simulated milliseconds; every network hop takes
//! `|Normal(10 ms, 2 ms)|`. Two [`Model`]s:
//!
//! - `occ`: the published simulator's model
//!   (<https://github.com/aws-samples/aws-arch-backoff-simulator>): one row under optimistic
//!   concurrency, read then versioned write. With base 5 ms and cap 2 s it reproduces the
//!   published findings (tested at 100 clients in `occ.rs`).
//! - `rate-limit`: a server admitting a given number of requests per second and rejecting the
//!   rest (HTTP 429), the case of Google Cloud's retry guides
//!   (<https://cloud.google.com/memorystore/docs/redis/exponential-backoff>).
//!
//! A third model, [`failure_rate`], asks another question (what retries cost a failing service,
//! and what a retry budget and a circuit breaker save) and has its own spec and output.
//!
//! A point is the mean of [`SimSpec::runs`] runs ([`Stats`]); [`sweep`] repeats it for 10, 20,
//! ... clients, as in the blog's figure, for [`write_table`] and [`write_svg`]. Runs are spread
//! over threads; each has a random stream derived from the seed, the mode, the client count and
//! the run index, so the numbers depend on the seed only, never on the thread count. Requests
//! too big to finish in reasonable time or memory are refused ([`MAX_CLIENTS`],
//! [`MAX_CALLS_PER_RUN`]).
//!
//! ```
//! use retry_tool_simulate::{SimSpec, SweepPoint, simulate, write_table};
//!
//! let spec = SimSpec { runs: 5, ..SimSpec::aws_blog(20) };
//! let stats = simulate(&spec).unwrap();
//! assert!(stats.iter().all(|s| s.calls >= 20.0 && s.gave_up == 0.0));
//! write_table(&mut std::io::sink(), &[SweepPoint { clients: 20, stats }]).unwrap();
//! ```

mod bounds;
mod client;
mod error;
mod events;
pub mod failure_rate;
mod mode;
mod net;
mod occ;
mod parallel;
mod plot;
mod rate_limit;
mod run;
mod runner;
mod table;

use std::fmt;
use std::time::Duration;

use retry_tool_backoff::{Jitter, Policy};

pub use bounds::{MAX_CALLS_PER_RUN, MAX_CLIENTS};
pub use error::SpecError;
pub use mode::{Mode, ModeListError};
pub use net::{HOP_MEAN_MS, HOP_SD_MS};
pub use plot::{PlotError, render_svg, write_svg};
pub use table::write_table;

/// Runs averaged per point unless told otherwise (`--runs`), as in the published simulator.
pub const DEFAULT_RUNS: u32 = 100;

/// The step between client counts in a [`sweep`] (10, 20, 30, ...), as in the blog's figure.
pub const SWEEP_STEP: u32 = 10;

/// What the clients compete for. [`Model::name`] is the variant's name in kebab case.
#[derive(Clone, Copy, Debug, PartialEq, strum::IntoStaticStr)]
#[strum(serialize_all = "kebab-case")]
pub enum Model {
    /// One row under optimistic concurrency (read, then write with the version read), exactly
    /// the published simulator's model. `calls` counts writes. See `occ.rs`.
    Occ,
    /// A server admitting `capacity_rps` requests per second (a token bucket holding one
    /// second's worth, at least one token, full at the start) and rejecting the rest, as with
    /// HTTP 429. `calls` counts requests. See `rate_limit.rs`.
    RateLimit {
        /// Requests admitted per second: finite and `> 0`.
        capacity_rps: f64,
    },
}

impl Model {
    /// The model's name: `occ` or `rate-limit`.
    pub fn name(&self) -> &'static str {
        self.into()
    }
}

impl fmt::Display for Model {
    /// The name, and the capacity of `rate-limit`: `rate-limit (20 req/s)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Model::Occ => f.write_str(self.name()),
            Model::RateLimit { capacity_rps } => {
                write!(f, "{} ({capacity_rps} req/s)", self.name())
            }
        }
    }
}

/// Everything a simulation needs. Check it with [`SimSpec::validate`]; the functions that run
/// it do so too.
#[derive(Clone, Debug, PartialEq)]
pub struct SimSpec {
    /// Base, multiplier and cap of every client's backoff (`--base`, `--multiplier`, `--cap`,
    /// `--preset`). Its jitter mode is not used: [`SimSpec::modes`] says which to simulate.
    pub policy: Policy,
    /// Retries each client may make after its first call (`--max-retries`); `None`, the
    /// blog's setting, is unlimited. A client with none left gives up and is counted.
    pub max_retries: Option<u64>,
    /// A client gives up instead of retrying when the next retry would start at or after this
    /// simulated time from the start of the run (`--deadline`), as `retry` does with a clock.
    pub deadline: Option<Duration>,
    /// The contention model (`--model`, `--capacity`).
    pub model: Model,
    /// The modes to compare, in output order (`--jitter`): not empty, no repeats.
    pub modes: Vec<Mode>,
    /// The number of competing clients (`--simulate CLIENTS`), `>= 1`; the largest count of a
    /// [`sweep`].
    pub clients: u32,
    /// Runs averaged per point (`--runs`), `>= 1`; see [`DEFAULT_RUNS`].
    pub runs: u32,
    /// The seed of every random stream (`--seed`); the same seed gives the same numbers.
    pub seed: u64,
    /// Threads to run on; 0 means one per core. The numbers do not depend on it.
    pub threads: usize,
}

impl SimSpec {
    /// The published experiment with `clients` clients: the `occ` model, base 5 ms, multiplier
    /// 2, cap 2 s, unlimited retries, [`DEFAULT_RUNS`] runs, seed 0, and the blog's five modes:
    /// `none` (its "Exponential"), `full`, `equal`, `decorrelated` and `no-backoff`.
    pub fn aws_blog(clients: u32) -> SimSpec {
        SimSpec {
            policy: Policy::new(
                Duration::from_millis(5),
                2.0,
                Duration::from_secs(2),
                Jitter::Full,
            )
            .expect("constant, valid policy"),
            max_retries: None,
            deadline: None,
            model: Model::Occ,
            modes: vec![
                Mode::Backoff(Jitter::None),
                Mode::Backoff(Jitter::Full),
                Mode::Backoff(Jitter::Equal),
                Mode::Backoff(Jitter::Decorrelated),
                Mode::NoBackoff,
            ],
            clients,
            runs: DEFAULT_RUNS,
            seed: 0,
            threads: 0,
        }
    }

    /// Checks the request, as one point ([`simulate`]), before anything runs.
    ///
    /// # Errors
    /// [`SpecError::NoClients`] for 0 clients, [`SpecError::NoRuns`] for 0 runs,
    /// [`SpecError::NoModes`] for an empty mode list, [`SpecError::DuplicateMode`] for a mode
    /// listed twice, [`SpecError::Capacity`] for a rate-limit capacity that is not a finite
    /// number `> 0`; [`SpecError::TooManyClients`] and [`SpecError::CapacityTooSmall`] for a
    /// request past [`MAX_CLIENTS`] or [`MAX_CALLS_PER_RUN`].
    pub fn validate(&self) -> Result<(), SpecError> {
        self.check(false)
    }

    /// Checks the request as a [`sweep`]: as [`SimSpec::validate`], with the work of every
    /// point of the sweep.
    ///
    /// # Errors
    /// Those of [`SimSpec::validate`].
    pub fn validate_sweep(&self) -> Result<(), SpecError> {
        self.check(true)
    }

    fn check(&self, sweep: bool) -> Result<(), SpecError> {
        if self.clients == 0 {
            return Err(SpecError::NoClients);
        }
        if self.runs == 0 {
            return Err(SpecError::NoRuns);
        }
        if self.modes.is_empty() {
            return Err(SpecError::NoModes);
        }
        if let Some(twice) = Mode::repeated(&self.modes) {
            return Err(SpecError::DuplicateMode(twice.name().to_string()));
        }
        if let Model::RateLimit { capacity_rps } = self.model
            && !bounds::is_rate(capacity_rps)
        {
            return Err(SpecError::Capacity(capacity_rps));
        }
        bounds::check(self, sweep)
    }
}

/// One mode at one client count: means over [`Stats::runs`] runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// The mode simulated.
    pub mode: Mode,
    /// Competing clients.
    pub clients: u32,
    /// Runs averaged.
    pub runs: u32,
    /// Mean completion time: the time of the run's last event, in simulated milliseconds.
    pub completion_ms: f64,
    /// Mean calls per run, successful or not (the blog's "work"): writes for `occ`, requests
    /// for `rate-limit`. At least `clients - gave_up`.
    pub calls: f64,
    /// `calls / clients`: at least 1 when nobody gives up.
    pub calls_per_client: f64,
    /// Mean failed calls per run: conflicting writes (`occ`) or rejected requests
    /// (`rate-limit`).
    pub rejected: f64,
    /// Mean clients per run that gave up (no retries left, or the deadline); 0 when retries
    /// are unlimited and there is no deadline.
    pub gave_up: f64,
}

/// All modes at one client count, in the order of [`SimSpec::modes`].
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPoint {
    /// Competing clients.
    pub clients: u32,
    /// One entry per mode.
    pub stats: Vec<Stats>,
}

/// Simulates `mode` with `clients` clients ([`SimSpec::clients`] and [`SimSpec::modes`] are
/// not used): the mean of [`SimSpec::runs`] runs.
///
/// # Errors
/// As [`SimSpec::validate`] for `clients` clients of this one mode.
pub fn simulate_point(spec: &SimSpec, mode: Mode, clients: u32) -> Result<Stats, SpecError> {
    let one = SimSpec {
        clients,
        modes: vec![mode],
        ..spec.clone()
    };
    one.validate()?;
    Ok(runner::run_points(&one, &[(mode, clients)])[0])
}

/// Simulates every mode of [`SimSpec::modes`] with [`SimSpec::clients`] clients, in that order.
///
/// # Errors
/// As [`SimSpec::validate`].
pub fn simulate(spec: &SimSpec) -> Result<Vec<Stats>, SpecError> {
    spec.validate()?;
    let points: Vec<(Mode, u32)> = spec.modes.iter().map(|&m| (m, spec.clients)).collect();
    Ok(runner::run_points(spec, &points))
}

/// Simulates every mode at each client count of [`sweep_counts`]`(spec.clients)`: the data of
/// the blog's figure (calls and completion time against clients, a line per mode).
///
/// # Errors
/// As [`SimSpec::validate_sweep`].
pub fn sweep(spec: &SimSpec) -> Result<Vec<SweepPoint>, SpecError> {
    spec.validate_sweep()?;
    let counts = sweep_counts(spec.clients);
    let points: Vec<(Mode, u32)> = counts
        .iter()
        .flat_map(|&c| spec.modes.iter().map(move |&m| (m, c)))
        .collect();
    let mut stats = runner::run_points(spec, &points).into_iter();
    Ok(counts
        .into_iter()
        .map(|clients| SweepPoint {
            clients,
            stats: stats.by_ref().take(spec.modes.len()).collect(),
        })
        .collect())
}

/// The client counts of a sweep up to `max`: 10, 20, ... up to `max`, then `max` itself if it
/// is not a multiple of 10 (just `[max]` below 10; empty for 0). 190 gives the blog's 19 points.
pub fn sweep_counts(max: u32) -> Vec<u32> {
    let mut counts: Vec<u32> = (1..=max / SWEEP_STEP).map(|i| i * SWEEP_STEP).collect();
    if !max.is_multiple_of(SWEEP_STEP) {
        counts.push(max);
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use strum::VariantArray;

    fn small(model: Model) -> SimSpec {
        SimSpec {
            model,
            modes: Mode::VARIANTS.to_vec(),
            runs: 8,
            seed: 42,
            ..SimSpec::aws_blog(30)
        }
    }

    /// 30 clients against 10 requests per second: 20 rejected at first.
    const RATE: Model = Model::RateLimit { capacity_rps: 10.0 };

    #[test]
    fn sweep_counts_follow_the_blog() {
        assert_eq!(sweep_counts(190).len(), 19);
        assert_eq!(sweep_counts(190)[..3], [10, 20, 30]);
        assert_eq!(sweep_counts(35), vec![10, 20, 30, 35]);
        assert_eq!(sweep_counts(7), vec![7]);
        assert!(sweep_counts(0).is_empty());
    }

    #[test]
    fn refuses_bad_specs_with_clear_messages() {
        let ok = small(Model::Occ);
        assert_eq!(ok.validate(), Ok(()));
        let check = |spec: SimSpec, want: SpecError, words: &str| {
            let got = spec.validate().unwrap_err();
            assert_eq!(got, want);
            assert!(got.to_string().contains(words), "{got}");
            assert_eq!(simulate(&spec).unwrap_err(), want);
            assert_eq!(sweep(&spec).unwrap_err(), want);
        };
        check(
            SimSpec {
                clients: 0,
                ..ok.clone()
            },
            SpecError::NoClients,
            "clients",
        );
        check(
            SimSpec {
                runs: 0,
                ..ok.clone()
            },
            SpecError::NoRuns,
            "runs",
        );
        check(
            SimSpec {
                modes: vec![],
                ..ok.clone()
            },
            SpecError::NoModes,
            "empty",
        );
        check(
            SimSpec {
                modes: vec![Mode::NoBackoff, Mode::NoBackoff],
                ..ok.clone()
            },
            SpecError::DuplicateMode("no-backoff".into()),
            "twice",
        );
        for c in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let spec = SimSpec {
                model: Model::RateLimit { capacity_rps: c },
                ..ok.clone()
            };
            assert!(
                spec.validate()
                    .unwrap_err()
                    .to_string()
                    .contains("capacity")
            );
        }
        assert_eq!(
            simulate_point(&ok, Mode::NoBackoff, 0),
            Err(SpecError::NoClients)
        );
    }

    #[test]
    fn every_client_finishes_and_calls_at_least_clients() {
        for model in [Model::Occ, RATE] {
            for s in simulate(&small(model)).unwrap() {
                assert_eq!(s.gave_up, 0.0, "{model} {s:?}");
                assert!(s.calls >= 30.0, "{model} {s:?}");
                assert!(s.calls_per_client >= 1.0);
                assert!(s.rejected <= s.calls - 30.0 + 1e-9);
                assert!(s.completion_ms > 0.0);
            }
        }
    }

    #[test]
    fn with_max_retries_the_rest_are_counted_as_given_up() {
        for model in [Model::Occ, RATE] {
            let spec = SimSpec {
                max_retries: Some(1),
                ..small(model)
            };
            for s in simulate(&spec).unwrap() {
                assert!(s.gave_up > 0.0, "{model} {s:?}");
                // Those who got through made at least one call each.
                assert!(s.calls >= 30.0 - s.gave_up, "{model} {s:?}");
                assert!(s.calls <= 60.0, "{model} {s:?}");
            }
        }
    }

    #[test]
    fn a_single_client_has_no_failures() {
        for model in [Model::Occ, RATE] {
            let spec = SimSpec {
                clients: 1,
                ..small(model)
            };
            for s in simulate(&spec).unwrap() {
                assert_eq!((s.calls, s.rejected, s.gave_up), (1.0, 0.0, 0.0), "{s:?}");
            }
        }
    }

    #[test]
    fn same_seed_same_numbers_whatever_the_threads() {
        for model in [Model::Occ, RATE] {
            let spec = SimSpec {
                clients: 25,
                ..small(model)
            };
            let one = sweep(&SimSpec {
                threads: 1,
                ..spec.clone()
            })
            .unwrap();
            let two = sweep(&SimSpec {
                threads: 2,
                ..spec.clone()
            })
            .unwrap();
            let five = sweep(&SimSpec {
                threads: 5,
                ..spec.clone()
            })
            .unwrap();
            assert_eq!(one, two);
            assert_eq!(one, five);
            assert_eq!(one, sweep(&spec).unwrap());
            let other = sweep(&SimSpec { seed: 43, ..spec }).unwrap();
            assert_ne!(one, other);
        }
    }

    #[test]
    fn a_mode_gives_the_same_numbers_alone_or_in_a_list() {
        let spec = small(Model::Occ);
        let all = simulate(&spec).unwrap();
        for s in &all {
            assert_eq!(simulate_point(&spec, s.mode, 30).unwrap(), *s);
        }
        let full = SimSpec {
            modes: vec![Mode::Backoff(Jitter::Full)],
            ..spec
        };
        assert_eq!(simulate(&full).unwrap()[0], all[1]);
    }

    #[test]
    fn sweep_points_match_single_simulations() {
        let spec = SimSpec {
            clients: 20,
            ..small(Model::Occ)
        };
        let points = sweep(&spec).unwrap();
        assert_eq!(
            points.iter().map(|p| p.clients).collect::<Vec<_>>(),
            vec![10, 20]
        );
        assert_eq!(points[1].stats, simulate(&spec).unwrap());
        let modes: Vec<Mode> = points[0].stats.iter().map(|s| s.mode).collect();
        assert_eq!(modes, spec.modes);
    }
}
