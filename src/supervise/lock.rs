//! `--lock` in the supervisor: the lock taken before anything else of the run (the budget's
//! admission, the splay, the first attempt), held until the run ends; a lock another run holds
//! past `--lock-wait` (or the deadline) ends the run with 75 without running the command, as a
//! budget's refusal does.

use std::time::Instant;

use super::Supervisor;
use crate::lock::{self, Held, Refused};
use crate::observe::Event;
use crate::observe::problems::Problem;
use crate::observe::reasons::{LockBusy, Why};
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
        let deadline = self.deadline_at();
        let until = match (wait_until, deadline) {
            (Some(w), Some(d)) => Some(w.min(d)),
            (w, d) => w.or(d),
        };
        let at_deadline = deadline.is_some_and(|d| wait_until.is_none_or(|w| d <= w));
        let taken = lock::take(path, until, |holder| {
            self.emit(&Event::LockWaiting { path, holder });
        });
        match taken {
            Ok(held) => {
                let waited = started.elapsed();
                self.emit(&Event::LockHeld { path, waited });
                Ok(Some(held))
            }
            Err(Refused::Busy { holder }) => {
                let busy = LockBusy {
                    path: path.clone(),
                    holder,
                    wait: settings.wait,
                    waited: started.elapsed(),
                    at_deadline,
                };
                self.emit(&Event::LockBusy(&busy));
                self.gave_up.replace(Some(Why::LockBusy(busy)));
                Err(Exit::TempFail)
            }
            Err(Refused::Stopped) => Err(match self.queued_stop_signal() {
                Some(signal) => self.interrupted_by(signal),
                // The event loop read it already (it cannot have, before the first attempt).
                None => Exit::OwnFailure,
            }),
            Err(Refused::Failed(why)) => {
                let why = why.to_string();
                self.emit(&Event::Problem(Problem::LockFailed { path, why: &why }));
                Err(Exit::OwnFailure)
            }
        }
    }
}
