//! The fleet store: a KEY's state in a Redis (or Valkey) server, so every host shares one
//! budget and one breaker. One connection per run ([`super::redis_conn`]: every wait bounded
//! and ended by a stop signal), opened within [`CONNECT_TIMEOUT`]; each round trip waits for
//! the server at most [`COMMAND_TIMEOUT`] in all: a server that is down costs one error at
//! once (connection refused), one that accepts but never answers, or answers a byte at a time,
//! 300 ms.
//!
//! Each operation is one script run on the server (`EVALSHA`, and `EVAL` with the script's
//! body when the server does not know it yet, `NOSCRIPT`), as Redis-backed rate limiters do
//! (<https://redis.io/docs/latest/develop/interact/programmability/eval-intro/>): Redis runs a
//! script atomically, so the read-modify-write needs no `WATCH`/`MULTI`/`EXEC`, which under
//! contention aborts and retries (500 runs on one key once sent 70 commands each, and some never
//! recorded their failure). The script (`redis_state.lua`) performs the same operations as the
//! Rust state code on the same stored JSON and returns the state as it found it; the answer is
//! computed here from that state, with the Rust code. A state larger than 64 KiB is neither
//! read nor written by the script (the file store's limit); the run fails open.
//!
//! Keys are `retry:budget:KEY`. Each write sets an expiry of [`IDLE_EXPIRY`] (30 days) plus
//! however long the state has something pending (an open breaker, a probe's lease, a shared
//! cooldown), so a KEY no run has used for 30 days vanishes, while a daily or weekly cron job
//! keeps its count.

use std::fmt;
use std::sync::OnceLock;
use std::time::Duration;

use redis::Value;

use super::codec::{self, MAX_STATE_BYTES};
use super::error::StoreError;
use super::key::BudgetKey;
use super::location::RedisUrl;
use super::operation::{Answer, Operation};
pub use super::redis_conn::CONNECT_TIMEOUT;
use super::redis_conn::Conn;
use retry_tool_backoff::breaker::RunEnd;
use retry_tool_backoff::shared_state::{AttemptOutcome, BudgetPolicy, SharedState};

/// The most one round trip waits for the server (an operation makes two when the server
/// must first be sent the script).
pub const COMMAND_TIMEOUT: Duration = super::redis_conn::ROUND_TRIP_TIMEOUT;
/// How long a KEY's state outlives its last write (beyond anything still pending).
pub const IDLE_EXPIRY: Duration = Duration::from_secs(30 * 24 * 3600);

/// The script that performs every operation on the server.
pub const SCRIPT: &str = include_str!("redis_state.lua");

/// The script's SHA-1 in hex, as `EVALSHA` names it.
pub fn script_sha() -> &'static str {
    static SHA: OnceLock<String> = OnceLock::new();
    SHA.get_or_init(|| sha1_smol::Sha1::from(SCRIPT).digest().to_string())
}

/// A connection to the server holding budget state.
pub struct RedisStore {
    conn: Conn,
}

impl fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RedisStore({})", self.conn.server())
    }
}

/// The expiry for `state` written at `now_ms`, in milliseconds (the script's rule).
pub fn expiry_ms(state: &SharedState, now_ms: u64) -> u64 {
    let pending = state.horizon_ms().map_or(0, |h| h.saturating_sub(now_ms));
    u64::try_from(IDLE_EXPIRY.as_millis())
        .unwrap_or(u64::MAX)
        .saturating_add(pending)
}

/// The script's arguments after the key for `op` at `now_ms` under `policy` (see the
/// script's header).
pub fn script_args(policy: &BudgetPolicy, now_ms: u64, op: &Operation) -> Vec<String> {
    let opt = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
    let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let (max_milli, ratio_milli, refill) = policy.throttle.parts();
    let (threshold, cooldown, lease) = match &policy.breaker {
        Some(bp) => (
            bp.threshold().to_string(),
            ms(bp.cooldown()).to_string(),
            ms(bp.probe_lease()).to_string(),
        ),
        None => Default::default(),
    };
    let (name, id, what, hint) = match *op {
        Operation::Begin { id } => ("begin", Some(id), "", None),
        Operation::Cooldown { probe } => ("cooldown", probe, "", None),
        Operation::AttemptEnd {
            outcome,
            hint_ms,
            probe,
        } => {
            let outcome = match outcome {
                AttemptOutcome::Success => "success",
                AttemptOutcome::Failure => "failure",
                AttemptOutcome::Neutral => "neutral",
            };
            ("attempt_end", probe, outcome, hint_ms)
        }
        Operation::Finish { end, probe } => {
            let end = match end {
                RunEnd::Succeeded => "succeeded",
                RunEnd::GaveUp => "gave_up",
                RunEnd::Abandoned => "abandoned",
            };
            ("finish", probe, end, None)
        }
    };
    vec![
        name.into(),
        now_ms.to_string(),
        max_milli.to_string(),
        ratio_milli.to_string(),
        opt(refill),
        threshold,
        cooldown,
        lease,
        opt(id),
        what.into(),
        opt(hint),
        ms(IDLE_EXPIRY).to_string(),
        MAX_STATE_BYTES.to_string(),
    ]
}

