//! One run's use of its budget: the [`SharedState`] operations performed through a store with
//! the wall clock, failing open. After the first store error the run goes on as without a
//! budget: every later call returns `None` at once without touching the store, and
//! [`Budget::take_warning`] yields the one warning line to print.

use std::time::{Duration, SystemTime};

use super::breaker::{Admission, BreakerState, RunEnd};
use super::key::BudgetKey;
use super::location::StoreLocation;
use super::state::{AfterAttempt, AttemptOutcome, Begin, BudgetPolicy as Policy, SharedState};
use super::store::{Store, StoreError};

/// Milliseconds since the Unix epoch for `t` (0 before the epoch, saturating far after).
pub fn epoch_ms(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The wall-clock time of `ms` milliseconds since the Unix epoch.
pub fn from_epoch_ms(ms: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH
        .checked_add(Duration::from_millis(ms))
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

/// How long from now until epoch time `ms` (zero if it has passed).
pub fn wait_until(ms: u64) -> Duration {
    from_epoch_ms(ms)
        .duration_since(SystemTime::now())
        .unwrap_or(Duration::ZERO)
}

/// A run's budget: KEY, settings and store.
#[derive(Debug)]
pub struct Budget {
    /// `None` once the run goes on without a budget.
    store: Option<Store>,
    key: BudgetKey,
    policy: Policy,
    /// This run's random id, used to claim the breaker's probe lease.
    probe_id: u64,
    /// Whether this run was admitted as the probe.
    probing: bool,
    warning: Option<String>,
}

impl Budget {
    /// Opens the store at `location` for `key`. A store that cannot be opened leaves the
    /// budget off, with its warning pending (fail open).
    pub fn open(location: &StoreLocation, key: BudgetKey, policy: Policy) -> Budget {
        match Store::open(location) {
            Ok(store) => Budget::with_store(store, key, policy),
            Err(e) => Budget {
                store: None,
                warning: Some(warning_line(&e)),
                key,
                policy,
                probe_id: 0,
                probing: false,
            },
        }
    }

    /// A budget on an opened store.
    pub fn with_store(store: Store, key: BudgetKey, policy: Policy) -> Budget {
        Budget {
            store: Some(store),
            key,
            policy,
            probe_id: rand::random(),
            probing: false,
            warning: None,
        }
    }

    /// The KEY.
    pub fn key(&self) -> &BudgetKey {
        &self.key
    }

    /// Whether the budget is still in use (no store error so far).
    pub fn is_active(&self) -> bool {
        self.store.is_some()
    }

    /// Whether this run is the breaker's probe.
    pub fn is_probe(&self) -> bool {
        self.probing
    }

    /// The warning line for the first store error, once (then `None`): print it as
    /// `retry: warning: ...`.
    pub fn take_warning(&mut self) -> Option<String> {
        self.warning.take()
    }

    fn update<R>(&mut self, f: impl FnMut(&mut SharedState, u64) -> R) -> Option<R> {
        let store = self.store.as_mut()?;
        let now = epoch_ms(SystemTime::now());
        let mut f = f;
        match store.update(&self.key, |state| f(state, now)) {
            Ok(r) => Some(r),
            Err(e) => {
                self.store = None;
                self.warning = Some(warning_line(&e));
                None
            }
        }
    }

    fn probe(&self) -> Option<u64> {
        self.probing.then_some(self.probe_id)
    }

    /// Before the first attempt (before any `--splay`): the breaker's admission and the shared
    /// cooldown. On [`Admission::Refuse`] the run must not start the command: it exits with
    /// status 75 and [`Budget::refusal`]'s line.
    pub fn begin(&mut self) -> Option<Begin> {
        let (policy, id) = (self.policy, self.probe_id);
        let begin = self.update(|s, now| s.begin(&policy, now, id))?;
        self.probing = begin.admission == Admission::Probe;
        Some(begin)
    }

    /// Right before each attempt (the first included, after the splay), and again after any
    /// wait it asks for: the shared cooldown still to wait (epoch ms), if any. Renews a probe's
    /// lease.
    pub fn cooldown(&mut self) -> Option<u64> {
        let (policy, probe) = (self.policy, self.probe());
        self.update(|s, now| s.cooldown(&policy, now, probe))
            .flatten()
    }

    /// After each attempt: records it (`hint`: a server's `not_before` seen in its output) and
    /// says whether a retry is allowed and until when to wait.
    pub fn attempt_end(
        &mut self,
        outcome: AttemptOutcome,
        hint: Option<SystemTime>,
    ) -> Option<AfterAttempt> {
        let (policy, probe) = (self.policy, self.probe());
        let hint_ms = hint.map(epoch_ms);
        self.update(|s, now| s.attempt_end(&policy, now, outcome, hint_ms, probe))
    }

    /// At the end of a run that was admitted: counts it in the breaker. `None` without a
    /// breaker or without a store.
    pub fn finish(&mut self, end: RunEnd) -> Option<BreakerState> {
        let (policy, probe) = (self.policy, self.probe());
        self.update(|s, now| s.finish(&policy, now, end, probe))
            .flatten()
    }

    /// The line for a refused run, e.g. `circuit breaker for KEY is open until
    /// 2026-01-01T00:01:00Z`.
    pub fn refusal(&self, admission: &Admission) -> Option<String> {
        match *admission {
            Admission::Refuse {
                until_ms,
                probing: false,
            } => Some(format!(
                "circuit breaker for {} is open until {}",
                self.key,
                humantime::format_rfc3339_seconds(from_epoch_ms(until_ms))
            )),
            Admission::Refuse {
                until_ms,
                probing: true,
            } => Some(format!(
                "circuit breaker for {} is half-open and another run is probing (until {} at most)",
                self.key,
                humantime::format_rfc3339_seconds(from_epoch_ms(until_ms))
            )),
            _ => None,
        }
    }

    /// The line for giving up because the budget refused a retry.
    pub fn spent(&self) -> String {
        format!("retry budget for {} is spent", self.key)
    }
}

/// The warning for a store error (without the `retry: warning: ` prefix).
fn warning_line(e: &StoreError) -> String {
    format!("{e}; going on without a retry budget")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_conversions() {
        assert_eq!(
            epoch_ms(from_epoch_ms(1_767_225_600_123)),
            1_767_225_600_123
        );
        assert_eq!(epoch_ms(SystemTime::UNIX_EPOCH - Duration::from_secs(1)), 0);
        assert_eq!(wait_until(0), Duration::ZERO);
    }

    #[test]
    fn an_unusable_store_fails_open_with_one_warning() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-dir");
        std::fs::write(&file, b"x").unwrap();
        let key = BudgetKey::new(b"k".to_vec()).unwrap();
        let mut b = Budget::open(&StoreLocation::Dir(file), key, Policy::default());
        assert!(!b.is_active());
        assert!(b.begin().is_none());
        let w = b.take_warning().unwrap();
        assert!(
            w.contains("not-a-dir") && w.contains("without a retry budget"),
            "{w}"
        );
        assert_eq!(b.take_warning(), None);
        assert!(b.attempt_end(AttemptOutcome::Failure, None).is_none());
        assert_eq!(b.take_warning(), None);
    }
}
