//! Waiting between steps: the interruptible wait before the next attempt (with the countdown
//! on a terminal), and the stop signals that arrived meanwhile.

use std::time::Instant;

use super::Supervisor;
use crate::process;
use crate::signals::{Event, passed_on};

impl Supervisor<'_> {
    /// Waits until `wake` (`None`: forever), reaping strays. A stop signal ends the wait
    /// with `Err(signal)`; USR1, USR2 and the real-time signals have no attempt to go to and
    /// are dropped.
    /// The observers may draw meanwhile (a countdown on a terminal): they are told of each
    /// tick they asked for ([`crate::observe::Observer::next_tick`]) and of the wait's end,
    /// however it ends.
    pub(super) fn wait(&self, wake: Option<Instant>) -> Result<(), i32> {
        let ended = self.wait_counting_down(wake);
        self.emit(&crate::observe::Event::Woke);
        ended
    }

    fn wait_counting_down(&self, wake: Option<Instant>) -> Result<(), i32> {
        loop {
            // Off a terminal there is no countdown: one wait for the whole delay.
            let tick = self.observers.borrow().next_tick();
            let until = match (wake, tick) {
                (Some(wake), Some(tick)) => Some(wake.min(tick)),
                (wake, _) => wake,
            };
            // A delay of 0 is 0, but a signal already queued still counts.
            let Some(event) = self.events.wait(until) else {
                if until != wake {
                    self.emit(&crate::observe::Event::Tick);
                    continue;
                }
                return Ok(());
            };
            match event {
                Event::Child => process::reap_strays(),
                Event::Signal { signal, .. } if passed_on(signal) => {}
                Event::Signal { signal, .. } => return Err(signal),
            }
        }
    }

    /// A stop signal that arrived with the attempt's end but is still queued (a terminal's
    /// Ctrl-C reaches retry and the attempt together): it still means "do not retry".
    pub(super) fn queued_stop_signal(&self) -> Option<i32> {
        while let Some(event) = self.events.try_next() {
            match event {
                Event::Child => process::reap_strays(),
                Event::Signal { signal, .. } if passed_on(signal) => {}
                Event::Signal { signal, .. } => return Some(signal),
            }
        }
        None
    }
}
