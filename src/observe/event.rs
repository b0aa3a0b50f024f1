//! What happens in a run, as the supervisor says it ([`Event`]): each attempt's life, the
//! waits and what set them, the loop shapes' steps, the service's protection (splay, budget,
//! cooldown), the lock, hooks, `RETRY_ENV_FILE`, retry's own errors and warnings
//! ([`Problem`]), and the run's end with its typed reason ([`Why`]). No words: the reporter
//! (`report/`) says each of them, and every other observer hears the same.

use std::path::Path;
use std::time::Duration;

use super::problems::Problem;
use super::reasons::{LockBusy, Reason, Refusal, Why};
use crate::budget::{AfterAttempt, Begin, BreakerState, RunEnd};
use crate::hints::HintSource;
use crate::process::{Left, Outcome};
use crate::transient::Classes;
use crate::types::BudgetKey;

/// An attempt that ended, as the events after it carry it.
#[derive(Clone, Copy, Debug)]
pub struct Attempted<'e> {
    /// Its number, from 1.
    pub attempt: u64,
    /// How it ended.
    pub outcome: &'e Outcome,
    /// How long it ran.
    pub ran: Duration,
    /// It exited 0 but its output matched `--retry-if-output` (it counts as status 1).
    pub output_failed: bool,
    /// With `--http-hints`, the status code of the last HTTP response in its output, if one
    /// was read (after redirects, the final one).
    pub http_status: Option<u16>,
    /// What it left running once it ended and retry then stopped (a daemon that a run of
    /// `--forever` started, background jobs of a failed attempt): [`Left::Nothing`] in the
    /// attempt's end event, which comes before they are stopped.
    pub left_running: Left,
    /// With `--transient`, the classes of transient failure it is known by (empty: none);
    /// `None` without `--transient`.
    pub transient: Option<Classes>,
}

