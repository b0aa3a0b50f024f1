//! The supervisor's side of pipeline I/O: waiting for an attempt's I/O threads without going
//! deaf to signals, releasing a held stdout, passing on what a successful attempt's leftovers
//! still write, and ending the run when input or output could not be passed on whole.
//!
//! A successful attempt keeps what it started; what those processes write to the attempt's
//! stdout and stderr after it ended is passed on until every writer has closed them, as
//! `cmd | cat` does, by the relay ([`crate::process::relay`]), a process of its own that
//! outlives retry: retry ends when the attempt does, once its output and a held stdout are
//! written, as it would without pipeline flags. Only if the relay cannot start does retry pass
//! it on itself and end only then (a stop signal still ends it after at most [`IO_GRACE`]).
//! After any other attempt the pipes are closed as soon as they are drained.
//!
//! The rule for an I/O fault (a write error other than a vanished reader, a hold or a stdin
//! recording that failed): retry stops retrying, says why in one line, and ends with the
//! attempt's own failure status, or with 125 when the attempt succeeded (its output did not
//! arrive whole) or was given a truncated stdin (its status cannot be trusted).

use std::time::{Duration, Instant};

use super::decide::Unsettled;
use super::{AttemptEnd, Supervisor, exit_for};
use crate::observe::Event as RunEvent;
use crate::observe::problems::Problem;
use crate::pipeline::{AttemptIo, AttemptReport, Rest, Tasks};
use crate::process;
use crate::signals::{Event, passed_on};
use crate::status::Exit;

/// After a stop signal, how long at most retry still waits for an attempt's I/O (what is left
/// in its pipes, a held stdout) before leaving it behind; for threads that only write to its
/// stdout and stderr, only while those take bytes: a reader that does not read must not keep
/// retry from stopping at once.
pub(super) const IO_GRACE: Duration = Duration::from_millis(500);

/// How often, during [`IO_GRACE`], retry looks again whether its outputs still take bytes.
const GRACE_STEP: Duration = Duration::from_millis(10);

