//! The one operation every store offers: an atomic read-modify-write of a KEY's
//! [`SharedState`] by a Rust closure, so the budget logic exists once, whatever the store.

use std::fmt;
use std::path::PathBuf;

use super::file_store::FileStore;
use super::key::BudgetKey;
use super::location::StoreLocation;
use super::redis_store::RedisStore;
use super::state::SharedState;

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
        /// Why (the client's message, which never contains the URL).
        reason: String,
    },
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
        }
    }
}

impl std::error::Error for StoreError {}

/// A store of budget state: a directory of files or a Redis server.
#[derive(Debug)]
pub enum Store {
    /// One file per KEY, `flock` for the read-modify-write.
    File(FileStore),
    /// One Redis key per KEY, WATCH/MULTI/EXEC for the read-modify-write.
    Redis(RedisStore),
}

impl Store {
    /// Opens the store at `location`: creates and checks the directory, or connects to the
    /// server (within [`super::redis_store::CONNECT_TIMEOUT`]).
    ///
    /// # Errors
    /// [`StoreError::Dir`] or [`StoreError::Redis`].
    pub fn open(location: &StoreLocation) -> Result<Store, StoreError> {
        Ok(match location {
            StoreLocation::Dir(path) => Store::File(FileStore::open(path)?),
            StoreLocation::Redis(url) => Store::Redis(RedisStore::open(url)?),
        })
    }

    /// Reads `key`'s state (a fresh [`SharedState::default`] if there is none), runs `f` on it
    /// and stores the result, atomically with respect to every other run using the store;
    /// returns what `f` returned. A state `f` leaves unchanged is not written back.
    ///
    /// `f` may run more than once (Redis reruns it on a fresh read after a conflicting write),
    /// so it must depend only on the state it is given and on values it captured.
    ///
    /// # Errors
    /// Any [`StoreError`]; the state is then unchanged.
    pub fn update<R>(
        &mut self,
        key: &BudgetKey,
        f: impl FnMut(&mut SharedState) -> R,
    ) -> Result<R, StoreError> {
        match self {
            Store::File(store) => store.update(key, f),
            Store::Redis(store) => store.update(key, f),
        }
    }
}
