//! `--until-fail`: until the first failure. A success is run again after the delay the same
//! give-up rule grants; the first failure ends the run with its status; running out of
//! retries or time without one ends it with 0.

use rand::Rng;
use retry_tool_backoff::GiveUpRule;

use super::super::{Decision, Ending, Facts, Next, Streak};
use super::LoopShape;
use crate::observe::reasons::Reason;
use crate::process::{Outcome, StopReason};
use crate::status::Exit;
use crate::supervise::hints::checked;

/// Until the first failure.
#[derive(Debug)]
pub(super) struct UntilFail;

impl LoopShape for UntilFail {
    fn after_attempt(
        &self,
        f: &Facts<'_>,
        rule: &mut GiveUpRule,
        _: &mut Streak,
        rng: &mut dyn Rng,
        exit: Exit,
        succeeded: bool,
    ) -> Option<Decision> {
        if succeeded {
            return Some(rerun(f, rule, rng));
        }
        if let Outcome::Stopped {
            reason: StopReason::Deadline,
            ..
        } = f.outcome
        {
            return Some(Decision::End(Ending::NoFailure {
                runs: f.attempt - 1,
                reason: Reason::DeadlineStoppedRun(f.attempt),
            }));
        }
        Some(Decision::End(Ending::UntilFailFailed { exit }))
    }

    fn may_reset(&self, _: crate::codes::Verdict) -> bool {
        false
    }

    fn asks_reader_after_success(&self) -> bool {
        true
    }
}

/// A success, run again after the delay the give-up rule grants, or the run ends without a
/// failure.
fn rerun(f: &Facts<'_>, rule: &mut GiveUpRule, rng: &mut dyn Rng) -> Decision {
    let no_failure = |reason: Reason| Ending::NoFailure {
        runs: f.attempt,
        reason,
    };
    if f.stop_match {
        return no_failure(Reason::OutputMatched).into();
    }
    if let Some(stream) = f.reader_gone {
        return no_failure(Reason::ReaderGone(stream)).into();
    }
    let delay = match rule.next_delay(f.elapsed, f.hint.map(|h| h.0), rng) {
        Ok(delay) => delay,
        Err(why) => return no_failure(Reason::Rule(why)).into(),
    };
    match checked(delay, f.hint, f.rules.max_hint).map(|w| w.hint) {
        Ok(_) => Decision::Again {
            next: Next::Rerun,
            delay,
            hint: None,
        },
        Err(reason) => no_failure(reason).into(),
    }
}
