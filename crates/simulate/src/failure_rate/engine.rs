//! One run of the `failure-rate` model: requests arriving over simulated time, each a run of
//! `retry` against a service whose calls fail with a fixed probability, discrete-event.
//!
//! Events: a request's arrival (the next one is drawn when one arrives), the start of an
//! attempt and its reply. Only requests in flight hold state, in slots reused as they end, so
//! memory grows with the requests in flight, not with all of them.

use std::time::Duration;

use rand::rngs::Xoshiro256PlusPlus;
use rand::{Rng, RngExt, SeedableRng};
use rand_distr::{Distribution, Exp};
use retry_tool_backoff::{
    Admission, AttemptOutcome, BudgetPolicy, GiveUpRule, Limits, Policy, RunEnd, SharedState,
};

use crate::events::EventQueue;
use crate::net::{Net, mix};

/// What one run needs to know.
#[derive(Clone, Debug)]
pub(crate) struct Setup {
    /// The probability that a call fails, in `[0, 1]`.
    pub(crate) failure_rate: f64,
    /// Requests to simulate.
    pub(crate) requests: u32,
    /// Mean arrivals per millisecond, `> 0`.
    pub(crate) arrivals_per_ms: f64,
    /// The backoff between attempts (zero delays for `no-backoff`).
    pub(crate) policy: Policy,
    /// When a run gives up (`max_retries` 0 for `no-retry`).
    pub(crate) limits: Limits,
    /// The shared budget (and breaker) of `budget` and `breaker`; `None` for the others.
    pub(crate) budget: Option<BudgetPolicy>,
}

/// What one run counted. `succeeded + gave_up + refused == requests`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Counts {
    pub(crate) succeeded: u64,
    pub(crate) gave_up: u64,
    pub(crate) spent: u64,
    pub(crate) refused: u64,
    pub(crate) calls: u64,
    /// Time of the last event, in ms.
    pub(crate) end_ms: f64,
}

/// What happens at an event.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// The next request arrives.
    Arrival,
    /// The request in the slot starts an attempt.
    Attempt,
    /// The request in the slot gets its attempt's answer.
    Reply,
}

/// A request in flight.
#[derive(Clone, Debug)]
struct Request {
    rule: GiveUpRule,
    arrived_ms: f64,
    /// The id it would claim the breaker's probe lease with, as a real run's random id.
    id: u64,
    /// Whether the breaker admitted it as the probe.
    probing: bool,
    /// Whether its current attempt fails.
    failing: bool,
    /// Whether it has made an attempt already: the next one is a retry, before which a real
    /// run asks the breaker again.
    retrying: bool,
}

/// Storage kept between runs on one thread.
#[derive(Debug)]
pub(crate) struct Workspace {
    queue: EventQueue<Kind>,
    slots: Vec<Request>,
    free: Vec<u32>,
}

impl Workspace {
    /// Empty storage.
    pub(crate) fn new() -> Workspace {
        Workspace {
            queue: EventQueue::new(),
            slots: Vec::new(),
            free: Vec::new(),
        }
    }

    fn insert(&mut self, request: Request) -> u32 {
        match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = request;
                slot
            }
            None => {
                self.slots.push(request);
                (self.slots.len() - 1) as u32
            }
        }
    }
}

/// The random stream of one run: from the seed, the strategy and the failure rate (its bits).
pub(crate) fn stream(seed: u64, strategy: u64, failure_rate: f64) -> Xoshiro256PlusPlus {
    let h = mix(mix(mix(seed) ^ strategy) ^ failure_rate.to_bits());
    Xoshiro256PlusPlus::seed_from_u64(h)
}

/// Simulated milliseconds as the shared state's clock (whole ms, as epoch ms are).
fn clock(now: f64) -> u64 {
    now as u64
}

