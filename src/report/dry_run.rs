//! The `--dry-run` schedule: the delays a real run would wait if every attempt failed at once,
//! as a table, or with `--log-format json` as one JSON object per row and per line after it.
//!
//! JSON events (on stdout, where the table goes): `dry_run_splay` (`delay`, `cumulative`),
//! `dry_run_retry` (`retry`, `delay`, `cumulative`), `dry_run_more` (`rows` not shown, `null`
//! when they go on without end; `over` when counting stopped there; `message`) and
//! `dry_run_note` (`about`: `stop`, `successes`, `until_fail`, `forever` or `lock`; `message`,
//! the text line's words). Durations are seconds exactly to the nanosecond (as near as a JSON
//! number gets), `null` for one without end (`inf`).

use std::io::{self, Write};
use std::time::{Duration, Instant};

use rand::Rng;
use serde_json::{Value, json};

use super::lines::json_line;
use crate::duration::{format_exact, is_unlimited};
use crate::types::LogFormat;
use retry_tool_backoff::{GiveUpRule, Limits, Policy};

/// Rows shown by `--dry-run` when retries are unlimited.
pub const DRY_RUN_UNLIMITED_ROWS: u64 = 20;

/// The most rows `--dry-run` shows for a finite `-n`: `-n 18446744073709551615` would otherwise
/// print for ever; the line after them says how many more there are.
pub const DRY_RUN_MOST_ROWS: u64 = 1000;

/// The most rows past the shown ones that [`rows_not_shown`] counts: a deadline far off with
/// tiny delays would otherwise have it count for ever.
const MOST_COUNTED: u64 = 1_000_000;

/// What a line after the table is about: its JSON name (`about`) and its text lead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoteAbout {
    /// How an attempt is stopped (`super::StopPlan::dry_run_line`).
    Stop,
    /// `--successes`.
    Successes,
    /// `--until-fail`.
    UntilFail,
    /// `--forever`.
    Forever,
    /// `--lock`.
    Lock,
    /// `--transient`.
    Transient,
}

impl NoteAbout {
    /// The JSON `about` of the note.
    fn name(self) -> &'static str {
        match self {
            NoteAbout::Stop => "stop",
            NoteAbout::Successes => "successes",
            NoteAbout::UntilFail => "until_fail",
            NoteAbout::Forever => "forever",
            NoteAbout::Lock => "lock",
            NoteAbout::Transient => "transient",
        }
    }

    /// The text line's lead before the words: `stop` in the table's first column, the others
    /// as the flag's name and a colon.
    fn lead(self) -> &'static str {
        match self {
            NoteAbout::Stop => "stop   ",
            NoteAbout::Successes => "successes: ",
            NoteAbout::UntilFail => "until-fail: ",
            NoteAbout::Forever => "forever: ",
            NoteAbout::Lock => "lock: ",
            NoteAbout::Transient => "transient: ",
        }
    }
}

/// What `--dry-run` shows: the schedule's settings and the lines after the table.
#[derive(Debug)]
pub struct DryRun<'a> {
    /// The policy whose delays the rows show.
    pub policy: &'a Policy,
    /// `--max-retries` (`None`: unlimited).
    pub max_retries: Option<u64>,
    /// `--deadline`: no row reaches it.
    pub deadline: Option<Duration>,
    /// The drawn `--splay`, the wait before the first attempt.
    pub splay: Option<Duration>,
    /// The lines after the table, in order: what each is about and its words.
    pub notes: Vec<(NoteAbout, String)>,
    /// Text or JSON.
    pub format: LogFormat,
    /// When retry started, for the JSON events' `elapsed`.
    pub start: Instant,
}

/// Seconds exactly to the nanosecond, as the nearest JSON number (`2.25`, `3.375`, `1e-9`);
/// `null` for a duration without end. (A run's JSON events round to the microsecond: the
/// dry run exists to show the schedule exactly.)
fn seconds(d: Duration) -> Value {
    if is_unlimited(d) {
        return Value::Null;
    }
    format!("{}.{:09}", d.as_secs(), d.subsec_nanos())
        .parse::<f64>()
        .map_or(Value::Null, Value::from)
}

/// Writes the output of one row or line: `text` in text mode, otherwise the JSON event
/// `event` with `fields`.
fn put<W: Write>(
    out: &mut W,
    plan: &DryRun<'_>,
    text: impl FnOnce() -> String,
    event: &str,
    fields: impl FnOnce() -> Value,
) -> io::Result<()> {
    match plan.format {
        LogFormat::Text => writeln!(out, "{}", text()),
        LogFormat::Json => out.write_all(&json_line(event, plan.start.elapsed(), None, fields())),
    }
}

/// The rows past the shown ones: how many (`None`: without end), whether counting stopped
/// at [`MOST_COUNTED`] with more to come, and the words of the line saying so.
struct NotShown {
    rows: Option<u64>,
    over: bool,
    words: String,
}

