//! The decision after an attempt ([`super::decide`]), reason by reason: the plain loop here;
//! `--successes` and `--until-fail` in `loops.rs`, `--forever` in `forever.rs`, the HTTP
//! statuses in `http.rs`.

use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

use super::{Decision, Ending, Facts, Next, Pause, Streak, after_pause, decide, shapes, verdict};
use crate::codes::Verdict;
use crate::config::{Rules, Shape};
use crate::hints::HintSource;
use crate::observe::reasons::{Reason, StreakCut};
use crate::process::{Ended, Outcome, StopReason};
use crate::status::{Exit, TIMED_OUT};
use retry_tool_backoff::{GiveUp, GiveUpRule, Jitter, Limits, Policy};

pub(super) const SECS: fn(u64) -> Duration = Duration::from_secs;
pub(super) const FAILED: Outcome = Outcome::Exited(1);
pub(super) const OK: Outcome = Outcome::Exited(0);

/// A schedule of 1s, 2s, 4s ... up to 60s, no jitter, with `max_retries`.
pub(super) fn rule(max_retries: Option<u64>) -> GiveUpRule {
    let policy = Policy::new(SECS(1), 2.0, SECS(60), Jitter::None).unwrap();
    GiveUpRule::new(
        policy.schedule(),
        Limits {
            max_retries,
            deadline: None,
        },
    )
}

/// The facts of attempt 1 ending with `outcome`, plain loop, nothing else known.
pub(super) fn facts(outcome: &Outcome) -> Facts<'_> {
    let status = outcome.status();
    Facts {
        attempt: 1,
        outcome,
        output_failed: false,
        stop_match: false,
        interrupted: None,
        verdict: verdict(status, false, false, |s| {
            if s == 0 {
                Verdict::Success
            } else {
                Verdict::Retry
            }
        }),
        reader_gone: None,
        replay_lost: false,
        hint: None,
        cooldown: None,
        budget_refusal: None,
        elapsed: SECS(0),
        http_status: None,
        transient: crate::transient::Classes::default(),
        rules: &RULES,
        shape: Box::leak(super::shapes::of(Shape::Plain)),
    }
}

/// The settings of a plain loop of 2 retries, a first delay of 1s and `--max-hint 1h`.
pub(super) const RULES: Rules = Rules {
    shape: Shape::Plain,
    max_retries: Some(2),
    base: SECS_1,
    preserve_status: false,
    success_stops: false,
    http_retry_on: None,
    max_hint: Duration::from_secs(3600),
    reset_after: None,
    transient: None,
};
const SECS_1: Duration = Duration::from_secs(1);

/// `f` with its settings changed by `change` (the settings outlive the test: leaked).
pub(super) fn set(f: &mut Facts<'_>, change: impl FnOnce(&mut Rules)) {
    let mut rules = *f.rules;
    change(&mut rules);
    f.rules = Box::leak(Box::new(rules));
    f.shape = Box::leak(super::shapes::of(rules.shape));
}

pub(super) fn run(facts: &Facts<'_>, rule: &mut GiveUpRule, streak: &mut Streak) -> Decision {
    decide(
        facts,
        rule,
        streak,
        &mut Xoshiro256PlusPlus::seed_from_u64(7),
    )
}

/// The decision for `facts` with a fresh rule of 2 retries and no streak.
pub(super) fn once(facts: &Facts<'_>) -> Decision {
    run(facts, &mut rule(Some(2)), &mut Streak::default())
}

pub(super) fn gives_up(reason: Reason, exit: Exit, failed_first: bool) -> Decision {
    Decision::End(Ending::GiveUp {
        reason,
        exit,
        failed_first,
        streak: None,
        lost: None,
    })
}

impl Decision {
    /// The ending of a decision that ends the run.
    fn into_ending(self) -> Ending {
        match self {
            Decision::End(ending) => ending,
            other => panic!("{other:?} does not end the run"),
        }
    }
}

pub(super) fn again(next: Next, delay: Duration, hint: Option<HintSource>) -> Decision {
    Decision::Again { next, delay, hint }
}

#[test]
fn a_failure_is_retried_after_the_schedule_s_delay_until_the_retries_are_used_up() {
    let mut r = rule(Some(2));
    let mut streak = Streak::default();
    let f = facts(&FAILED);
    assert_eq!(
        run(&f, &mut r, &mut streak),
        again(Next::Retry, SECS(1), None)
    );
    assert_eq!(
        run(&f, &mut r, &mut streak),
        again(Next::Retry, SECS(2), None)
    );
    assert_eq!(
        run(&f, &mut r, &mut streak),
        gives_up(Reason::Rule(GiveUp::RetriesUsedUp), Exit::Code(1), true)
    );
}

#[test]
fn a_success_ends_the_run() {
    assert_eq!(once(&facts(&OK)), Decision::End(Ending::Succeed));
}

