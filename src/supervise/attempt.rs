//! One attempt, from its start to its end: the events around it (its CI fold opens before
//! anything is said of it), its environment, its process started and supervised by the one
//! child loop ([`Supervisor::supervise_child`]) with its pipeline I/O, and what it came to.

use std::time::{Duration, Instant};

use super::Supervisor;
use super::stop::Stopping;
use crate::env_file::VARIABLE;
use crate::observe::problems::Problem;
use crate::observe::{Attempted, Event};
use crate::pipeline::{AttemptReport, RunIo};
use crate::process::{self, Attempt, Ended, GroupMode, LaunchError, Left, Outcome, StopReason};
use crate::status::Exit;
use crate::transient::Classes;

/// The end of one attempt.
pub(super) struct AttemptEnd {
    pub(super) outcome: Outcome,
    pub(super) ran: Duration,
    /// A stop signal ([`crate::signals::STOP_SIGNALS`]) retry received while the attempt ran.
    pub(super) interrupted: Option<i32>,
    /// What its piped I/O came to (empty without pipeline flags).
    pub(super) io: AttemptReport,
    /// The attempt's reaped process, for stopping what is left of its tree, and how far
    /// stopping it had got; `None` when it could not be started.
    pub(super) leftovers: Option<(Attempt, Stopping)>,
    /// What it left running that retry stopped after it ended.
    pub(super) left_running: Left,
    /// With `--transient`, the classes of transient failure it is known by; `None` without.
    pub(super) transient: Option<Classes>,
}

impl AttemptEnd {
    /// This end as the events carry it: attempt `attempt`, `output_failed` when it exited 0
    /// but its output matched `--retry-if-output`.
    pub(super) fn attempted(&self, attempt: u64, output_failed: bool) -> Attempted<'_> {
        Attempted {
            attempt,
            outcome: &self.outcome,
            ran: self.ran,
            output_failed,
            http_status: self.io.findings.http_code(),
            left_running: self.left_running,
            transient: self.transient,
        }
    }
}

impl Supervisor<'_> {
    /// Runs attempt number `attempt` (from 1) to its end, enforcing the timeout and deadline
    /// and passing signals on; `last` when it is known to be the run's last. `Err` only when
    /// retry itself fails (its I/O threads cannot start; the attempt is then stopped and
    /// reaped first), or a stop signal came before it started.
    pub(super) fn run_attempt(&self, attempt: u64, last: bool) -> Result<AttemptEnd, Exit> {
        // Its CI fold opens before anything is said of it (and nothing of retry's is left
        // drawn in place when the attempt may write).
        self.emit(&Event::AttemptStart { attempt, last });
        // A stop signal that arrived before the attempt (during the splay, a wait on the
        // budget store, a slow write, the fold's own) ends the run here: no attempt starts
        // after it.
        if let Some(signal) = self.queued_stop_signal() {
            return Err(self.interrupted_by(signal));
        }
        self.emit(&Event::Launch(attempt));
        self.launched.set(self.launched.get() + 1);
        let mut env = self.run_env(attempt);
        let handed_on = self.env_file_env(attempt == 1);
        env.extend(handed_on.iter().map(|(k, v)| (k.as_str(), v.clone())));
        env.extend(self.observers.borrow_mut().attempt_env(attempt));
        let started = Instant::now();
        let piped = self.io.map(RunIo::piped).unwrap_or_default();
        // Decided for each attempt: `retry ... &` then `fg` puts retry in the foreground.
        let mode = GroupMode::detect();
        let spawned = match process::spawn(&self.config.command, &env, &[VARIABLE], mode, piped) {
            Ok(spawned) => spawned,
            Err(LaunchError::Own(e)) => {
                let error = e.to_string();
                self.emit(&Event::Problem(Problem::AttemptStart {
                    attempt,
                    error: &error,
                }));
                return Err(Exit::OwnFailure);
            }
            Err(LaunchError::Command(e)) => {
                return Ok(AttemptEnd {
                    outcome: Outcome::launch_failed(&e),
                    ran: started.elapsed(),
                    interrupted: None,
                    io: AttemptReport::default(),
                    leftovers: None,
                    left_running: Left::Nothing,
                    transient: None,
                });
            }
        };
        let child = spawned.attempt;
        self.events.watch_child(&child);
        self.emit(&Event::Spawned(child.pid()));
        let attempt_io = match self
            .io
            .map(|io| io.start(spawned.stdin, spawned.stdout, spawned.stderr))
        {
            Some(Err(e)) => {
                // Without its I/O threads the attempt cannot run as asked: stop it, reap it.
                let error = e.to_string();
                self.emit(&Event::Problem(Problem::PipelineStart(&error)));
                child.signal_tree(crate::signal_names::KILL);
                while child.try_reap().is_none() {
                    let _ = self.events.wait(None);
                }
                self.events.unwatch_child();
                self.stop_leftovers(&child, Stopping::killed());
                return Err(Exit::OwnFailure);
            }
            Some(Ok(io)) => Some(io),
            None => None,
        };
        let timeout_at = self.config.timeout.and_then(|t| started.checked_add(t));
        // The earlier of the timeout and the deadline stops the attempt.
        let (limit, reason) = match (timeout_at, self.deadline_at()) {
            (Some(t), Some(d)) if d < t => (Some(d), StopReason::Deadline),
            (Some(t), _) => (Some(t), StopReason::Timeout),
            (None, Some(d)) => (Some(d), StopReason::Deadline),
            (None, None) => (None, StopReason::Timeout),
        };
        let end = self.supervise_child(&child, started, limit, reason, attempt_io.as_ref());
        let ran = started.elapsed();
        let mut interrupted = end.interrupted;
        // What is left in the pipes; a stop signal meanwhile still counts. Only an attempt that
        // may have succeeded keeps its pipes open for what its leftovers still write (io.rs).
        let exited_0 = end.stopped_by.is_none() && end.ended == Ended::Exited(0);
        let io = self.finish_io(attempt_io, attempt, &mut interrupted, exited_0);
        let outcome = match (end.stopped_by, end.ended) {
            (Some((reason, after)), ended) => Outcome::Stopped {
                reason,
                killed: end.stop.killed,
                after,
                ended,
            },
            (None, Ended::Exited(c)) => Outcome::Exited(c),
            (None, Ended::Signaled(n)) => Outcome::Signaled(n),
        };
        Ok(AttemptEnd {
            outcome,
            ran,
            interrupted: interrupted.or_else(|| self.queued_stop_signal()),
            io,
            leftovers: Some((child, end.stop)),
            left_running: Left::Nothing,
            transient: None,
        })
    }
}