/// The line after the rows of unlimited retries: that they go on without end, or, with a
/// deadline, how many more rows it lets through (counted on by the same rule, up to
/// [`MOST_COUNTED`]).
fn rows_not_shown<R: Rng + ?Sized>(
    budget: &mut GiveUpRule,
    mut total: Duration,
    deadline: Option<Duration>,
    rng: &mut R,
) -> NotShown {
    let Some(deadline) = deadline else {
        return match budget.limits().max_retries {
            None => NotShown {
                rows: None,
                over: false,
                words: "more rows not shown: the retries go on without end (-n unlimited)".into(),
            },
            Some(n) => {
                let more = n.saturating_sub(budget.granted());
                NotShown {
                    rows: Some(more),
                    over: false,
                    words: format!("{more} more rows not shown (-n {n})"),
                }
            }
        };
    };
    let mut more = 0;
    let mut over = false;
    while let Ok(delay) = budget.next_delay(total, None, rng) {
        if more == MOST_COUNTED {
            over = true;
            break;
        }
        total = total.saturating_add(delay);
        more += 1;
    }
    let until = format_exact(deadline);
    let words = match more {
        0 => format!("no more rows: the next retry would reach --deadline {until}"),
        1 => format!("1 more row not shown, before --deadline {until}"),
        n if over => format!("over {n} more rows not shown, before --deadline {until}"),
        n => format!("{n} more rows not shown, before --deadline {until}"),
    };
    NotShown {
        rows: Some(more),
        over,
        words,
    }
}

/// Writes the `--dry-run` schedule of `plan`. As text: a header line beginning with `retry`,
/// then, with `--splay`, a row `splay` with the drawn splay (the wait before the first
/// attempt), then one row per planned retry: its number (from 1), the delay and the cumulative
/// delay (the splay included), exactly to the millisecond ([`format_exact`]: `2.25s`,
/// `1m 26.498s`, `500us`, `1ns`). The retries a real run would grant if every attempt failed
/// at once, by the same [`GiveUpRule`]: at most `max_retries` rows ([`DRY_RUN_UNLIMITED_ROWS`]
/// when unlimited, and no more than [`DRY_RUN_MOST_ROWS`]), and no row whose cumulative delay
/// reaches `deadline` (nor any after it); when rows are cut, a line `...` says so and how many
/// more there are (`rows_not_shown`). Then the notes, a line each (`stop   ...`,
/// `forever: ...`). With [`LogFormat::Json`], the same as JSON events (the module's
/// documentation), one a line, without the header.
///
/// # Errors
/// Write errors from `out` (a closed pipe, say).
pub fn dry_run<W: Write, R: Rng + ?Sized>(
    out: &mut W,
    plan: &DryRun<'_>,
    rng: &mut R,
) -> io::Result<()> {
    if plan.format == LogFormat::Text {
        writeln!(out, "{:<6} {:>12} {:>14}", "retry", "delay", "cumulative")?;
    }
    if let Some(splay) = plan.splay {
        let shown = format_exact(splay);
        put(
            out,
            plan,
            || format!("{:<6} {shown:>12} {shown:>14}", "splay"),
            "dry_run_splay",
            || json!({ "delay": seconds(splay), "cumulative": seconds(splay) }),
        )?;
    }
    let max_retries = plan.max_retries;
    let rows = max_retries.map_or(DRY_RUN_UNLIMITED_ROWS, |n| n.min(DRY_RUN_MOST_ROWS));
    let limits = Limits {
        max_retries,
        deadline: plan.deadline,
    };
    let mut budget = GiveUpRule::new(plan.policy.schedule(), limits);
    // The deadline counts from the start, splay included.
    let mut total = plan.splay.unwrap_or(Duration::ZERO);
    let mut shown = 0;
    for retry in 1..=rows {
        let Ok(delay) = budget.next_delay(total, None, rng) else {
            break;
        };
        total = total.saturating_add(delay);
        shown = retry;
        put(
            out,
            plan,
            || {
                format!(
                    "{retry:<6} {:>12} {:>14}",
                    format_exact(delay),
                    format_exact(total)
                )
            },
            "dry_run_retry",
            || json!({ "retry": retry, "delay": seconds(delay), "cumulative": seconds(total) }),
        )?;
    }
    if shown == rows && max_retries.is_none_or(|n| n > rows) {
        let more = rows_not_shown(&mut budget, total, plan.deadline, rng);
        put(
            out,
            plan,
            || format!("...    {}", more.words),
            "dry_run_more",
            || json!({ "rows": more.rows, "over": more.over, "message": more.words }),
        )?;
    }
    for (about, words) in &plan.notes {
        put(
            out,
            plan,
            || format!("{}{words}", about.lead()),
            "dry_run_note",
            || json!({ "about": about.name(), "message": words }),
        )?;
    }
    out.flush()
}
