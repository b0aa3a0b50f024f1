//! Run events and their observers: the supervisor says what happens in a run ([`Event`]) and
//! the observers that listen (the terminal/JSON reporter, the CI dialects, `--chronic`, the
//! metrics file and the trace) each do their part with it, in the order they were given to
//! the run. The supervisor names none of them; they know nothing of each other.
//!
//! At the end every observer finishes in the same order ([`Observer::finish`]): first what may
//! still turn a success into 125 (a file that cannot be written, [`End::failed`]), then
//! ([`Observer::after`]) what never changes the status (warnings, the trace's export).
//! The observer pattern as in the Gang of Four's *Design Patterns* (1994); the events follow
//! the life of a run as OpenTelemetry's semantic conventions for retries name it
//! (<https://opentelemetry.io/docs/specs/semconv/>): attempt, wait, give-up.

use std::time::Duration;

pub mod reasons;

use crate::hints::HintSource;
use crate::pipeline::Tasks;
use crate::process::{Left, Outcome};
use crate::status::Exit;

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
        why: &'e str,
        /// The status retry is to end with.
        status: u32,
        /// The closing line as retry says it (without `retry: `).
        closing: &'e str,
    },
    /// The run succeeded.
    Succeeded {
        /// On this attempt.
        attempts: u64,
        /// The closing line as retry says it (without `retry: `).
        closing: &'e str,
    },
    /// A stop signal (this number) ends the run: no retry.
    Stopped(i32),
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

/// How the run ended, before the end's own writes: stopped by a signal, success, refused
/// before any attempt (75, by the breaker or the budget), or given up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunResult {
    /// A stop signal ended it.
    Stopped,
    /// It succeeded (exit status 0 and not given up).
    Success,
    /// No attempt ran: the breaker or the budget refused it (status 75).
    Refused,
    /// It gave up (or ended with an attempt's failure).
    GaveUp,
}

/// What an observer may ask of the run while it finishes: retry's voice for errors and
/// warnings, and the event loop for waiting on threads without going deaf to signals.
pub trait Running {
    /// Says `message` as one of retry's errors (even with `--quiet`).
    fn error(&self, message: &str);
    /// Says `message` as one of retry's warnings.
    fn warning(&self, message: &str);
    /// Waits for `tasks` to end while still hearing signals: a stop signal is noted in
    /// `interrupted`, after which the wait is bounded by a short grace. Returns whether they
    /// all ended.
    fn wait_tasks(&self, tasks: &Tasks, interrupted: &mut Option<i32>) -> bool;
    /// A stop signal that arrived and has not been heard yet (`None` when none).
    fn queued_stop_signal(&self) -> Option<i32>;
    /// Whether a stop signal has arrived during the run.
    fn stop_arrived(&self) -> bool;
}

/// The end of a run as the observers finish it: the status retry is to exit with, which an
/// observer may turn into 125 ([`End::failed`]) or into a signal's.
pub struct End<'e> {
    /// How retry exits, as it stands.
    pub exit: Exit,
    /// How the run ended before the end's writes.
    pub result: RunResult,
    /// Why retry gave up, if it did.
    pub gave_up: Option<String>,
    /// Why retry exits 125 although the attempts succeeded (a write at the end failed), as
    /// the error said it; `None` otherwise.
    pub late_failure: Option<String>,
    /// The run, for what an observer needs of it while finishing.
    pub run: &'e dyn Running,
}

impl End<'_> {
    /// A write at the end failed: says `error` and turns a success into 125, remembering
    /// `error` for what describes the end ([`End::late_failure`]); any other ending keeps its
    /// status.
    pub fn failed(&mut self, error: &str) {
        self.run.error(error);
        if self.exit == Exit::Code(0) {
            self.late_failure = Some(error.to_string());
            self.exit = Exit::OwnFailure;
        }
    }
}

/// One listener to a run's events. Every method has a default that does nothing, so an
/// observer implements only what it acts on.
pub trait Observer {
    /// `event` happened.
    fn event(&mut self, event: &Event<'_>) {
        let _ = event;
    }

    /// Variables attempt `attempt`, about to start, gets from this observer (a trace's
    /// `TRACEPARENT`).
    fn attempt_env(&mut self, attempt: u64) -> Vec<(&'static str, String)> {
        let _ = attempt;
        Vec::new()
    }

    /// Variables a hook, about to start, gets from this observer.
    fn hook_env(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// The run ends: what may still change how retry exits (files written at the end, the
    /// output `--chronic` held), in the observers' order.
    fn finish(&mut self, end: &mut End<'_>) {
        let _ = end;
    }

    /// Once every observer has finished and the status is settled: what never changes it
    /// (warnings, a trace's export).
    fn after(&mut self, end: &End<'_>) {
        let _ = end;
    }
}

/// The run's observers, in the order they hear each event.
#[derive(Default)]
pub struct Observers<'a> {
    list: Vec<Box<dyn Observer + 'a>>,
}

impl<'a> Observers<'a> {
    /// Adds `observer` last.
    pub fn push(&mut self, observer: impl Observer + 'a) {
        self.list.push(Box::new(observer));
    }

    /// Tells every observer of `event`, in order.
    pub fn event(&mut self, event: &Event<'_>) {
        for observer in &mut self.list {
            observer.event(event);
        }
    }

    /// What every observer adds to attempt `attempt`'s environment.
    pub fn attempt_env(&mut self, attempt: u64) -> Vec<(&'static str, String)> {
        let mut env = Vec::new();
        for observer in &mut self.list {
            env.extend(observer.attempt_env(attempt));
        }
        env
    }

    /// What every observer adds to a hook's environment.
    pub fn hook_env(&self) -> Vec<(&'static str, String)> {
        self.list.iter().flat_map(|o| o.hook_env()).collect()
    }

    /// Finishes the run: [`Observer::finish`] then [`Observer::after`] of every observer, in
    /// order; returns how retry exits.
    pub fn finish(&mut self, mut end: End<'_>) -> Exit {
        for observer in &mut self.list {
            observer.finish(&mut end);
        }
        for observer in &mut self.list {
            observer.after(&end);
        }
        end.exit
    }
}
