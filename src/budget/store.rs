//! What every store offers: a budget [`Operation`] performed atomically on a KEY's
//! [`SharedState`] (under `flock` by the file store, by one script on the server by the Redis
//! store), and a plain read of the state. The one place that names both stores: they sit
//! below it and know nothing of it (their error, [`StoreError`], is a leaf of its own).

use super::error::StoreError;
use super::file_store::FileStore;
use super::key::BudgetKey;
use super::location::StoreLocation;
use super::operation::{Answer, Operation};
use super::redis_store::RedisStore;
use retry_tool_backoff::shared_state::{BudgetPolicy, SharedState};

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
