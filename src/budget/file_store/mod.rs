//! The default store: a directory of the user's own with, per KEY, a state file (`STEM.json`)
//! replaced whole by a rename, and a lock file (`STEM.lock`) locked only for one
//! read-modify-write that changes the state, one interface chosen here by `cfg`: `flock(2)`
//! through the directory's descriptor on Unix (`unix.rs`), `LockFileEx` on Windows
//! (`windows.rs`).

#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

use std::time::Duration;

#[cfg(unix)]
pub use unix::FileStore;
#[cfg(windows)]
pub use windows::FileStore;

/// How long a run waits for a KEY's lock before it goes on without a budget.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_millis(100);
