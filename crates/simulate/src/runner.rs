//! Running many independent runs on several threads, and averaging them.
//!
//! Every `(point, run)` pair is one job with its own random stream (see
//! [`super::net::run_rng`]), run by [`crate::parallel`], the largest points first (so that no
//! long job is left for the end); each result goes to the job's slot, and the means are then
//! summed in run order. The numbers are therefore the same for any thread count.

use retry_tool_backoff::Limits;

use crate::client::no_backoff;
use crate::net::run_rng;
use crate::parallel;
use crate::run::{RunResult, Setup};
use crate::{Mode, Model, SimSpec, Stats, occ, rate_limit};

/// Per-thread storage reused from run to run.
struct Workspace {
    occ: occ::Workspace,
    rate_limit: rate_limit::Workspace,
}

impl Workspace {
    fn new() -> Workspace {
        Workspace {
            occ: occ::Workspace::new(),
            rate_limit: rate_limit::Workspace::new(),
        }
    }
}

/// The setup of `mode` with `clients` clients under `spec` (already validated).
fn setup(spec: &SimSpec, mode: Mode, clients: u32) -> Setup {
    Setup {
        model: spec.model,
        policy: mode
            .jitter()
            .map_or_else(no_backoff, |jitter| spec.policy.with_jitter(jitter)),
        limits: Limits {
            max_retries: spec.max_retries,
            deadline: spec.deadline,
        },
        clients,
    }
}

/// Runs `spec.runs` runs of each `(mode, clients)` point and returns their means, in the order
/// of `points`. `spec` must be valid (see [`SimSpec::validate`]).
pub(crate) fn run_points(spec: &SimSpec, points: &[(Mode, u32)]) -> Vec<Stats> {
    let runs = spec.runs as usize;
    let setups: Vec<Setup> = points.iter().map(|&(m, c)| setup(spec, m, c)).collect();
    // Biggest points first: a run's cost grows with its clients.
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by_key(|&p| std::cmp::Reverse(points[p].1));
    let jobs = points.len() * runs;
    let job = |ws: &mut Workspace, j: usize| {
        let p = order[j / runs];
        let run = (j % runs) as u32;
        let (mode, clients) = points[p];
        let mut rng = run_rng(spec.seed, mode, clients, run);
        let s = &setups[p];
        let result = match s.model {
            Model::Occ => occ::run(&mut ws.occ, s, &mut rng),
            Model::RateLimit { capacity_rps } => {
                rate_limit::run(&mut ws.rate_limit, s, capacity_rps, &mut rng)
            }
        };
        (p * runs + run as usize, result)
    };

    let mut results = vec![RunResult::default(); jobs];
    for (slot, r) in parallel::map_with(jobs, spec.threads, Workspace::new, job) {
        results[slot] = r;
    }

    points
        .iter()
        .zip(results.chunks(runs))
        .map(|(&(mode, clients), rs)| mean(mode, clients, rs))
        .collect()
}

/// The mean of `runs` (in their order, so the sum is the same every time).
fn mean(mode: Mode, clients: u32, runs: &[RunResult]) -> Stats {
    let n = runs.len() as f64;
    let avg = |f: fn(&RunResult) -> f64| runs.iter().map(f).sum::<f64>() / n;
    let calls = avg(|r| r.calls as f64);
    Stats {
        mode,
        clients,
        runs: runs.len() as u32,
        completion_ms: avg(|r| r.completion_ms),
        calls,
        calls_per_client: calls / f64::from(clients),
        rejected: avg(|r| r.rejected as f64),
        gave_up: avg(|r| r.gave_up as f64),
    }
}
