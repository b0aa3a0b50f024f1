//! The next delay with a server's hint: at least what the server asked for (even past
//! `--cap`; the give-up rule applies it and the deadline), unless it asks for more than
//! `--max-hint`, which makes retry give up at once; the hint that set the delay is named.

use std::time::{Duration, SystemTime};

use crate::hints::Wait;
use crate::hints::{Hint, HintSource};
use crate::observe::reasons::Reason;

/// The wait `hint` asks for from now, and where it came from.
pub(super) fn asked(hint: Option<Hint>) -> Option<(Duration, HintSource)> {
    asked_at(hint, SystemTime::now())
}

/// [`asked`] at wall-clock time `now`.
fn asked_at(hint: Option<Hint>, now: SystemTime) -> Option<(Duration, HintSource)> {
    hint.map(|h| (h.wait_from(now), h.source))
}

/// The wait before the next attempt, given the `delay` the give-up rule granted with `hint`
/// (from [`asked`]) as its floor: the hint is named when it set the delay. `Err` is why retry
/// gives up instead: the hint asks for more than `max_hint` (`--max-hint`).
pub(super) fn checked(
    delay: Duration,
    hint: Option<(Duration, HintSource)>,
    max_hint: Duration,
) -> Result<Wait, Reason> {
    match hint {
        Some((asked, source)) if asked > max_hint => Err(Reason::HintTooLong {
            source,
            asked,
            max_hint,
        }),
        // The hint set the delay (a hint in the past, or shorter than the backoff, did not).
        Some((asked, source)) if !asked.is_zero() && asked == delay => Ok(Wait {
            delay,
            hint: Some(source),
        }),
        _ => Ok(Wait { delay, hint: None }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECS: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn a_hint_is_named_only_when_it_set_the_delay() {
        let max = SECS(3600);
        let ra = HintSource::RetryAfter;
        assert_eq!(
            checked(SECS(2), None, max),
            Ok(Wait {
                delay: SECS(2),
                hint: None
            })
        );
        assert_eq!(
            checked(SECS(30), Some((SECS(30), ra)), max),
            Ok(Wait {
                delay: SECS(30),
                hint: Some(ra)
            })
        );
        // Shorter than the backoff, or in the past: not named.
        assert_eq!(
            checked(SECS(2), Some((SECS(1), ra)), max).unwrap().hint,
            None
        );
        assert_eq!(
            checked(Duration::ZERO, Some((Duration::ZERO, ra)), max)
                .unwrap()
                .hint,
            None
        );
        // Exactly --max-hint is honoured; beyond it, retry gives up naming the hint.
        assert_eq!(checked(max, Some((max, ra)), max).unwrap().hint, Some(ra));
        assert_eq!(
            checked(SECS(7200), Some((SECS(7200), ra)), max),
            Err(Reason::HintTooLong {
                source: ra,
                asked: SECS(7200),
                max_hint: max
            })
        );
    }

    #[test]
    fn the_wait_asked_counts_from_now_and_a_past_hint_asks_none() {
        let now = SystemTime::UNIX_EPOCH + SECS(1_767_225_600);
        let at = |t: SystemTime| {
            Some(Hint {
                not_before: t,
                source: HintSource::AmzRetryAfter,
            })
        };
        assert_eq!(asked_at(None, now), None);
        assert_eq!(
            asked_at(at(now + SECS(5)), now),
            Some((SECS(5), HintSource::AmzRetryAfter))
        );
        assert_eq!(
            asked_at(at(now - SECS(5)), now),
            Some((Duration::ZERO, HintSource::AmzRetryAfter))
        );
    }
}
