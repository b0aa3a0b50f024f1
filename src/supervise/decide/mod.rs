//! What happens after an attempt: one pure decision ([`decide`]) from the attempt's end and
//! what the run knows ([`Facts`]): succeed, give up (and why), stop, or run again after a
//! delay (and what set it); and after the pause before the next attempt (its hook, its wait)
//! the checks that may still end the run ([`after_pause`]). The supervisor gathers the facts
//! (asking the budget store, the recorder of stdin, the reader of stdout), then does what the
//! decision says; nothing here reads a clock, a file or a process.
//!
//! What differs between the loop shapes (plain, `--successes N`, `--until-fail`, `--forever`)
//! each shape says for itself ([`shapes`], one file per shape behind one trait), chosen once
//! for the run.
//!
//! A failed attempt whose last HTTP response (`--http-hints`) has an error status (4xx, 5xx)
//! outside `--http-retry-on` is not retried, as a status in `--stop-on` is not: the request
//! will not succeed later (RFC 9110, section 15,
//! <https://www.rfc-editor.org/rfc/rfc9110#section-15>). After a 1xx, 2xx or 3xx the attempt
//! failed for another reason than the answer (a body cut short, curl's `--max-time`, a
//! redirect's target refusing the connection): it is retried as one without a status. With
//! the default set, nor does any status stop them when the server said when to ask again (a
//! hint: a spent rate limit may come as a 403 with `X-RateLimit-Remaining: 0` and the time it
//! resets); a set given is kept to.
//!
//! The give-up rule itself (retries used up, the deadline, a delay past it) is the pure
//! [`GiveUpRule`] of the backoff crate, shared with `--dry-run` and the simulator.

use std::time::Duration;

use rand::Rng;

use super::exit_for;
use super::hints::checked;
use crate::codes::Verdict;
use crate::config::Rules;
use crate::held::Stream;
use crate::hints::HintSource;
use crate::http_status::HttpStatuses;
use crate::observe::reasons::{Reason, StreakCut};
use crate::process::Outcome;
use crate::status::Exit;
use crate::transient::Classes;
use retry_tool_backoff::{GiveUp, GiveUpRule};

/// What the run knows once an attempt has ended and its output is settled.
#[derive(Debug)]
pub(super) struct Facts<'f> {
    /// The attempt's number, from 1.
    pub attempt: u64,
    /// How it ended.
    pub outcome: &'f Outcome,
    /// It exited 0 but its output matched `--retry-if-output`.
    pub output_failed: bool,
    /// Its output matched `--stop-if-output`.
    pub stop_match: bool,
    /// A stop signal retry received while it ran (or still queued at its end).
    pub interrupted: Option<i32>,
    /// What `--retry-on`/`--stop-on` (or the output conditions) make of its status
    /// ([`verdict`]).
    pub verdict: Verdict,
    /// The reader of retry's stdout (or stderr) is gone: a pipe whose read end closed.
    pub reader_gone: Option<Stream>,
    /// The recording of stdin (`--replay-stdin`) failed.
    pub replay_lost: bool,
    /// The wait a server's hint asks for from now, and where it came from.
    pub hint: Option<(Duration, HintSource)>,
    /// The budget's shared cooldown still to wait (`--budget`), if any.
    pub cooldown: Option<Duration>,
    /// Why the budget refuses a retry, if it does.
    pub budget_refusal: Option<&'f crate::budget::Refusal>,
    /// Time since the run started.
    pub elapsed: Duration,
    /// The status of the last HTTP response in its output (`--http-hints`), if one was read.
    pub http_status: Option<u16>,
    /// The classes of transient failure its output or its status named (empty: none).
    pub transient: Classes,
    /// What the decision reads of the run's settings, built once ([`Rules`]).
    pub rules: &'f Rules,
    /// The loop's shape, chosen once from [`Rules::shape`].
    pub shape: &'f dyn LoopShape,
}

