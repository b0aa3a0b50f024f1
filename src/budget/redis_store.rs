//! The fleet store: a KEY's state in a Redis (or Valkey) server, so every host shares one
//! budget and one breaker. One synchronous connection per run (the `redis` crate without an
//! async runtime), with a connect timeout of [`CONNECT_TIMEOUT`] and at most
//! [`COMMAND_TIMEOUT`] for each round trip: a server that is down costs one error at once
//! (connection refused), one that accepts but never answers costs about 300 ms.
//!
//! The read-modify-write is optimistic, with Redis transactions
//! (<https://redis.io/docs/latest/develop/interact/transactions/>): `WATCH key` and `GET key`,
//! the Rust closure on the decoded state, then `MULTI`, `SET key state PX ttl`, `EXEC`; an
//! `EXEC` that another client's write aborted is retried from a fresh read, at most
//! [`MAX_CONFLICTS`] times. The budget logic thus exists once, in Rust, for both stores (a Lua
//! script would have to repeat it).
//!
//! Keys are `retry:budget:KEY`. Each write sets an expiry of [`IDLE_EXPIRY`] (30 days) plus
//! however long the state has something pending (an open breaker, a probe's lease, a shared
//! cooldown), so a KEY no run has used for 30 days vanishes, while a daily or weekly cron job
//! keeps its count.

use std::fmt;
use std::time::{Duration, Instant, SystemTime};

use redis::IntoConnectionInfo;

use super::codec;
use super::key::BudgetKey;
use super::location::RedisUrl;
use super::state::SharedState;
use super::store::StoreError;

/// Connect timeout (TCP connect and the connection's setup commands).
pub const CONNECT_TIMEOUT: Duration = Duration::from_millis(300);
/// Write timeout of each command, and read timeout of each round trip (shared by the
/// replies of a pipeline).
pub const COMMAND_TIMEOUT: Duration = Duration::from_millis(300);
/// Aborted transactions retried before giving up on an update.
pub const MAX_CONFLICTS: u32 = 100;
/// An update still conflicting after this long gives up, whatever the count.
const UPDATE_LIMIT: Duration = Duration::from_secs(1);
/// How long a KEY's state outlives its last write (beyond anything still pending).
pub const IDLE_EXPIRY: Duration = Duration::from_secs(30 * 24 * 3600);

/// A connection to the server holding budget state.
pub struct RedisStore {
    con: redis::Connection,
    /// The server, password redacted, for messages.
    server: String,
}

impl fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RedisStore({})", self.server)
    }
}

/// Milliseconds since the epoch, now.
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The expiry for `state` written at `now_ms`, in milliseconds.
pub fn expiry_ms(state: &SharedState, now_ms: u64) -> u64 {
    let pending = state.horizon_ms().map_or(0, |h| h.saturating_sub(now_ms));
    u64::try_from(IDLE_EXPIRY.as_millis())
        .unwrap_or(u64::MAX)
        .saturating_add(pending)
}

impl RedisStore {
    /// Connects to the server at `url` (within [`CONNECT_TIMEOUT`]; the host name's lookup
    /// is not bounded by it) and sets the command timeouts.
    ///
    /// # Errors
    /// [`StoreError::Redis`] when the server cannot be reached, refuses the password or the
    /// database, or does not answer in time.
    pub fn open(url: &RedisUrl) -> Result<RedisStore, StoreError> {
        let server = url.to_string();
        let fail = |e: redis::RedisError| StoreError::Redis {
            server: server.clone(),
            reason: e.to_string(),
        };
        let info = url.secret_url().into_connection_info().map_err(fail)?;
        // No `CLIENT SETINFO` round trip at connect: one less command to time out on. And
        // TCP_NODELAY, as Redis clients usually set it: a request never waits for the ACK of
        // an earlier one (Nagle's algorithm).
        let settings = info.redis_settings().clone().set_skip_set_lib_name();
        let tcp = redis::io::tcp::TcpSettings::default().set_nodelay(true);
        let info = info.set_redis_settings(settings).set_tcp_settings(tcp);
        let client = redis::Client::open(info).map_err(fail)?;
        let con = client
            .get_connection_with_timeout(CONNECT_TIMEOUT)
            .map_err(fail)?;
        con.set_read_timeout(Some(COMMAND_TIMEOUT)).map_err(fail)?;
        con.set_write_timeout(Some(COMMAND_TIMEOUT)).map_err(fail)?;
        Ok(RedisStore { con, server })
    }

