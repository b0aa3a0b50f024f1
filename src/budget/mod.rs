//! Protecting the service: a retry budget (gRFC A6 retry throttling), a circuit breaker and a
//! shared cooldown, kept in state shared by every run with the same `--budget KEY`, in a
//! directory of files on one host or in Redis (or Valkey) for a fleet.
//!
//! Layers, one way:
//! - pure state, std only, no I/O, times as epoch milliseconds passed in, in the
//!   `retry-tool-backoff` crate and re-exported here: [`throttle`] ([`TokenBucket`]),
//!   [`breaker`] ([`CircuitBreaker`]), [`state`] ([`SharedState`] and the run's operations on
//!   it). The simulator (`--model failure-rate`) runs these very operations with its own clock.
//! - stored form and stores: [`codec`] (versioned JSON, the size limit), [`key`] (KEY
//!   encoding), [`location`] (`--budget-store` parsing, password redaction, default
//!   directory), [`operation`] (the operations as values), [`error`] (every store's error),
//!   [`file_store`] (`flock`), [`redis_store`] (one Lua script per operation,
//!   `redis_state.lua`) over [`redis_conn`] (RESP over retry's bounded, interruptible socket
//!   I/O, [`crate::net`]), and above both [`store`] (each operation performed atomically by
//!   the store chosen).
//! - [`session`]: one run's [`Budget`], with the wall clock, failing open on any store error.
//!
//! A supervisor uses one [`Budget`] per run, in this order:
//! 1. [`Budget::begin`] before attempt 1 (and before any splay). On [`Admission::Refuse`]
//!    the command is not run: exit 75 (EX_TEMPFAIL) with [`Budget::refusal`]'s line.
//! 2. [`Budget::before_attempt`] right before every attempt (the first after a splay, and
//!    every retry): the breaker's admission again, and the shared cooldown. On
//!    [`Admission::Refuse`], do not start the attempt: before attempt 1 exit 75 as for a
//!    refusal; before a retry give up with the last attempt's status and
//!    [`Budget::refusal`]'s line. While it returns a time still ahead, wait until then
//!    (interruptibly; give up if that passes the deadline) and ask again.
//! 3. [`Budget::attempt_end`] after every attempt, with [`AttemptOutcome::Success`],
//!    [`AttemptOutcome::Failure`] (a status that is retried) or [`AttemptOutcome::Neutral`],
//!    and the server's hint if the attempt's output had one. When a retry is wanted and
//!    [`AfterAttempt::retry_allowed`] is false, give up with [`Budget::spent`]'s line;
//!    otherwise wait the longer of the backoff delay and [`AfterAttempt::wait_until_ms`].
//! 4. [`Budget::finish`] once at the end of an admitted run: [`RunEnd::Succeeded`],
//!    [`RunEnd::GaveUp`] (any give-up, the spent budget included) or [`RunEnd::Abandoned`]
//!    (a signal, retry's own error).
//!
//! After each call, [`Budget::take_warning`] yields the one warning line a store error gives;
//! every call returns `None` from then on and the run goes on as without a budget. A wait on a
//! store (a lock, a server, a host name lookup) ends at once on a stop signal, without a
//! warning: the run then ends by the signal.

pub mod codec;
pub mod error;
pub mod file_store;
pub mod key;
pub mod location;
pub mod operation;
pub mod redis_conn;
pub mod redis_store;
mod refusal;
pub mod session;
pub mod store;

pub use retry_tool_backoff::shared_state as state;
pub use retry_tool_backoff::{breaker, throttle};

pub use breaker::{Admission, BreakerPolicy, BreakerState, CircuitBreaker, ProbeLease, RunEnd};
pub use error::StoreError;
pub use key::BudgetKey;
pub use location::{StoreLocation, default_dir, parse_store_location};
pub use operation::{Answer, Operation};
pub use refusal::Refusal;
pub use session::{Budget, epoch_ms, from_epoch_ms, wait_until};
/// A run's budget settings ([`retry_tool_backoff::BudgetPolicy`]), under the name this module
/// has always given them.
pub use state::BudgetPolicy as Policy;
pub use state::{AfterAttempt, AttemptOutcome, Begin, BudgetPolicy, MAX_TIME_MS, SharedState};
pub use store::Store;
pub use throttle::{Throttle, TokenBucket};
