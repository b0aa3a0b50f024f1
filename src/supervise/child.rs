//! The one child loop: a started process (an attempt or a hook) supervised until it ends.
//! Signals retry receives are passed on to it (a terminal's Ctrl-C that already reached a
//! process sharing retry's group is not sent twice); at its limit (the timeout or the
//! deadline), or when it has been silent for `--idle-timeout`, it is stopped: `--signal`
//! (TERM) to its whole tree, KILL after `--kill-after`, as coreutils `timeout` does
//! (<https://www.gnu.org/software/coreutils/manual/html_node/timeout-invocation.html>).
//! retry's own timer (SIGALRM) stops it as at its timeout.

use std::time::{Duration, Instant};

use super::Supervisor;
use super::stop::{Step, Stopping};
use crate::pipeline::AttemptIo;
use crate::process::{Attempt, Ended, GroupMode, StopReason};
use crate::signals::{self, Event, passed_on};

/// How a supervised process ended.
#[derive(Debug)]
pub(super) struct ChildEnd {
    /// Its own end, as reaped.
    pub ended: Ended,
    /// Why retry stopped it and after how long (since it started), if it did.
    pub stopped_by: Option<(StopReason, Duration)>,
    /// A stop signal retry received meanwhile (or its own timer's).
    pub interrupted: Option<i32>,
    /// How far stopping it had got (for what it left running).
    pub stop: Stopping,
}

impl Supervisor<'_> {
    /// Supervises `child`, started at `started`, until it is reaped: stopped at `limit` for
    /// `reason` (or, with `io`, when silent for `--idle-timeout`), signals passed on.
    pub(super) fn supervise_child(
        &self,
        child: &Attempt,
        started: Instant,
        limit: Option<Instant>,
        reason: StopReason,
        io: Option<&AttemptIo>,
    ) -> ChildEnd {
        let grace = self.config.kill_after;
        let stop_signal = self.config.stop_signal.number();
        let mut stop = Stopping::new(limit, stop_signal);
        let mut stopped_by: Option<(StopReason, Duration)> = None;
        let mut interrupted = None;
        let ended = loop {
            match self.next_event(self.attempt_wake(&stop, io)) {
                Some(Event::Child) => {
                    if let Some(ended) = child.try_reap() {
                        self.events.unwatch_child();
                        break ended;
                    }
                }
                Some(Event::Signal { signal, .. }) if passed_on(signal) => child.forward(signal),
                // retry's timer, as `timeout`'s: the process is stopped as at its timeout (the
                // stop signal to its whole tree, KILL after the grace; 124 or 137), and not
                // retried. Once it is being stopped, the plan stands.
                Some(Event::Signal { signal, .. }) if signal == signals::ALARM => {
                    interrupted = Some(signal);
                    if stopped_by.is_none() {
                        stopped_by = Some((StopReason::Timeout, started.elapsed()));
                        if stop.term_sent {
                            child.stop_tree(stop_signal);
                        } else if let Some(step) = stop.escalate(grace) {
                            child.stop_tree(step.signal());
                        }
                    }
                }
                Some(Event::Signal {
                    signal,
                    from_kernel,
                }) => {
                    interrupted = Some(signal);
                    // A terminal's Ctrl-C or hangup already reached a process that shares
                    // retry's group: passing it on would deliver it twice.
                    if !(from_kernel && child.mode() == GroupMode::Shared) {
                        child.forward(signal);
                        child.forward(crate::signal_names::CONTINUE);
                    }
                    // Whatever the stop signal, a process still running `--kill-after` later
                    // gets KILL: a stop signal ends retry within that bound, even when the
                    // signal missed part of the tree (a shell's INT that came before it forked
                    // its next command) or the process handles it and goes on.
                    stop.term_sent(grace);
                }
                None => {
                    let Some(why) = self.due(&stop, io, reason) else {
                        continue; // Output arrived: not idle after all.
                    };
                    if let Some(step) = stop.escalate(grace) {
                        if let Step::Stop(_) = step {
                            stopped_by = Some((why, started.elapsed()));
                        }
                        child.stop_tree(step.signal());
                    }
                }
            }
        };
        ChildEnd {
            ended,
            stopped_by,
            interrupted,
            stop,
        }
    }
}
