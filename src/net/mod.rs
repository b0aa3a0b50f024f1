//! Bounded, interruptible I/O within the rule of [`crate::signals`]: every wait has a bound and
//! ends as soon as a stop signal is queued, so a server (or a lock holder) that never answers
//! costs its bound and no more, and a stop signal ends retry at once.
//!
//! - [`bounded`]: a blocking call that has no non-blocking form (a host name lookup, a
//!   `flock(2)`), made in a helper thread and waited for through a pipe.
//! - [`patience`]: how long the waits of one step may still take ([`Patience`]): a total of
//!   time spent waiting, or an instant.
//! - [`tcp`]: a host name looked up, a non-blocking TCP connect, bytes sent and received, each
//!   wait bounded by a [`Patience`].
//! - [`failure`]: why, in one type for all of them ([`Failure`]).
//! - `unix.rs`, `windows.rs`: how a socket is waited for on each system (`poll` beside the stop
//!   signals; `WSAPoll` in short steps), chosen here by `cfg`.
//!
//! The protocols stay with their users: RESP (the Redis store, [`crate::budget::redis_conn`])
//! and HTTP/1.1 (the OTLP export, [`crate::telemetry::http`]), each wording its own messages.
//! Retry's own code rather than the `redis` crate's connection or an HTTP client crate: those
//! block in `read(2)` and `connect(2)` (with socket time-outs at best), which a stop signal
//! cannot end, since signals are blocked in every thread of retry and arrive through a
//! signalfd or a self-pipe ([`crate::signals`]).

pub mod bounded;
pub mod failure;
pub mod patience;
pub mod tcp;
#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
use unix as os;
#[cfg(windows)]
use windows as os;

/// What a wait on a socket waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interest {
    /// Something to read (or the peer closed).
    Read,
    /// Room to write (or a connection made or refused).
    Write,
}

pub use bounded::Bounded;
pub use failure::{Failure, Step};
pub use patience::Patience;
