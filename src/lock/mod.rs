//! `--lock PATH`: one run at a time per PATH, as cron users otherwise get from `flock(1)`, one
//! interface chosen here by `cfg`: `flock(2)` with the holder's pid in PATH on Unix
//! (`unix.rs`), `LockFileEx` on Windows (`windows.rs`).

#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

use std::time::Duration;

#[cfg(unix)]
pub use unix::{Held, take};
#[cfg(windows)]
pub(crate) use windows::lock_exclusive;
#[cfg(windows)]
pub use windows::{Held, take};

/// Why the lock was not taken.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// Another run holds it, and held it until the time limit: its pid, when PATH holds one
    /// whose process exists.
    Busy {
        /// The pid written in PATH by the run holding it; `None` when PATH holds none, or the
        /// pid of a process that no longer exists (a stale one, while a program that writes
        /// no pid, such as `flock(1)`, holds the lock), and always on Windows (a locked file
        /// cannot be read by another process there).
        holder: Option<u32>,
    },
    /// A stop signal arrived during the wait: the run ends by it.
    Stopped,
    /// PATH cannot be opened or locked: one line saying why (without PATH).
    Failed(String),
}

/// The limit of a wait that has none: a hundred years, which a clock holds and no run waits.
const NO_LIMIT: Duration = Duration::from_secs(100 * 365 * 24 * 3600);
