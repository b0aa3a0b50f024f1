//! Why a run ends, in the words of the closing line and the JSON events: one place per typed
//! reason the decision gives ([`crate::observe::reasons`]). Durations in [`format_human`]'s
//! form, one formatting for every reason.

use crate::budget::from_epoch_ms;
use crate::duration::{format_apart, format_human};
use crate::escape::escape;
use crate::held::Stream;
use crate::observe::reasons::{LockBusy, Reason, Refusal, StdinLost, StreakCut, Why};
use crate::types::Shape;

use super::words::give_up_reason;

/// `reason` in words (`status 2 is not retried`, `no retries left`).
pub fn reason_words(reason: &Reason) -> String {
    match reason {
        Reason::CannotRun => "the command could not be run".into(),
        Reason::OutputMatched => "its output matched --stop-if-output".into(),
        Reason::StatusNotRetried(status) => format!("status {status} is not retried"),
        Reason::HttpNotRetried(code) => format!("HTTP {code} is not retried"),
        Reason::ReaderGone(Stream::Stdout) => "the reader of stdout is gone".into(),
        Reason::ReaderGone(Stream::Stderr) => "the reader of stderr is gone".into(),
        Reason::StdinLost => "stdin could not be recorded whole".into(),
        Reason::IoLost => "its input or output could not be passed on whole".into(),
        Reason::CrashLoop { runs, reset_after } => {
            let s = if *runs == 1 { "" } else { "s" };
            match reset_after {
                Some(d) => format!(
                    "{runs} run{s} in a row ended within --reset-after ({}): a crash loop",
                    format_human(*d)
                ),
                None => format!(
                    "no restarts left: {runs} run{s} (--reset-after 0 or inf: every run counts, \
                     none starts the count afresh)"
                ),
            }
        }
        Reason::Rule(why) => give_up_reason(*why),
        Reason::Budget(refusal) => refusal_words(refusal),
        Reason::HintTooLong {
            source,
            asked,
            max_hint,
        } => {
            let (asked, max_hint) = format_apart(*asked, *max_hint);
            format!(
                "the server's {source} asks for a wait of {asked}, longer than --max-hint \
                 ({max_hint})"
            )
        }
        Reason::NotTransient { found, .. } if found.is_empty() => {
            "its failure is not known to be transient (a --transient-pattern may name it)".into()
        }
        Reason::NotTransient { wanted, found } => {
            format!("its failure ({found}) is not one --transient={wanted} retries")
        }
        Reason::HookFailed => "the --on-retry hook failed".into(),
        Reason::DeadlineDuringHook => "the deadline passed during --on-retry".into(),
        Reason::DeadlinePassed => "the deadline has passed".into(),
        Reason::WaitPastDeadline(delay) => format!(
            "the next wait ({}) would end at or past the deadline",
            format_human(*delay)
        ),
        Reason::DeadlineStoppedRun(run) => {
            format!("the deadline stopped run {run} before it ended")
        }
    }
}

/// Why a run gives up, as its closing line ends: [`reason_words`], the streak cut short
/// (`... after 1 of 3 successes in a row`) and, under `--successes N`, the longest streak
/// (`; the longest streak was 2 of 3 successes in a row`).
pub fn give_up_words(
    reason: &Reason,
    cut: Option<StreakCut>,
    shape: Shape,
    longest: u64,
) -> String {
    let mut why = reason_words(reason);
    if let Some(StreakCut { current, needed }) = cut {
        why.push_str(&format!(" after {current} of {needed} successes in a row"));
    }
    if let Shape::Streak(needed) = shape {
        why.push_str(&format!(
            "; the longest streak was {longest} of {needed} successes in a row"
        ));
    }
    why
}

/// A time of the budget's store (epoch milliseconds) as RFC 3339, to the second.
fn store_time(ms: u64) -> String {
    humantime::format_rfc3339_seconds(from_epoch_ms(ms)).to_string()
}

