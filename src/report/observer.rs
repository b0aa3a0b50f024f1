//! The reporter as an observer of the run ([`crate::observe`]): the lines and JSON events of
//! each attempt's start and end, a failure and the wait after it, a hook's end, the closing
//! line, and a stop signal. What only the reporter says (the budget, the lock, a streak, a
//! reset) it is told directly, as the run's voice.

use super::{Reporter, Wait};
use crate::observe::{Event, Observer};

impl Observer for &Reporter {
    fn event(&mut self, event: &Event<'_>) {
        match *event {
            Event::Launch(attempt) => self.attempt_start(attempt),
            Event::AttemptEnd(a) => self.attempt_end(&a),
            Event::Failed(a) => self.failed(&a, None),
            Event::Wait {
                after: a,
                delay,
                hint,
                ..
            } => self.failed(&a, Some(Wait { delay, hint })),
            Event::HookEnd { name, end } => self.hook(name, end),
            Event::GaveUp {
                attempts,
                why,
                status,
                closing,
            } => self.giving_up(attempts, why, status, closing),
            Event::Succeeded { attempts, closing } => self.success(attempts, closing),
            Event::Stopped(signal) => self.interrupted(signal),
            Event::AttemptStart { .. } | Event::Spawned(_) | Event::OutputSettled => {}
        }
    }
}
