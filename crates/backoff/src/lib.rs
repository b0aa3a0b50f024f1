//! Exponential backoff with jitter, and the rule that decides when to give up: the pure maths
//! of the `retry` command-line tool, usable as a library. No clock, no processes, no I/O: the
//! caller measures time and brings the random number generator (seed it to reproduce a
//! schedule).
//!
//! Notation, as in the sources cited on each [`Jitter`] mode: `n` is the retry index (the first
//! retry is `n = 0`), `expo(n) = min(cap, base * multiplier^n)`, `U(a, b)` a uniform draw.
//!
//! - [`Policy`]: base, multiplier, cap and [`Jitter`] mode, validated.
//! - [`Schedule`]: the delays of one run, in order.
//! - [`Budget`]: a schedule under [`Limits`] (retries, deadline); after each failure it returns
//!   the next delay or the reason to give up ([`GiveUp`]).
//!
//! ```
//! use std::time::Duration;
//! use rand::SeedableRng;
//! use rand::rngs::Xoshiro256PlusPlus;
//! use retry_tool_backoff::{Budget, GiveUp, Jitter, Limits, Policy};
//!
//! let policy = Policy::new(Duration::from_secs(1), 2.0, Duration::from_secs(64), Jitter::Full)?;
//! let limits = Limits { max_retries: Some(2), deadline: None };
//! let mut budget = Budget::new(policy.schedule(), limits);
//! let mut rng = Xoshiro256PlusPlus::seed_from_u64(42);
//! let first = budget.next_delay(Duration::ZERO, None, &mut rng).unwrap();
//! assert!(first <= Duration::from_secs(1));
//! budget.next_delay(Duration::ZERO, None, &mut rng).unwrap();
//! assert_eq!(budget.next_delay(Duration::ZERO, None, &mut rng), Err(GiveUp::RetriesUsedUp));
//! # Ok::<(), retry_tool_backoff::PolicyError>(())
//! ```

mod budget;
mod jitter;
mod policy;

pub use budget::{Budget, GiveUp, Limits};
pub use jitter::{Jitter, PROPORTIONAL_SPREAD};
pub use policy::{Policy, PolicyError, Schedule};