/// The budget's refusal in words (`retry budget for api is spent`).
pub fn refusal_words(refusal: &Refusal) -> String {
    match refusal {
        Refusal::BreakerOpen { key, until_ms } => format!(
            "circuit breaker for {key} is open until {}",
            store_time(*until_ms)
        ),
        Refusal::BreakerProbing { key, until_ms } => format!(
            "circuit breaker for {key} is half-open and another run is probing (until {} at \
             most)",
            store_time(*until_ms)
        ),
        Refusal::Spent { key } => format!("retry budget for {key} is spent"),
        Refusal::CooldownPastDeadline { key, until_ms } => format!(
            "the shared cooldown of budget {key} lasts until {}, past the deadline",
            store_time(*until_ms)
        ),
        Refusal::CooldownTooLong {
            key,
            until_ms,
            max_hint,
        } => format!(
            "the shared cooldown of budget {key} lasts until {}, longer than --max-hint ({})",
            store_time(*until_ms),
            format_human(*max_hint)
        ),
    }
}

/// `--lock` held by another run, in words (`--lock /x is held by pid 12`).
pub fn lock_busy_words(busy: &LockBusy) -> String {
    let by = busy
        .holder
        .map_or("another process".to_string(), |pid| format!("pid {pid}"));
    let shown = escape(&busy.path.display().to_string());
    match busy.wait {
        w if w.is_zero() => format!("--lock {shown} is held by {by}"),
        _ if busy.at_deadline => format!(
            "--lock {shown} is still held by {by} at the deadline, after waiting {}",
            format_human(busy.waited)
        ),
        _ => format!(
            "--lock {shown} is still held by {by} after waiting {}",
            format_human(busy.waited)
        ),
    }
}

/// Why a run ended without success of its own accord, in the words of its closing line.
pub fn why_words(why: &Why) -> String {
    match why {
        Why::GaveUp {
            reason,
            cut,
            shape,
            longest,
        } => give_up_words(reason, *cut, *shape, *longest),
        Why::Refused(refusal) => refusal_words(refusal),
        Why::LockBusy(busy) => lock_busy_words(busy),
    }
}

