//! The settings the decision after an attempt reads (`supervise::decide`), built once from the
//! command line: the loop's shape, the retries it allows, what stops it and what a server's
//! hint may ask. The attempt's own facts are gathered per attempt; these never change.

use std::time::Duration;

use crate::http_status::HttpStatuses;
use crate::transient::Classes;
use crate::types::Shape;

/// What the decision after every attempt reads, the same for the whole run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    /// `--successes`, `--until-fail` and `--forever`: when the loop is done.
    pub shape: Shape,
    /// Retries after the first attempt; `None` for unlimited. With `--forever`, the short
    /// runs in a row after the first (a crash loop), unlimited unless given.
    pub max_retries: Option<u64>,
    /// The first delay as written (`--base`): `--successes` waits it between successes.
    pub base: Duration,
    /// `--preserve-status`: a timed-out last attempt's own end is retry's, not 124 or 137.
    pub preserve_status: bool,
    /// `--stop-on` names 0: with `--forever`, a run that exits 0 ends the loop (systemd's
    /// `Restart=on-failure`).
    pub success_stops: bool,
    /// `--http-retry-on`: with `--http-hints`, the HTTP statuses of a failed attempt's last
    /// response that are retried; `None` when not given: 408, 425, 429, 5xx, and any status
    /// whose server said when to ask again.
    pub http_retry_on: Option<HttpStatuses>,
    /// `--max-hint`: a server's hint asking for a longer wait makes retry give up at once
    /// ([`Duration::MAX`] when 0 lifts the limit).
    pub max_hint: Duration,
    /// `--reset-after`: an attempt that ran at least this long before failing starts the
    /// schedule afresh (with `--forever`, whatever it exited with); `None` when absent, 0 or
    /// `inf`; with `--forever` [`super::DEFAULT_FOREVER_RESET_AFTER`] when absent.
    pub reset_after: Option<Duration>,
    /// `--transient`: the classes of failure that are retried; `None`: any failure is.
    pub transient: Option<Classes>,
}
