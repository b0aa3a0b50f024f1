//! One attempt's pipeline I/O: its running threads ([`AttemptIo`]), and how they are made into
//! its [`AttemptReport`].

use std::sync::Arc;
use std::thread::JoinHandle;

use super::activity::Activity;
use super::os::Cancel;
use super::pump::PumpEnd;
use super::replay::FeedEnd;
use super::report::AttemptReport;
use super::tasks::Tasks;
use crate::spool::Spool;

/// An attempt's running I/O threads.
#[derive(Debug)]
pub struct AttemptIo {
    pub(super) cancel: Arc<Cancel>,
    pub(super) activity: Arc<Activity>,
    pub(super) tasks: Tasks,
    pub(super) feeder: Option<JoinHandle<FeedEnd>>,
    pub(super) stdout: Option<JoinHandle<PumpEnd>>,
    pub(super) stderr: Option<JoinHandle<PumpEnd>>,
    pub(super) held: Option<Arc<Spool>>,
    pub(super) replay: Option<Arc<Spool>>,
}

impl AttemptIo {
    /// When the attempt last wrote to its piped stdout or stderr (to the millisecond, never
    /// later than it did), or when its I/O started if it has written nothing: with
    /// `--idle-timeout`, the attempt is idle from this time on.
    pub fn idle_since(&self) -> std::time::Instant {
        self.activity.quiet_since()
    }

    /// The attempt ended: stops feeding stdin, and has the output pumps read what is left in
    /// their pipes (without waiting for processes that keep them open). Wait for
    /// [`AttemptIo::tasks`], then call [`AttemptIo::report`].
    pub fn stop(&self) {
        self.cancel.cancel();
        if let Some(spool) = &self.replay {
            spool.wake();
        }
    }

    /// The attempt's I/O threads, to wait for.
    pub fn tasks(&self) -> &Tasks {
        &self.tasks
    }

    /// What the attempt's I/O came to. Threads that have not ended are left behind (a pump
    /// blocked on a reader that does not read), and the report says so (`abandoned`).
    pub fn report(self, attempt: u64) -> AttemptReport {
        let mut report = AttemptReport {
            held: self.held,
            ..AttemptReport::default()
        };
        // Threads count themselves out just before they end: when all have, join them all.
        let all = self.tasks.done();
        match self.feeder {
            Some(h) if all || h.is_finished() => {
                if let Ok(end) = h.join() {
                    report.stdin_truncated = end.truncated;
                    if end.truncated {
                        let why = end
                            .error
                            .or_else(|| self.replay.as_ref().and_then(|s| s.failure()))
                            .unwrap_or_else(|| "the recording of stdin failed".into());
                        report.faults.push(format!(
                            "{why}; attempt {attempt} saw its stdin end early, after {} bytes",
                            end.fed
                        ));
                    }
                }
            }
            Some(_) => report.abandoned = true,
            None => {}
        }
        for (handle, name) in [(self.stdout, "stdout"), (self.stderr, "stderr")] {
            let Some(handle) = handle else { continue };
            if !(all || handle.is_finished()) {
                report.abandoned = true;
                continue;
            }
            let Ok(end) = handle.join() else { continue };
            report.findings = report.findings.merge(end.findings);
            report.bad_hint = report.bad_hint.or(end.bad_hint);
            // (After a failed hold, the stdout pump writes to stderr: not stdout's reader.)
            report.stdout_closed |= name == "stdout" && end.sink_closed && end.hold_error.is_none();
            if let Some(e) = end.hold_error {
                report.held = None;
                report.faults.push(format!(
                    "cannot hold the stdout of attempt {attempt} for --stdout-on-success: {e}; \
                     it went to stderr instead"
                ));
            }
            if let Some(e) = end.write_error {
                report.faults.push(format!(
                    "cannot write the {name} of attempt {attempt}: {e}; the rest of it is lost"
                ));
            }
            if name == "stdout" {
                report.rest.stdout = end.rest;
            } else {
                report.rest.stderr = end.rest;
            }
        }
        report
    }
}
