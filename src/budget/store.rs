//! What every store offers: a budget [`Operation`] performed atomically on a KEY's
//! [`SharedState`] (under `flock` by the file store, by one script on the server by the Redis
//! store), and a plain read of the state.

use std::fmt;
use std::path::PathBuf;

use super::file_store::FileStore;
use super::key::BudgetKey;
use super::location::StoreLocation;
use super::operation::{Answer, Operation};
use super::redis_store::RedisStore;
use super::state::{BudgetPolicy, SharedState};

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

/// A store of budget state: a directory of files or a Redis server.
#[derive(Debug)]
pub enum Store {
    /// One file per KEY, `flock` for the read-modify-write.
    File(FileStore),
    /// One Redis key per KEY, each operation one script on the server.
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

    /// Performs `op` at `now_ms` under `policy` on `key`'s state (a fresh
    /// [`SharedState::default`] if there is none), atomically with respect to every other run
    /// using the store, and stores the result; returns the answer and the state after. A
    /// state the operation leaves unchanged is not written back.
    ///
    /// # Errors
    /// Any [`StoreError`]; the state is then unchanged.
    pub fn perform(
        &mut self,
        key: &BudgetKey,
        policy: &BudgetPolicy,
        now_ms: u64,
        op: &Operation,
    ) -> Result<(Answer, SharedState), StoreError> {
        match self {
            Store::File(store) => store.update(key, |state| {
                let answer = op.apply(state, policy, now_ms);
                (answer, *state)
            }),
            Store::Redis(store) => store.perform(key, policy, now_ms, op),
        }
    }

    /// Reads `key`'s state (a fresh [`SharedState::default`] if there is none) without a lock
    /// or a change.
    ///
    /// # Errors
    /// Any [`StoreError`].
    pub fn load(&mut self, key: &BudgetKey) -> Result<SharedState, StoreError> {
        match self {
            Store::File(store) => store.update(key, |state| *state),
            Store::Redis(store) => store.load(key),
        }
    }
}
