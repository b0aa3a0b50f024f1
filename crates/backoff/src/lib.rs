//! Exponential backoff with jitter, the rule that decides when to give up, and the retry budget
//! and circuit breaker that protect the service: the pure maths of the `retry` command-line
//! tool, usable as a library. No clock, no processes, no I/O: the caller measures time and
//! brings the random number generator (seed it to reproduce a schedule).
//!
//! Notation, as in the sources cited on each [`Jitter`] mode: `n` is the retry index (the first
//! retry is `n = 0`), `expo(n) = min(cap, base * multiplier^n)`, `U(a, b)` a uniform draw.
//!
//! One run's retries:
//! - [`Policy`]: base, multiplier, cap and [`Jitter`] mode, validated; or a list of delays
//!   ([`Policy::listed`]) and a jitter mode.
//! - [`Schedule`]: the delays of one run, in order.
//! - [`GiveUpRule`]: a schedule under [`Limits`] (retries, deadline); after each failure it
//!   returns the next delay or the reason to give up ([`GiveUp`]).
//! - [`splay()`]: a random wait before the first attempt, `U(0, max)`.
//!
//! State shared by many runs (the `retry` command keeps it in a file or in Redis; its simulator
//! in memory), times passed in as epoch milliseconds:
//! - [`throttle`]: the retry budget, gRFC A6's token bucket ([`TokenBucket`], [`Throttle`]).
//! - [`breaker`]: the circuit breaker ([`CircuitBreaker`], [`BreakerPolicy`]).
//! - [`shared_state`]: both and a shared cooldown in one [`SharedState`], with the operations a
//!   run performs on it ([`SharedState::begin`], [`SharedState::cooldown`],
//!   [`SharedState::attempt_end`], [`SharedState::finish`]) under its [`BudgetPolicy`].
//!
//! ```
//! use std::time::Duration;
//! use rand::SeedableRng;
//! use rand::rngs::Xoshiro256PlusPlus;
//! use retry_tool_backoff::{GiveUp, GiveUpRule, Jitter, Limits, Policy};
//!
//! let policy = Policy::new(Duration::from_secs(1), 2.0, Duration::from_secs(64), Jitter::Full)?;
//! let limits = Limits { max_retries: Some(2), deadline: None };
//! let mut rule = GiveUpRule::new(policy.schedule(), limits);
//! let mut rng = Xoshiro256PlusPlus::seed_from_u64(42);
//! let first = rule.next_delay(Duration::ZERO, None, &mut rng).unwrap();
//! assert!(first <= Duration::from_secs(1));
//! rule.next_delay(Duration::ZERO, None, &mut rng).unwrap();
//! assert_eq!(rule.next_delay(Duration::ZERO, None, &mut rng), Err(GiveUp::RetriesUsedUp));
//! # Ok::<(), retry_tool_backoff::PolicyError>(())
//! ```
//!
//! ```
//! use retry_tool_backoff::{AttemptOutcome, BudgetPolicy, SharedState};
//!
//! // gRFC A6's example values: 10 tokens, 0.1 back per success; a retry needs more than 5.
//! let policy = BudgetPolicy::default();
//! let mut state = SharedState::default();
//! let allowed: Vec<bool> = (0..5)
//!     .map(|_| state.attempt_end(&policy, 0, AttemptOutcome::Failure, None, None).retry_allowed)
//!     .collect();
//! assert_eq!(allowed, [true, true, true, true, false]);
//! ```

pub mod breaker;
mod epoch;
mod give_up;
mod jitter;
mod policy;
pub mod shared_state;
mod splay;
pub mod throttle;

pub use breaker::{Admission, BreakerPolicy, BreakerState, CircuitBreaker, ProbeLease, RunEnd};
pub use give_up::{GiveUp, GiveUpRule, Limits};
pub use jitter::{Jitter, PROPORTIONAL_SPREAD};
pub use policy::{Policy, PolicyError, Schedule};
pub use shared_state::{AfterAttempt, AttemptOutcome, Begin, BudgetPolicy, SharedState};
pub use splay::splay;
pub use throttle::{Throttle, TokenBucket};
