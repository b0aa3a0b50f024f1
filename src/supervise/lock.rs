//! `--lock` in the supervisor: the lock taken before anything else of the run (the budget's
//! admission, the splay, the first attempt), held until the run ends; a lock another run holds
//! past `--lock-wait` (or the deadline) ends the run with 75 without running the command, as a
//! budget's refusal does.

use std::time::Instant;

use super::Supervisor;
use crate::duration::format_human;
use crate::escape::escape;
use crate::lock::{self, Held, Refused};
use crate::status::Exit;

impl Supervisor<'_> {
    /// Takes `--lock` if the run has one (`None` otherwise), waiting up to `--lock-wait` and
    /// never past the deadline. `Err` ends the run: [`Exit::TempFail`] when another run holds
    /// the lock, the signal that stopped the wait, [`Exit::OwnFailure`] when PATH cannot be
    /// locked.
    pub(super) fn take_lock(&self) -> Result<Option<Held>, Exit> {
        let Some(settings) = &self.config.lock else {
            return Ok(None);
        };
        let path = &settings.path;
        let started = Instant::now();
        let wait_until = started.checked_add(settings.wait);
        let until = match (wait_until, self.deadline) {
            (Some(w), Some(d)) => Some(w.min(d)),
            (w, d) => w.or(d),
        };
        let at_deadline = self
            .deadline
            .is_some_and(|d| wait_until.is_none_or(|w| d <= w));
        let taken = lock::take(path, until, |holder| {
            self.reporter.lock_waiting(path, holder, settings.wait);
        });
        match taken {
            Ok(held) => {
                self.reporter.lock_held(path, started.elapsed());
                Ok(Some(held))
            }
            Err(Refused::Busy { holder }) => {
                let by = holder.map_or("another process".to_string(), |pid| format!("pid {pid}"));
                let shown = escape(&path.display().to_string());
                let why = match settings.wait {
                    w if w.is_zero() => format!("--lock {shown} is held by {by}"),
                    _ if at_deadline => format!(
                        "--lock {shown} is still held by {by} at the deadline, after waiting {}",
                        format_human(started.elapsed())
                    ),
                    _ => format!(
                        "--lock {shown} is still held by {by} after waiting {}",
                        format_human(started.elapsed())
                    ),
                };
                self.reporter.lock_busy(path, holder, &why);
                self.gave_up.replace(Some(why));
                Err(Exit::TempFail)
            }
            Err(Refused::Stopped) => Err(match self.queued_stop_signal() {
                Some(signal) => self.interrupted_by(signal),
                // The event loop read it already (it cannot have, before the first attempt).
                None => Exit::OwnFailure,
            }),
            Err(Refused::Failed(why)) => {
                self.reporter.error(&format!(
                    "--lock {}: {why}",
                    escape(&path.display().to_string())
                ));
                Err(Exit::OwnFailure)
            }
        }
    }
}