/// The line said before the closing line when the recording of stdin failed.
pub fn stdin_lost_line(lost: &StdinLost) -> String {
    format!(
        "{}; not retrying: attempt {} would see only part of stdin",
        lost.why, lost.next
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::hints::HintSource;
    use retry_tool_backoff::GiveUp;

    const SECS: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn each_reason_in_its_words() {
        let cases = [
            (Reason::CannotRun, "the command could not be run"),
            (Reason::OutputMatched, "its output matched --stop-if-output"),
            (Reason::StatusNotRetried(2), "status 2 is not retried"),
            (Reason::HttpNotRetried(404), "HTTP 404 is not retried"),
            (
                Reason::ReaderGone(Stream::Stdout),
                "the reader of stdout is gone",
            ),
            (
                Reason::ReaderGone(Stream::Stderr),
                "the reader of stderr is gone",
            ),
            (Reason::StdinLost, "stdin could not be recorded whole"),
            (
                Reason::IoLost,
                "its input or output could not be passed on whole",
            ),
            (
                Reason::CrashLoop {
                    runs: 3,
                    reset_after: Some(SECS(60)),
                },
                "3 runs in a row ended within --reset-after (1m): a crash loop",
            ),
            (
                Reason::CrashLoop {
                    runs: 1,
                    reset_after: None,
                },
                "no restarts left: 1 run (--reset-after 0 or inf: every run counts, none starts \
                 the count afresh)",
            ),
            (Reason::Rule(GiveUp::RetriesUsedUp), "no retries left"),
            (
                Reason::Rule(GiveUp::DeadlinePassed),
                "the deadline has passed",
            ),
            (
                Reason::Rule(GiveUp::DelayPastDeadline(Duration::from_millis(1500))),
                "the next delay (1.5s) would end at or past the deadline",
            ),
            (
                Reason::Budget(Refusal::Spent {
                    key: crate::types::BudgetKey::new(b"api".to_vec()).unwrap(),
                }),
                "retry budget for api is spent",
            ),
            (
                Reason::HintTooLong {
                    source: HintSource::RetryAfter,
                    asked: SECS(7200),
                    max_hint: SECS(3600),
                },
                "the server's Retry-After asks for a wait of 2h, longer than --max-hint (1h)",
            ),
            (
                Reason::NotTransient {
                    wanted: crate::transient::Classes::parse_list("dns").unwrap(),
                    found: crate::transient::Classes::parse_list("connect").unwrap(),
                },
                "its failure (connect) is not one --transient=dns retries",
            ),
            (
                Reason::NotTransient {
                    wanted: crate::transient::Classes::all(),
                    found: crate::transient::Classes::default(),
                },
                "its failure is not known to be transient (a --transient-pattern may name it)",
            ),
            (Reason::HookFailed, "the --on-retry hook failed"),
            (
                Reason::DeadlineDuringHook,
                "the deadline passed during --on-retry",
            ),
            (Reason::DeadlinePassed, "the deadline has passed"),
            (
                Reason::WaitPastDeadline(SECS(3)),
                "the next wait (3s) would end at or past the deadline",
            ),
            (
                Reason::DeadlineStoppedRun(4),
                "the deadline stopped run 4 before it ended",
            ),
        ];
        for (reason, words) in cases {
            assert_eq!(reason_words(&reason), words, "{reason:?}");
        }
    }

    #[test]
    fn a_streak_cut_short_and_the_longest_streak() {
        let cut = Some(StreakCut {
            current: 1,
            needed: 3,
        });
        assert_eq!(
            give_up_words(&Reason::DeadlinePassed, cut, Shape::Streak(3), 2),
            "the deadline has passed after 1 of 3 successes in a row; the longest streak was \
             2 of 3 successes in a row"
        );
        assert_eq!(
            give_up_words(&Reason::Rule(GiveUp::RetriesUsedUp), None, Shape::Plain, 0),
            "no retries left"
        );
        let lost = StdinLost {
            why: "cannot record stdin: disk full".into(),
            next: 2,
        };
        assert_eq!(
            stdin_lost_line(&lost),
            "cannot record stdin: disk full; not retrying: attempt 2 would see only part of \
             stdin"
        );
    }

    #[test]
    fn each_refusal_and_a_busy_lock_in_their_words() {
        let key = || crate::types::BudgetKey::new(b"api".to_vec()).unwrap();
        let until_ms = 1_767_225_600_123;
        let cases = [
            (
                Refusal::BreakerOpen {
                    key: key(),
                    until_ms,
                },
                "circuit breaker for api is open until 2026-01-01T00:00:00Z",
            ),
            (
                Refusal::BreakerProbing {
                    key: key(),
                    until_ms,
                },
                "circuit breaker for api is half-open and another run is probing (until \
                 2026-01-01T00:00:00Z at most)",
            ),
            (
                Refusal::CooldownPastDeadline {
                    key: key(),
                    until_ms,
                },
                "the shared cooldown of budget api lasts until 2026-01-01T00:00:00Z, past the \
                 deadline",
            ),
            (
                Refusal::CooldownTooLong {
                    key: key(),
                    until_ms,
                    max_hint: SECS(90),
                },
                "the shared cooldown of budget api lasts until 2026-01-01T00:00:00Z, longer \
                 than --max-hint (1m 30s)",
            ),
        ];
        for (refusal, words) in cases {
            assert_eq!(why_words(&Why::Refused(refusal.clone())), words);
        }
        let busy = |wait, at_deadline| LockBusy {
            path: "/run/x\ny".into(),
            holder: Some(12),
            wait: SECS(wait),
            waited: Duration::from_millis(2500),
            at_deadline,
        };
        assert_eq!(
            lock_busy_words(&busy(0, false)),
            "--lock /run/x\\ny is held by pid 12"
        );
        assert_eq!(
            lock_busy_words(&busy(5, true)),
            "--lock /run/x\\ny is still held by pid 12 at the deadline, after waiting 2.5s"
        );
        let nobody = LockBusy {
            holder: None,
            ..busy(5, false)
        };
        assert_eq!(
            lock_busy_words(&nobody),
            "--lock /run/x\\ny is still held by another process after waiting 2.5s"
        );
    }
}
