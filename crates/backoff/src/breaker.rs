//! The circuit breaker shared by every run with one budget KEY: closed, open, half-open with
//! one probe. Pure: std only, no I/O, no clock (times are passed in as epoch milliseconds).
//!
//! The states and transitions are the classic ones of Polly and resilience4j
//! (<https://resilience4j.readme.io/docs/circuitbreaker>): closed until `threshold` runs in a
//! row have given up; then open, refusing every run, until the cooldown has passed; then
//! half-open, letting exactly one run through as a probe, whose success closes the breaker and
//! whose failure opens it again for another cooldown.
//!
//! Runs are separate processes, so "exactly one probe" is a lease stored with the state: the
//! run that finds the breaker half-open and no live lease claims one (its own random id and an
//! expiry time) in the same atomic update; every other run sees the live lease and is refused.
//! A probe that is killed never releases its lease; the lease then expires after the policy's
//! `probe_lease` and the next run becomes the probe, so a dead probe cannot wedge the breaker.

use std::time::Duration;

use crate::epoch::{MAX_TIME_MS, later};

/// How the breaker trips and recovers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BreakerPolicy {
    /// Runs in a row that gave up before the breaker opens; at least 1.
    threshold: u32,
    /// How long the breaker stays open, in milliseconds.
    cooldown_ms: u64,
    /// How long a probe's lease lasts without renewal, in milliseconds; at least 1.
    probe_lease_ms: u64,
}

/// The default `--breaker-cooldown`: 60 s.
pub const DEFAULT_COOLDOWN: Duration = Duration::from_secs(60);

/// The default probe lease: 5 minutes. A probe renews it at each of its attempts, so only a
/// single attempt longer than this (or a killed probe) lets a second probe in.
pub const DEFAULT_PROBE_LEASE: Duration = Duration::from_secs(300);

/// `d` in milliseconds, at most [`MAX_TIME_MS`]: a longer cooldown or lease could only end
/// past the last time a state holds.
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis())
        .unwrap_or(u64::MAX)
        .min(MAX_TIME_MS)
}

impl BreakerPolicy {
    /// A breaker that opens after `threshold` consecutive runs gave up (at least 1) and stays
    /// open for `cooldown` (any length; 0 goes straight to half-open; one longer than
    /// [`MAX_TIME_MS`] milliseconds is that long), with the [`DEFAULT_PROBE_LEASE`].
    ///
    /// # Errors
    /// A message (without the flag's name) when `threshold` is 0.
    pub fn new(threshold: u32, cooldown: Duration) -> Result<BreakerPolicy, String> {
        if threshold == 0 {
            return Err("the breaker threshold must be at least 1 run".into());
        }
        Ok(BreakerPolicy {
            threshold,
            cooldown_ms: millis(cooldown),
            probe_lease_ms: millis(DEFAULT_PROBE_LEASE),
        })
    }

    /// This policy with a probe lease of `lease` (at least 1 ms; one longer than
    /// [`MAX_TIME_MS`] milliseconds is that long). The supervisor may pass its
    /// `--deadline` (or a bound on one attempt) so that a long legitimate probe keeps its lease.
    ///
    /// # Errors
    /// A message when `lease` is shorter than a millisecond.
    pub fn with_probe_lease(self, lease: Duration) -> Result<BreakerPolicy, String> {
        let ms = millis(lease);
        if ms == 0 {
            return Err("a probe lease must be at least 1ms".into());
        }
        Ok(BreakerPolicy {
            probe_lease_ms: ms,
            ..self
        })
    }

    /// Consecutive runs that gave up before the breaker opens.
    pub fn threshold(&self) -> u32 {
        self.threshold
    }

    /// How long the breaker stays open.
    pub fn cooldown(&self) -> Duration {
        Duration::from_millis(self.cooldown_ms)
    }

    /// How long a probe's lease lasts without renewal.
    pub fn probe_lease(&self) -> Duration {
        Duration::from_millis(self.probe_lease_ms)
    }
}

/// A probe's claim on the half-open breaker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeLease {
    /// The probing run's random id.
    pub id: u64,
    /// Wall-clock expiry (epoch ms); after it, another run may become the probe.
    pub expires_ms: u64,
}

/// The breaker's state as one run sees it at one moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BreakerState {
    /// Runs go ahead; `consecutive` runs in a row have given up so far.
    Closed {
        /// Runs in a row that gave up.
        consecutive: u32,
    },
    /// Every run is refused until `until_ms` (epoch ms).
    Open {
        /// When the breaker turns half-open.
        until_ms: u64,
    },
    /// One run may probe; `probe` is the live lease, if a probe is running.
    HalfOpen {
        /// The running probe's lease.
        probe: Option<ProbeLease>,
    },
}

