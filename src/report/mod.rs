//! What retry says: progress on stderr (text lines, or JSON events with `--log-format json`),
//! and the `--dry-run` schedule, a table or JSON ([`fn@dry_run`], in `dry_run.rs`). The [`Reporter`] of a
//! run is in `reporter.rs`; what it says of the attempts and the run's end in `attempts.rs`;
//! about the splay and the retry budget in `protect.rs`; about the loop shapes, the lock and
//! `RETRY_ENV_FILE` in `loops.rs`. All of it is written through the run's one [`Writer`]
//! (`writer.rs`: the stream, colour, verbosity and format, the countdown of `live.rs`,
//! `--chronic`'s hold), which the run makes and the reporter holds; no state is kept in the
//! module.
//!
//! Progress names the program, never its arguments (they often hold tokens) unless
//! `--verbose`; both are escaped ([`fn@escape`]), so a newline in a name cannot forge a line.
//! `--quiet` silences progress, never errors. Writes to a closed stream are ignored rather than
//! panicking. In JSON, durations are seconds rounded to the microsecond (elapsed times and
//! attempt durations to the millisecond) and the seed is a string, as it may pass 2^53. Every
//! event of a run carries its `run_id` (the `RETRY_RUN_ID` of its attempts).

mod attempts;
mod colour;
mod dry_run;
mod lines;
mod live;
mod loops;
mod observer;
mod problems;
mod protect;
mod reasons;
mod reporter;
mod stopping;
mod words;
mod writer;

pub use self::attempts::Wait;
pub use self::dry_run::{DRY_RUN_UNLIMITED_ROWS, DryRun, NoteAbout, dry_run};
pub(crate) use self::lines::without_os_error;
pub use self::loops::{dry_run_loop, transient_note};
pub use self::observer::{ReportObserver, Shown};
pub use self::problems::problem_words;
pub use self::reasons::{
    give_up_words, lock_busy_words, reason_words, refusal_words, stdin_lost_line, why_words,
};
pub use self::reporter::{Reporter, error, error_line};
pub use self::stopping::StopPlan;
pub use self::words::outcome_words;
pub use self::writer::Writer;
pub use crate::escape::escape;
pub use crate::observe::HookEnd;
