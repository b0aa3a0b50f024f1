//! The supervisor loop: run an attempt, decide, wait (interruptibly), report, and end with the
//! right status. Knows the validated [`Config`], never the command line.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

use crate::codes::Verdict;
use crate::config::Config;
use crate::process::{self, Ended, GroupMode, Outcome, StopReason};
use crate::report::Reporter;
use crate::signals::{self, Event, PASS_ON_SIGNALS};
use crate::status::Exit;

/// Runs the command under `config` until it succeeds, the retries are used up, the deadline
/// passes, or a signal stops it; returns how retry must end.
pub fn run(config: &Config) -> Exit {
    let start = Instant::now();
    let events = match signals::listen() {
        Ok(rx) => rx,
        Err(e) => {
            eprintln!("retry: cannot install signal handlers: {e}");
            return Exit::Usage;
        }
    };
    process::become_subreaper();
    let seed = config.seed.unwrap_or_else(rand::random);
    let reporter = Reporter::new(config.verbosity, &config.command, config.max_attempts());
    reporter.policy(&config.policy, seed);
    Supervisor {
        config,
        events,
        mode: GroupMode::detect(),
        reporter,
        deadline: config.deadline.and_then(|d| start.checked_add(d)),
    }
    .run(seed)
}

struct Supervisor<'a> {
    config: &'a Config,
    events: Receiver<Event>,
    mode: GroupMode,
    reporter: Reporter,
    /// `--deadline` as an instant; `None` when absent or beyond what the clock can hold.
    deadline: Option<Instant>,
}

/// The end of one attempt.
struct AttemptEnd {
    outcome: Outcome,
    ran: Duration,
    /// A stop signal (INT, TERM, HUP, QUIT) retry received while the attempt ran.
    interrupted: Option<i32>,
}