#[test]
fn a_stop_signal_ends_the_run_with_the_attempt_s_status_before_any_other_reason() {
    let mut f = facts(&Outcome::Signaled(15));
    f.interrupted = Some(2);
    f.stop_match = true;
    assert_eq!(
        once(&f),
        Decision::End(Ending::Stopped {
            signal: 2,
            exit: Exit::Signal(15)
        })
    );
}

#[test]
fn a_command_that_cannot_be_run_is_not_retried() {
    let outcome = Outcome::LaunchFailed {
        message: "No such file or directory".into(),
        status: 127,
    };
    assert_eq!(
        once(&facts(&outcome)),
        gives_up(Reason::CannotRun, Exit::Code(127), false)
    );
}

#[test]
fn the_output_conditions_come_before_the_status() {
    assert_eq!(
        verdict(0, true, false, |_| Verdict::Success),
        Verdict::Retry
    );
    assert_eq!(verdict(3, false, true, |_| Verdict::Retry), Verdict::Stop);
    // A success whose output matched --stop-if-output is still a success.
    assert_eq!(
        verdict(0, false, true, |_| Verdict::Success),
        Verdict::Success
    );
    let mut f = facts(&FAILED);
    f.stop_match = true;
    f.verdict = Verdict::Stop;
    assert_eq!(
        once(&f),
        gives_up(Reason::OutputMatched, Exit::Code(1), true)
    );
    // Exit status 0 that failed by its output ends with 1.
    let mut f = facts(&OK);
    f.output_failed = true;
    f.verdict = Verdict::Retry;
    assert_eq!(once(&f), again(Next::Retry, SECS(1), None));
}

#[test]
fn a_status_not_retried_gives_up() {
    let outcome = Outcome::Exited(2);
    let mut f = facts(&outcome);
    f.verdict = Verdict::Stop;
    assert_eq!(
        once(&f),
        gives_up(Reason::StatusNotRetried(2), Exit::Code(2), true)
    );
}

#[test]
fn a_reader_gone_or_a_lost_recording_of_stdin_gives_up() {
    let mut f = facts(&FAILED);
    f.reader_gone = Some(crate::held::Stream::Stdout);
    assert_eq!(
        once(&f),
        gives_up(
            Reason::ReaderGone(crate::held::Stream::Stdout),
            Exit::Code(1),
            true
        )
    );
    let mut f = facts(&FAILED);
    f.replay_lost = true;
    assert_eq!(
        once(&f),
        Decision::End(Ending::GiveUp {
            reason: Reason::StdinLost,
            exit: Exit::Code(1),
            failed_first: true,
            streak: None,
            lost: Some(2),
        })
    );
}

#[test]
fn a_server_s_hint_sets_the_delay_or_makes_retry_give_up() {
    let mut f = facts(&FAILED);
    f.hint = Some((SECS(30), HintSource::RetryAfter));
    assert_eq!(
        once(&f),
        again(Next::Retry, SECS(30), Some(HintSource::RetryAfter))
    );
    // Shorter than the backoff: the backoff's delay, the hint not named.
    f.hint = Some((Duration::from_millis(300), HintSource::RetryAfter));
    assert_eq!(once(&f), again(Next::Retry, SECS(1), None));
    f.hint = Some((SECS(7200), HintSource::RetryAfter));
    assert_eq!(
        once(&f),
        gives_up(
            Reason::HintTooLong {
                source: HintSource::RetryAfter,
                asked: SECS(7200),
                max_hint: SECS(3600),
            },
            Exit::Code(1),
            true
        )
    );
}

#[test]
fn the_budget_s_cooldown_lengthens_the_delay_and_its_refusal_gives_up() {
    let mut f = facts(&FAILED);
    f.cooldown = Some(SECS(9));
    assert_eq!(once(&f), again(Next::Retry, SECS(9), None));
    f.hint = Some((SECS(12), HintSource::RetryAfter));
    assert_eq!(
        once(&f),
        again(Next::Retry, SECS(12), Some(HintSource::RetryAfter))
    );
    let mut f = facts(&FAILED);
    let spent = crate::budget::Refusal::Spent {
        key: crate::types::BudgetKey::new(b"k".to_vec()).unwrap(),
    };
    f.budget_refusal = Some(&spent);
    assert_eq!(
        once(&f),
        gives_up(Reason::Budget(spent.clone()), Exit::Code(1), true)
    );
}

#[test]
fn the_deadline_of_the_give_up_rule_gives_up_with_its_reason() {
    let policy = Policy::new(SECS(10), 2.0, SECS(60), Jitter::None).unwrap();
    let mut r = GiveUpRule::new(
        policy.schedule(),
        Limits {
            max_retries: None,
            deadline: Some(SECS(5)),
        },
    );
    let f = facts(&FAILED);
    assert_eq!(
        run(&f, &mut r, &mut Streak::default()),
        gives_up(
            Reason::Rule(GiveUp::DelayPastDeadline(SECS(10))),
            Exit::Code(1),
            true
        )
    );
}