impl Supervisor<'_> {
    /// The attempt ended (`exited_0`: its process exited with status 0 by itself): lets its
    /// I/O threads finish (see [`Supervisor::wait_tasks`]) and reports what they came to. The
    /// pipes its leftovers still hold are kept ([`AttemptReport::rest`]) only when it may have
    /// succeeded: exit status 0, no `--retry-if-output` match, no stop signal. Any other
    /// attempt's are closed here, before what it left running is stopped, so that a writer
    /// among them meets a broken pipe rather than a full one.
    pub(super) fn finish_io(
        &self,
        io: Option<AttemptIo>,
        attempt: u64,
        interrupted: &mut Option<i32>,
        exited_0: bool,
    ) -> AttemptReport {
        let Some(io) = io else {
            return AttemptReport::default();
        };
        io.stop();
        self.wait_tasks(io.tasks(), interrupted);
        let mut report = io.report(attempt);
        if !exited_0 || report.findings.retry_match || interrupted.is_some() {
            report.rest = Rest::default();
        }
        report
    }

    /// Waits for `tasks` to end, still hearing signals: a stop signal is noted in
    /// `interrupted`, and from then on the wait lasts at most [`IO_GRACE`] (for threads that
    /// write to retry's stdout and stderr, only while those take bytes: a full pipe nobody
    /// reads ends it at once).
    /// Returns whether they all ended.
    pub(super) fn wait_tasks(&self, tasks: &Tasks, interrupted: &mut Option<i32>) -> bool {
        loop {
            if tasks.done() {
                return true;
            }
            // A stop signal read before (that ended the run) counts as one that comes now.
            if interrupted.is_some() || crate::signals::stop_arrived() {
                if interrupted.is_none() {
                    *interrupted = self.queued_stop_signal();
                }
                return grace(tasks);
            }
            // The threads wake this channel when they end (a SIGCHLD to retry).
            match self.events.wait(None) {
                Some(Event::Child) | None => process::reap_strays(),
                Some(Event::Signal { signal, .. }) if passed_on(signal) => {}
                Some(Event::Signal { signal, .. }) => *interrupted = Some(signal),
            }
        }
    }

    /// After an attempt: releases its held stdout (to stdout when it succeeded, else to
    /// stderr) and, after a success, hands what its leftovers still write to the relay (see the
    /// module doc); then applies the module's rule to what its I/O came to.
    /// `Some` when what its output came to ends the run ([`super::decide::after_output`] says how):
    /// a vanished stdout reader, a stop signal that cut the output short, or an I/O fault
    /// (said here, with the attempt's failure).
    pub(super) fn settle_io(
        &self,
        attempt: u64,
        end: &mut AttemptEnd,
        succeeded: bool,
        output_failed: bool,
    ) -> Option<Unsettled> {
        let io = self.io?;
        let faults = std::mem::take(&mut end.io.faults);
        let cut = end.io.abandoned;
        let reader_gone = end.io.stdout_closed;
        let held = end.io.held.take().filter(|_| !reader_gone);
        // Dropping the pipes closes them: after a stop signal, a fault or with the reader of
        // stdout gone (the run ends by SIGPIPE), nobody waits for the leftovers' output.
        let rest = std::mem::take(&mut end.io.rest);
        let wait_for_rest =
            succeeded && end.interrupted.is_none() && faults.is_empty() && !cut && !reader_gone;
        let rest = if wait_for_rest { rest } else { Rest::default() };
        let mut state = Settling {
            faults,
            cut,
            reader_gone,
        };
        if held.is_some() {
            self.release(
                io,
                attempt,
                end,
                succeeded,
                held,
                Rest::default(),
                &mut state,
            );
        }
        if !rest.is_empty() && state.clean() && end.interrupted.is_none() {
            let failure = |message: &str| self.observers.borrow().voice().error_line(message);
            if let Err(e) = io.relay(&rest, attempt, failure) {
                let error = e.to_string();
                self.emit(&RunEvent::Problem(Problem::RelayStart {
                    attempt,
                    error: &error,
                }));
                self.release(io, attempt, end, succeeded, None, rest, &mut state);
            }
            // Otherwise the relay has its own copies of the pipes; retry's close here.
        }
        let Settling {
            faults,
            cut,
            reader_gone,
        } = state;
        if reader_gone {
            return Some(Unsettled::ReaderGone);
        }
        if let (true, Some(signal)) = (cut, end.interrupted) {
            if !succeeded {
                self.emit(&RunEvent::Failed(end.attempted(attempt, output_failed)));
            }
            self.emit(&RunEvent::Problem(Problem::OutputCut { signal, attempt }));
            return Some(Unsettled::Cut { signal });
        }
        if faults.is_empty() {
            return None;
        }
        let exit = if succeeded || end.io.stdin_truncated {
            Exit::OwnFailure
        } else {
            exit_for(
                &end.outcome,
                output_failed,
                self.config.rules.preserve_status,
            )
        };
        for fault in &faults {
            self.emit(&RunEvent::Problem(Problem::OutputLost(fault)));
        }
        if !succeeded {
            self.emit(&RunEvent::Failed(end.attempted(attempt, output_failed)));
        }
        Some(Unsettled::Lost {
            exit,
            interrupted: end.interrupted,
        })
    }

    /// Writes the held stdout `held` (to stdout when the attempt succeeded, else to stderr) and
    /// passes on what comes through the pipes in `rest` (only after a success), in threads
    /// waited for as [`Supervisor::wait_tasks`] does; notes in `state` what went wrong.
    #[allow(clippy::too_many_arguments)]
    fn release(
        &self,
        io: &crate::pipeline::RunIo,
        attempt: u64,
        end: &mut AttemptEnd,
        succeeded: bool,
        held: Option<std::sync::Arc<crate::spool::Spool>>,
        rest: Rest,
        state: &mut Settling,
    ) {
        let to = if succeeded { "stdout" } else { "stderr" };
        let had_held = held.is_some();
        let release = match io.release(held, succeeded, rest) {
            Err(e) => {
                state.faults.push(format!(
                    "cannot write the output of attempt {attempt} to {to}: {e}"
                ));
                return;
            }
            Ok(release) => release,
        };
        self.wait_tasks(release.tasks(), &mut end.interrupted);
        let Some(released) = release.result() else {
            state.cut = true;
            return;
        };
        let results = [
            (released.held, to, "the held stdout", had_held),
            (released.stdout, "stdout", "the stdout", false),
            (released.stderr, "stderr", "the stderr", false),
        ];
        for (result, to, what, held) in results {
            let Err(e) = result else { continue };
            if e.kind() == std::io::ErrorKind::BrokenPipe && (succeeded || !held) {
                // A vanished stdout reader ends the run; one of stderr just stops the passing
                // on, as for the attempt.
                state.reader_gone |= to == "stdout";
            } else if held {
                state.faults.push(format!(
                    "cannot write {what} of attempt {attempt} to {to}: {e}"
                ));
            } else {
                state.faults.push(format!(
                    "cannot write {what} of attempt {attempt} (from what it left running) to \
                     {to}: {e}; the rest of it is lost"
                ));
            }
        }
    }
}

/// What went wrong while an attempt's output was settled.
struct Settling {
    /// One message per I/O fault.
    faults: Vec<String>,
    /// Part of the output was left behind (a stop signal, a reader that does not read).
    cut: bool,
    /// The reader of retry's stdout is gone.
    reader_gone: bool,
}

impl Settling {
    /// Nothing went wrong.
    fn clean(&self) -> bool {
        self.faults.is_empty() && !self.cut && !self.reader_gone
    }
}

/// The wait for `tasks` after a stop signal (see [`Supervisor::wait_tasks`]): whether they
/// all ended.
fn grace(tasks: &Tasks) -> bool {
    let until = Instant::now() + IO_GRACE;
    loop {
        if tasks.done() {
            return true;
        }
        let now = Instant::now();
        if now >= until || (tasks.to_outputs() && !process::outputs_take_bytes()) {
            return false;
        }
        if tasks.wait_until((now + GRACE_STEP).min(until)) {
            return true;
        }
    }
}