impl Supervisor<'_> {
    fn run(&self, seed: u64) -> Exit {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut schedule = self.config.policy.schedule();
        let max_attempts = self.config.max_attempts();
        let mut attempt: u64 = 1;
        loop {
            let end = self.run_attempt(attempt);
            let status = end.outcome.status();
            if let Some(signal) = end.interrupted {
                if status != 0 {
                    self.reporter.failed(attempt, &end.outcome, end.ran, None);
                    self.reporter.interrupted(signal);
                }
                return exit_for(&end.outcome);
            }
            if let Outcome::LaunchFailed { message, .. } = &end.outcome {
                self.reporter.launch_failed(message);
                return exit_for(&end.outcome);
            }
            let verdict = self.config.conditions.verdict(status);
            if verdict == Verdict::Success {
                return Exit::Code(0);
            }
            let give_up = if verdict == Verdict::Stop {
                Some(format!("status {status} is not retried"))
            } else if max_attempts.is_some_and(|m| attempt >= m) {
                Some("no retries left".to_string())
            } else if self.deadline.is_some_and(|d| Instant::now() >= d) {
                Some("the deadline has passed".to_string())
            } else {
                None
            };
            if let Some(why) = give_up {
                self.reporter.failed(attempt, &end.outcome, end.ran, None);
                self.reporter.giving_up(attempt, &why);
                return exit_for(&end.outcome);
            }
            let delay = schedule.next_delay(&mut rng);
            let wake = Instant::now().checked_add(delay);
            if let Some(deadline) = self.deadline
                && wake.is_none_or(|w| w >= deadline)
            {
                self.reporter.failed(attempt, &end.outcome, end.ran, None);
                self.reporter.giving_up(
                    attempt,
                    &format!(
                        "the next delay ({}) would end at or past the deadline",
                        crate::duration::format_secs(delay)
                    ),
                );
                return exit_for(&end.outcome);
            }
            self.reporter
                .failed(attempt, &end.outcome, end.ran, Some(delay));
            if let Err(signal) = self.wait(wake) {
                process::die_by_signal(signal);
                return Exit::Signal(signal);
            }
            attempt += 1;
        }
    }

    /// Waits until `wake` (`None`: forever), reaping strays. A stop signal ends the wait
    /// with `Err(signal)`; USR1 and USR2 have no attempt to go to and are dropped.
    fn wait(&self, wake: Option<Instant>) -> Result<(), i32> {
        loop {
            let event = match wake {
                Some(t) => {
                    let left = t.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        // A delay of 0 is 0, but a signal already queued still counts.
                        match self.events.try_recv() {
                            Ok(e) => e,
                            Err(_) => return Ok(()),
                        }
                    } else {
                        match self.events.recv_timeout(left) {
                            Ok(e) => e,
                            Err(RecvTimeoutError::Timeout) => return Ok(()),
                            Err(RecvTimeoutError::Disconnected) => {
                                std::thread::sleep(left);
                                return Ok(());
                            }
                        }
                    }
                }
                None => match self.events.recv() {
                    Ok(e) => e,
                    Err(_) => return Ok(()),
                },
            };
            match event {
                Event::Child => process::reap_strays(),
                Event::Signal { signal, .. } if PASS_ON_SIGNALS.contains(&signal) => {}
                Event::Signal { signal, .. } => return Err(signal),
            }
        }
    }

    /// Runs attempt number `attempt` (from 1) to its end, enforcing the timeout and deadline
    /// and passing signals on.
    fn run_attempt(&self, attempt: u64) -> AttemptEnd {
        self.reporter.starting(attempt);
        let max = self
            .config
            .max_attempts()
            .map(|m| m.to_string())
            .unwrap_or_default();
        let env = [
            ("RETRY_ATTEMPT", attempt.to_string()),
            ("RETRY_MAX_ATTEMPTS", max),
        ];
        let started = Instant::now();
        let child = match process::spawn(&self.config.command, &env, self.mode) {
            Ok(child) => child,
            Err(e) => {
                return AttemptEnd {
                    outcome: Outcome::launch_failed(&e),
                    ran: started.elapsed(),
                    interrupted: None,
                };
            }
        };
        let timeout_at = self.config.timeout.and_then(|t| started.checked_add(t));
        // The earlier of the timeout and the deadline stops the attempt.
        let (limit, reason) = match (timeout_at, self.deadline) {
            (Some(t), Some(d)) if d < t => (Some(d), StopReason::Deadline),
            (Some(t), _) => (Some(t), StopReason::Timeout),
            (None, Some(d)) => (Some(d), StopReason::Deadline),
            (None, None) => (None, StopReason::Timeout),
        };
        let mut stop = Stopping::new(limit);
        let mut stopped_by: Option<StopReason> = None;
        let mut interrupted = None;
        let ended = loop {
            let event = match stop.wake() {
                Some(t) => {
                    match self
                        .events
                        .recv_timeout(t.saturating_duration_since(Instant::now()))
                    {
                        Ok(e) => Some(e),
                        Err(RecvTimeoutError::Timeout) => None,
                        Err(RecvTimeoutError::Disconnected) => Some(Event::Child),
                    }
                }
                None => Some(self.events.recv().unwrap_or(Event::Child)),
            };
            match event {
                Some(Event::Child) => {
                    if let Some(ended) = child.try_reap() {
                        break ended;
                    }
                }
                Some(Event::Signal { signal, .. }) if PASS_ON_SIGNALS.contains(&signal) => {
                    child.forward(signal);
                }
                Some(Event::Signal {
                    signal,
                    from_kernel,
                }) => {
                    interrupted = Some(signal);
                    // A terminal's Ctrl-C or hangup already reached an attempt that shares
                    // retry's group: passing it on would deliver it twice.
                    if !(from_kernel && self.mode == GroupMode::Shared) {
                        child.forward(signal);
                        child.forward(libc::SIGCONT);
                    }
                    if signal == libc::SIGTERM {
                        stop.term_sent(self.config.kill_after);
                    }
                }
                None => {
                    if let Some(signal) = stop.escalate(self.config.kill_after) {
                        if signal == Signal::SIGTERM {
                            stopped_by = Some(reason);
                        }
                        child.signal_tree(signal);
                        child.signal_tree(Signal::SIGCONT);
                    }
                }
            }
        };
        let ran = started.elapsed();
        if stopped_by.is_some() || interrupted.is_some() {
            child.kill_leftovers();
        }
        let outcome = match (stopped_by, ended) {
            (Some(reason), _) => Outcome::Stopped {
                reason,
                killed: stop.killed,
            },
            (None, Ended::Exited(c)) => Outcome::Exited(c),
            (None, Ended::Signaled(n)) => Outcome::Signaled(n),
        };
        AttemptEnd {
            outcome,
            ran,
            interrupted: interrupted.or_else(|| self.queued_stop_signal()),
        }
    }

    /// A stop signal that arrived with the attempt's end but is still queued (a terminal's
    /// Ctrl-C reaches retry and the attempt together): it still means "do not retry".
    fn queued_stop_signal(&self) -> Option<i32> {
        while let Ok(event) = self.events.try_recv() {
            match event {
                Event::Child => process::reap_strays(),
                Event::Signal { signal, .. } if PASS_ON_SIGNALS.contains(&signal) => {}
                Event::Signal { signal, .. } => return Some(signal),
            }
        }
        None
    }
}

/// The TERM-then-KILL escalation of one attempt.
struct Stopping {
    /// When to act next: the limit (send TERM) or the end of the grace (send KILL).
    next: Option<Instant>,
    term_sent: bool,
    killed: bool,
}

impl Stopping {
    fn new(limit: Option<Instant>) -> Stopping {
        Stopping {
            next: limit,
            term_sent: false,
            killed: false,
        }
    }

    fn wake(&self) -> Option<Instant> {
        self.next
    }

    /// TERM reached the attempt some other way (forwarded): KILL after `grace`.
    fn term_sent(&mut self, grace: Duration) {
        if !self.term_sent {
            self.term_sent = true;
            self.next = Instant::now().checked_add(grace);
        }
    }

    /// The wake time came: the signal to send to the attempt's tree now.
    fn escalate(&mut self, grace: Duration) -> Option<Signal> {
        if !self.term_sent {
            self.term_sent(grace);
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

/// How retry ends after this outcome: the same status, or the same signal.
fn exit_for(outcome: &Outcome) -> Exit {
    match outcome {
        Outcome::Signaled(n) => Exit::Signal(*n),
        other => Exit::Code(other.status()),
    }
}
