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

mod event;
pub mod problems;
pub mod reasons;

use std::time::Instant;

use crate::pipeline::Tasks;
use crate::status::Exit;
pub use event::{Attempted, Event, HookEnd};
use reasons::Why;

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

/// retry's voice, for what an observer has to say while it finishes (a file that cannot be
/// written) and for a line a process says later in retry's name (the relay's).
pub trait Voice {
    /// Says `message` as one of retry's errors (even with `--quiet`).
    fn error(&self, message: &str);
    /// Says `message` as one of retry's warnings.
    fn warning(&self, message: &str);
    /// The line [`Voice::error`] would write for `message` now (uncoloured), for a process
    /// that says it later on its own.
    fn error_line(&self, message: &str) -> Vec<u8>;
}

/// What an observer may ask of the run while it finishes: the event loop, for waiting on
/// threads without going deaf to signals.
pub trait Running {
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
    /// Why retry gave up (or refused the run), if it did.
    pub gave_up: Option<Why>,
    /// Why retry exits 125 although the attempts succeeded (a write at the end failed), as
    /// the error said it; `None` otherwise.
    pub late_failure: Option<String>,
    /// The run, for what an observer needs of it while finishing.
    pub run: &'e dyn Running,
    /// retry's voice.
    pub voice: &'e dyn Voice,
}

impl End<'_> {
    /// A write at the end failed: says `error` and turns a success into 125, remembering
    /// `error` for what describes the end ([`End::late_failure`]); any other ending keeps its
    /// status.
    pub fn failed(&mut self, error: &str) {
        self.voice.error(error);
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

    /// During a wait: when this observer next has something to draw ([`Event::Tick`], a
    /// countdown's next frame); `None` when nothing.
    fn next_tick(&self) -> Option<Instant> {
        None
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

/// The run's observers, in the order they hear each event, and retry's voice.
pub struct Observers<'a> {
    list: Vec<Box<dyn Observer + 'a>>,
    voice: Box<dyn Voice + 'a>,
}

/// How a run ended, as the supervisor hands it to [`Observers::finish`].
pub struct Ended<'e> {
    /// How retry exits, as the attempts left it.
    pub exit: Exit,
    /// How the run ended.
    pub result: RunResult,
    /// Why retry gave up (or refused the run), if it did.
    pub gave_up: Option<Why>,
    /// The run, for what an observer needs of it while finishing.
    pub run: &'e dyn Running,
}

impl<'a> Observers<'a> {
    /// No observers yet; `voice` says retry's own errors and warnings.
    pub fn new(voice: impl Voice + 'a) -> Observers<'a> {
        Observers {
            list: Vec::new(),
            voice: Box::new(voice),
        }
    }

    /// retry's voice.
    pub fn voice(&self) -> &dyn Voice {
        &*self.voice
    }

    /// The earliest of the observers' [`Observer::next_tick`].
    pub fn next_tick(&self) -> Option<Instant> {
        self.list.iter().filter_map(|o| o.next_tick()).min()
    }

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
    pub fn finish(&mut self, ended: Ended<'_>) -> Exit {
        let mut end = End {
            exit: ended.exit,
            result: ended.result,
            gave_up: ended.gave_up,
            late_failure: None,
            run: ended.run,
            voice: &*self.voice,
        };
        for observer in &mut self.list {
            observer.finish(&mut end);
        }
        for observer in &mut self.list {
            observer.after(&end);
        }
        end.exit
    }
}
