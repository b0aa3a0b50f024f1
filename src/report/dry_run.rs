//! The `--dry-run` table: the delays a real run would wait if every attempt failed at once.

use std::io::{self, Write};
use std::time::Duration;

use rand::Rng;

use crate::backoff::{GiveUpRule, Limits, Policy};
use crate::duration::format_human_nonzero;

/// Rows shown by `--dry-run` when retries are unlimited.
pub const DRY_RUN_UNLIMITED_ROWS: u64 = 20;

/// Writes the `--dry-run` table: a header line beginning with `retry`, then, with `--splay`, a
/// row `splay` with the drawn `splay` (the wait before the first attempt), then one row per
/// planned retry: its number (from 1), the delay and the cumulative delay (the splay
/// included), in the closing line's form ([`format_human_nonzero`]: `2m`, `2h 37m`, `1ns`). The retries a real run would grant if every attempt failed at once, by the same
/// [`GiveUpRule`]: at most `max_retries` rows ([`DRY_RUN_UNLIMITED_ROWS`] when unlimited), and no
/// row whose cumulative delay reaches `deadline` (nor any after it). Then `stop`, a line
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
    let rows = max_retries.unwrap_or(DRY_RUN_UNLIMITED_ROWS);
    let limits = Limits {
        max_retries,
        deadline,
    };
    let mut budget = GiveUpRule::new(policy.schedule(), limits);
    // The deadline counts from the start, splay included.
    let mut total = splay.unwrap_or(Duration::ZERO);
    for retry in 1..=rows {
        let Ok(delay) = budget.next_delay(total, None, rng) else {
            break;
        };
        total = total.saturating_add(delay);
        writeln!(
            out,
            "{retry:<6} {:>12} {:>14}",
            format_human_nonzero(delay),
            format_human_nonzero(total)
        )?;
    }
    if let Some(line) = stop {
        writeln!(out, "{line}")?;
    }
    out.flush()
}
