//! Stopping an attempt or hook: the TERM-then-KILL escalation, waiting for the next event up
//! to a limit, and stopping what a step leaves behind once its own process has ended.

use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use super::Supervisor;
use crate::process::{self, Attempt};
use crate::signals::{Event, PASS_ON_SIGNALS};

/// How often what is left of a step is looked for again while it is being stopped: those
/// processes need not be retry's children, so their end sends retry no SIGCHLD.
const LEFTOVER_POLL: Duration = Duration::from_millis(20);

/// The TERM-then-KILL escalation of one attempt or hook.
#[derive(Debug)]
pub(super) struct Stopping {
    /// When to act next: the limit (send TERM) or the end of the grace (send KILL); `None`:
    /// nothing planned.
    next: Option<Instant>,
    /// TERM has reached the step (sent at its limit or passed on from a signal).
    pub(super) term_sent: bool,
    /// That TERM went to the whole tree (at the limit), not only to the step's process group
    /// or process (passed on).
    tree_termed: bool,
    /// KILL was sent.
    pub(super) killed: bool,
}

impl Stopping {
    /// An escalation that sends TERM at `limit` (`None`: never of itself).
    pub(super) fn new(limit: Option<Instant>) -> Stopping {
        Stopping {
            next: limit,
            term_sent: false,
            tree_termed: false,
            killed: false,
        }
    }

    /// An escalation that has sent KILL already.
    pub(super) fn killed() -> Stopping {
        Stopping {
            next: None,
            term_sent: true,
            tree_termed: true,
            killed: true,
        }
    }

    /// When to act next.
    pub(super) fn wake(&self) -> Option<Instant> {
        self.next
    }

    /// TERM reached the step some other way (passed on): KILL after `grace`, or never when
    /// `grace` is zero (`--kill-after 0`, as coreutils `timeout -k 0`).
    pub(super) fn term_sent(&mut self, grace: Duration) {
        if !self.term_sent {
            self.term_sent = true;
            self.next = if grace.is_zero() {
                None
            } else {
                Instant::now().checked_add(grace)
            };
        }
    }

    /// The wake time came: the signal to send to the step's whole tree now.
    pub(super) fn escalate(&mut self, grace: Duration) -> Option<Signal> {
        if !self.term_sent {
            self.term_sent(grace);
            self.tree_termed = true;
            Some(Signal::SIGTERM)
        } else if !self.killed {
            self.killed = true;
            self.next = None;
            Some(Signal::SIGKILL)
        } else {
            self.next = None;
            None
        }
    }
}

impl Supervisor<'_> {
    /// The next event, waiting at most until `wake` (`None`: without limit). `None` when
    /// `wake` came first.
    pub(super) fn next_event(&self, wake: Option<Instant>) -> Option<Event> {
        self.events.wait(wake)
    }

    /// Stops what is left of `step` (an attempt that did not succeed, or a hook) after its own
    /// process was reaped: background processes, processes that moved to another process group
    /// or session. They get TERM and CONT, unless `stop` already sent TERM to the whole tree,
    /// then KILL when `stop`'s grace (`--kill-after`, counted from its first TERM) ends, and
    /// retry waits until none is left.
    /// Returns a stop signal (INT, TERM, HUP, QUIT) that arrived meanwhile; it is passed on.
    pub(super) fn stop_leftovers(&self, step: &Attempt, mut stop: Stopping) -> Option<i32> {
        if !step.rest_alive() {
            return None;
        }
        let grace = self.config.kill_after;
        if !stop.tree_termed {
            // A TERM passed on reached the step's group or process, not those that left it.
            stop.term_sent(grace);
            stop.tree_termed = true;
            step.signal_rest(Signal::SIGTERM);
            step.signal_rest(Signal::SIGCONT);
        }
        let mut interrupted = None;
        loop {
            if stop.wake().is_some_and(|t| t <= Instant::now())
                && let Some(signal) = stop.escalate(grace)
            {
                step.signal_rest(signal);
            } else if stop.killed {
                // Anything forked since the last KILL.
                step.signal_rest(Signal::SIGKILL);
            }
            if !step.rest_alive() {
                return interrupted;
            }
            let poll = Instant::now() + LEFTOVER_POLL;
            let wake = stop.wake().map_or(poll, |t| t.min(poll));
            match self.next_event(Some(wake)) {
                Some(Event::Child) | None => process::reap_strays(),
                Some(Event::Signal { signal, .. }) if PASS_ON_SIGNALS.contains(&signal) => {}
                Some(Event::Signal { signal, .. }) => {
                    interrupted.get_or_insert(signal);
                    if let Ok(signal) = Signal::try_from(signal) {
                        step.signal_rest(signal);
                        step.signal_rest(Signal::SIGCONT);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn term_then_kill_after_the_grace() {
        let now = Instant::now();
        let mut stop = Stopping::new(Some(now));
        assert_eq!(stop.wake(), Some(now));
        assert_eq!(stop.escalate(Duration::from_secs(5)), Some(Signal::SIGTERM));
        assert!(
            stop.wake()
                .is_some_and(|t| t >= now + Duration::from_secs(5))
        );
        assert_eq!(stop.escalate(Duration::from_secs(5)), Some(Signal::SIGKILL));
        assert!(stop.killed);
        assert_eq!(stop.wake(), None);
        assert_eq!(stop.escalate(Duration::from_secs(5)), None);
    }

    #[test]
    fn a_zero_grace_never_kills() {
        let mut stop = Stopping::new(Some(Instant::now()));
        assert_eq!(stop.escalate(Duration::ZERO), Some(Signal::SIGTERM));
        assert_eq!(stop.wake(), None, "nothing more is planned: no KILL");
        let mut passed_on = Stopping::new(None);
        passed_on.term_sent(Duration::ZERO);
        assert!(passed_on.term_sent);
        assert_eq!(passed_on.wake(), None);
    }
}