/// Runs the model once as `setup` says, drawing from `rng`.
pub(crate) fn run<R: Rng + ?Sized>(ws: &mut Workspace, setup: &Setup, rng: &mut R) -> Counts {
    let net = Net::new();
    let arrivals = Exp::new(setup.arrivals_per_ms).expect("a validated, positive rate");
    let mut shared = SharedState::default();
    let mut counts = Counts::default();
    ws.queue.clear();
    ws.slots.clear();
    ws.free.clear();
    let mut arrived: u32 = 0;
    if setup.requests > 0 {
        ws.queue.push(arrivals.sample(rng), 0, Kind::Arrival);
    }

    while let Some((now, slot, kind)) = ws.queue.pop() {
        counts.end_ms = now;
        let now_ms = clock(now);
        match kind {
            Kind::Arrival => {
                arrived += 1;
                if arrived < setup.requests {
                    ws.queue.push(now + arrivals.sample(rng), 0, Kind::Arrival);
                }
                let id = u64::from(arrived);
                let mut probing = false;
                if let Some(policy) = &setup.budget {
                    let begin = shared.begin(policy, now_ms, id);
                    match begin.admission {
                        Admission::Refuse { .. } => {
                            counts.refused += 1;
                            continue;
                        }
                        Admission::Probe => probing = true,
                        Admission::Run => {}
                    }
                }
                let slot = ws.insert(Request {
                    rule: GiveUpRule::new(setup.policy.schedule(), setup.limits),
                    arrived_ms: now,
                    id,
                    probing,
                    failing: false,
                    retrying: false,
                });
                ws.queue.push(now, slot, Kind::Attempt);
            }
            Kind::Attempt => {
                let request = &mut ws.slots[slot as usize];
                if let Some(policy) = &setup.budget {
                    let probe = request.probing.then_some(request.id);
                    // Before a retry, a real run asks the breaker again (the same operation as
                    // on arrival): one that opened meanwhile ends the retrying, and the run
                    // counts as given up.
                    if request.retrying && policy.breaker.is_some() {
                        let check = shared.begin(policy, now_ms, request.id);
                        if let Admission::Refuse { .. } = check.admission {
                            counts.gave_up += 1;
                            shared.finish(policy, now_ms, RunEnd::GaveUp, probe);
                            ws.free.push(slot);
                            continue;
                        }
                    }
                    // The shared cooldown: only a server's hint sets it, and no call here
                    // carries one; a real run would wait for it.
                    if let Some(until) = shared.cooldown(policy, now_ms, probe)
                        && until > now_ms
                    {
                        ws.queue.push(until as f64, slot, Kind::Attempt);
                        continue;
                    }
                }
                request.retrying = true;
                counts.calls += 1;
                request.failing = rng.random::<f64>() < setup.failure_rate;
                let reply = now + net.hop(rng) + net.hop(rng);
                ws.queue.push(reply, slot, Kind::Reply);
            }
            Kind::Reply => {
                let request = &mut ws.slots[slot as usize];
                let probe = request.probing.then_some(request.id);
                let outcome = if request.failing {
                    AttemptOutcome::Failure
                } else {
                    AttemptOutcome::Success
                };
                let after = setup
                    .budget
                    .map(|policy| shared.attempt_end(&policy, now_ms, outcome, None, probe));
                let end = if request.failing {
                    let elapsed = Duration::from_secs_f64((now - request.arrived_ms) / 1000.0);
                    match request.rule.next_delay(elapsed, None, rng) {
                        Err(_) => Some(RunEnd::GaveUp),
                        Ok(_) if after.is_some_and(|a| !a.retry_allowed) => {
                            counts.spent += 1;
                            Some(RunEnd::GaveUp)
                        }
                        Ok(delay) => {
                            let mut next = now + delay.as_secs_f64() * 1000.0;
                            if let Some(until) = after.and_then(|a| a.wait_until_ms) {
                                next = next.max(until as f64);
                            }
                            ws.queue.push(next, slot, Kind::Attempt);
                            None
                        }
                    }
                } else {
                    Some(RunEnd::Succeeded)
                };
                if let Some(end) = end {
                    match end {
                        RunEnd::Succeeded => counts.succeeded += 1,
                        _ => counts.gave_up += 1,
                    }
                    if let Some(policy) = &setup.budget {
                        shared.finish(policy, now_ms, end, probe);
                    }
                    ws.free.push(slot);
                }
            }
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use retry_tool_backoff::{BreakerPolicy, Jitter, Throttle};

    fn setup(failure_rate: f64, max_retries: u64, budget: Option<BudgetPolicy>) -> Setup {
        Setup {
            failure_rate,
            requests: 2000,
            arrivals_per_ms: 0.01,
            policy: Policy::new(
                Duration::from_secs(1),
                2.0,
                Duration::from_secs(64),
                Jitter::Full,
            )
            .unwrap(),
            limits: Limits {
                max_retries: Some(max_retries),
                deadline: None,
            },
            budget,
        }
    }

    fn run_once(s: &Setup, seed: u64) -> Counts {
        run(
            &mut Workspace::new(),
            s,
            &mut stream(seed, 1, s.failure_rate),
        )
    }

    #[test]
    fn every_request_ends_once() {
        let breaker = BudgetPolicy {
            breaker: Some(BreakerPolicy::new(3, Duration::from_secs(10)).unwrap()),
            ..BudgetPolicy::default()
        };
        for budget in [None, Some(BudgetPolicy::default()), Some(breaker)] {
            for x in [0.0, 0.3, 0.8, 1.0] {
                let c = run_once(&setup(x, 3, budget), 1);
                assert_eq!(c.succeeded + c.gave_up + c.refused, 2000, "{x} {c:?}");
                assert!(c.spent <= c.gave_up);
                assert!(c.calls >= 2000 - c.refused && c.calls <= 4 * 2000, "{c:?}");
            }
        }
    }

    #[test]
    fn the_ends_of_the_scale() {
        let c = run_once(&setup(0.0, 5, None), 2);
        assert_eq!((c.succeeded, c.calls, c.gave_up), (2000, 2000, 0));
        let c = run_once(&setup(1.0, 5, None), 2);
        assert_eq!((c.succeeded, c.calls, c.gave_up), (0, 12_000, 2000));
        // A6 from full at failure rate 1: four retries in all, whatever the requests.
        let c = run_once(&setup(1.0, 5, Some(BudgetPolicy::default())), 2);
        assert_eq!((c.succeeded, c.calls, c.gave_up), (0, 2004, 2000));
        // Every run ends refused a retry, the four that retried included.
        assert_eq!(c.spent, 2000);
    }

    #[test]
    fn arrivals_follow_the_rate() {
        // 2000 requests at 10 per second: about 200 s, the last one's attempts included.
        let c = run_once(&setup(0.0, 0, None), 3);
        assert!((190_000.0..215_000.0).contains(&c.end_ms), "{}", c.end_ms);
    }

    #[test]
    fn the_breaker_refuses_runs_while_open_and_probes_after_its_cooldown() {
        let policy = BudgetPolicy {
            throttle: Throttle::default(),
            breaker: Some(BreakerPolicy::new(5, Duration::from_secs(60)).unwrap()),
        };
        let c = run_once(&setup(1.0, 5, Some(policy)), 4);
        // About 200 s of arrivals: open after the first runs give up, then a probe a minute,
        // each failing; every other request refused.
        assert!(c.refused > 1900, "{c:?}");
        let admitted = 2000 - c.refused;
        assert!(admitted < 40, "{c:?}");
        assert_eq!(c.gave_up, admitted);
    }

    #[test]
    fn deadlines_cut_retries_short() {
        let mut s = setup(1.0, 100, None);
        s.limits.deadline = Some(Duration::from_secs(5));
        let c = run_once(&s, 5);
        // Full jitter from 1 s: few retries fit in 5 s.
        assert!(c.calls < 2000 * 8, "{c:?}");
        assert_eq!(c.gave_up, 2000);
    }
}
