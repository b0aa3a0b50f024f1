//! What one run of a model needs to know, and what it gives: shared by the models
//! ([`crate::occ`], [`crate::rate_limit`]) and the [`crate::runner`] that runs and averages
//! them.

use retry_tool_backoff::{Limits, Policy};

use crate::Model;

/// What one run needs to know.
#[derive(Clone, Debug)]
pub(crate) struct Setup {
    /// Which model to run.
    pub(crate) model: Model,
    /// The backoff policy of every client (zero delays for `no-backoff`).
    pub(crate) policy: Policy,
    /// When clients give up.
    pub(crate) limits: Limits,
    /// How many clients compete (`>= 1`).
    pub(crate) clients: u32,
}

/// The outcome of one run. `calls == succeeded + rejected`; `succeeded + gave_up == clients`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct RunResult {
    /// Time of the last event, in ms.
    pub(crate) completion_ms: f64,
    /// Calls the server handled (writes for `occ`, requests for `rate-limit`).
    pub(crate) calls: u64,
    /// Calls that failed (conflicting writes, rate-limited requests).
    pub(crate) rejected: u64,
    /// Clients that got their success.
    pub(crate) succeeded: u64,
    /// Clients that gave up (retries used up, or the deadline).
    pub(crate) gave_up: u64,
}
