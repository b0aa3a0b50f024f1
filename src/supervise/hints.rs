//! The next delay with a server's hint: at least what the server asked for (even past
//! `--cap`), unless it asks for more than `--max-hint`, which makes retry give up at once.

use std::time::{Duration, SystemTime};

use super::Supervisor;
use crate::duration::format_secs;
use crate::hints::Hint;
use crate::report::Wait;

impl Supervisor<'_> {
    /// The wait before the next attempt: the schedule's `scheduled` delay, or the wait `hint`
    /// asks for from now when that is longer (the hint is then named). `Err` is why retry
    /// gives up instead: the hint asks for more than `--max-hint`.
    pub(super) fn hinted_delay(
        &self,
        scheduled: Duration,
        hint: Option<Hint>,
    ) -> Result<Wait, String> {
        hinted(scheduled, hint, self.config.max_hint, SystemTime::now())
    }
}

/// [`Supervisor::hinted_delay`] at wall-clock time `now`.
fn hinted(
    scheduled: Duration,
    hint: Option<Hint>,
    max_hint: Duration,
    now: SystemTime,
) -> Result<Wait, String> {
    let Some(hint) = hint else {
        return Ok(Wait {
            delay: scheduled,
            hint: None,
        });
    };
    let asked = hint.wait_from(now);
    if asked > max_hint {
        return Err(format!(
            "the server's {} asks for a wait of {}, longer than --max-hint ({})",
            hint.source,
            format_secs(asked),
            format_secs(max_hint)
        ));
    }
    Ok(if asked > scheduled {
        Wait {
            delay: asked,
            hint: Some(hint.source),
        }
    } else {
        Wait {
            delay: scheduled,
            hint: None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hints::HintSource;

    fn at(now: SystemTime, secs: u64) -> Option<Hint> {
        Some(Hint {
            not_before: now + Duration::from_secs(secs),
            source: HintSource::RetryAfter,
        })
    }

    #[test]
    fn the_longer_of_the_schedule_and_the_hint() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600);
        let max = Duration::from_secs(3600);
        let two = Duration::from_secs(2);
        assert_eq!(
            hinted(two, None, max, now),
            Ok(Wait {
                delay: two,
                hint: None
            })
        );
        assert_eq!(
            hinted(two, at(now, 30), max, now),
            Ok(Wait {
                delay: Duration::from_secs(30),
                hint: Some(HintSource::RetryAfter)
            })
        );
        // A shorter hint (or one in the past) sets nothing and is not named.
        assert_eq!(
            hinted(two, at(now, 1), max, now),
            Ok(Wait {
                delay: two,
                hint: None
            })
        );
        let past = Some(Hint {
            not_before: now - Duration::from_secs(60),
            source: HintSource::RetryAfter,
        });
        assert_eq!(hinted(two, past, max, now).unwrap().delay, two);
        // Exactly --max-hint is honoured; beyond it, retry gives up naming the hint.
        assert_eq!(hinted(two, at(now, 3600), max, now).unwrap().delay, max);
        assert_eq!(
            hinted(two, at(now, 7200), max, now),
            Err(
                "the server's Retry-After asks for a wait of 7200.000s, longer than \
                 --max-hint (3600.000s)"
                    .to_string()
            )
        );
    }
}
