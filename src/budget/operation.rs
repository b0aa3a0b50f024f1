//! The operations a run performs on its KEY's state ([`SharedState`]'s `begin`, `cooldown`,
//! `attempt_end` and `finish`), as values a store can carry out: the file store runs them on
//! the state it read under `flock`; the Redis store sends them to its script, which performs
//! them on the server, and computes the answer here from the state the script saw, with the
//! same Rust code.

use retry_tool_backoff::breaker::{BreakerState, RunEnd};
use retry_tool_backoff::shared_state::{
    AfterAttempt, AttemptOutcome, Begin, BudgetPolicy, SharedState,
};

/// One operation, with what it needs besides the policy and the time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// [`SharedState::begin`]: the breaker's admission (claiming the probe lease with `id`
    /// when half-open) and the shared cooldown.
    Begin {
        /// The run's random id.
        id: u64,
    },
    /// [`SharedState::cooldown`]: the shared cooldown; a probe renews its lease.
    Cooldown {
        /// The run's id if it is the probe.
        probe: Option<u64>,
    },
    /// [`SharedState::attempt_end`]: an attempt counted in the token bucket.
    AttemptEnd {
        /// How the attempt counts.
        outcome: AttemptOutcome,
        /// A server's hint: no attempt before this time (epoch ms).
        hint_ms: Option<u64>,
        /// The run's id if it is the probe.
        probe: Option<u64>,
    },
    /// [`SharedState::finish`]: the run's end counted by the breaker.
    Finish {
        /// How the run ended.
        end: RunEnd,
        /// The run's id if it is the probe.
        probe: Option<u64>,
    },
}

/// What an operation answers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Answer {
    /// From [`Operation::Begin`].
    Begin(Begin),
    /// From [`Operation::Cooldown`]: the shared cooldown still to wait (epoch ms).
    Cooldown(Option<u64>),
    /// From [`Operation::AttemptEnd`].
    AttemptEnd(AfterAttempt),
    /// From [`Operation::Finish`]: the breaker's state after (`None` without a breaker).
    Finish(Option<BreakerState>),
}

impl Operation {
    /// Performs this operation on `state` at `now_ms` under `policy`.
    pub fn apply(&self, state: &mut SharedState, policy: &BudgetPolicy, now_ms: u64) -> Answer {
        match *self {
            Operation::Begin { id } => Answer::Begin(state.begin(policy, now_ms, id)),
            Operation::Cooldown { probe } => {
                Answer::Cooldown(state.cooldown(policy, now_ms, probe))
            }
            Operation::AttemptEnd {
                outcome,
                hint_ms,
                probe,
            } => Answer::AttemptEnd(state.attempt_end(policy, now_ms, outcome, hint_ms, probe)),
            Operation::Finish { end, probe } => {
                Answer::Finish(state.finish(policy, now_ms, end, probe))
            }
        }
    }
}
