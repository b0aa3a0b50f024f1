//! The `rate-limit` model: clients against a server that admits `capacity` requests per second
//! and rejects the rest, as an API answering HTTP 429 does (the case of Google Cloud's advice to
//! retry 429 and 5xx with exponential backoff and jitter:
//! <https://cloud.google.com/memorystore/docs/redis/exponential-backoff>,
//! <https://cloud.google.com/iam/docs/retry-strategy>).
//!
//! The server is a token bucket refilled at `capacity` tokens per second, holding at most one
//! second's worth (`max(capacity, 1)` tokens), full at t = 0; a request that finds a whole token
//! takes it and succeeds, any other is rejected. All clients start at t = 0 and each needs one
//! success. The network is the `occ` model's (`|Normal(10 ms, 2 ms)|` per hop, two hops per
//! call), and so are the metrics: `calls` counts requests, `rejected` the rejected ones, and the
//! completion time is the time of the last event. Unlike `occ`, the first backoff is the
//! schedule's first delay (`base`), as in a real run of `retry`.

use rand::Rng;

use crate::client::Retrier;
use crate::events::EventQueue;
use crate::net::Net;
use crate::run::{RunResult, Setup};

/// What happens at an event.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// The server admits or rejects the client's request.
    Request,
    /// The client learns the answer.
    Reply,
}

/// One client's state in a run.
#[derive(Clone, Debug)]
struct Client {
    retrier: Retrier,
    /// Whether its last request was admitted.
    admitted: bool,
}

/// A token bucket; times in ms.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    tokens: f64,
    size: f64,
    per_ms: f64,
    last_ms: f64,
}

impl Bucket {
    /// A full bucket for `capacity_rps` requests per second.
    fn new(capacity_rps: f64) -> Bucket {
        let size = capacity_rps.max(1.0);
        Bucket {
            tokens: size,
            size,
            per_ms: capacity_rps / 1000.0,
            last_ms: 0.0,
        }
    }

    /// Whether a request arriving at `now_ms` is admitted (then it takes a token).
    fn admit(&mut self, now_ms: f64) -> bool {
        let elapsed = (now_ms - self.last_ms).max(0.0);
        self.tokens = (self.tokens + elapsed * self.per_ms).min(self.size);
        self.last_ms = now_ms;
        // The tolerance keeps rounding in the refill from refusing a token that is due.
        if self.tokens >= 1.0 - 1e-9 {
            self.tokens = (self.tokens - 1.0).max(0.0);
            true
        } else {
            false
        }
    }
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

/// Runs the model once with `setup.clients` clients and a server admitting `capacity_rps`
/// (finite, `> 0`) requests per second, drawing from `rng`.
pub(crate) fn run<R: Rng + ?Sized>(
    ws: &mut Workspace,
    setup: &Setup,
    capacity_rps: f64,
    rng: &mut R,
) -> RunResult {
    let net = Net::new();
    let mut bucket = Bucket::new(capacity_rps);
    let Workspace { queue, clients } = ws;
    queue.clear();
    clients.clear();
    for id in 0..setup.clients {
        clients.push(Client {
            retrier: Retrier::new(&setup.policy, setup.limits, false, rng),
            admitted: false,
        });
        queue.push(net.hop(rng), id, Kind::Request);
    }

    let mut result = RunResult::default();
    while let Some((now, id, kind)) = queue.pop() {
        result.completion_ms = now;
        let client = &mut clients[id as usize];
        match kind {
            Kind::Request => {
                result.calls += 1;
                client.admitted = bucket.admit(now);
                if !client.admitted {
                    result.rejected += 1;
                }
                queue.push(now + net.hop(rng), id, Kind::Reply);
            }
            Kind::Reply => {
                if client.admitted {
                    result.succeeded += 1;
                } else if let Some(wait) = client.retrier.after_failure(now, rng) {
                    queue.push(now + wait + net.hop(rng), id, Kind::Request);
                } else {
                    result.gave_up += 1;
                }
            }
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::client::no_backoff;
    use crate::{Mode, Model};
    use rand::SeedableRng;
    use rand::rngs::Xoshiro256PlusPlus;
    use retry_tool_backoff::Jitter;
    use retry_tool_backoff::{Limits, Policy};
    use strum::VariantArray;

    fn run_once(mode: Mode, clients: u32, capacity: f64, limits: Limits, seed: u64) -> RunResult {
        let setup = Setup {
            model: Model::RateLimit {
                capacity_rps: capacity,
            },
            policy: mode.jitter().map_or_else(no_backoff, |j| {
                Policy::new(Duration::from_millis(100), 2.0, Duration::from_secs(10), j).unwrap()
            }),
            limits,
            clients,
        };
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        run(&mut Workspace::new(), &setup, capacity, &mut rng)
    }

    #[test]
    fn the_bucket_admits_its_size_then_its_rate() {
        let mut b = Bucket::new(10.0);
        let first: usize = (0..15).filter(|_| b.admit(0.0)).count();
        assert_eq!(first, 10);
        assert!(!b.admit(50.0));
        assert!(b.admit(100.0));
        assert!(!b.admit(100.0));
        // A slow server holds one token, and admits again when a whole one has come in.
        let mut slow = Bucket::new(0.5);
        assert!(slow.admit(0.0));
        assert!(!slow.admit(1.0));
        assert!(!slow.admit(1999.0));
        assert!(slow.admit(2000.0));
    }

    #[test]
    fn every_client_succeeds_once_and_calls_at_least_clients() {
        for &mode in Mode::VARIANTS {
            for (clients, capacity) in [(1, 1.0), (10, 5.0), (60, 20.0), (30, 100.0)] {
                let r = run_once(mode, clients, capacity, Limits::default(), 3);
                assert_eq!(r.succeeded, u64::from(clients), "{mode} {clients}");
                assert_eq!(r.gave_up, 0);
                assert!(r.calls >= u64::from(clients));
                assert_eq!(r.calls, r.succeeded + r.rejected);
            }
        }
    }

    #[test]
    fn a_single_client_makes_one_call() {
        for &mode in Mode::VARIANTS {
            let r = run_once(mode, 1, 1.0, Limits::default(), 8);
            assert_eq!((r.calls, r.rejected, r.gave_up), (1, 0, 0), "{mode}");
        }
    }

    #[test]
    fn under_capacity_nobody_is_rejected() {
        let r = run_once(Mode::Backoff(Jitter::Full), 50, 50.0, Limits::default(), 1);
        assert_eq!((r.calls, r.rejected), (50, 0));
    }

    #[test]
    fn completion_is_bounded_below_by_the_capacity() {
        // 100 clients, a burst of 10, then 10 per second: at least 9 s.
        for &mode in Mode::VARIANTS {
            let r = run_once(mode, 100, 10.0, Limits::default(), 2);
            assert!(r.completion_ms >= 9000.0, "{mode} {}", r.completion_ms);
        }
    }

    #[test]
    fn clients_that_give_up_are_counted() {
        let limits = Limits {
            max_retries: Some(2),
            deadline: None,
        };
        for &mode in Mode::VARIANTS {
            let r = run_once(mode, 100, 10.0, limits, 6);
            assert_eq!(r.succeeded + r.gave_up, 100, "{mode}");
            assert!(r.gave_up > 0, "{mode}");
            assert!(r.calls <= 300);
        }
    }
}
