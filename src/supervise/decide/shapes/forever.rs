//! `--forever`: a service kept running. A success runs again as a failure is retried, through
//! the same checks and the same give-up rule, whose retries are then the short runs in a row
//! (a crash loop: the supervisor starts the rule afresh after a run that lasted
//! `--reset-after`). `--stop-on 0` makes a success the end (systemd's `Restart=on-failure`).
//! Giving up never ends with 0: the service did not stay up (systemd marks a unit that hit its
//! start limit failed).

use rand::Rng;
use retry_tool_backoff::GiveUpRule;

use super::super::{Decision, Ending, Facts, Streak};
use super::LoopShape;
use crate::codes::Verdict;
use crate::config::Rules;
use crate::observe::reasons::Reason;
use crate::status::Exit;

/// Run again whatever the command exits with.
#[derive(Debug)]
pub(super) struct Forever;

impl LoopShape for Forever {
    fn after_attempt(
        &self,
        f: &Facts<'_>,
        _: &mut GiveUpRule,
        _: &mut Streak,
        _: &mut dyn Rng,
        _: Exit,
        succeeded: bool,
    ) -> Option<Decision> {
        (succeeded && f.rules.success_stops).then_some(Decision::End(Ending::Succeed))
    }

    /// The signal alone ends the run (the command would have run on): retry dies of it
    /// whatever the last run did, as a service manager expects of a clean stop. ALRM is
    /// retry's timer: the run it stopped timed out (124, or 137 after KILL), as without
    /// `--forever`.
    fn stopped_exit(&self, signal: i32, timed_out: bool, exit: Exit) -> Exit {
        if timed_out {
            exit
        } else {
            Exit::Signal(signal)
        }
    }

    /// Never 0: 1 then, as a status 0 made a failure by `--retry-if-output`; a recording of
    /// stdin lost after a run that exited 0 is retry's own failure, 125, as `--successes`
    /// and `--until-fail` end.
    fn give_up_exit(&self, exit: Exit, reason: &Reason) -> Exit {
        match (exit, reason) {
            (Exit::Code(0), Reason::StdinLost) => Exit::OwnFailure,
            (Exit::Code(0), _) => Exit::Code(1),
            _ => exit,
        }
    }

    /// A crash loop: `-n` + 1 short runs in a row.
    fn retries_used_up(&self, rules: &Rules) -> Reason {
        Reason::CrashLoop {
            runs: rules.max_retries.map_or(u64::MAX, |n| n.saturating_add(1)),
            reset_after: rules.reset_after,
        }
    }

    fn runs_success_again(&self, rules: &Rules) -> bool {
        !rules.success_stops
    }

    /// A long success counts as a long failure does.
    fn may_reset(&self, verdict: Verdict) -> bool {
        matches!(verdict, Verdict::Retry | Verdict::Success)
    }

    fn asks_reader_after_success(&self) -> bool {
        true
    }

    /// The long run is no crash: the restart after it is the first of a new series, and `-n N`
    /// still allows N + 1 short runs in a row after it.
    fn retries_after_reset(&self, max_retries: Option<u64>) -> Option<u64> {
        max_retries.map(|n| n.saturating_add(1))
    }
}
