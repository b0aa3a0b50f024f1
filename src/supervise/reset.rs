//! `--reset-after`: an attempt that ran long enough before failing starts the schedule afresh,
//! so `retry -n 5 --reset-after 10m -- ssh -N tunnel` gives up after five quick failures in a
//! row but keeps a tunnel that stays up for hours (recur's `--reset`, supervisord's
//! `startsecs`). Attempts keep their numbers; the limit moves on instead: after a reset at
//! attempt k, the run may go on to attempt k + `--max-retries` (k + `--max-retries` * N with
//! `--successes N`, whose retries may each lead to N attempts). An attempt stopped by
//! `--timeout`, `--idle-timeout` or the deadline never counts, however long it ran: it hung.
//!
//! With `--forever` a run counts whatever it exited with, and the long run is not one of the
//! crash loop's: after it, `-n N` allows N + 1 short runs in a row again, as at the start.

use std::time::Duration;

use super::Supervisor;
use crate::config::Config;
use retry_tool_backoff::{GiveUpRule, Limits};

impl Supervisor<'_> {
    /// The give-up rule after a reset: [`give_up_rule`], but with `--forever` one
    /// retry more, since the long run that reset it was no crash: the restart after it is the
    /// first of a new series, and `-n N` still allows N + 1 short runs in a row after it.
    pub(super) fn rule_after_reset(&self) -> GiveUpRule {
        let retries = self
            .shape
            .retries_after_reset(self.config.rules.max_retries);
        rule_allowing(self.config, retries)
    }

    /// The last attempt number the run may make as things stand; `None` when unlimited.
    pub(super) fn max_attempts(&self) -> Option<u64> {
        self.last_attempt.get()
    }

    /// Attempt `attempt` failed, is to be retried, and ran for `ran`: if that is at least
    /// `--reset-after`, reports it, moves the limit to `attempt + --max-retries` and returns
    /// `true` (the caller starts afresh with [`Supervisor::rule_after_reset`]).
    pub(super) fn reset_if_long(&self, attempt: u64, ran: Duration) -> bool {
        let Some(reset_after) = self.config.rules.reset_after else {
            return false;
        };
        if ran < reset_after {
            return false;
        }
        // With `--successes N`, each retry may lead to N attempts (config::Rules::shape);
        // with `--forever`, the long run is not one of the N + 1 short runs allowed after it.
        let per_retry = self.shape.attempts_per_retry();
        let last = self
            .shape
            .retries_after_reset(self.config.rules.max_retries)
            .map(|r| attempt.saturating_add(r.saturating_mul(per_retry)));
        self.last_attempt.set(last);
        self.emit(&crate::observe::Event::Reset {
            attempt,
            ran,
            reset_after,
            last,
        });
        true
    }
}

/// A fresh give-up rule for a run of `config` (shared with `--dry-run` and the simulator): the
/// schedule from its first delay, no retries granted yet.
pub(super) fn give_up_rule(config: &Config) -> GiveUpRule {
    rule_allowing(config, config.rules.max_retries)
}

/// A rule of the run's schedule and deadline granting `max_retries` retries.
fn rule_allowing(config: &Config, max_retries: Option<u64>) -> GiveUpRule {
    GiveUpRule::new(
        config.policy.schedule(),
        Limits {
            max_retries,
            deadline: config.deadline,
        },
    )
}