/// What the breaker says to a run before its first attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// The breaker is closed: run.
    Run,
    /// The breaker is half-open and this run holds the probe lease: run, and report the end.
    Probe,
    /// Do not run (exit 75): open until `until_ms`, or half-open with a probe whose lease
    /// lasts until `until_ms` (`probing` true).
    Refuse {
        /// The earliest time (epoch ms) a run may be let through.
        until_ms: u64,
        /// Whether another run is probing (half-open) rather than the breaker being open.
        probing: bool,
    },
}

/// How a run that was let through ended, as the breaker counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunEnd {
    /// The command succeeded.
    Succeeded,
    /// retry gave up: retries used up, the deadline, a status not retried, a spent budget.
    GaveUp,
    /// The run ended without a verdict on the service (a signal stopped retry, retry's own
    /// error): not counted; a probe's lease is released so the next run probes at once.
    Abandoned,
}

/// The stored breaker of one KEY.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CircuitBreaker {
    /// Runs in a row that gave up (reset by any success).
    pub consecutive: u32,
    /// `None`: closed. `Some(t)`: open before `t`, half-open from `t` (epoch ms).
    pub open_until_ms: Option<u64>,
    /// The probe's lease, while half-open.
    pub probe: Option<ProbeLease>,
}

impl CircuitBreaker {
    /// The state at `now_ms`.
    pub fn state(&self, now_ms: u64) -> BreakerState {
        match self.open_until_ms {
            None => BreakerState::Closed {
                consecutive: self.consecutive,
            },
            Some(until_ms) if now_ms < until_ms => BreakerState::Open { until_ms },
            Some(_) => BreakerState::HalfOpen {
                probe: self.probe.filter(|p| p.expires_ms > now_ms),
            },
        }
    }

    /// Times beyond what this run's policy allows from `now_ms` (a clock that went backwards,
    /// a run with a longer cooldown) are brought back within it, so a breaker never refuses
    /// for longer than one cooldown, nor a lease lasts longer than one lease, from now.
    fn clamp(&mut self, policy: &BreakerPolicy, now_ms: u64) {
        let open_limit = later(now_ms, policy.cooldown_ms);
        if let Some(t) = self.open_until_ms.as_mut() {
            *t = (*t).min(open_limit);
        }
        let lease_limit = later(now_ms, policy.probe_lease_ms);
        if let Some(p) = self.probe.as_mut() {
            p.expires_ms = p.expires_ms.min(lease_limit);
        }
    }

    /// Decides whether a run may start at `now_ms`; a run let through while half-open claims
    /// the probe lease with `probe_id` (a random number the run keeps).
    pub fn admit(&mut self, policy: &BreakerPolicy, now_ms: u64, probe_id: u64) -> Admission {
        let now_ms = now_ms.min(MAX_TIME_MS);
        self.clamp(policy, now_ms);
        match self.state(now_ms) {
            BreakerState::Closed { .. } => Admission::Run,
            BreakerState::Open { until_ms } => Admission::Refuse {
                until_ms,
                probing: false,
            },
            BreakerState::HalfOpen { probe: Some(p) } if p.id != probe_id => Admission::Refuse {
                until_ms: p.expires_ms,
                probing: true,
            },
            BreakerState::HalfOpen { .. } => {
                self.probe = Some(ProbeLease {
                    id: probe_id,
                    expires_ms: later(now_ms, policy.probe_lease_ms),
                });
                Admission::Probe
            }
        }
    }

    /// Extends the lease of probe `probe_id` to a full lease from `now_ms`; returns whether
    /// that run still holds the lease (false once it expired and another run took it).
    pub fn renew(&mut self, policy: &BreakerPolicy, now_ms: u64, probe_id: u64) -> bool {
        let now_ms = now_ms.min(MAX_TIME_MS);
        self.clamp(policy, now_ms);
        match self.probe.as_mut() {
            Some(p) if p.id == probe_id && self.open_until_ms.is_some() => {
                p.expires_ms = later(now_ms, policy.probe_lease_ms);
                true
            }
            _ => false,
        }
    }

    /// Records how a run that was let through ended; `probe_id` is the id it claimed the lease
    /// with, if it was admitted as the probe. Returns the state after.
    pub fn finish(
        &mut self,
        policy: &BreakerPolicy,
        now_ms: u64,
        end: RunEnd,
        probe_id: Option<u64>,
    ) -> BreakerState {
        let now_ms = now_ms.min(MAX_TIME_MS);
        self.clamp(policy, now_ms);
        let holds_lease = probe_id.is_some_and(|id| self.probe.is_some_and(|p| p.id == id));
        match end {
            RunEnd::Succeeded => {
                self.consecutive = 0;
                self.open_until_ms = None;
                self.probe = None;
            }
            RunEnd::GaveUp => {
                self.consecutive = self.consecutive.saturating_add(1);
                if holds_lease {
                    self.probe = None;
                    self.open_until_ms = Some(later(now_ms, policy.cooldown_ms));
                } else if self.open_until_ms.is_none() && self.consecutive >= policy.threshold {
                    self.open_until_ms = Some(later(now_ms, policy.cooldown_ms));
                }
            }
            RunEnd::Abandoned => {
                if holds_lease {
                    self.probe = None;
                }
            }
        }
        if self.open_until_ms.is_none() {
            self.probe = None;
        }
        self.state(now_ms)
    }

