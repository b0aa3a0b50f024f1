//! The default store: a directory of the user's own with, per KEY, a state file (`STEM.json`)
//! replaced whole by a rename, and a lock file (`STEM.lock`) locked only for one
//! read-modify-write that changes the state, one interface chosen here by `cfg`: `flock(2)`
//! through the directory's descriptor on Unix (`unix.rs`), `LockFileEx` on Windows
//! (`windows.rs`).

#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

use std::io::Read;
use std::time::Duration;

use retry_tool_backoff::shared_state::SharedState;

use super::codec::{self, MAX_STATE_BYTES};
use super::error::StoreError;
use super::key::BudgetKey;

#[cfg(unix)]
pub use unix::FileStore;
#[cfg(windows)]
pub use windows::FileStore;

/// How long a run waits for a KEY's lock before it goes on without a budget.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_millis(100);

/// What both systems' stores share: the reading of a state file and the update's order.
impl FileStore {
    /// State file `name`, decoded: a fresh state when it does not exist.
    fn read_state(&self, name: &str) -> Result<SharedState, StoreError> {
        let io = |error: std::io::Error| StoreError::Io {
            path: self.path(name),
            error,
        };
        let mut bytes = Vec::new();
        match self.open_read(name) {
            Ok(file) => {
                file.take(MAX_STATE_BYTES + 1)
                    .read_to_end(&mut bytes)
                    .map_err(io)?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(e)),
        }
        if bytes.len() as u64 > MAX_STATE_BYTES {
            return Err(StoreError::Corrupt {
                place: self.path(name).display().to_string(),
                reason: format!("larger than {MAX_STATE_BYTES} bytes"),
            });
        }
        codec::decode(&bytes).map_err(|reason| StoreError::Corrupt {
            place: self.path(name).display().to_string(),
            reason,
        })
    }

    /// [`crate::budget::store::Store::perform`] and [`crate::budget::store::Store::load`] for
    /// this store. First without the lock: the state file
    /// is only ever replaced whole (by `rename`), so a plain read sees a state some run
    /// stored; if `f` leaves that state unchanged (a closed breaker admitting a run, no
    /// cooldown to wait for), that is the answer, and no lock was taken. Otherwise `f` runs
    /// again under the lock on the state read there, and its result is stored. Runs started
    /// together thus queue for the lock only to change the state.
    ///
    /// # Errors
    /// [`StoreError::LockTimeout`], [`StoreError::Stopped`], [`StoreError::Io`] or
    /// [`StoreError::Corrupt`].
    pub fn update<R>(
        &self,
        key: &BudgetKey,
        mut f: impl FnMut(&mut SharedState) -> R,
    ) -> Result<R, StoreError> {
        let stem = key.file_stem();
        let lock_name = format!("{stem}.lock");
        let data_name = format!("{stem}.json");
        let seen = self.read_state(&data_name)?;
        let mut unchanged = seen;
        let result = f(&mut unchanged);
        if unchanged == seen {
            return Ok(result);
        }
        let lock_file = self.open_lock(&lock_name).map_err(|e| StoreError::Io {
            path: self.path(&lock_name),
            error: e,
        })?;
        let locked = self.lock(lock_file, &lock_name)?;
        let before = self.read_state(&data_name)?;
        let mut state = before;
        let result = f(&mut state);
        if state != before {
            self.write_state(&stem, &data_name, &state)?;
        }
        drop(locked);
        Ok(result)
    }
}