/// The successes in a row of `--successes`: the current streak and the longest seen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Streak {
    pub current: u64,
    pub longest: u64,
}

/// Which loop the next attempt continues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Next {
    /// A failure is retried.
    Retry,
    /// `--until-fail`: a success is run again.
    Rerun,
    /// `--successes`: the streak goes on (`current` of `needed` so far).
    Streak { current: u64, needed: u64 },
}

/// What the run does after an attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Decision {
    /// The next attempt runs after `delay`; `hint` names the server's hint that set it.
    Again {
        next: Next,
        delay: Duration,
        hint: Option<HintSource>,
    },
    /// The run ends.
    End(Ending),
}

/// How the run ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Ending {
    /// A stop signal arrived: no retry; retry ends with `exit` (the attempt's status).
    Stopped { signal: i32, exit: Exit },
    /// The run succeeded.
    Succeed,
    /// `--successes needed`: the streak is complete; the run succeeded.
    StreakDone { needed: u64 },
    /// The run gives up for `reason`, and ends with `exit`. `failed_first`: the attempt's
    /// failure is said before (no wait line said it); `streak`: a `--successes` streak cut
    /// short of a longer one seen before; `lost`: the recording of stdin failed, and this
    /// attempt (from 1) would see only part of it (said first).
    GiveUp {
        reason: Reason,
        exit: Exit,
        failed_first: bool,
        streak: Option<StreakCut>,
        lost: Option<u64>,
    },
    /// `--until-fail`: the run ends with 0 after `runs` runs without a failure, for `reason`.
    NoFailure { runs: u64, reason: Reason },
    /// `--until-fail`: the failure it waited for; the run ends with `exit`.
    UntilFailFailed { exit: Exit },
    /// The run ends with `exit` after saying why the recording of stdin failed, so that
    /// attempt `next` would see only part of it, with no closing line.
    Abort { exit: Exit, next: u64 },
    /// The run ends with `exit`, with nothing more to say (the reader of its output is gone).
    Quiet { exit: Exit },
}

impl From<Ending> for Decision {
    fn from(ending: Ending) -> Decision {
        Decision::End(ending)
    }
}

/// The verdict on an attempt's status, its output conditions first: a `--stop-if-output`
/// match stops a failure; an exit status 0 whose output matched `--retry-if-output` is retried.
pub(super) fn verdict(
    status: u8,
    output_failed: bool,
    stop_match: bool,
    by_status: impl Fn(u8) -> Verdict,
) -> Verdict {
    let succeeded = status == 0 && !output_failed;
    if stop_match && !succeeded {
        Verdict::Stop
    } else if output_failed {
        Verdict::Retry
    } else {
        by_status(status)
    }
}

/// What the run does after the attempt `facts` describe. `rule` grants the next delay (and
/// counts it); `streak` is `--successes`' count, updated.
pub(super) fn decide(
    facts: &Facts<'_>,
    rule: &mut GiveUpRule,
    streak: &mut Streak,
    rng: &mut dyn Rng,
) -> Decision {
    match judge(facts, rule, streak, rng) {
        // A --stop-if-output match is the user's own stop: the run's status stands.
        Decision::End(ending) if !facts.stop_match => Decision::End(settled(facts.shape, ending)),
        other => other,
    }
}

/// `ending` with a give-up's status settled by the loop `shape` ([`LoopShape::give_up_exit`]):
/// what [`decide`] and [`after_pause`]'s caller end the run with.
pub(super) fn settled(shape: &dyn LoopShape, ending: Ending) -> Ending {
    match ending {
        Ending::GiveUp {
            reason,
            exit,
            failed_first,
            streak,
            lost,
        } => Ending::GiveUp {
            exit: shape.give_up_exit(exit, &reason),
            reason,
            failed_first,
            streak,
            lost,
        },
        other => other,
    }
}