    /// The latest time this breaker's state matters until (open, or a lease), for expiry.
    pub fn horizon_ms(&self) -> Option<u64> {
        let lease = self.probe.map(|p| p.expires_ms);
        self.open_until_ms.max(lease)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> BreakerPolicy {
        BreakerPolicy::new(3, Duration::from_secs(60)).unwrap()
    }

    #[test]
    fn opens_after_threshold_consecutive_give_ups() {
        let p = policy();
        let mut b = CircuitBreaker::default();
        for n in 1..=2 {
            assert_eq!(b.admit(&p, 0, 1), Admission::Run);
            assert_eq!(
                b.finish(&p, 0, RunEnd::GaveUp, None),
                BreakerState::Closed { consecutive: n }
            );
        }
        // A success in between resets the count.
        b.finish(&p, 0, RunEnd::Succeeded, None);
        for _ in 0..2 {
            b.finish(&p, 0, RunEnd::GaveUp, None);
        }
        assert_eq!(b.admit(&p, 0, 1), Admission::Run);
        assert_eq!(
            b.finish(&p, 1000, RunEnd::GaveUp, None),
            BreakerState::Open { until_ms: 61_000 }
        );
        assert_eq!(
            b.admit(&p, 60_999, 2),
            Admission::Refuse {
                until_ms: 61_000,
                probing: false
            }
        );
    }

    fn opened() -> CircuitBreaker {
        let p = policy();
        let mut b = CircuitBreaker::default();
        for _ in 0..3 {
            b.finish(&p, 0, RunEnd::GaveUp, None);
        }
        assert_eq!(b.state(0), BreakerState::Open { until_ms: 60_000 });
        b
    }

    #[test]
    fn one_probe_then_close_on_success() {
        let p = policy();
        let mut b = opened();
        assert_eq!(b.admit(&p, 60_000, 7), Admission::Probe);
        // Every other run is refused while the probe's lease lives.
        assert_eq!(
            b.admit(&p, 60_001, 8),
            Admission::Refuse {
                until_ms: 360_000,
                probing: true
            }
        );
        assert!(b.renew(&p, 100_000, 7));
        assert!(!b.renew(&p, 100_000, 8));
        assert_eq!(
            b.finish(&p, 120_000, RunEnd::Succeeded, Some(7)),
            BreakerState::Closed { consecutive: 0 }
        );
        assert_eq!(b.admit(&p, 120_001, 8), Admission::Run);
    }

    #[test]
    fn probe_failure_reopens() {
        let p = policy();
        let mut b = opened();
        assert_eq!(b.admit(&p, 70_000, 7), Admission::Probe);
        assert_eq!(
            b.finish(&p, 80_000, RunEnd::GaveUp, Some(7)),
            BreakerState::Open { until_ms: 140_000 }
        );
        assert_eq!(b.probe, None);
    }

    #[test]
    fn dead_probe_lease_expires() {
        let p = policy();
        let mut b = opened();
        assert_eq!(b.admit(&p, 60_000, 7), Admission::Probe);
        // Probe 7 is killed: no finish. After its lease, run 9 probes.
        assert!(matches!(b.admit(&p, 359_999, 9), Admission::Refuse { .. }));
        assert_eq!(b.admit(&p, 360_000, 9), Admission::Probe);
        // The late probe 7 finishing with a failure no longer holds the lease.
        assert_eq!(
            b.finish(&p, 360_001, RunEnd::GaveUp, Some(7)),
            BreakerState::HalfOpen {
                probe: Some(ProbeLease {
                    id: 9,
                    expires_ms: 660_000
                })
            }
        );
    }

    #[test]
    fn abandoned_probe_releases_the_lease() {
        let p = policy();
        let mut b = opened();
        assert_eq!(b.admit(&p, 60_000, 7), Admission::Probe);
        b.finish(&p, 61_000, RunEnd::Abandoned, Some(7));
        assert_eq!(b.admit(&p, 61_001, 8), Admission::Probe);
    }

    #[test]
    fn clock_going_back_refuses_at_most_one_cooldown() {
        let p = policy();
        let mut b = opened();
        // The clock jumped back an hour.
        assert_eq!(
            b.admit(&p, 0, 7),
            Admission::Refuse {
                until_ms: 60_000,
                probing: false
            }
        );
        let mut b = opened();
        b.open_until_ms = Some(10_000_000);
        assert_eq!(
            b.admit(&p, 1_000, 7),
            Admission::Refuse {
                until_ms: 61_000,
                probing: false
            }
        );
    }

    #[test]
    fn zero_threshold_is_refused() {
        assert!(BreakerPolicy::new(0, Duration::from_secs(1)).is_err());
        assert!(policy().with_probe_lease(Duration::ZERO).is_err());
    }
}
