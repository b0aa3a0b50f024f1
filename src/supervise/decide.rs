//! What happens after an attempt: one pure decision ([`decide`]) from the attempt's end and
//! what the run knows ([`Facts`]): succeed, give up (and why), stop, or run again after a
//! delay (and what set it); and after the pause before the next attempt (its hook, its wait)
//! the checks that may still end the run ([`after_pause`]). The supervisor gathers the facts
//! (asking the budget store, the recorder of stdin, the reader of stdout), then does what the
//! decision says; nothing here reads a clock, a file or a process.
//!
//! The loop shapes are in it too: `--successes N` (a success short of N in a row waits the
//! first delay as written, then the next attempt runs; the deadline ending a streak ends the
//! run with 124, as coreutils `timeout` does when time runs out) and `--until-fail` (a success
//! is retried through the same give-up rule; the first failure ends the run with its status;
//! running out of retries or time without one ends it with 0).
//!
//! `--forever` runs a success again as it retries a failure, through the same checks and the
//! same give-up rule, whose retries are then the short runs in a row (a crash loop: the
//! supervisor starts the rule afresh after a run that lasted `--reset-after`).
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
use crate::config::Shape;
use crate::duration::format_human;
use crate::hints::HintSource;
use crate::http_status::HttpStatuses;
use crate::process::{Outcome, StopReason};
use crate::status::{Exit, TIMED_OUT};
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
    /// The reader of retry's stdout is gone.
    pub reader_gone: bool,
    /// Why the recording of stdin (`--replay-stdin`) failed, if it did.
    pub replay_lost: Option<&'f str>,
    /// The wait a server's hint asks for from now, and where it came from.
    pub hint: Option<(Duration, HintSource)>,
    /// `--max-hint`: a hint asking for more makes retry give up.
    pub max_hint: Duration,
    /// The budget's shared cooldown still to wait (`--budget`), if any.
    pub cooldown: Option<Duration>,
    /// Why the budget refuses a retry, if it does.
    pub budget_refusal: Option<&'f str>,
    /// Time since the run started.
    pub elapsed: Duration,
    /// Time left until `--deadline`: `None` without one, zero once it has passed.
    pub time_left: Option<Duration>,
    /// The loop's shape.
    pub shape: Shape,
    /// The first delay as written (`--successes` waits it between successes).
    pub base: Duration,
    /// `--preserve-status`.
    pub preserve_status: bool,
    /// The status of the last HTTP response in its output (`--http-hints`), if one was read.
    pub http_status: Option<u16>,
    /// `--http-retry-on`: the HTTP statuses of a failed attempt that are retried; `None` when
    /// not given: the default set, and any status with a server's hint.
    pub http_retry_on: Option<HttpStatuses>,
    /// `--max-retries` (`None`: unlimited); with `--forever`, the short runs in a row allowed.
    pub max_retries: Option<u64>,
    /// `--reset-after`, as the run applies it (`--forever`'s crash loop counts runs shorter).
    pub reset_after: Option<Duration>,
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
    /// The run gives up because `why`, and ends with `exit`. `failed_first`: the attempt's
    /// failure is said before (no wait line said it); `error`: a line to say first.
    GiveUp {
        why: String,
        exit: Exit,
        failed_first: bool,
        error: Option<String>,
    },
    /// `--until-fail`: the run ends with 0 after `runs` runs without a failure, because `why`.
    NoFailure { runs: u64, why: String },
    /// `--until-fail`: the failure it waited for; the run ends with `exit`.
    UntilFailFailed { exit: Exit },
    /// The run ends with `exit` after saying `error`, with no closing line.
    Abort { exit: Exit, error: Option<String> },
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
pub(super) fn decide<R: Rng + ?Sized>(
    facts: &Facts<'_>,
    rule: &mut GiveUpRule,
    streak: &mut Streak,
    rng: &mut R,
) -> Decision {
    let f = facts;
    let exit = exit_for(f.outcome, f.output_failed, f.preserve_status);
    if let Some(signal) = f.interrupted {
        // With --forever the signal alone ends the run (the command would have run on): retry
        // dies of it whatever the last run did, as a service manager expects of a clean stop.
        let exit = if f.shape == Shape::Forever {
            Exit::Signal(signal)
        } else {
            exit
        };
        return Decision::End(Ending::Stopped { signal, exit });
    }
    if let Outcome::LaunchFailed { .. } = f.outcome {
        return give_up("the command could not be run", exit, false).into();
    }
    let succeeded = f.verdict == Verdict::Success;
    match f.shape {
        Shape::Plain | Shape::Forever => {}
        Shape::Streak(needed) if succeeded => return streak_goes_on(f, streak, needed),
        Shape::Streak(_) => streak.current = 0,
        Shape::UntilFail if succeeded => return rerun(f, rule, rng),
        Shape::UntilFail => {
            if let Outcome::Stopped {
                reason: StopReason::Deadline,
                ..
            } = f.outcome
            {
                let why = format!("the deadline stopped run {} before it ended", f.attempt);
                return Decision::End(Ending::NoFailure {
                    runs: f.attempt - 1,
                    why,
                });
            }
            return Decision::End(Ending::UntilFailFailed { exit });
        }
    }
    // `--forever` runs a success again too, through the same checks and delays as a failure.
    if succeeded && f.shape != Shape::Forever {
        return Decision::End(Ending::Succeed);
    }
    let status = f.outcome.status();
    if f.stop_match {
        return give_up("its output matched --stop-if-output", exit, true).into();
    }
    if f.verdict == Verdict::Stop {
        return give_up(&format!("status {status} is not retried"), exit, true).into();
    }
    let (http_retried, hint_retries) = match f.http_retry_on {
        Some(set) => (set, false),
        None => (HttpStatuses::default(), f.hint.is_some()),
    };
    if let Some(code) = f.http_status
        && !succeeded
        && code >= 400
        && !hint_retries
        && !http_retried.contains(code)
    {
        return give_up(&format!("HTTP {code} is not retried"), exit, true).into();
    }
    if f.reader_gone {
        return give_up("the reader of stdout is gone", exit, true).into();
    }
    if let Some(why) = f.replay_lost {
        return Decision::End(Ending::GiveUp {
            why: "stdin could not be recorded whole".to_string(),
            exit,
            failed_first: true,
            error: Some(replay_error(why, f.attempt + 1)),
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
        Err(GiveUp::RetriesUsedUp) if f.shape == Shape::Forever => {
            return give_up(&crash_loop(f.max_retries, f.reset_after), exit, true).into();
        }
        Err(why) => return give_up(&crate::report::give_up_reason(why), exit, true).into(),
    };
    if let Some(why) = f.budget_refusal {
        return give_up(why, exit, true).into();
    }
    match checked(delay, f.hint, f.max_hint).map(|w| w.hint) {
        Ok(hint) => Decision::Again {
            next: Next::Retry,
            delay,
            hint,
        },
        Err(why) => give_up(&why, exit, true).into(),
    }
}

/// What the run knows after the pause before the next attempt: after its `--on-retry` hook
/// (`hook_failed`: it failed and `--stop-on-hook-failure` is on), or after its wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pause {
    /// The `--on-retry` hook ended.
    Hook { hook_failed: bool },
    /// The wait ended.
    Wait,
}

/// Whether the run ends after the pause `pause` before attempt `attempt + 1` of the loop
/// `next`, the previous attempt having left `exit`: `deadline_passed`, and why the recording of
/// stdin failed (`replay_lost`, looked at after the wait only). `None`: go on.
pub(super) fn after_pause(
    next: Next,
    pause: Pause,
    attempt: u64,
    exit: Exit,
    deadline_passed: bool,
    replay_lost: Option<&str>,
    streak: &Streak,
) -> Option<Ending> {
    let no_failure = |why: &str| Ending::NoFailure {
        runs: attempt,
        why: why.to_string(),
    };
    match (next, pause) {
        (Next::Retry, Pause::Hook { .. }) if deadline_passed => Some(give_up(
            "the deadline passed during --on-retry",
            exit,
            false,
        )),
        (Next::Retry, Pause::Hook { hook_failed: true }) => {
            Some(give_up("the --on-retry hook failed", exit, false))
        }
        (Next::Rerun, Pause::Hook { .. }) if deadline_passed => {
            Some(no_failure("the deadline passed during --on-retry"))
        }
        (Next::Rerun, Pause::Hook { hook_failed: true }) => {
            Some(no_failure("the --on-retry hook failed"))
        }
        (_, Pause::Hook { .. }) => None,
        (Next::Retry, Pause::Wait) if deadline_passed => {
            Some(give_up("the deadline has passed", exit, false))
        }
        (Next::Rerun, Pause::Wait) if deadline_passed => {
            Some(no_failure("the deadline has passed"))
        }
        (Next::Streak { current, needed }, Pause::Wait) if deadline_passed => Some(give_up(
            &short(streak, current, needed, "the deadline has passed"),
            Exit::Code(TIMED_OUT.into()),
            false,
        )),
        (next, Pause::Wait) => {
            let why = replay_lost?;
            let error = Some(replay_error(why, attempt + 1));
            let lost = "stdin could not be recorded whole";
            Some(match next {
                Next::Retry => Ending::GiveUp {
                    why: lost.to_string(),
                    exit,
                    failed_first: false,
                    error,
                },
                Next::Streak { current, needed } => Ending::GiveUp {
                    why: short(streak, current, needed, lost),
                    exit: Exit::OwnFailure,
                    failed_first: false,
                    error,
                },
                // --until-fail ends with 125 after the line saying why.
                Next::Rerun => Ending::Abort {
                    exit: Exit::OwnFailure,
                    error,
                },
            })
        }
    }
}

/// `why` a run of `--successes` gives up, with the streak it reached appended: `no retries
/// left; the longest streak was 2 of 3 successes in a row`. As it is for any other shape.
pub(super) fn with_streak(shape: Shape, streak: &Streak, why: &str) -> String {
    match shape {
        Shape::Streak(needed) => format!(
            "{why}; the longest streak was {} of {needed} successes in a row",
            streak.longest
        ),
        Shape::Plain | Shape::UntilFail | Shape::Forever => why.to_string(),
    }
}

/// Why `--forever` gives up when `-n` (`max_retries`) short runs in a row after the first
/// were made: a crash loop, the runs shorter than `reset_after` (none: `--reset-after 0` or
/// `inf`, every run counts).
fn crash_loop(max_retries: Option<u64>, reset_after: Option<Duration>) -> String {
    let runs = max_retries.map_or(u64::MAX, |n| n.saturating_add(1));
    let s = if runs == 1 { "" } else { "s" };
    match reset_after {
        Some(d) => format!(
            "{runs} run{s} in a row ended within --reset-after ({}): a crash loop",
            format_human(d)
        ),
        None => format!(
            "no restarts left: {runs} run{s} (--reset-after 0 or inf: every run counts, none \
             starts the count afresh)"
        ),
    }
}

/// A give-up for `why` with `exit`.
fn give_up(why: &str, exit: Exit, failed_first: bool) -> Ending {
    Ending::GiveUp {
        why: why.to_string(),
        exit,
        failed_first,
        error: None,
    }
}

/// The line saying why attempt `next` does not run: the recording of stdin failed (`why`).
fn replay_error(why: &str, next: u64) -> String {
    format!("{why}; not retrying: attempt {next} would see only part of stdin")
}

/// The closing words of a streak cut short: they name the longest streak (`with_streak`),
/// and the current one only when it is shorter.
fn short(streak: &Streak, current: u64, needed: u64, why: &str) -> String {
    if streak.longest > current {
        format!("{why} after {current} of {needed} successes in a row")
    } else {
        why.to_string()
    }
}

/// `--successes needed`: a success.
fn streak_goes_on(f: &Facts<'_>, streak: &mut Streak, needed: u64) -> Decision {
    let current = streak.current + 1;
    streak.current = current;
    streak.longest = streak.longest.max(current);
    if current >= needed {
        return Decision::End(Ending::StreakDone { needed });
    }
    let delay = f.base;
    let timed_out = |why: &str| {
        give_up(
            &short(streak, current, needed, why),
            Exit::Code(TIMED_OUT.into()),
            false,
        )
    };
    match f.time_left {
        Some(left) if left.is_zero() => timed_out("the deadline has passed").into(),
        Some(left) if delay >= left => timed_out(&format!(
            "the next wait ({}) would end at or past the deadline",
            format_human(delay)
        ))
        .into(),
        _ => Decision::Again {
            next: Next::Streak { current, needed },
            delay,
            hint: None,
        },
    }
}

/// `--until-fail`: a success, run again after the delay the give-up rule grants, or the run
/// ends without a failure.
fn rerun<R: Rng + ?Sized>(f: &Facts<'_>, rule: &mut GiveUpRule, rng: &mut R) -> Decision {
    let no_failure = |why: String| Ending::NoFailure {
        runs: f.attempt,
        why,
    };
    if f.stop_match {
        return no_failure("its output matched --stop-if-output".into()).into();
    }
    if f.reader_gone {
        return no_failure("the reader of stdout is gone".into()).into();
    }
    let delay = match rule.next_delay(f.elapsed, f.hint.map(|h| h.0), rng) {
        Ok(delay) => delay,
        Err(why) => return no_failure(why.to_string()).into(),
    };
    match checked(delay, f.hint, f.max_hint).map(|w| w.hint) {
        Ok(_) => Decision::Again {
            next: Next::Rerun,
            delay,
            hint: None,
        },
        Err(why) => no_failure(why).into(),
    }
}
