//! The `occ` model: the contention experiment of the AWS Architecture Blog post "Exponential
//! Backoff And Jitter" (2015), as coded in its published simulator
//! (<https://github.com/aws-samples/aws-arch-backoff-simulator>, `src/backoff_simulator.py`;
//! the post: <https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/>).
//!
//! One server holds one row with an integer version. All clients start at t = 0 and each
//! updates the row once under optimistic concurrency: read the version, then write with it.
//! The write succeeds only if the version still matches, and then the version increments. Every
//! hop takes `|Normal(10 ms, 2 ms)|`, so one cycle is four hops: read request, read reply,
//! write request, write reply. On a failed write the client sends its next read after
//! `hop + backoff`, and the first backoff is the one for attempt 1 (see
//! [`crate::client::Retrier::new`]). `calls` counts writes, successful or not (reads are free);
//! `rejected` counts failed writes; the completion time is the time of the last event: the
//! last write reply, or the moment the last client gave up.

use rand::Rng;

use crate::client::Retrier;
use crate::events::EventQueue;
use crate::net::Net;
use crate::run::{RunResult, Setup};

/// What happens at an event.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// The server reads the version for the client.
    Read,
    /// The client has the version and sends its write.
    ReadReply,
    /// The server checks the client's version and writes, or refuses.
    Write,
    /// The client learns whether its write succeeded.
    WriteReply,
}

/// One client's state in a run.
#[derive(Clone, Debug)]
struct Client {
    retrier: Retrier,
    /// The version its last read returned.
    version: u64,
    /// Whether its last write succeeded.
    written: bool,
}

/// Storage kept between runs, so that a run allocates nothing once it has grown.
#[derive(Debug)]
pub(crate) struct Workspace {
    queue: EventQueue<Kind>,
    clients: Vec<Client>,
}

impl Workspace {
    /// Empty storage.
    pub(crate) fn new() -> Workspace {
        Workspace {
            queue: EventQueue::new(),
            clients: Vec::new(),
        }
    }
}

