//! The `--dry-run` table: the delays a real run would wait if every attempt failed at once.

use std::io::{self, Write};
use std::time::Duration;

use rand::Rng;

use crate::duration::format_human_nonzero;
use retry_tool_backoff::{GiveUpRule, Limits, Policy};

/// Rows shown by `--dry-run` when retries are unlimited.
pub const DRY_RUN_UNLIMITED_ROWS: u64 = 20;

/// The most rows `--dry-run` shows for a finite `-n`: `-n 18446744073709551615` would otherwise
/// print for ever; the line after them says how many more there are.
pub const DRY_RUN_MOST_ROWS: u64 = 1000;

/// The most rows past the shown ones that [`rows_not_shown`] counts: a deadline far off with
/// tiny delays would otherwise have it count for ever.
const MOST_COUNTED: u64 = 1_000_000;

/// The line after the rows of unlimited retries: that they go on without end, or, with a
/// deadline, how many more rows it lets through (counted on by the same rule, up to
/// [`MOST_COUNTED`]).
fn rows_not_shown<R: Rng + ?Sized>(
    budget: &mut GiveUpRule,
    mut total: Duration,
    deadline: Option<Duration>,
    rng: &mut R,
) -> String {
    const LEAD: &str = "...   ";
    let Some(deadline) = deadline else {
        return match budget.limits().max_retries {
            None => {
                format!("{LEAD} more rows not shown: the retries go on without end (-n unlimited)")
            }
            Some(n) => format!(
                "{LEAD} {} more rows not shown (-n {n})",
                n.saturating_sub(budget.granted())
            ),
        };
    };
    let mut more = 0;
    while more < MOST_COUNTED {
        let Ok(delay) = budget.next_delay(total, None, rng) else {
            break;
        };
        total = total.saturating_add(delay);
        more += 1;
    }
    let until = format_human_nonzero(deadline);
    match more {
        0 => format!("{LEAD} no more rows: the next retry would reach --deadline {until}"),
        1 => format!("{LEAD} 1 more row not shown, before --deadline {until}"),
        MOST_COUNTED => {
            format!("{LEAD} over {MOST_COUNTED} more rows not shown, before --deadline {until}")
        }
        n => format!("{LEAD} {n} more rows not shown, before --deadline {until}"),
    }
}

/// Writes the `--dry-run` table: a header line beginning with `retry`, then, with `--splay`, a
/// row `splay` with the drawn `splay` (the wait before the first attempt), then one row per
/// planned retry: its number (from 1), the delay and the cumulative delay (the splay
/// included), in the closing line's form ([`format_human_nonzero`]: `2m`, `2h 37m`, `1ns`). The retries a real run would grant if every attempt failed at once, by the same
/// [`GiveUpRule`]: at most `max_retries` rows ([`DRY_RUN_UNLIMITED_ROWS`] when unlimited, and
/// no more than [`DRY_RUN_MOST_ROWS`]), and no
/// row whose cumulative delay reaches `deadline` (nor any after it); when unlimited rows are
/// cut, a line `...` says so and how many more there are (`rows_not_shown`). Then `stop`, a line
/// saying how an attempt is stopped ([`super::StopPlan::dry_run_line`]), if any.
///
/// # Errors
/// Write errors from `out` (a closed pipe, say).
pub fn dry_run<W: Write, R: Rng + ?Sized>(
    out: &mut W,
    policy: &Policy,
    max_retries: Option<u64>,
    deadline: Option<Duration>,
    splay: Option<Duration>,
    stop: Option<&str>,
    rng: &mut R,
) -> io::Result<()> {
    writeln!(out, "{:<6} {:>12} {:>14}", "retry", "delay", "cumulative")?;
    if let Some(splay) = splay {
        let shown = format_human_nonzero(splay);
        writeln!(out, "{:<6} {shown:>12} {shown:>14}", "splay")?;
    }
    let rows = max_retries.map_or(DRY_RUN_UNLIMITED_ROWS, |n| n.min(DRY_RUN_MOST_ROWS));
    let limits = Limits {
        max_retries,
        deadline,
    };
    let mut budget = GiveUpRule::new(policy.schedule(), limits);
    // The deadline counts from the start, splay included.
    let mut total = splay.unwrap_or(Duration::ZERO);
    let mut shown = 0;
    for retry in 1..=rows {
        let Ok(delay) = budget.next_delay(total, None, rng) else {
            break;
        };
        total = total.saturating_add(delay);
        shown = retry;
        writeln!(
            out,
            "{retry:<6} {:>12} {:>14}",
            format_human_nonzero(delay),
            format_human_nonzero(total)
        )?;
    }
    if shown == rows && max_retries.is_none_or(|n| n > rows) {
        writeln!(out, "{}", rows_not_shown(&mut budget, total, deadline, rng))?;
    }
    if let Some(line) = stop {
        writeln!(out, "{line}")?;
    }
    out.flush()
}