    /// The server, password redacted.
    pub fn server(&self) -> &str {
        &self.server
    }

    fn error(&self, e: redis::RedisError) -> StoreError {
        StoreError::Redis {
            server: self.server.clone(),
            reason: e.to_string(),
        }
    }

    /// Sets the read timeout for a round trip of `replies` replies. The client reads each
    /// reply of a pipeline with the socket's timeout and goes on after a timeout, so a hung
    /// server would cost `replies` times the timeout: each reply gets its share instead, and
    /// a whole round trip takes at most [`COMMAND_TIMEOUT`]. (A live server sends the later
    /// replies of a pipeline right after the first.)
    fn round_trip_of(&mut self, replies: u32) -> Result<(), StoreError> {
        self.con
            .set_read_timeout(Some(COMMAND_TIMEOUT / replies))
            .map_err(|e| self.error(e))
    }

    /// [`super::store::Store::update`] for this store: `f` runs once per read, again after
    /// each aborted transaction.
    ///
    /// # Errors
    /// [`StoreError::Redis`] (unreachable, timeout, an error reply, more than
    /// [`MAX_CONFLICTS`] conflicts) or [`StoreError::Corrupt`].
    pub fn update<R>(
        &mut self,
        key: &BudgetKey,
        mut f: impl FnMut(&mut SharedState) -> R,
    ) -> Result<R, StoreError> {
        let rkey = key.redis_key();
        let start = Instant::now();
        let mut conflicts = 0;
        loop {
            self.round_trip_of(2)?;
            let (_, stored): ((), Option<Vec<u8>>) = redis::pipe()
                .cmd("WATCH")
                .arg(&rkey)
                .cmd("GET")
                .arg(&rkey)
                .query(&mut self.con)
                .map_err(|e| self.error(e))?;
            let before = match codec::decode(stored.as_deref().unwrap_or_default()) {
                Ok(state) => state,
                Err(reason) => {
                    let _ = redis::cmd("UNWATCH").exec(&mut self.con);
                    return Err(StoreError::Corrupt {
                        place: format!("{} on {}", key_name(key), self.server),
                        reason,
                    });
                }
            };
            let mut state = before;
            let result = f(&mut state);
            if state == before {
                self.round_trip_of(1)?;
                redis::cmd("UNWATCH")
                    .exec(&mut self.con)
                    .map_err(|e| self.error(e))?;
                return Ok(result);
            }
            let ttl = expiry_ms(&state, now_ms());
            // MULTI, SET and EXEC: three replies.
            self.round_trip_of(3)?;
            let done: Option<redis::Value> = redis::pipe()
                .atomic()
                .cmd("SET")
                .arg(&rkey)
                .arg(codec::encode(&state))
                .arg("PX")
                .arg(ttl)
                .query(&mut self.con)
                .map_err(|e| self.error(e))?;
            if done.is_some() {
                return Ok(result);
            }
            conflicts += 1;
            if conflicts > MAX_CONFLICTS || start.elapsed() > UPDATE_LIMIT {
                return Err(StoreError::Redis {
                    server: self.server.clone(),
                    reason: format!(
                        "{} kept changing under this run ({conflicts} conflicting writes)",
                        key_name(key)
                    ),
                });
            }
            // Let the writer that won go ahead; spread the retries of the others.
            std::thread::sleep(Duration::from_micros(rand::random_range(0..500)));
        }
    }
}

/// The Redis key for messages.
fn key_name(key: &BudgetKey) -> String {
    format!("key retry:budget:{key}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::breaker::CircuitBreaker;

    #[test]
    fn expiry_covers_what_is_pending() {
        let idle = u64::try_from(IDLE_EXPIRY.as_millis()).unwrap();
        let mut s = SharedState::default();
        assert_eq!(expiry_ms(&s, 1_000), idle);
        s.not_before_ms = Some(61_000);
        assert_eq!(expiry_ms(&s, 1_000), idle + 60_000);
        s.breaker = CircuitBreaker {
            consecutive: 3,
            open_until_ms: Some(3_601_000),
            probe: None,
        };
        assert_eq!(expiry_ms(&s, 1_000), idle + 3_600_000);
        // Something pending in the past adds nothing.
        assert_eq!(expiry_ms(&s, 10_000_000), idle);
    }
}
