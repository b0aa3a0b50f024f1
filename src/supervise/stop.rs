//! Stopping an attempt or hook: the stop-signal-then-KILL escalation, waiting for the next event up
//! to a limit, and stopping what a step leaves behind once its own process has ended.

use std::time::{Duration, Instant};

use super::Supervisor;
use crate::process::{self, Attempt, Left};
use crate::signals::{Event, passed_on};

/// How often what is left of a step is looked for again while it is being stopped: those
/// processes need not be retry's children, so their end sends retry no SIGCHLD.
const LEFTOVER_POLL: Duration = Duration::from_millis(20);

/// What a [`Stopping`] does when its time comes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// The stop signal (`--signal`, TERM by default; 0 for none) goes to the whole tree.
    Stop(i32),
    /// KILL goes to the whole tree.
    Kill,
}

impl Step {
    /// The signal number to send (0: none).
    pub(super) fn signal(self) -> i32 {
        match self {
            Step::Stop(signal) => signal,
            Step::Kill => crate::signal_names::KILL,
        }
    }
}

/// The stop-signal-then-KILL escalation of one attempt or hook.
#[derive(Debug)]
pub(super) struct Stopping {
    /// When to act next: the limit (send the stop signal) or the end of the grace (send
    /// KILL); `None`: nothing planned.
    next: Option<Instant>,
    /// The stop signal has reached the step (sent at its limit) or TERM has (passed on).
    pub(super) term_sent: bool,
    /// That signal went to the whole tree (at the limit), not only to the step's process group
    /// or process (passed on).
    tree_termed: bool,
    /// KILL was sent (or was the stop signal).
    pub(super) killed: bool,
    /// The signal sent at the limit: `--signal` (TERM by default; 0 for none).
    signal: i32,
}

impl Stopping {
    /// An escalation that sends `signal` at `limit` (`None`: never of itself), then KILL after
    /// the grace.
    pub(super) fn new(limit: Option<Instant>, signal: i32) -> Stopping {
        Stopping {
            next: limit,
            term_sent: false,
            tree_termed: false,
            killed: false,
            signal,
        }
    }

    /// An escalation that has sent KILL already.
    pub(super) fn killed() -> Stopping {
        Stopping {
            next: None,
            term_sent: true,
            tree_termed: true,
            killed: true,
            signal: crate::signal_names::KILL,
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

    /// The wake time came: what to send to the step's whole tree now. The stop signal first
    /// (and when it is KILL, nothing after it), then KILL once `grace` has passed since.
    pub(super) fn escalate(&mut self, grace: Duration) -> Option<Step> {
        if !self.term_sent {
            self.term_sent(grace);
            self.tree_termed = true;
            if self.signal == crate::signal_names::KILL {
                self.killed = true;
                self.next = None;
            }
            Some(Step::Stop(self.signal))
        } else if !self.killed {
            self.killed = true;
            self.next = None;
            Some(Step::Kill)
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
    /// Returns a stop signal ([`crate::signals::STOP_SIGNALS`]) that arrived meanwhile; it is
    /// passed on (ALRM, retry's timer, is not: they are being stopped already).
    pub(super) fn stop_leftovers(&self, step: &Attempt, stop: Stopping) -> Option<i32> {
        self.stop_leftovers_counted(step, stop).1
    }

    /// [`Supervisor::stop_leftovers`], also returning what was left running when retry sent
    /// it TERM ([`Left::Nothing`] when nothing was, or `stop` had TERMed the tree already).
    pub(super) fn stop_leftovers_counted(
        &self,
        step: &Attempt,
        mut stop: Stopping,
    ) -> (Left, Option<i32>) {
        if !step.rest_alive() {
            return (Left::Nothing, None);
        }
        let grace = self.config.kill_after;
        let mut left = Left::Nothing;
        if !stop.tree_termed {
            // A TERM passed on reached the step's group or process, not those that left it.
            stop.term_sent(grace);
            stop.tree_termed = true;
            left = step.signal_rest(crate::signal_names::TERMINATE);
            step.signal_rest(crate::signal_names::CONTINUE);
        }
        let mut interrupted = None;
        loop {
            if stop.wake().is_some_and(|t| t <= Instant::now())
                && let Some(next) = stop.escalate(grace)
            {
                step.signal_rest(next.signal());
            } else if stop.killed {
                // Anything forked since the last KILL.
                step.signal_rest(crate::signal_names::KILL);
            }
            if !step.rest_alive() {
                return (left, interrupted);
            }
            let poll = Instant::now() + LEFTOVER_POLL;
            let wake = stop.wake().map_or(poll, |t| t.min(poll));
            match self.next_event(Some(wake)) {
                Some(Event::Child) | None => process::reap_strays(),
                Some(Event::Signal { signal, .. }) if passed_on(signal) => {}
                // ALRM, retry's timer: what is left is being stopped already.
                Some(Event::Signal { signal, .. }) if signal == crate::signals::ALARM => {
                    interrupted.get_or_insert(signal);
                }
                Some(Event::Signal { signal, .. }) => {
                    interrupted.get_or_insert(signal);
                    step.signal_rest(signal);
                    step.signal_rest(crate::signal_names::CONTINUE);
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
        let mut stop = Stopping::new(Some(now), crate::signal_names::TERMINATE);
        assert_eq!(stop.wake(), Some(now));
        assert_eq!(
            stop.escalate(Duration::from_secs(5)),
            Some(Step::Stop(crate::signal_names::TERMINATE))
        );
        assert!(
            stop.wake()
                .is_some_and(|t| t >= now + Duration::from_secs(5))
        );
        assert_eq!(stop.escalate(Duration::from_secs(5)), Some(Step::Kill));
        assert!(stop.killed);
        assert_eq!(stop.wake(), None);
        assert_eq!(stop.escalate(Duration::from_secs(5)), None);
    }

    #[test]
    fn the_stop_signal_is_sent_first_and_kill_needs_nothing_after_it() {
        let mut stop = Stopping::new(Some(Instant::now()), crate::signal_names::INTERRUPT);
        assert_eq!(stop.escalate(Duration::from_secs(1)), Some(Step::Stop(2)));
        assert_eq!(stop.escalate(Duration::from_secs(1)), Some(Step::Kill));
        let mut none = Stopping::new(Some(Instant::now()), 0);
        assert_eq!(none.escalate(Duration::from_secs(1)), Some(Step::Stop(0)));
        assert!(none.wake().is_some(), "KILL still follows -s 0");
        let mut kill = Stopping::new(Some(Instant::now()), crate::signal_names::KILL);
        assert_eq!(kill.escalate(Duration::from_secs(1)), Some(Step::Stop(9)));
        assert!(kill.killed);
        assert_eq!(kill.wake(), None);
        assert_eq!(Step::Kill.signal(), crate::signal_names::KILL);
    }

    #[test]
    fn a_zero_grace_never_kills() {
        let mut stop = Stopping::new(Some(Instant::now()), crate::signal_names::TERMINATE);
        assert_eq!(
            stop.escalate(Duration::ZERO),
            Some(Step::Stop(crate::signal_names::TERMINATE))
        );
        assert_eq!(stop.wake(), None, "nothing more is planned: no KILL");
        let mut passed_on = Stopping::new(None, crate::signal_names::TERMINATE);
        passed_on.term_sent(Duration::ZERO);
        assert!(passed_on.term_sent);
        assert_eq!(passed_on.wake(), None);
    }
}