/// Runs the model once with `setup.clients` clients, drawing from `rng`.
pub(crate) fn run<R: Rng + ?Sized>(ws: &mut Workspace, setup: &Setup, rng: &mut R) -> RunResult {
    let net = Net::new();
    let Workspace { queue, clients } = ws;
    queue.clear();
    clients.clear();
    for id in 0..setup.clients {
        clients.push(Client {
            retrier: Retrier::new(&setup.policy, setup.limits, true, rng),
            version: 0,
            written: false,
        });
        queue.push(net.hop(rng), id, Kind::Read);
    }

    let mut version: u64 = 0;
    let mut result = RunResult::default();
    while let Some((now, id, kind)) = queue.pop() {
        result.completion_ms = now;
        let client = &mut clients[id as usize];
        match kind {
            Kind::Read => {
                client.version = version;
                queue.push(now + net.hop(rng), id, Kind::ReadReply);
            }
            Kind::ReadReply => queue.push(now + net.hop(rng), id, Kind::Write),
            Kind::Write => {
                result.calls += 1;
                client.written = client.version == version;
                if client.written {
                    version += 1;
                } else {
                    result.rejected += 1;
                }
                queue.push(now + net.hop(rng), id, Kind::WriteReply);
            }
            Kind::WriteReply => {
                if client.written {
                    result.succeeded += 1;
                } else if let Some(wait) = client.retrier.after_failure(now, rng) {
                    queue.push(now + wait + net.hop(rng), id, Kind::Read);
                } else {
                    result.gave_up += 1;
                }
            }
        }
    }
    debug_assert_eq!(result.succeeded, version);
    result
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::client::no_backoff;
    use crate::{Mode, Model, SimSpec, Stats, simulate};
    use rand::SeedableRng;
    use rand::rngs::Xoshiro256PlusPlus;
    use retry_tool_backoff::{Jitter, Limits, Policy};
    use strum::VariantArray;

    fn blog_policy(jitter: Jitter) -> Policy {
        Policy::new(
            Duration::from_millis(5),
            2.0,
            Duration::from_secs(2),
            jitter,
        )
        .unwrap()
    }

    fn run_once(mode: Mode, clients: u32, limits: Limits, seed: u64) -> RunResult {
        let setup = Setup {
            model: Model::Occ,
            policy: mode.jitter().map_or_else(no_backoff, blog_policy),
            limits,
            clients,
        };
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        run(&mut Workspace::new(), &setup, &mut rng)
    }

    #[test]
    fn every_client_writes_once_and_calls_at_least_clients() {
        for &mode in Mode::VARIANTS {
            for clients in [1, 2, 10, 50] {
                for seed in 0..5 {
                    let r = run_once(mode, clients, Limits::default(), seed);
                    assert_eq!(r.succeeded, u64::from(clients), "{mode} {clients}");
                    assert_eq!(r.gave_up, 0);
                    assert!(r.calls >= u64::from(clients));
                    assert_eq!(r.calls, r.succeeded + r.rejected);
                    assert!(r.completion_ms > 0.0 && r.completion_ms.is_finite());
                }
            }
        }
    }

    #[test]
    fn a_single_client_makes_one_call_in_four_hops() {
        for &mode in Mode::VARIANTS {
            let r = run_once(mode, 1, Limits::default(), 9);
            assert_eq!((r.calls, r.rejected, r.gave_up), (1, 0, 0), "{mode}");
            // Four hops of about 10 ms each.
            assert!(
                (20.0..60.0).contains(&r.completion_ms),
                "{}",
                r.completion_ms
            );
        }
    }

    #[test]
    fn no_backoff_work_grows_with_the_square_of_clients() {
        // The blog: without backoff, about N^2 / 2 calls in all.
        let mean = |clients| {
            (0..20)
                .map(|s| run_once(Mode::NoBackoff, clients, Limits::default(), s).calls as f64)
                .sum::<f64>()
                / 20.0
        };
        let (c20, c80) = (mean(20), mean(80));
        let ratio = c80 / c20;
        assert!((10.0..20.0).contains(&ratio), "{c20} {c80} {ratio}");
    }

    #[test]
    fn clients_that_run_out_of_retries_are_counted() {
        for &mode in Mode::VARIANTS {
            for max in [0, 1, 3] {
                let limits = Limits {
                    max_retries: Some(max),
                    deadline: None,
                };
                let r = run_once(mode, 50, limits, 4);
                assert_eq!(r.succeeded + r.gave_up, 50, "{mode} {max}");
                assert!(r.gave_up > 0, "{mode} {max}: 50 clients, {max} retries");
                assert!(r.calls <= 50 * (max + 1));
                assert_eq!(r.calls, r.succeeded + r.rejected);
            }
        }
    }

    #[test]
    fn a_deadline_stops_every_retry_at_or_after_it() {
        let limits = Limits {
            max_retries: None,
            deadline: Some(Duration::from_millis(200)),
        };
        for &mode in Mode::VARIANTS {
            let r = run_once(mode, 100, limits, 5);
            assert_eq!(r.succeeded + r.gave_up, 100, "{mode}");
            assert!(r.gave_up > 0, "{mode}");
            // A retry starts before 200 ms and takes four hops; none is near 100 ms long.
            assert!(r.completion_ms < 400.0, "{mode} {}", r.completion_ms);
        }
    }

    fn stats_at_100(seed: u64) -> Vec<Stats> {
        let spec = SimSpec {
            modes: vec![
                Mode::Backoff(Jitter::None),
                Mode::Backoff(Jitter::Full),
                Mode::Backoff(Jitter::Equal),
                Mode::Backoff(Jitter::Decorrelated),
            ],
            runs: 100,
            seed,
            ..SimSpec::aws_blog(100)
        };
        simulate(&spec).unwrap()
    }

    /// The published findings at 100 clients (the AWS Architecture Blog post's figures).
    #[test]
    fn reproduces_the_published_ranking_at_100_clients() {
        for seed in [1, 2] {
            let s = stats_at_100(seed);
            let get = |m: Mode| *s.iter().find(|x| x.mode == m).unwrap();
            let none = get(Mode::Backoff(Jitter::None));
            let full = get(Mode::Backoff(Jitter::Full));
            let equal = get(Mode::Backoff(Jitter::Equal));
            let decorr = get(Mode::Backoff(Jitter::Decorrelated));
            let report = format!("seed {seed}: {s:#?}");
            // Plain exponential is the clear loser on work and on time.
            for other in [full, equal, decorr] {
                assert!(none.calls > other.calls, "{report}");
                assert!(none.completion_ms > other.completion_ms, "{report}");
            }
            // Full jitter needs less than half the calls of plain exponential.
            assert!(full.calls < none.calls / 2.0, "{report}");
            // Full and equal need about the same work; decorrelated somewhat more.
            assert!(
                decorr.calls > full.calls && decorr.calls > equal.calls,
                "{report}"
            );
            let close = (full.calls - equal.calls).abs();
            assert!(close < (decorr.calls - full.calls) / 2.0, "{report}");
            // Equal jitter is the slowest of the jittered modes.
            assert!(equal.completion_ms > full.completion_ms, "{report}");
            assert!(equal.completion_ms > decorr.completion_ms, "{report}");
            // Full jitter takes somewhat more time than decorrelated (at this count).
            assert!(full.completion_ms > decorr.completion_ms, "{report}");
        }
    }
}