/// [`decide`] before a give-up's status is settled by the loop's shape.
fn judge(
    facts: &Facts<'_>,
    rule: &mut GiveUpRule,
    streak: &mut Streak,
    rng: &mut dyn Rng,
) -> Decision {
    let f = facts;
    let exit = exit_for(f.outcome, f.output_failed, f.rules.preserve_status);
    if let Some(signal) = f.interrupted {
        // ALRM is retry's timer: the run it stopped timed out.
        let timed_out =
            signal == crate::signals::ALARM && matches!(f.outcome, Outcome::Stopped { .. });
        let exit = f.shape.stopped_exit(signal, timed_out, exit);
        return Decision::End(Ending::Stopped { signal, exit });
    }
    if let Outcome::LaunchFailed { .. } = f.outcome {
        return give_up(Reason::CannotRun, exit, false).into();
    }
    let succeeded = f.verdict == Verdict::Success;
    if let Some(decision) = f.shape.after_attempt(f, rule, streak, rng, exit, succeeded) {
        return decision;
    }
    let status = f.outcome.status();
    if f.stop_match {
        return give_up(Reason::OutputMatched, exit, true).into();
    }
    if f.verdict == Verdict::Stop {
        return give_up(Reason::StatusNotRetried(status), exit, true).into();
    }
    let (http_retried, hint_retries) = match f.rules.http_retry_on {
        Some(set) => (set, false),
        None => (HttpStatuses::default(), f.hint.is_some()),
    };
    if let Some(code) = f.http_status
        && !succeeded
        && code >= 400
        && !hint_retries
        && !http_retried.contains(code)
    {
        return give_up(Reason::HttpNotRetried(code), exit, true).into();
    }
    if let Some(wanted) = f.rules.transient
        && !succeeded
        && !f.transient.meets(wanted)
    {
        let found = f.transient;
        return give_up(Reason::NotTransient { wanted, found }, exit, true).into();
    }
    if let Some(stream) = f.reader_gone {
        return give_up(Reason::ReaderGone(stream), exit, true).into();
    }
    if f.replay_lost {
        return Decision::End(Ending::GiveUp {
            reason: Reason::StdinLost,
            exit,
            failed_first: true,
            streak: None,
            lost: Some(f.attempt + 1),
        });
    }
    // A server's hint may lengthen the delay past the cap, or make retry give up; so may the
    // budget's shared cooldown (a hint any run with the key saw).
    let floor = match (f.hint.map(|h| h.0), f.cooldown) {
        (hint, None) => hint,
        (hint, Some(wait)) => Some(hint.map_or(wait, |h| h.max(wait))),
    };
    let delay = match rule.next_delay(f.elapsed, floor, rng) {
        Ok(delay) => delay,
        Err(GiveUp::RetriesUsedUp) => {
            return give_up(f.shape.retries_used_up(f.rules), exit, true).into();
        }
        Err(why) => return give_up(Reason::Rule(why), exit, true).into(),
    };
    if let Some(why) = f.budget_refusal {
        return give_up(Reason::Budget(why.clone()), exit, true).into();
    }
    match checked(delay, f.hint, f.rules.max_hint).map(|w| w.hint) {
        Ok(hint) => Decision::Again {
            next: Next::Retry,
            delay,
            hint,
        },
        Err(reason) => give_up(reason, exit, true).into(),
    }
}

/// A give-up for `reason` with `exit`.
fn give_up(reason: Reason, exit: Exit, failed_first: bool) -> Ending {
    Ending::GiveUp {
        reason,
        exit,
        failed_first,
        streak: None,
        lost: None,
    }
}

/// A streak cut at `current` of `needed`, named in the closing words only when a longer one
/// was seen before (the closing line names the longest too).
fn short(streak: &Streak, current: u64, needed: u64) -> Option<StreakCut> {
    (streak.longest > current).then_some(StreakCut { current, needed })
}

mod pause;
pub(super) mod shapes;
#[cfg(test)]
mod tests;

pub(super) use pause::{Pause, Unsettled, after_output, after_pause};
pub(super) use shapes::LoopShape;