#[test]
fn a_stopped_attempt_ends_with_124_or_by_kill_or_its_own_status_with_preserve() {
    let stopped = |killed| Outcome::Stopped {
        reason: StopReason::Timeout,
        killed,
        after: SECS(3),
        ended: Ended::Signaled(15),
    };
    let (term, kill) = (stopped(false), stopped(true));
    let mut r = rule(Some(0));
    let exit = |f: &Facts<'_>, r: &mut GiveUpRule| match run(f, r, &mut Streak::default()) {
        Decision::End(Ending::GiveUp { exit, .. }) => exit,
        other => panic!("{other:?}"),
    };
    assert_eq!(exit(&facts(&term), &mut r), Exit::Code(TIMED_OUT.into()));
    assert_eq!(
        exit(&facts(&kill), &mut r),
        Exit::Signal(crate::signal_names::KILL)
    );
    let mut f = facts(&term);
    set(&mut f, |r| r.preserve_status = true);
    assert_eq!(exit(&f, &mut r), Exit::Signal(15));
}

#[test]
fn after_the_hook_and_the_wait_the_deadline_the_hook_and_the_recording_may_end_the_run() {
    let exit = Exit::Code(1);
    let none = Streak::default();
    let hook = |failed| Pause::Hook {
        hook_failed: failed,
    };
    let end = |reason: Reason, exit| {
        Some(gives_up(reason, exit, false)).map(|d| match d {
            Decision::End(e) => e,
            Decision::Again { .. } => unreachable!(),
        })
    };
    assert_eq!(
        after_pause(Next::Retry, hook(false), 1, exit, false, false, &none),
        None
    );
    assert_eq!(
        after_pause(Next::Retry, hook(false), 1, exit, true, false, &none),
        end(Reason::DeadlineDuringHook, exit)
    );
    assert_eq!(
        after_pause(Next::Retry, hook(true), 1, exit, false, false, &none),
        end(Reason::HookFailed, exit)
    );
    assert_eq!(
        after_pause(
            Next::Rerun,
            hook(true),
            2,
            Exit::Code(0),
            false,
            false,
            &none
        ),
        Some(Ending::NoFailure {
            runs: 2,
            reason: Reason::HookFailed
        })
    );
    assert_eq!(
        after_pause(Next::Retry, Pause::Wait, 1, exit, true, false, &none),
        end(Reason::DeadlinePassed, exit)
    );
    let streak = Next::Streak {
        current: 1,
        needed: 3,
    };
    assert_eq!(
        after_pause(streak, Pause::Wait, 1, exit, true, false, &none),
        end(Reason::DeadlinePassed, Exit::Code(TIMED_OUT.into()))
    );
    assert_eq!(
        after_pause(
            Next::Rerun,
            Pause::Wait,
            1,
            Exit::Code(0),
            false,
            true,
            &none
        ),
        Some(Ending::Abort {
            exit: Exit::OwnFailure,
            next: 2
        })
    );
    assert_eq!(
        after_pause(Next::Retry, Pause::Wait, 1, exit, false, false, &none),
        None
    );
}

#[test]
fn the_budget_refusing_the_next_attempt_ends_the_run_in_the_decision() {
    let none = Streak::default();
    let exit = Exit::Code(7);
    let open = crate::budget::Refusal::BreakerOpen {
        key: crate::types::BudgetKey::new(b"api".to_vec()).unwrap(),
        until_ms: 1_767_225_600_000,
    };
    let refused = Pause::Refused(open.clone());
    assert_eq!(
        after_pause(Next::Retry, refused.clone(), 3, exit, false, false, &none),
        Some(Ending::GiveUp {
            reason: Reason::Budget(open.clone()),
            exit,
            failed_first: false,
            streak: None,
            lost: None,
        })
    );
    assert_eq!(
        after_pause(Next::Rerun, refused, 3, Exit::Code(0), false, false, &none),
        Some(Ending::NoFailure {
            runs: 3,
            reason: Reason::Budget(open),
        })
    );
}

#[test]
fn an_attempt_s_output_that_did_not_settle_ends_the_run() {
    use super::{Unsettled, after_output};
    assert_eq!(
        after_output(Unsettled::ReaderGone),
        Ending::Quiet {
            exit: Exit::Signal(crate::signal_names::PIPE)
        }
    );
    assert_eq!(
        after_output(Unsettled::Cut { signal: 15 }),
        Ending::Stopped {
            signal: 15,
            exit: Exit::Signal(15)
        }
    );
    let exit = Exit::Code(4);
    assert_eq!(
        after_output(Unsettled::Lost {
            exit,
            interrupted: Some(2)
        }),
        Ending::Stopped { signal: 2, exit }
    );
    assert_eq!(
        after_output(Unsettled::Lost {
            exit,
            interrupted: None
        }),
        gives_up(Reason::IoLost, exit, false).into_ending()
    );
}

mod forever;
mod http;
mod loops;
mod transient;
