//! Signals and child ends as events for the supervisor, which waits on them with a time limit,
//! on its one thread, the same interface on every system (chosen here by `cfg`):
//!
//! - Linux (`linux.rs`): the signals are blocked and read from a `signalfd`, the running
//!   attempt's end from a `pidfd`, and every wait is the timeout of one `ppoll`.
//! - macOS and FreeBSD (`portable.rs` with `kqueue.rs`), and the `portable` build on Linux
//!   (`portable.rs` with `poll.rs`): a `SA_SIGINFO` handler writes each signal into a
//!   self-pipe, which the loop waits on with `kevent` (which also watches the attempt's end,
//!   `EVFILT_PROC`) or `poll`.
//!
//! retry's signal mask is cleared at start: the mask survives `exec`, and some parents leave
//! signals blocked; with SIGCHLD or TERM blocked, neither an attempt's end nor a TERM would be
//! noticed (coreutils `timeout` unblocks SIGCHLD and SIGALRM, the ones it waits on). Each
//! attempt starts with an empty mask too.
//!
//! SIGCHLD is the exception: ignored by the parent (this survives `exec`), it would make the
//! kernel reap every attempt itself, leaving retry no status to read; retry sets it back to
//! its default action first, as coreutils `timeout` does.
//!
//! # The rule that keeps retry responsive
//! While its signals are blocked (from [`Events::listen`] on), retry makes no call that can
//! block without a bound shorter than the stop latency it promises, other than the event
//! loop's own wait ([`Events::wait`]). Every other wait (a write to its own stderr, a file
//! that may be a FIFO, a host name lookup, a socket, a lock) is non-blocking and driven by
//! [`wait_ready`], which also returns as soon as a stop signal ([`STOP_SIGNALS`]) is
//! queued, or is bounded both per operation *and* per round trip and checks
//! [`stop_arrived`]. A stop signal then ends retry at once: the signal stays queued for the
//! event loop, which ends the run by it.
//!
//! Signals that were ignored when retry started are left ignored, for retry and so for the
//! command: a POSIX shell starts an asynchronous list (`cmd &`) of a non-interactive shell with
//! INT and QUIT ignored (XCU 2.11, <https://pubs.opengroup.org/onlinepubs/9699919799/utilities/V3_chap02.html#tag_18_11>)
//! so that a terminal's Ctrl-C spares background jobs, and `nohup` ignores HUP; retry keeps
//! both promises. (coreutils `timeout` 9.1 catches INT, QUIT, HUP and TERM whatever their
//! disposition, so its command gets them at their default action.) They are not blocked
//! either (Linux queues a blocked signal even when it is ignored), nor caught.

#[cfg(all(not(linux_native), any(target_os = "macos", target_os = "freebsd")))]
mod kqueue;
#[cfg(linux_native)]
mod linux;
#[cfg(all(
    unix,
    not(linux_native),
    not(any(target_os = "macos", target_os = "freebsd"))
))]
mod poll;
#[cfg(all(unix, not(linux_native)))]
mod poll_timeout;
#[cfg(all(unix, not(linux_native)))]
mod portable;
#[cfg(windows)]
mod windows;

mod event;
#[cfg(unix)]
mod listen;
mod roles;

#[cfg(all(not(linux_native), any(target_os = "macos", target_os = "freebsd")))]
use kqueue as waiter;
#[cfg(all(
    unix,
    not(linux_native),
    not(any(target_os = "macos", target_os = "freebsd"))
))]
use poll as waiter;

#[cfg(linux_native)]
use linux as os;
#[cfg(all(unix, not(linux_native)))]
use portable as os;
#[cfg(windows)]
use windows as os;

pub use event::{Event, Ready};
#[cfg(unix)]
pub use listen::wake;
#[cfg(windows)]
pub use os::wake;
pub use os::{Events, stop_arrived, wait_ready};
pub use roles::{ALARM, STOP_SIGNALS, is_stop, passed_on};
