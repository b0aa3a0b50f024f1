//! `--reset-after`: an attempt that ran long enough before failing starts the schedule afresh,
//! so `retry -n 5 --reset-after 10m -- ssh -N tunnel` gives up after five quick failures in a
//! row but keeps a tunnel that stays up for hours (recur's `--reset`, supervisord's
//! `startsecs`). Attempts keep their numbers; the limit moves on instead: after a reset at
//! attempt k, the run may go on to attempt k + `--max-retries` (k + `--max-retries` * N with
//! `--successes N`, whose retries may each lead to N attempts). An attempt stopped by
//! `--timeout`, `--idle-timeout` or the deadline never counts, however long it ran: it hung.

use std::time::Duration;

use super::Supervisor;
use retry_tool_backoff::{GiveUpRule, Limits};

impl Supervisor<'_> {
    /// A fresh give-up rule for this run (shared with `--dry-run` and the simulator): the
    /// schedule from its first delay, no retries granted yet.
    pub(super) fn give_up_rule(&self) -> GiveUpRule {
        GiveUpRule::new(
            self.config.policy.schedule(),
            Limits {
                max_retries: self.config.max_retries,
                deadline: self.config.deadline,
            },
        )
    }

    /// The last attempt number the run may make as things stand; `None` when unlimited.
    pub(super) fn max_attempts(&self) -> Option<u64> {
        self.last_attempt.get()
    }

    /// Attempt `attempt` failed, is to be retried, and ran for `ran`: if that is at least
    /// `--reset-after`, reports it, moves the limit to `attempt + --max-retries` and returns
    /// `true` (the caller starts afresh with a new [`Supervisor::give_up_rule`]).
    pub(super) fn reset_if_long(&self, attempt: u64, ran: Duration) -> bool {
        let Some(reset_after) = self.config.reset_after else {
            return false;
        };
        if ran < reset_after {
            return false;
        }
        // With `--successes N`, each retry may lead to N attempts (config::Shape::attempts).
        let per_retry = self.config.shape.attempts_per_retry();
        let last = self
            .config
            .max_retries
            .map(|r| attempt.saturating_add(r.saturating_mul(per_retry)));
        self.last_attempt.set(last);
        self.reporter.set_max_attempts(last);
        self.reporter.reset(attempt, ran, reset_after);
        true
    }
}
