//! Protecting the service, in the supervisor: the `--splay` before the first attempt, and one
//! run's use of its `--budget` ([`crate::budget`]), in the order that module documents:
//! admission by the circuit breaker before anything else (a refused run exits 75 without
//! running the command), the breaker asked again and the shared cooldown waited for right
//! before every attempt (after the splay, before each retry: a breaker that opened meanwhile
//! refuses the run with 75 before attempt 1, and gives up with the last attempt's status before
//! a retry), each attempt counted in the token bucket (a refused retry gives up with "retry
//! budget for KEY is spent"), and the run's end counted by the breaker. Every store error gives
//! one warning and the run goes on as without a budget (fail open).

use std::cell::RefCell;
use std::time::{Duration, Instant, SystemTime};

use rand::Rng;

use super::Supervisor;
use crate::budget::{Admission, AttemptOutcome, Budget, BudgetKey, Refusal, RunEnd, wait_until};
use crate::codes::Verdict;
use crate::config::{BudgetSettings, Config};
use crate::observe::Event;
use crate::observe::problems::Problem;
use crate::observe::reasons::Why;
use crate::status::Exit;
use retry_tool_backoff::splay;

/// One run's budget, and how the run is ending as the breaker counts it.
#[derive(Debug)]
pub(super) struct Protection {
    /// The budget and its settings; `None` without `--budget`.
    budget: Option<(Budget, BudgetSettings)>,
    /// The breaker let this run through: its end is counted.
    admitted: bool,
    /// How the run ends; set on success and on giving up, otherwise it was abandoned.
    end: Option<RunEnd>,
    /// The shared cooldown as the store last told it with the breaker's admission (or without
    /// a breaker), and when: read again only when that is older than [`FRESH`].
    known: Option<(Option<u64>, Instant)>,
}

/// How long what the store said about the shared cooldown is taken as still true: a wait of
/// no time at all (`-b 0`) does not ask the store again, which would only queue for its lock.
const FRESH: Duration = Duration::from_millis(10);

impl Protection {
    /// Opens the budget `config` asks for (connecting to a Redis server, if that is the
    /// store); a store that cannot be opened leaves its warning for the first use.
    pub(super) fn open(config: &Config) -> RefCell<Protection> {
        let budget = config.protect.budget.as_ref().map(|settings| {
            let budget = Budget::open(&settings.store, settings.key.clone(), settings.policy);
            (budget, settings.clone())
        });
        RefCell::new(Protection {
            budget,
            admitted: false,
            end: None,
            known: None,
        })
    }
}

/// Why the wait for the shared cooldown ended the run.
#[derive(Debug)]
pub(super) enum Cooled {
    /// A stop signal came: retry ends so.
    Stopped(Exit),
    /// The budget refuses the next attempt (until `until_ms`, epoch milliseconds).
    Refused { why: Refusal, until_ms: u64 },
}

/// What the budget says after an attempt, for the supervisor's next step.
#[derive(Debug, Default)]
pub(super) struct BudgetVerdict {
    /// The reason to give up with instead of retrying: the budget refused a retry, or the
    /// shared cooldown lasts longer than `--max-hint`.
    pub(super) give_up: Option<Refusal>,
    /// Do not start the next attempt before this (epoch ms): the shared cooldown.
    wait_until_ms: Option<u64>,
}

impl BudgetVerdict {
    /// The shared cooldown still to wait from now, if there is one (the delay before the
    /// next attempt is at least this, [`super::decide`]).
    pub(super) fn cooldown(&self) -> Option<Duration> {
        self.wait_until_ms.map(wait_until).filter(|w| !w.is_zero())
    }
}

