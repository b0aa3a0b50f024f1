//! Why a budget store could not be used: one error type for every store, below them all
//! (each store returns it, the dispatching [`super::store::Store`] passes it on).

use std::fmt;
use std::path::PathBuf;

/// Why a store could not be used. Every error is meant to give one warning line, after which
/// the run goes on as without a budget (fail open).
#[derive(Debug)]
pub enum StoreError {
    /// The state directory cannot be created or used, or is not safe (another owner, a
    /// symlink, writable by others).
    Dir {
        /// The directory.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The KEY's lock was not obtained in time (another run holds it).
    LockTimeout {
        /// The lock file.
        path: PathBuf,
        /// How long was waited, in milliseconds.
        waited_ms: u64,
    },
    /// A file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        error: std::io::Error,
    },
    /// The stored state is not a state this version can read.
    Corrupt {
        /// Where: a file path, or a Redis key on a server (password redacted).
        place: String,
        /// Why.
        reason: String,
    },
    /// The Redis server cannot be reached, timed out, or refused a command.
    Redis {
        /// The server (password redacted).
        server: String,
        /// Why (never containing the URL or the password; possibly the server's own words).
        reason: String,
    },
    /// A stop signal ([`crate::signals::STOP_SIGNALS`]) arrived while the store was waited for: the run
    /// is ending by it. No warning: retry reports the signal itself.
    Stopped,
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Dir { path, reason } => {
                write!(f, "budget directory {}: {reason}", path.display())
            }
            StoreError::LockTimeout { path, waited_ms } => write!(
                f,
                "budget lock {} not obtained within {waited_ms}ms",
                path.display()
            ),
            StoreError::Io { path, error } => write!(f, "budget file {}: {error}", path.display()),
            StoreError::Corrupt { place, reason } => {
                write!(
                    f,
                    "budget state {place} is corrupt ({reason}); remove it to reset"
                )
            }
            StoreError::Redis { server, reason } => write!(f, "budget store {server}: {reason}"),
            StoreError::Stopped => {
                write!(f, "the wait for the budget store was stopped by a signal")
            }
        }
    }
}

impl std::error::Error for StoreError {}
