//! `--successes N`: until N successes in a row. A success short of N waits the first delay as
//! written, then the next attempt runs; a failure ends the streak and is retried the usual
//! way (retries count failures only, so each retry may lead to N attempts). The deadline
//! ending a streak ends the run with 124, as coreutils `timeout` does when time runs out.

use rand::Rng;
use retry_tool_backoff::GiveUpRule;

use super::super::{Decision, Ending, Facts, Next, Streak, short};
use super::LoopShape;
use crate::observe::reasons::Reason;
use crate::status::{Exit, TIMED_OUT};

/// Until `needed` successes in a row.
#[derive(Debug)]
pub(super) struct Successes {
    /// `--successes`, 2 or more.
    pub(super) needed: u64,
}

impl LoopShape for Successes {
    fn after_attempt(
        &self,
        f: &Facts<'_>,
        rule: &mut GiveUpRule,
        streak: &mut Streak,
        _: &mut dyn Rng,
        _: Exit,
        succeeded: bool,
    ) -> Option<Decision> {
        if !succeeded {
            streak.current = 0;
            return None;
        }
        Some(self.goes_on(f, rule, streak))
    }

    fn success_is_partial(&self) -> bool {
        true
    }

    fn attempts_per_retry(&self) -> u64 {
        self.needed
    }
}

impl Successes {
    /// A success: the streak is complete, or goes on after the first delay (if the deadline
    /// leaves time for it).
    fn goes_on(&self, f: &Facts<'_>, rule: &GiveUpRule, streak: &mut Streak) -> Decision {
        let needed = self.needed;
        let current = streak.current + 1;
        streak.current = current;
        streak.longest = streak.longest.max(current);
        if current >= needed {
            return Decision::End(Ending::StreakDone { needed });
        }
        let delay = f.rules.base;
        let timed_out = |reason: Reason| Ending::GiveUp {
            reason,
            exit: Exit::Code(TIMED_OUT.into()),
            failed_first: false,
            streak: short(streak, current, needed),
            lost: None,
        };
        match rule.time_left(f.elapsed) {
            Some(left) if left.is_zero() => timed_out(Reason::DeadlinePassed).into(),
            _ if rule.ends_past_deadline(f.elapsed, delay) => {
                timed_out(Reason::WaitPastDeadline(delay)).into()
            }
            _ => Decision::Again {
                next: Next::Streak { current, needed },
                delay,
                hint: None,
            },
        }
    }
}
