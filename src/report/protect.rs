//! What retry says about protecting the service: the splay, the budget's decisions (tokens
//! left, whether a retry is allowed, the breaker's state), a run the budget refuses, the shared
//! cooldown, and the warning of a store that cannot be used.
//!
//! Text lines: a refused run, a wait for the shared cooldown and a store's warning at the
//! normal verbosity (the warning even with `--quiet`, like an error: the budget is then off);
//! the splay and the budget's decisions only with `--verbose`. JSON: `splay`, `budget` (with
//! `phase` `begin`, `attempt` or `end`), `refused`, `cooldown` and `warning` events. Times of
//! day are RFC 3339 in UTC, to the second in text and to the millisecond in JSON.

use std::time::Duration;

use serde_json::{Value, json};

use super::reporter::{Reporter, micros};
use crate::budget::{
    Admission, AfterAttempt, Begin, BreakerState, BudgetKey, BudgetPolicy, RunEnd, StoreLocation,
    from_epoch_ms,
};
use crate::duration::format_human;
use crate::status::TEMP_FAIL;
use crate::types::LogFormat;

/// Epoch milliseconds as RFC 3339 to the second, for text.
fn time_text(ms: u64) -> String {
    humantime::format_rfc3339_seconds(from_epoch_ms(ms)).to_string()
}

/// Epoch milliseconds as RFC 3339 to the millisecond, for JSON.
fn time_json(ms: u64) -> String {
    humantime::format_rfc3339_millis(from_epoch_ms(ms)).to_string()
}

/// The breaker's state in words, with the threshold for a closed one.
fn breaker_text(state: &BreakerState, threshold: u32) -> String {
    match state {
        BreakerState::Closed { consecutive } => {
            format!("breaker closed ({consecutive} of {threshold} runs in a row gave up)")
        }
        BreakerState::Open { until_ms } => format!("breaker open until {}", time_text(*until_ms)),
        BreakerState::HalfOpen { probe: Some(_) } => "breaker half-open, a probe running".into(),
        BreakerState::HalfOpen { probe: None } => "breaker half-open".into(),
    }
}

/// The breaker's state as a JSON object.
fn breaker_json(state: &BreakerState) -> Value {
    match state {
        BreakerState::Closed { consecutive } => {
            json!({ "state": "closed", "gave_up_in_a_row": consecutive })
        }
        BreakerState::Open { until_ms } => {
            json!({ "state": "open", "until": time_json(*until_ms) })
        }
        BreakerState::HalfOpen { probe } => {
            json!({ "state": "half_open", "probing": probe.is_some() })
        }
    }
}

