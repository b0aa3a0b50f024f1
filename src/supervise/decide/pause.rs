//! After the pause before the next attempt (its `--on-retry` hook, its wait): the checks that
//! may still end the run ([`after_pause`]): the deadline, a failed hook, a lost recording of
//! stdin, the budget's refusal right before the next attempt. Pure, as [`super::decide`] is:
//! with it, the one place that ends a run after an attempt.

use super::{Ending, Next, Streak, give_up, short};
use crate::observe::reasons::{Reason, Refusal};
use crate::status::{Exit, TIMED_OUT};

/// What the run knows after the pause before the next attempt: after its `--on-retry` hook
/// (`hook_failed`: it failed and `--stop-on-hook-failure` is on), or after its wait.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::supervise) enum Pause {
    /// The `--on-retry` hook ended.
    Hook { hook_failed: bool },
    /// The wait ended.
    Wait,
    /// Right before the next attempt, the budget (`--budget`) refuses it: its breaker opened
    /// meanwhile, or another run set a shared cooldown past the deadline or longer than
    /// `--max-hint`.
    Refused(Refusal),
}

/// Whether the run ends after the pause `pause` before attempt `attempt + 1` of the loop
/// `next`, the previous attempt having left `exit`: `deadline_passed`, and why the recording of
/// stdin failed (`replay_lost`, looked at after the wait only). `None`: go on.
pub(in crate::supervise) fn after_pause(
    next: Next,
    pause: Pause,
    attempt: u64,
    exit: Exit,
    deadline_passed: bool,
    replay_lost: bool,
    streak: &Streak,
) -> Option<Ending> {
    let no_failure = |reason: Reason| Ending::NoFailure {
        runs: attempt,
        reason,
    };
    match (next, pause) {
        (Next::Rerun, Pause::Refused(refusal)) => Some(no_failure(Reason::Budget(refusal))),
        (_, Pause::Refused(refusal)) => Some(give_up(Reason::Budget(refusal), exit, false)),
        (Next::Retry, Pause::Hook { .. }) if deadline_passed => {
            Some(give_up(Reason::DeadlineDuringHook, exit, false))
        }
        (Next::Retry, Pause::Hook { hook_failed: true }) => {
            Some(give_up(Reason::HookFailed, exit, false))
        }
        (Next::Rerun, Pause::Hook { .. }) if deadline_passed => {
            Some(no_failure(Reason::DeadlineDuringHook))
        }
        (Next::Rerun, Pause::Hook { hook_failed: true }) => Some(no_failure(Reason::HookFailed)),
        (_, Pause::Hook { .. }) => None,
        (Next::Retry, Pause::Wait) if deadline_passed => {
            Some(give_up(Reason::DeadlinePassed, exit, false))
        }
        (Next::Rerun, Pause::Wait) if deadline_passed => Some(no_failure(Reason::DeadlinePassed)),
        (Next::Streak { current, needed }, Pause::Wait) if deadline_passed => {
            Some(Ending::GiveUp {
                reason: Reason::DeadlinePassed,
                exit: Exit::Code(TIMED_OUT.into()),
                failed_first: false,
                streak: short(streak, current, needed),
                lost: None,
            })
        }
        (next, Pause::Wait) => {
            if !replay_lost {
                return None;
            }
            let lost = attempt + 1;
            Some(match next {
                Next::Retry => Ending::GiveUp {
                    reason: Reason::StdinLost,
                    exit,
                    failed_first: false,
                    streak: None,
                    lost: Some(lost),
                },
                Next::Streak { current, needed } => Ending::GiveUp {
                    reason: Reason::StdinLost,
                    exit: Exit::OwnFailure,
                    failed_first: false,
                    streak: short(streak, current, needed),
                    lost: Some(lost),
                },
                // --until-fail ends with 125 after the line saying why.
                Next::Rerun => Ending::Abort {
                    exit: Exit::OwnFailure,
                    next: lost,
                },
            })
        }
    }
}

/// What an attempt's output came to, when that ends the run before the decision on its status
/// (the supervisor has said the failure and the faults).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::supervise) enum Unsettled {
    /// The reader of retry's stdout is gone: retry dies of SIGPIPE, as a pipeline stage does.
    ReaderGone,
    /// Stop signal `signal` came while the output was still being written: retry dies of it.
    Cut { signal: i32 },
    /// The attempt's input or output could not be passed on whole: the run ends with `exit`,
    /// stopped by `interrupted` if a stop signal came, else giving up.
    Lost {
        exit: Exit,
        interrupted: Option<i32>,
    },
}

/// How the run ends when an attempt's output came to `unsettled`.
pub(in crate::supervise) fn after_output(unsettled: Unsettled) -> Ending {
    match unsettled {
        Unsettled::ReaderGone => Ending::Quiet {
            exit: Exit::Signal(crate::signal_names::PIPE),
        },
        Unsettled::Cut { signal } => Ending::Stopped {
            signal,
            exit: Exit::Signal(signal),
        },
        Unsettled::Lost {
            exit,
            interrupted: Some(signal),
        } => Ending::Stopped { signal, exit },
        Unsettled::Lost {
            exit,
            interrupted: None,
        } => give_up(Reason::IoLost, exit, false),
    }
}
