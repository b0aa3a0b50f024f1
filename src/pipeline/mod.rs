//! Pipeline I/O around attempts: `--replay-stdin`, `--stdout-on-success`, the output
//! conditions, `--http-hints`, `--idle-timeout` and `--chronic` (whose pumps write into the
//! run's held output, as do the hooks' through [`RunIo::capture`]). Without those flags none of
//! this runs: attempts inherit retry's descriptors.
//!
//! Every thread that may block on a reader or a writer (the output pumps, the release of a
//! held stdout, the passing on of what a successful attempt's leftovers write when the relay
//! cannot start) runs in a [`Tasks`] group, so the supervisor waits for it while still hearing
//! signals, and can leave it behind when told to stop. What those leftovers write is otherwise
//! handed to the relay ([`RunIo::relay`]), which outlives retry.
//!
//! On Windows the pipeline is not built yet (`windows.rs`): its flags are refused there.

#[cfg(unix)]
mod activity;
#[cfg(unix)]
mod attempt;
#[cfg(unix)]
mod cancel;
#[cfg(unix)]
mod chronic;
mod matcher;
mod out;
#[cfg(unix)]
mod pipes;
#[cfg(unix)]
mod pump;
#[cfg(unix)]
mod release;
#[cfg(unix)]
mod replay;
mod report;
#[cfg(unix)]
mod rest;
#[cfg(unix)]
mod run;
mod settings;
mod tasks;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
pub use attempt::AttemptIo;
#[cfg(unix)]
pub use chronic::WriteOut;
pub use matcher::{Findings, LineMatcher, MATCH_LINE_LIMIT, Rules};
pub use out::Out;
#[cfg(unix)]
pub use release::{Release, Released};
pub use report::AttemptReport;
#[cfg(unix)]
pub use rest::Rest;
#[cfg(unix)]
pub use run::RunIo;
pub use settings::Settings;
pub use tasks::Tasks;
#[cfg(windows)]
pub use windows::{AttemptIo, Release, Released, Rest, RunIo, WriteOut};
