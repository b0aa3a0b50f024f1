//! Why the retry budget ends a run, as a typed value with what its words need (the key, the
//! times): the circuit breaker's refusal, a spent token bucket, a shared cooldown the run will
//! not wait for. `report/` words it.

use std::time::Duration;

use crate::types::BudgetKey;

/// Why the retry budget (`--budget`) ends a run: before its first attempt (refused, status 75)
/// or before a retry (given up with the last attempt's status).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The circuit breaker of budget `key` is open until `until_ms` (epoch milliseconds).
    BreakerOpen {
        /// The budget.
        key: BudgetKey,
        /// Until when.
        until_ms: u64,
    },
    /// The breaker is half-open and another run is its probe (until `until_ms` at most).
    BreakerProbing {
        /// The budget.
        key: BudgetKey,
        /// Until when at most.
        until_ms: u64,
    },
    /// The token bucket of budget `key` has too few tokens for a retry.
    Spent {
        /// The budget.
        key: BudgetKey,
    },
    /// The shared cooldown of budget `key` lasts until `until_ms`, past the deadline.
    CooldownPastDeadline {
        /// The budget.
        key: BudgetKey,
        /// Until when.
        until_ms: u64,
    },
    /// The shared cooldown lasts until `until_ms`, longer from now than `--max-hint`.
    CooldownTooLong {
        /// The budget.
        key: BudgetKey,
        /// Until when.
        until_ms: u64,
        /// `--max-hint`.
        max_hint: Duration,
    },
}
