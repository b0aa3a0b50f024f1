//! Protecting the service: a retry budget (gRFC A6 retry throttling), a circuit breaker and a
//! shared cooldown, kept in state shared by every run with the same `--budget KEY`, in a
//! directory of files on one host or in Redis (or Valkey) for a fleet.
//!
//! Layers, one way:
//! - pure state, std only, no I/O, times as epoch milliseconds passed in: [`throttle`]
//!   ([`TokenBucket`]), [`breaker`] ([`CircuitBreaker`]), [`state`] ([`SharedState`] and the
//!   run's operations on it). The simulator runs these very operations.
//! - stored form and stores: [`codec`] (versioned JSON), [`key`] (KEY encoding),
//!   [`location`] (`--budget-store` parsing, password redaction, default directory),
//!   [`store`] (one atomic `update`), [`file_store`] (`flock`), [`redis_store`]
//!   (WATCH/MULTI/EXEC).
//! - [`session`]: one run's [`Budget`], with the wall clock, failing open on any store error.
//!
//! A supervisor calls, in this order: [`Budget::begin`] before attempt 1 (refuse with exit 75
//! on [`Admission::Refuse`]); [`Budget::cooldown`] right before every attempt, waiting as it
//! says; [`Budget::attempt_end`] after every attempt (a refused retry gives up with
//! [`Budget::spent`]); [`Budget::finish`] once at the end of an admitted run; and
//! [`Budget::take_warning`] after each call, printing the one warning it may yield.

pub mod breaker;
pub mod codec;
pub mod file_store;
pub mod key;
pub mod location;
pub mod redis_store;
pub mod session;
pub mod state;
pub mod store;
pub mod throttle;

pub use breaker::{Admission, BreakerPolicy, BreakerState, CircuitBreaker, ProbeLease, RunEnd};
pub use key::BudgetKey;
pub use location::{StoreLocation, default_dir, parse_store_location};
pub use session::{Budget, epoch_ms, from_epoch_ms, wait_until};
pub use state::{AfterAttempt, AttemptOutcome, Begin, Policy, SharedState};
pub use store::{Store, StoreError};
pub use throttle::{Throttle, TokenBucket};