/// What happens in a run, in the order it happens. Durations are wall-clock spans measured by
/// the supervisor.
#[derive(Debug)]
pub enum Event<'e> {
    /// An attempt is about to start, before anything is said of it (a CI fold opens).
    AttemptStart {
        /// Its number, from 1.
        attempt: u64,
        /// It is known to be the run's last whatever it does (its output is not folded away).
        last: bool,
    },
    /// No stop signal came first: attempt `0` (from 1) is launched now.
    Launch(u64),
    /// Its process started with this id.
    Spawned(i32),
    /// It ended (reaped; its output may still be settling).
    AttemptEnd(Attempted<'e>),
    /// Its output has all been written (a CI fold closes before retry's line about it).
    OutputSettled,
    /// It failed and no wait follows (the run ends: given up, or stopped).
    Failed(Attempted<'e>),
    /// It failed and the next attempt starts after a delay.
    Wait {
        /// The attempt that failed.
        after: Attempted<'e>,
        /// The delay before the next attempt.
        delay: Duration,
        /// The server's hint that set the delay, if one did.
        hint: Option<HintSource>,
        /// The wait a server's hint asked for, whether it set the delay or not.
        asked: Option<Duration>,
    },
    /// A hook ended.
    HookEnd {
        /// `on_retry` or `on_give_up`.
        name: &'e str,
        /// How.
        end: &'e HookEnd,
    },
    /// The run gives up.
    GaveUp {
        /// The attempts it made.
        attempts: u64,
        /// Why.
        why: &'e Why,
        /// The status retry is to end with.
        status: u32,
        /// How long the run took.
        elapsed: Duration,
    },
    /// The run succeeded.
    Succeeded {
        /// On this attempt.
        attempts: u64,
        /// How long the run took.
        elapsed: Duration,
    },
    /// A stop signal (this number) ends the run: no retry.
    Stopped(i32),
    /// The run begins (the opening line): its seed (`--seed`, or drawn).
    RunStart {
        /// The seed of the run's random draws.
        seed: u64,
    },
    /// A hook (`on_retry`, `on_give_up`) is about to start.
    HookStart(&'e str),
    /// The wait before the next attempt goes on: a countdown's next frame is due
    /// ([`super::Observer::next_tick`]).
    Tick,
    /// The wait ended (however it ended).
    Woke,
    /// The attempt could not be started: the system's words, and the hint for a command not
    /// found (`--not-found-hint`), if it applies.
    LaunchFailed {
        /// Why, as the system said it.
        message: &'e str,
        /// What to try, for a command that was not found.
        hint: Option<&'e str>,
    },
    /// `--until-fail`: a success, run again after `delay`.
    Rerun {
        /// The run (from 1) that succeeded.
        attempt: u64,
        /// The wait before the next run.
        delay: Duration,
    },
    /// `--successes`: a success of a streak not yet complete.
    Streak {
        /// The attempt (from 1) that succeeded.
        attempt: u64,
        /// Successes in a row so far.
        current: u64,
        /// `--successes`.
        needed: u64,
        /// The wait before the next attempt.
        delay: Duration,
    },
    /// `--successes`: the streak is complete; the run succeeded.
    StreakDone {
        /// The attempt that completed it.
        attempt: u64,
        /// `--successes`.
        needed: u64,
    },
    /// `--until-fail`: the failure it waited for.
    UntilFailFailed(Attempted<'e>),
    /// `--until-fail` ends after `runs` runs without a failure, for `reason` (status 0).
    NoFailure {
        /// The runs made.
        runs: u64,
        /// Why no more.
        reason: &'e Reason,
    },
    /// `--reset-after`: attempt `attempt` ran `ran`, at least `reset_after`: the retries start
    /// afresh, and the run may now go to attempt `last` (`None`: no limit).
    Reset {
        /// The attempt that ran long.
        attempt: u64,
        /// How long it ran.
        ran: Duration,
        /// `--reset-after`.
        reset_after: Duration,
        /// The run's last attempt from now on.
        last: Option<u64>,
    },
    /// `--splay`: the wait drawn before the first attempt.
    Splay(Duration),
    /// `--budget`: what the store said before the first attempt.
    BudgetBegin {
        /// The budget's key.
        key: &'e BudgetKey,
        /// The tokens, the breaker and the shared cooldown.
        begin: &'e Begin,
    },
    /// `--budget`: what the store said after attempt `attempt`.
    BudgetAttempt {
        /// The budget's key.
        key: &'e BudgetKey,
        /// The attempt counted.
        attempt: u64,
        /// The tokens left, whether a retry is allowed, the shared cooldown.
        after: &'e AfterAttempt,
    },
    /// `--budget`: the run's end as the breaker counted it, and its state after.
    BudgetEnd {
        /// The budget's key.
        key: &'e BudgetKey,
        /// How the run ended, for the breaker.
        end: RunEnd,
        /// The breaker's state after, if there is a breaker.
        state: Option<&'e BreakerState>,
    },
    /// The run is refused before its first attempt (status 75): by the breaker, or a shared
    /// cooldown it will not wait for.
    Refused {
        /// Why.
        why: &'e Refusal,
        /// Until when (epoch milliseconds).
        until_ms: u64,
    },
    /// Attempt `attempt` waits `delay` for the shared cooldown of budget `key`.
    Cooldown {
        /// The budget's key.
        key: &'e BudgetKey,
        /// The attempt that waits.
        attempt: u64,
        /// The end of the cooldown (epoch milliseconds).
        until_ms: u64,
        /// The wait from now.
        delay: Duration,
    },
    /// `--lock`: another run holds the lock; this one waits (up to `--lock-wait`).
    LockWaiting {
        /// The lock file.
        path: &'e Path,
        /// The holder's process id, if it is known.
        holder: Option<u32>,
    },
    /// `--lock` taken, after waiting `waited`.
    LockHeld {
        /// The lock file.
        path: &'e Path,
        /// How long the run waited for it.
        waited: Duration,
    },
    /// `--lock` is held by another run past `--lock-wait`: the run ends with 75.
    LockBusy(&'e LockBusy),
    /// `RETRY_ENV_FILE`: what `after` (`attempt 3`, `--on-retry`) set for the next ones.
    EnvFileSet {
        /// Who set them.
        after: &'e str,
        /// The names set.
        names: &'e [String],
    },
    /// One of retry's own errors or warnings.
    Problem(Problem<'e>),
}

/// How a hook ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HookEnd {
    /// It exited with this status (0: success), or died of a signal (`128 + N`), or was
    /// stopped at the deadline (124; 137 after KILL).
    Status(u8),
    /// It could not be started (why).
    Failed(String),
}
