//! One run's use of its budget: the [`SharedState`](retry_tool_backoff::shared_state::SharedState) operations performed through a store with
//! the wall clock, failing open. After the first store error the run goes on as without a
//! budget: every later call returns `None` at once without touching the store, and
//! [`Budget::take_warning`] yields the one warning line to print (none when the error is a stop
//! signal that ended a wait on the store: the run is ending by it, and says so itself).

use std::time::{Duration, SystemTime};

use super::error::StoreError;
use super::key::BudgetKey;
use super::location::StoreLocation;
use super::operation::{Answer, Operation};
use super::refusal::Refusal;
use super::store::Store;
use retry_tool_backoff::breaker::{Admission, BreakerState, RunEnd};
use retry_tool_backoff::shared_state::{
    AfterAttempt, AttemptOutcome, Begin, BudgetPolicy as Policy, MAX_TIME_MS,
};

/// Milliseconds since the Unix epoch for `t`: 0 before the epoch, at most [`MAX_TIME_MS`]
/// (the last millisecond of year 9999) after.
pub fn epoch_ms(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .min(MAX_TIME_MS)
}

/// The wall-clock time of `ms` milliseconds since the Unix epoch, at most [`MAX_TIME_MS`]:
/// every time retry prints (RFC 3339, four-digit years) goes through here.
pub fn from_epoch_ms(ms: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH
        .checked_add(Duration::from_millis(ms.min(MAX_TIME_MS)))
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
    /// This run's random id, used to claim the breaker's probe lease: 53 bits, so that it is
    /// exact wherever the stored JSON is read with doubles.
    probe_id: u64,
    /// Whether this run was admitted as the probe (at its last admission).
    probing: bool,
    warning: Option<String>,
    /// The shared cooldown this run has waited for, as stored (epoch ms), and until when it
    /// waits for it at most: read again, the same cooldown is not waited for again past that.
    honoured: Option<(u64, u64)>,
}

/// A random run id of 53 bits.
fn run_id() -> u64 {
    rand::random::<u64>() >> 11
}

impl Budget {
    /// Opens the store at `location` for `key`. A store that cannot be opened leaves the
    /// budget off, with its warning pending (fail open).
    pub fn open(location: &StoreLocation, key: BudgetKey, policy: Policy) -> Budget {
        match Store::open(location) {
            Ok(store) => Budget::with_store(store, key, policy),
            Err(e) => Budget {
                store: None,
                warning: warning_line(&e),
                key,
                policy,
                probe_id: 0,
                probing: false,
                honoured: None,
            },
        }
    }

    /// A budget on an opened store.
    pub fn with_store(store: Store, key: BudgetKey, policy: Policy) -> Budget {
        Budget {
            store: Some(store),
            key,
            policy,
            probe_id: run_id(),
            probing: false,
            warning: None,
            honoured: None,
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

    /// Performs `op` with the wall clock; `None` (and the budget off) on a store error.
    fn perform(&mut self, op: Operation) -> Option<(Answer, Option<u64>, u64)> {
        let store = self.store.as_mut()?;
        let now = epoch_ms(SystemTime::now());
        match store.perform(&self.key, &self.policy, now, &op) {
            Ok((answer, state)) => Some((answer, state.not_before_ms, now)),
            Err(e) => {
                self.store = None;
                self.warning = warning_line(&e);
                None
            }
        }
    }

    /// `wait` (until when the shared cooldown `stored` asks this run to wait, read at `now`),
    /// never past the end this run first gave that same cooldown: however often it is read,
    /// one cooldown is waited for at most its hint's length.
    fn bound(&mut self, wait: Option<u64>, stored: Option<u64>, now: u64) -> Option<u64> {
        let (wait, stored) = (wait?, stored?);
        match self.honoured {
            Some((seen, end)) if seen == stored => Some(wait.min(end)).filter(|&w| w > now),
            _ => {
                self.honoured = Some((stored, wait));
                Some(wait)
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
        let id = self.probe_id;
        let (Answer::Begin(mut begin), stored, now) = self.perform(Operation::Begin { id })? else {
            return None;
        };
        self.probing = begin.admission == Admission::Probe;
        begin.wait_until_ms = self.bound(begin.wait_until_ms, stored, now);
        Some(begin)
    }

    /// Right before each attempt (the first after a splay, and every retry), and again after
    /// any wait it asks for: the breaker's admission again (a breaker that opened since, a
    /// probe's lease renewed or another run probing) and the shared cooldown still to wait. The
    /// same operation as [`Budget::begin`]: a run that finds the breaker half-open and no probe
    /// running becomes the probe.
    pub fn before_attempt(&mut self) -> Option<Begin> {
        self.begin()
    }

    /// The shared cooldown still to wait (epoch ms), if any, renewing a probe's lease, without
    /// asking the breaker.
    pub fn cooldown(&mut self) -> Option<u64> {
        let probe = self.probe();
        let (Answer::Cooldown(wait), stored, now) = self.perform(Operation::Cooldown { probe })?
        else {
            return None;
        };
        self.bound(wait, stored, now)
    }

    /// After each attempt: records it (`hint`: a server's `not_before` seen in its output) and
    /// says whether a retry is allowed and until when to wait.
    pub fn attempt_end(
        &mut self,
        outcome: AttemptOutcome,
        hint: Option<SystemTime>,
    ) -> Option<AfterAttempt> {
        let op = Operation::AttemptEnd {
            outcome,
            hint_ms: hint.map(epoch_ms),
            probe: self.probe(),
        };
        let (Answer::AttemptEnd(mut after), stored, now) = self.perform(op)? else {
            return None;
        };
        after.wait_until_ms = self.bound(after.wait_until_ms, stored, now);
        Some(after)
    }

    /// At the end of a run that was admitted: counts it in the breaker. `None` without a
    /// breaker or without a store.
    pub fn finish(&mut self, end: RunEnd) -> Option<BreakerState> {
        // Without a breaker there is nothing to count: no need to ask the store.
        self.policy.breaker?;
        let probe = self.probe();
        match self.perform(Operation::Finish { end, probe })? {
            (Answer::Finish(state), _, _) => state,
            _ => None,
        }
    }

    /// Why `admission` refuses the run, if it does: the breaker open, or half-open with
    /// another run probing.
    pub fn refusal(&self, admission: &Admission) -> Option<Refusal> {
        match *admission {
            Admission::Refuse {
                until_ms,
                probing: false,
            } => Some(Refusal::BreakerOpen {
                key: self.key.clone(),
                until_ms,
            }),
            Admission::Refuse {
                until_ms,
                probing: true,
            } => Some(Refusal::BreakerProbing {
                key: self.key.clone(),
                until_ms,
            }),
            _ => None,
        }
    }

    /// Why a retry is refused when the token bucket is spent.
    pub fn spent(&self) -> Refusal {
        Refusal::Spent {
            key: self.key.clone(),
        }
    }
}

/// The warning for a store error (without the `retry: warning: ` prefix); none for a stop
/// signal.
fn warning_line(e: &StoreError) -> Option<String> {
    match e {
        StoreError::Stopped => None,
        e => Some(format!("{e}; going on without a retry budget")),
    }
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
        assert_eq!(epoch_ms(from_epoch_ms(u64::MAX)), MAX_TIME_MS);
        assert_eq!(
            humantime::format_rfc3339_millis(from_epoch_ms(u64::MAX)).to_string(),
            "9999-12-31T23:59:59.999Z"
        );
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
