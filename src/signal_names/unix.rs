//! Signal names on Unix: the system's table, as nix gives it.

use nix::sys::signal::Signal;

/// The number of `name` (`SIGTERM`).
pub fn number(name: &str) -> Option<i32> {
    name.parse::<Signal>().ok().map(|s| s as i32)
}

/// The name of `n`.
pub fn name(n: i32) -> Option<&'static str> {
    Signal::try_from(n).ok().map(Signal::as_str)
}

/// SIGABRT.
pub const ABORT: i32 = libc::SIGABRT;
/// SIGCHLD.
pub const CHILD: i32 = libc::SIGCHLD;
/// SIGCONT.
pub const CONTINUE: i32 = libc::SIGCONT;
/// SIGINT.
pub const INTERRUPT: i32 = libc::SIGINT;
/// SIGIO (SIGPOLL).
pub const IO: i32 = libc::SIGIO;
/// SIGKILL.
pub const KILL: i32 = libc::SIGKILL;
/// SIGPIPE.
pub const PIPE: i32 = libc::SIGPIPE;
/// SIGTERM.
pub const TERMINATE: i32 = libc::SIGTERM;
