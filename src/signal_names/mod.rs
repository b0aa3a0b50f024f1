//! Signal names and numbers, one interface on every system (chosen here by `cfg`): the
//! system's own table on Unix (`unix.rs`, through nix), and on Windows the few that mean
//! something there (`windows.rs`: the C runtime's numbers for the console's control events and
//! its faults). [`crate::codes`] and [`crate::stop_signal`] read names through it.

#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
use unix as os;
#[cfg(windows)]
use windows as os;

/// The number of the signal named `name` (upper case, `SIG` prefix included: `SIGTERM`), when
/// the system has one of that name.
pub fn number(name: &str) -> Option<i32> {
    os::number(name)
}

/// The name of signal `n` with its `SIG` prefix (`SIGTERM`), when the system names it.
pub fn name(n: i32) -> Option<&'static str> {
    os::name(n)
}

#[cfg(windows)]
pub use os::BREAK;
pub use os::{ABORT, CHILD, CONTINUE, INTERRUPT, IO, KILL, PIPE, TERMINATE};
