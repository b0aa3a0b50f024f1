//! Hooks: the `--on-retry` and `--on-give-up` commands, supervised by the same child loop as
//! attempts ([`Supervisor::supervise_child`]: signals passed on, reaped on SIGCHLD, stopped at
//! the deadline), nothing left running, between attempts.

use std::time::Instant;

use super::{Exit, Supervisor};
use crate::duration::seconds_value;
use crate::env_file::VARIABLE;
use crate::observe::problems::Problem;
use crate::observe::{Event as RunEvent, HookEnd};
use crate::pipeline::{AttemptIo, RunIo};
use crate::process::{self, Ended, StopReason};
use crate::status::{self, KILLED, TIMED_OUT};

impl Supervisor<'_> {
    /// The environment a hook gets on top of retry's own: the attempt that just ended, the
    /// attempts in all (empty when unlimited), the status retry would end with now, the run's
    /// id and the time left until the deadline ([`Supervisor::run_env`]), and for `--on-retry`
    /// the delay before the next attempt in seconds.
    pub(super) fn hook_env(
        &self,
        attempt: u64,
        last: Exit,
        delay: Option<std::time::Duration>,
    ) -> Vec<(&'static str, String)> {
        let mut env = self.run_env(attempt);
        env.push(("RETRY_LAST_STATUS", last.code().to_string()));
        env.extend(self.observers.borrow().hook_env());
        if let Some(d) = delay {
            env.push(("RETRY_DELAY", seconds_value(d)));
        }
        env
    }

    /// Runs hook `name` (`on_retry`, `on_give_up`): `sh -c script` with `env`, until it ends,
    /// and reports how. At `limit` (the deadline, for `--on-retry`) it is stopped like an
    /// attempt: `--signal` (TERM) to its tree, KILL after `--kill-after`, reported as status 124 (137 after
    /// KILL). Whatever it leaves running is stopped when it ends, as for a failed attempt. A
    /// stop signal meanwhile is passed on to the hook, and once the hook has ended it is
    /// returned as `Err(signal)`: retry then ends by it, as it would during a wait.
    pub(super) fn run_hook(
        &self,
        name: &str,
        script: &str,
        env: &[(&str, String)],
        limit: Option<Instant>,
    ) -> Result<HookEnd, i32> {
        // `RETRY_ENV_FILE` and what it handed on (env_file.rs).
        let handed_on = self.env_file_env(false);
        let mut env = env.to_vec();
        env.extend(handed_on.iter().map(|(k, v)| (k.as_str(), v.clone())));
        // A countdown on the terminal is finalised before the hook may write there.
        self.emit(&RunEvent::HookStart(name));
        // With --chronic the hook's output is held with the rest (a capture that cannot be
        // set up leaves it on retry's stderr, as without --chronic).
        let capture = match self.io.map(RunIo::capture).transpose() {
            Ok(capture) => capture.flatten(),
            Err(e) => {
                let error = e.to_string();
                self.emit(&RunEvent::Problem(Problem::HookCapture {
                    hook: name,
                    error: &error,
                }));
                None
            }
        };
        #[cfg(unix)]
        let output = capture
            .as_ref()
            .map(|(write, _)| std::os::fd::AsFd::as_fd(write));
        #[cfg(windows)]
        let output = capture
            .as_ref()
            .map(|(write, _)| std::os::windows::io::AsHandle::as_handle(write));
        let spawned = process::spawn_hook(script, &env, &[VARIABLE], output);
        // The hook holds the pipe's write end now: the capture ends when every writer closed it.
        let capture = capture.map(|(_, io)| io);
        let hook = match spawned {
            Ok(hook) => hook,
            Err(e) => {
                self.end_capture(capture, &mut None);
                let end = HookEnd::Failed(e.to_string());
                self.observers
                    .borrow_mut()
                    .event(&RunEvent::HookEnd { name, end: &end });
                return Ok(end);
            }
        };
        self.events.watch_child(&hook);
        // Supervised as an attempt is, by the one child loop (child.rs).
        let end = self.supervise_child(&hook, Instant::now(), limit, StopReason::Deadline, None);
        let (ended, stopped, killed) = (end.ended, end.stopped_by.is_some(), end.stop.killed);
        let mut interrupted = end.interrupted;
        if let Some(signal) = self.stop_leftovers(&hook, end.stop) {
            interrupted.get_or_insert(signal);
        }
        self.end_capture(capture, &mut interrupted);
        if let Some(signal) = interrupted {
            return Err(signal);
        }
        let end = HookEnd::Status(match ended {
            _ if stopped && killed => KILLED,
            _ if stopped => TIMED_OUT,
            Ended::Exited(c) => u8::try_from(c).unwrap_or(u8::MAX),
            Ended::Signaled(n) => status::of_signal(n),
        });
        self.observers
            .borrow_mut()
            .event(&RunEvent::HookEnd { name, end: &end });
        self.absorb_env_file(&format!("--{}", name.replace('_', "-")));
        Ok(end)
    }

    /// The hook ended (and what it left running was stopped): reads what is left of its
    /// output into the held output, as after an attempt ([`Supervisor::wait_tasks`]).
    fn end_capture(&self, capture: Option<AttemptIo>, interrupted: &mut Option<i32>) {
        if let Some(io) = capture {
            io.stop();
            self.wait_tasks(io.tasks(), interrupted);
            let _ = io.report(0);
        }
    }
}