impl Supervisor<'_> {
    /// Runs `f` on the budget, if there is one and it still works, then reports the warning a
    /// store error left.
    fn with_budget<R>(
        &self,
        f: impl FnOnce(&mut Budget, &BudgetSettings) -> Option<R>,
    ) -> Option<R> {
        let mut protection = self.protect.borrow_mut();
        let (budget, settings) = protection.budget.as_mut()?;
        let result = f(budget, settings);
        if let Some(warning) = budget.take_warning() {
            self.emit(&Event::Problem(Problem::BudgetStore(&warning)));
        }
        result
    }

    /// Before attempt 1: the breaker's admission, then the splay, then the shared cooldown.
    /// `Err` ends the run: [`Exit::TempFail`] when it is refused, the signal that stopped a
    /// wait.
    pub(super) fn before_first_attempt<R: Rng + ?Sized>(&self, rng: &mut R) -> Result<(), Exit> {
        let begin = self.with_budget(|budget, _| {
            let begin = budget.begin()?;
            self.emit(&Event::BudgetBegin {
                key: budget.key(),
                begin: &begin,
            });
            Some((begin, budget.refusal(&begin.admission)))
        });
        if let Some((begin, refusal)) = begin {
            self.protect.borrow_mut().known = Some((begin.wait_until_ms, Instant::now()));
            if let (Admission::Refuse { until_ms, .. }, Some(why)) = (begin.admission, refusal) {
                return Err(self.refuse(why, until_ms));
            }
            self.protect.borrow_mut().admitted = true;
        }
        if let Some(max) = self.config.protect.splay {
            let delay = splay(max, rng);
            self.emit(&Event::Splay(delay));
            // `--splay` is shorter than the deadline (checked with the flags): no need to
            // check it here.
            self.wait(Instant::now().checked_add(delay))
                .map_err(|signal| self.interrupted_by(signal))?;
        }
        self.shared_cooldown(1).map_err(|cooled| match cooled {
            Cooled::Stopped(exit) => exit,
            Cooled::Refused { why, until_ms } => self.refused_before_first(why, until_ms),
        })
    }

    /// Refuses the run before its first attempt, for `why` (until `until_ms`): one line, and
    /// for the observers, the reason it gave up (an annotation, say), as when giving up.
    fn refuse(&self, why: Refusal, until_ms: u64) -> Exit {
        self.emit(&Event::Refused {
            why: &why,
            until_ms,
        });
        self.gave_up.replace(Some(Why::Refused(why)));
        Exit::TempFail
    }

    /// Right before attempt `attempt`: asks the breaker again, then waits for the shared
    /// cooldown of the budget, as long as the store has one (another run may set a later one
    /// meanwhile, or open the breaker). A breaker that refuses the run, or a cooldown that
    /// would end at or past the deadline or lasts longer than `--max-hint`, is
    /// [`Cooled::Refused`]: before the first attempt the run is refused, after one the
    /// decision ends it ([`super::decide::after_pause`]).
    pub(super) fn shared_cooldown(&self, attempt: u64) -> Result<(), Cooled> {
        loop {
            let known = self.protect.borrow().known;
            let until = match known {
                Some((until, at)) if at.elapsed() < FRESH => until,
                _ => {
                    let check = self.with_budget(|budget, _| {
                        let check = budget.before_attempt()?;
                        let refusal = budget.refusal(&check.admission);
                        Some((check.wait_until_ms, check.admission, refusal))
                    });
                    // `None` after a store error: the budget is then off.
                    let Some((until, admission, refusal)) = check else {
                        return Ok(());
                    };
                    if let (Admission::Refuse { until_ms, .. }, Some(why)) = (admission, refusal) {
                        return Err(Cooled::Refused { why, until_ms });
                    }
                    self.protect.borrow_mut().known = Some((until, Instant::now()));
                    until
                }
            };
            let Some(until_ms) = until else {
                return Ok(());
            };
            let Some(key) = self.with_budget(|budget, _| Some(budget.key().clone())) else {
                return Ok(());
            };
            let delay = wait_until(until_ms);
            if delay.is_zero() {
                return Ok(());
            }
            let wake = Instant::now().checked_add(delay);
            let past_deadline = self
                .rule
                .borrow()
                .ends_past_deadline(self.start.elapsed(), delay);
            let why = if past_deadline {
                Some(Refusal::CooldownPastDeadline {
                    key: key.clone(),
                    until_ms,
                })
            } else {
                too_long(&key, Some(until_ms), self.config.rules.max_hint)
            };
            if let Some(why) = why {
                return Err(Cooled::Refused { why, until_ms });
            }
            self.emit(&Event::Cooldown {
                key: &key,
                attempt,
                until_ms,
                delay,
            });
            self.wait(wake)
                .map_err(|signal| Cooled::Stopped(self.interrupted_by(signal)))?;
        }
    }

    /// Refuses the run before its first attempt for `why` (until `until_ms`), with
    /// [`Exit::TempFail`], which the breaker does not count (it releases a probe's lease).
    fn refused_before_first(&self, why: Refusal, until_ms: u64) -> Exit {
        // No verdict on the service: the breaker does not count this run.
        self.protect.borrow_mut().end = Some(RunEnd::Abandoned);
        self.refuse(why, until_ms)
    }

    /// After attempt `attempt`, whose `verdict` is known: counts it in the token bucket (a
    /// success gives tokens back, a failure that would be retried takes one, anything else
    /// neither) with the time a server's hint asks for (`--http-hints`,
    /// `--delay-from-output`), which becomes the shared cooldown. Says whether the budget
    /// allows a retry and until when to wait.
    pub(super) fn budget_attempt_end(
        &self,
        attempt: u64,
        verdict: Verdict,
        not_before: Option<SystemTime>,
    ) -> BudgetVerdict {
        let outcome = match verdict {
            Verdict::Success => {
                self.protect.borrow_mut().end = Some(RunEnd::Succeeded);
                AttemptOutcome::Success
            }
            Verdict::Retry => AttemptOutcome::Failure,
            Verdict::Stop => AttemptOutcome::Neutral,
        };
        // A hint this run would not honour (past `--max-hint`) is not imposed on the others.
        let max_hint = self.config.rules.max_hint;
        let hint = not_before.filter(|t| {
            verdict != Verdict::Success
                && t.duration_since(SystemTime::now())
                    .is_ok_and(|wait| wait <= max_hint)
        });
        let verdict = self.with_budget(|budget, settings| {
            let after = budget.attempt_end(outcome, hint)?;
            self.emit(&Event::BudgetAttempt {
                key: budget.key(),
                attempt,
                after: &after,
            });
            let verdict = BudgetVerdict {
                give_up: if !after.retry_allowed {
                    Some(budget.spent())
                } else {
                    too_long(budget.key(), after.wait_until_ms, max_hint)
                },
                wait_until_ms: after.wait_until_ms,
            };
            Some((verdict, settings.policy.breaker.is_some()))
        });
        match verdict {
            Some((verdict, breaker)) => {
                // With a breaker, the store is asked again before the next attempt however
                // soon it comes: the breaker may have opened meanwhile.
                if !breaker {
                    self.protect.borrow_mut().known = Some((verdict.wait_until_ms, Instant::now()));
                }
                verdict
            }
            None => BudgetVerdict::default(),
        }
    }

    /// A success of a `--successes` streak not yet complete: the run has not succeeded yet,
    /// and a signal that ends it now leaves it uncounted by the breaker.
    pub(super) fn budget_streak_goes_on(&self) {
        self.protect.borrow_mut().end = None;
    }

    /// The run is giving up: the breaker will count it so.
    pub(super) fn budget_gave_up(&self) {
        self.protect.borrow_mut().end = Some(RunEnd::GaveUp);
    }

    /// At the very end of a run the breaker let through: counts how it ended (abandoned if it
    /// neither succeeded nor gave up: a signal, retry's own error).
    pub(super) fn budget_finish(&self) {
        let (admitted, end) = {
            let protection = self.protect.borrow();
            (protection.admitted, protection.end)
        };
        if !admitted {
            return;
        }
        let end = end.unwrap_or(RunEnd::Abandoned);
        self.with_budget(|budget, _| {
            let state = budget.finish(end);
            if budget.is_active() {
                self.emit(&Event::BudgetEnd {
                    key: budget.key(),
                    end,
                    state: state.as_ref(),
                });
            }
            Some(())
        });
    }
}

/// Why a run gives up when the shared cooldown until `until_ms` lasts longer than
/// `--max-hint` from now (the longest wait a server may ask of this run); `None` otherwise.
fn too_long(key: &BudgetKey, until_ms: Option<u64>, max_hint: Duration) -> Option<Refusal> {
    let until_ms = until_ms?;
    (wait_until(until_ms) > max_hint).then(|| Refusal::CooldownTooLong {
        key: key.clone(),
        until_ms,
        max_hint,
    })
}
