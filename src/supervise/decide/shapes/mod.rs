//! The loop shapes as strategies, one file each, behind one trait ([`LoopShape`]), chosen once
//! from the config's [`Shape`] ([`of`]): the plain loop (until a success), `--successes N`
//! (N in a row), `--until-fail` (until the first failure) and `--forever` (a service kept
//! running). What differs between them, the decision ([`super::decide`]) and the supervisor
//! ask the shape; nothing else under `src/supervise/` matches on [`Shape`].

mod forever;
mod plain;
mod successes;
mod until_fail;

use std::fmt::Debug;

use rand::Rng;
use retry_tool_backoff::{GiveUp, GiveUpRule};

use super::{Decision, Facts, Streak};
use crate::codes::Verdict;
use crate::config::{Rules, Shape};
use crate::observe::reasons::Reason;
use crate::status::Exit;

/// What makes one loop shape what it is. The defaults are the plain loop's.
pub(in crate::supervise) trait LoopShape: Debug + Sync {
    /// The decision on an attempt that ran and ended without a stop signal, before the checks
    /// every failure to retry goes through: `Some` decides (a success, a streak going on, a
    /// rerun, the failure `--until-fail` waited for); `None`: a failure, judged the common
    /// way. `exit` is how retry would end with it; `succeeded` says its verdict is a success.
    fn after_attempt(
        &self,
        f: &Facts<'_>,
        rule: &mut GiveUpRule,
        streak: &mut Streak,
        rng: &mut dyn Rng,
        exit: Exit,
        succeeded: bool,
    ) -> Option<Decision>;

    /// The status retry ends with when stop signal `signal` ended the run during an attempt
    /// that would leave `exit` (`timed_out`: the signal was retry's own timer's).
    fn stopped_exit(&self, signal: i32, timed_out: bool, exit: Exit) -> Exit {
        let _ = (signal, timed_out);
        exit
    }

    /// The status a give-up for `reason` ends with, the last attempt having left `exit`.
    fn give_up_exit(&self, exit: Exit, reason: &Reason) -> Exit {
        let _ = reason;
        exit
    }

    /// Why the run gives up when the give-up rule's retries are used up.
    fn retries_used_up(&self, rules: &Rules) -> Reason {
        let _ = rules;
        Reason::Rule(GiveUp::RetriesUsedUp)
    }

    /// A success is run again (what it left running is stopped, as after a failure).
    fn runs_success_again(&self, rules: &Rules) -> bool {
        let _ = rules;
        false
    }

    /// An attempt of `verdict` that ran `--reset-after` or longer starts the rule afresh.
    fn may_reset(&self, verdict: Verdict) -> bool {
        verdict == Verdict::Retry
    }

    /// The reader of retry's output is asked about after a success too (the loop goes on).
    fn asks_reader_after_success(&self) -> bool {
        false
    }

    /// A success alone does not end the run, nor count as its success for the budget's
    /// breaker (`--successes N`: a streak not yet complete).
    fn success_is_partial(&self) -> bool {
        false
    }

    /// The give-up rule alone can tell that the attempt about to start is the run's last.
    fn last_by_rule(&self) -> bool {
        false
    }

    /// The attempts one retry may lead to (N for `--successes N`).
    fn attempts_per_retry(&self) -> u64 {
        1
    }

    /// The retries after a reset of the rule: `max_retries`, or more.
    fn retries_after_reset(&self, max_retries: Option<u64>) -> Option<u64> {
        max_retries
    }
}

/// The strategy of `shape`, chosen once for a run.
pub(in crate::supervise) fn of(shape: Shape) -> Box<dyn LoopShape> {
    match shape {
        Shape::Plain => Box::new(plain::Plain),
        Shape::Streak(needed) => Box::new(successes::Successes { needed }),
        Shape::UntilFail => Box::new(until_fail::UntilFail),
        Shape::Forever => Box::new(forever::Forever),
    }
}
