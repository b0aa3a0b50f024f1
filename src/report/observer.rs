//! The reporter as an observer of the run ([`crate::observe`]): every event the supervisor
//! emits, in retry's words (text lines, or JSON events with `--log-format json`), and the
//! countdown drawn while the run waits. The supervisor names none of it.

use std::rc::Rc;
use std::time::{Duration, Instant};

use super::problems::problem_words;
use super::reasons::{lock_busy_words, reason_words, refusal_words, why_words};
use super::{Reporter, StopPlan, Wait};
use crate::budget::{BudgetPolicy, StoreLocation};
use crate::observe::problems::Problem;
use crate::observe::{Event, Observer, Voice};
use retry_tool_backoff::Policy;

/// What the reporter shows of a run's settings, filled from the config by
/// [`crate::observers`] (so that `report` never sees the config).
#[derive(Clone, Debug)]
pub struct Shown {
    /// The backoff policy.
    pub policy: Policy,
    /// `--deadline`; `None` without one.
    pub deadline: Option<Duration>,
    /// `--timeout`; `None` without one.
    pub timeout: Option<Duration>,
    /// How an attempt is stopped.
    pub stop: StopPlan,
    /// `--budget`'s store and policy; `None` without a budget.
    pub budget: Option<(StoreLocation, BudgetPolicy)>,
    /// `--lock-wait` (zero without `--lock`).
    pub lock_wait: Duration,
}

/// The reporter of a run, as one of its observers.
pub struct ReportObserver {
    reporter: Rc<Reporter>,
    shown: Shown,
}

impl ReportObserver {
    /// `reporter` observing a run whose settings are `shown`.
    pub fn new(reporter: Rc<Reporter>, shown: Shown) -> ReportObserver {
        ReportObserver { reporter, shown }
    }
}

impl Observer for ReportObserver {
    fn event(&mut self, event: &Event<'_>) {
        let r = &*self.reporter;
        let budget = self.shown.budget.as_ref();
        match *event {
            // Nothing of retry's is left drawn in place when an attempt or a hook may write.
            Event::AttemptStart { .. } | Event::HookStart(_) | Event::Woke => r.writer().settle(),
            Event::Tick => r.writer().countdown_tick(),
            Event::RunStart { seed } => {
                let s = &self.shown;
                r.start(&s.policy, s.deadline, s.timeout, seed, &s.stop);
            }
            Event::Launch(attempt) => r.attempt_start(attempt),
            Event::AttemptEnd(a) => r.attempt_end(&a),
            Event::Failed(a) => r.failed(&a, None),
            Event::Wait {
                after: a,
                delay,
                hint,
                ..
            } => r.failed(&a, Some(Wait { delay, hint })),
            Event::HookEnd { name, end } => r.hook(name, end),
            Event::GaveUp {
                attempts,
                why,
                status,
                elapsed,
            } => {
                let words = why_words(why);
                let closing = r.gave_up_line(attempts, &words, elapsed);
                r.giving_up(attempts, &words, status, &closing);
            }
            Event::Succeeded { attempts, elapsed } => {
                r.success(attempts, &r.success_line(attempts, elapsed));
            }
            Event::Stopped(signal) => r.interrupted(signal),
            Event::LaunchFailed { message, hint } => match hint {
                Some(hint) => r.launch_failed(&format!("{message}; {hint}")),
                None => r.launch_failed(message),
            },
            Event::Rerun { attempt, delay } => r.rerun(attempt, delay),
            Event::Streak {
                attempt,
                current,
                needed,
                delay,
            } => r.streak(attempt, current, needed, delay),
            Event::StreakDone { attempt, needed } => r.streak_done(attempt, needed),
            Event::UntilFailFailed(a) => r.until_fail_failed(a.attempt, a.outcome, a.output_failed),
            Event::NoFailure { runs, reason } => r.until_fail_none(runs, &reason_words(reason)),
            Event::Reset {
                attempt,
                ran,
                reset_after,
                last,
            } => {
                r.set_max_attempts(last);
                r.reset(attempt, ran, reset_after);
            }
            Event::Splay(delay) => r.splay(delay),
            Event::BudgetBegin { key, begin } => {
                if let Some(s) = budget {
                    r.budget_begin(key, &s.0, &s.1, begin);
                }
            }
            Event::BudgetAttempt {
                key,
                attempt,
                after,
            } => {
                if let Some(s) = budget {
                    r.budget_attempt(key, attempt, after, &s.1);
                }
            }
            Event::BudgetEnd { key, end, state } => {
                if let Some(s) = budget {
                    r.budget_end(key, end, state, &s.1);
                }
            }
            Event::Refused { why, until_ms } => r.refused(&refusal_words(why), until_ms),
            Event::Cooldown {
                key,
                attempt,
                until_ms,
                delay,
            } => r.cooldown(key, attempt, until_ms, delay),
            Event::LockWaiting { path, holder } => {
                r.lock_waiting(path, holder, self.shown.lock_wait)
            }
            Event::LockHeld { path, waited } => r.lock_held(path, waited),
            Event::LockBusy(busy) => r.lock_busy(&busy.path, busy.holder, &lock_busy_words(busy)),
            Event::EnvFileSet { after, names } => r.env_file_set(after, names),
            Event::Problem(Problem::EnvFileUnavailable(why)) => r.env_file_unavailable(why),
            Event::Problem(problem) if problem.is_warning() => {
                r.warning(&problem_words(&problem));
            }
            Event::Problem(problem) => r.error(&problem_words(&problem)),
            Event::Spawned(_) | Event::OutputSettled => {}
        }
    }

    fn next_tick(&self) -> Option<Instant> {
        self.reporter.writer().countdown_next_tick()
    }
}

/// The reporter as retry's voice, for the observers' own words at the end.
impl Voice for Rc<Reporter> {
    fn error(&self, message: &str) {
        Reporter::error(self, message);
    }

    fn warning(&self, message: &str) {
        Reporter::warning(self, message);
    }

    fn error_line(&self, message: &str) -> Vec<u8> {
        super::error_line(self, message)
    }
}
