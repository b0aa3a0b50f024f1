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
//! What differs by system is in `unix.rs` and `windows.rs`, chosen here by `cfg` (`os`): the
//! pipe type, how a pump waits for output and drains a pipe without blocking, and how an I/O
//! thread is cancelled; on Windows what an attempt's leftovers write after it is not passed on.

mod activity;
mod attempt;
mod chronic;
mod matcher;
mod out;
mod pump;
mod release;
mod replay;
mod report;
mod rest;
mod run;
mod settings;
mod tasks;
#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
use unix as os;
#[cfg(windows)]
use windows as os;

pub use attempt::AttemptIo;
pub use chronic::WriteOut;
pub use matcher::{Findings, LineMatcher, MATCH_LINE_LIMIT, Rules};
pub use out::Out;
pub use release::{Release, Released};
pub use report::AttemptReport;
pub use rest::Rest;
pub use run::RunIo;
pub use settings::Settings;
pub use tasks::Tasks;