/// A token count for text: up to three decimals, no trailing zeros.
fn tokens_text(tokens: f64) -> String {
    let text = format!("{tokens:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl Reporter {
    /// `--splay`: the wait before the first attempt (text only with `--verbose`).
    pub fn splay(&self, delay: Duration) {
        if self.verbose() {
            self.say(format_args!(
                "splay: waiting {} before the first attempt",
                format_human(delay)
            ));
        }
        self.emit("splay", json!({ "delay": micros(delay) }));
    }

    /// The budget before the first attempt: the breaker's admission, tokens, the store (its
    /// password hidden).
    pub fn budget_begin(
        &self,
        key: &BudgetKey,
        store: &StoreLocation,
        policy: &BudgetPolicy,
        begin: &Begin,
    ) {
        if self.verbose() {
            let breaker = match (&begin.breaker, &policy.breaker) {
                _ if begin.admission == Admission::Probe => {
                    "; breaker half-open: this run is its probe".to_string()
                }
                (Some(state), Some(bp)) => format!("; {}", breaker_text(state, bp.threshold())),
                _ => String::new(),
            };
            self.say(format_args!(
                "budget {key} ({store}): {} of {} tokens{breaker}",
                tokens_text(begin.tokens),
                tokens_text(policy.throttle.max_tokens()),
            ));
        }
        let admission = match begin.admission {
            Admission::Run => "run",
            Admission::Probe => "probe",
            Admission::Refuse { .. } => "refused",
        };
        self.emit(
            "budget",
            json!({
                "phase": "begin",
                "key": String::from_utf8_lossy(key.as_bytes()),
                "store": store.to_string(),
                "admission": admission,
                "tokens": begin.tokens,
                "max_tokens": policy.throttle.max_tokens(),
                "breaker": begin.breaker.as_ref().map(breaker_json),
                "cooldown_until": begin.wait_until_ms.map(time_json),
            }),
        );
    }

    /// The budget after attempt `attempt`: tokens left and whether a retry is allowed.
    pub fn budget_attempt(
        &self,
        key: &BudgetKey,
        attempt: u64,
        after: &AfterAttempt,
        policy: &BudgetPolicy,
    ) {
        if self.verbose() {
            let max = policy.throttle.max_tokens();
            let retry = if after.retry_allowed {
                "a retry is allowed".to_string()
            } else {
                format!("no retry (it needs more than {})", tokens_text(max / 2.0))
            };
            self.say(format_args!(
                "budget {key}: {} of {} tokens left; {retry}",
                tokens_text(after.tokens),
                tokens_text(max),
            ));
        }
        self.emit(
            "budget",
            json!({
                "phase": "attempt",
                "key": String::from_utf8_lossy(key.as_bytes()),
                "attempt": attempt,
                "tokens": after.tokens,
                "max_tokens": policy.throttle.max_tokens(),
                "retry_allowed": after.retry_allowed,
                "cooldown_until": after.wait_until_ms.map(time_json),
            }),
        );
    }

    /// The budget at the end of an admitted run: how the breaker counted it (`state`: `None`
    /// without a breaker).
    pub fn budget_end(
        &self,
        key: &BudgetKey,
        end: RunEnd,
        state: Option<&BreakerState>,
        policy: &BudgetPolicy,
    ) {
        if let (Some(state), Some(bp)) = (state, &policy.breaker)
            && self.verbose()
        {
            self.say(format_args!(
                "budget {key}: {}",
                breaker_text(state, bp.threshold())
            ));
        }
        let result = match end {
            RunEnd::Succeeded => "succeeded",
            RunEnd::GaveUp => "gave_up",
            RunEnd::Abandoned => "abandoned",
        };
        self.emit(
            "budget",
            json!({
                "phase": "end",
                "key": String::from_utf8_lossy(key.as_bytes()),
                "run": result,
                "breaker": state.map(breaker_json),
            }),
        );
    }

    /// The run is refused before its first attempt and exits 75: `why` (the breaker's
    /// refusal, or a shared cooldown past the deadline), until `until_ms`.
    pub fn refused(&self, why: &str, until_ms: u64) {
        self.say(format_args!(
            "{why}: not running {} (status {TEMP_FAIL})",
            self.program
        ));
        self.emit(
            "refused",
            json!({ "reason": why, "until": time_json(until_ms), "status": TEMP_FAIL }),
        );
    }

    /// Attempt `attempt` waits `delay`, until `until_ms`, for the shared cooldown of `key`.
    pub fn cooldown(&self, key: &BudgetKey, attempt: u64, until_ms: u64, delay: Duration) {
        self.say(format_args!(
            "{}: waiting {} for the shared cooldown of budget {key} (until {})",
            self.attempt_label(attempt),
            format_human(delay),
            time_text(until_ms)
        ));
        self.emit(
            "cooldown",
            json!({
                "attempt": attempt,
                "delay": micros(delay),
                "until": time_json(until_ms),
            }),
        );
    }

    /// A warning: `retry: warning: ...`, even with `--quiet` (a JSON `warning` event).
    pub fn warning(&self, message: &str) {
        match self.writer.format() {
            LogFormat::Json => self.writer.event(
                "warning",
                self.start.elapsed(),
                self.run_id.as_deref(),
                json!({ "message": message }),
            ),
            LogFormat::Text => self.writer.line(&format!("retry: warning: {message}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_times() {
        assert_eq!(tokens_text(10.0), "10");
        assert_eq!(tokens_text(5.1), "5.1");
        assert_eq!(tokens_text(0.001), "0.001");
        assert_eq!(tokens_text(0.0), "0");
        assert_eq!(time_text(1_767_225_600_123), "2026-01-01T00:00:00Z");
        assert_eq!(time_json(1_767_225_600_123), "2026-01-01T00:00:00.123Z");
        assert_eq!(
            breaker_text(&BreakerState::Closed { consecutive: 2 }, 5),
            "breaker closed (2 of 5 runs in a row gave up)"
        );
        assert_eq!(
            breaker_json(&BreakerState::Open {
                until_ms: 1_767_225_600_000
            }),
            json!({ "state": "open", "until": "2026-01-01T00:00:00.000Z" })
        );
    }
}