impl RedisStore {
    /// Connects to the server at `url` (within [`CONNECT_TIMEOUT`], the host name's lookup
    /// included).
    ///
    /// # Errors
    /// [`StoreError::Redis`] when the server cannot be reached, refuses the password or the
    /// database, or does not answer in time; [`StoreError::Stopped`] on a stop signal.
    pub fn open(url: &RedisUrl) -> Result<RedisStore, StoreError> {
        Ok(RedisStore {
            conn: Conn::open(url)?,
        })
    }

    /// The server, password redacted.
    pub fn server(&self) -> &str {
        self.conn.server()
    }

    fn corrupt(&self, key: &BudgetKey, reason: String) -> StoreError {
        StoreError::Corrupt {
            place: format!("{} on {}", key_name(key), self.conn.server()),
            reason,
        }
    }

    /// `Store::perform` for this store: one script run on the server.
    ///
    /// # Errors
    /// [`StoreError::Redis`] (unreachable, timeout, an error reply), [`StoreError::Corrupt`]
    /// or [`StoreError::Stopped`].
    pub fn perform(
        &mut self,
        key: &BudgetKey,
        policy: &BudgetPolicy,
        now_ms: u64,
        op: &Operation,
    ) -> Result<(Answer, SharedState), StoreError> {
        let args = script_args(policy, now_ms, op);
        let rkey = key.redis_key();
        let mut evalsha = redis::cmd("EVALSHA");
        evalsha.arg(script_sha()).arg(1).arg(&rkey).arg(&args);
        let mut reply = self.one(&evalsha)?;
        if matches!(&reply, Value::ServerError(e) if e.code() == "NOSCRIPT") {
            let mut eval = redis::cmd("EVAL");
            eval.arg(SCRIPT).arg(1).arg(&rkey).arg(&args);
            reply = self.one(&eval)?;
        }
        let before = self.found(key, reply)?;
        let mut state = codec::decode(&before).map_err(|reason| self.corrupt(key, reason))?;
        let answer = op.apply(&mut state, policy, now_ms);
        Ok((answer, state))
    }

    /// `Store::load` for this store: `STRLEN` and `GETRANGE` of at most
    /// 64 KiB, in one round trip.
    ///
    /// # Errors
    /// As [`RedisStore::perform`].
    pub fn load(&mut self, key: &BudgetKey) -> Result<SharedState, StoreError> {
        let rkey = key.redis_key();
        let mut packed = redis::cmd("STRLEN").arg(&rkey).get_packed_command();
        redis::cmd("GETRANGE")
            .arg(&rkey)
            .arg(0)
            .arg(MAX_STATE_BYTES)
            .write_packed_command(&mut packed);
        let replies = self.conn.call(&packed, 2)?;
        let bytes = match (&replies[0], &replies[1]) {
            (Value::Int(n), _) if u64::try_from(*n).unwrap_or(0) > MAX_STATE_BYTES => {
                return Err(self.corrupt(key, too_large(*n)));
            }
            (Value::Int(_), Value::BulkString(bytes)) => bytes.clone(),
            (Value::ServerError(e), _) | (_, Value::ServerError(e)) => {
                return Err(self.conn.error(e.to_string()));
            }
            _ => return Err(self.conn.error("unexpected reply".into())),
        };
        codec::decode(&bytes).map_err(|reason| self.corrupt(key, reason))
    }

    /// Sends `cmd` and reads its reply.
    fn one(&mut self, cmd: &redis::Cmd) -> Result<Value, StoreError> {
        let mut replies = self.conn.call(&cmd.get_packed_command(), 1)?;
        Ok(replies.pop().unwrap_or(Value::Nil))
    }

    /// The stored bytes the script found, from its reply.
    fn found(&self, key: &BudgetKey, reply: Value) -> Result<Vec<u8>, StoreError> {
        let Value::Array(mut parts) = reply else {
            return Err(match reply {
                Value::ServerError(e) => self.conn.error(e.to_string()),
                _ => self
                    .conn
                    .error("unexpected reply to the budget script".into()),
            });
        };
        let tag = match parts.first() {
            Some(Value::BulkString(tag)) => tag.clone(),
            _ => Vec::new(),
        };
        match (tag.as_slice(), parts.len()) {
            (b"ok", 2) => match parts.pop() {
                Some(Value::BulkString(before)) => Ok(before),
                _ => Err(self
                    .conn
                    .error("unexpected reply to the budget script".into())),
            },
            (b"corrupt", 3) => {
                let raw = match parts.pop() {
                    Some(Value::BulkString(raw)) => raw,
                    _ => Vec::new(),
                };
                let why = match parts.pop() {
                    Some(Value::BulkString(why)) => String::from_utf8_lossy(&why).into_owned(),
                    _ => String::new(),
                };
                // The Rust reader's reason when it disagrees too (it usually does), so a
                // file and a key give the same words.
                let reason = codec::decode(&raw).err().unwrap_or(why);
                Err(self.corrupt(key, reason))
            }
            (b"large", 2) => {
                let n = match parts.pop() {
                    Some(Value::Int(n)) => n,
                    _ => -1,
                };
                Err(self.corrupt(key, too_large(n)))
            }
            _ => Err(self
                .conn
                .error("unexpected reply to the budget script".into())),
        }
    }
}

/// The reason for a state of `n` bytes.
fn too_large(n: i64) -> String {
    format!("{n} bytes, larger than {MAX_STATE_BYTES}")
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

    #[test]
    fn the_script_is_named_by_its_sha1() {
        assert_eq!(script_sha().len(), 40);
        assert!(script_sha().bytes().all(|b| b.is_ascii_hexdigit()));
    }
}
