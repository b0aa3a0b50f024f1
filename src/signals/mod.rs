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
//! [`wait_ready`], which also returns as soon as a stop signal (INT, TERM, HUP, QUIT) is
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
    not(linux_native),
    not(any(target_os = "macos", target_os = "freebsd"))
))]
mod poll;
#[cfg(not(linux_native))]
mod portable;

#[cfg(all(not(linux_native), any(target_os = "macos", target_os = "freebsd")))]
use kqueue as waiter;
#[cfg(all(
    not(linux_native),
    not(any(target_os = "macos", target_os = "freebsd"))
))]
use poll as waiter;

#[cfg(linux_native)]
pub use linux::Events;
#[cfg(not(linux_native))]
pub use portable::Events;

/// What a wait outside the event loop came to ([`wait_ready`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ready {
    /// The descriptor is ready (or has an error or hang-up: the next call says which).
    Ready,
    /// A stop signal is queued: give up the wait; the event loop ends the run by it.
    Stop,
    /// The time limit passed.
    TimedOut,
}

/// Whether a stop signal (INT, TERM, HUP, QUIT) has arrived, still queued for the event loop
/// or read by it already (either way the run is ending). Always `false` before
/// [`Events::listen`] (the signals then have their default action and end retry themselves).
pub fn stop_arrived() -> bool {
    #[cfg(linux_native)]
    return linux::stop_arrived();
    #[cfg(not(linux_native))]
    return portable::stop_arrived();
}

/// The signals for which retry has installed a handler of its own (none on Linux's native
/// path, which reads them from a signalfd): a child sets them back to the default before exec.
pub fn caught() -> Vec<i32> {
    #[cfg(linux_native)]
    return Vec::new();
    #[cfg(not(linux_native))]
    return portable::caught();
}

/// Whether a signal whose `si_code` is `code` was sent by the kernel (a terminal's Ctrl-C,
/// Ctrl-\ or hangup) rather than by a process (`kill`, `sigqueue`): Linux and FreeBSD say
/// `SI_KERNEL`; on macOS, whose terminal signals carry no code of their own, whatever is not
/// one of the `SI_USER`..`SI_MESGQ` codes a process or timer gives (not checked on a Mac here).
#[cfg_attr(linux_native, allow(dead_code))]
fn from_kernel(code: i32) -> bool {
    #[cfg(target_os = "linux")]
    return code == 0x80;
    #[cfg(target_os = "freebsd")]
    return code == 0x10006;
    #[cfg(not(any(target_os = "linux", target_os = "freebsd")))]
    return !(0x10001..=0x10005).contains(&code);
}

/// Waits until `fd` is ready for `events` (`POLLIN`, `POLLOUT`; an error or hang-up counts as
/// ready), a stop signal is queued ([`stop_arrived`]), or `until` passes (`None`: no time
/// limit), whichever comes first; at once [`Ready::Stop`] when one has arrived before. The one
/// way retry waits outside its event loop.
pub fn wait_ready(
    fd: std::os::fd::BorrowedFd<'_>,
    events: nix::poll::PollFlags,
    until: Option<std::time::Instant>,
) -> Ready {
    #[cfg(linux_native)]
    return linux::wait_ready(fd, events, until);
    #[cfg(not(linux_native))]
    return portable::wait_ready(fd, events, until);
}

/// Sets SIGCHLD back to its default action if it was ignored (see the module documentation).
fn reap_own_children() {
    if crate::process::is_ignored(libc::SIGCHLD) {
        // SAFETY: SIG_DFL installs no handler; called from `listen`, before other threads.
        unsafe { libc::signal(libc::SIGCHLD, libc::SIG_DFL) };
    }
}

/// Signals that reach the running attempt and stop the retrying.
pub const STOP_SIGNALS: [i32; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];
/// Signals passed on to the running attempt; retrying goes on.
pub const PASS_ON_SIGNALS: [i32; 2] = [libc::SIGUSR1, libc::SIGUSR2];

/// What the supervisor hears about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A child changed state (the attempt's pidfd or kqueue event, or SIGCHLD): reap.
    Child,
    /// retry received `signal`; `from_kernel` when the kernel sent it (a terminal's Ctrl-C,
    /// Ctrl-\ or hangup), not another process's `kill`.
    Signal {
        /// The signal number.
        signal: i32,
        /// Sent by the kernel (`si_code` `SI_KERNEL`).
        from_kernel: bool,
    },
}

/// The signals retry listens to: the stop and pass-on signals not ignored at start, and CHLD.
fn wanted() -> Vec<i32> {
    let mut wanted: Vec<i32> = STOP_SIGNALS
        .iter()
        .chain(&PASS_ON_SIGNALS)
        .copied()
        .filter(|&s| !crate::process::is_ignored(s))
        .collect();
    wanted.push(libc::SIGCHLD);
    wanted
}

/// Clears the calling thread's signal mask (see the module's documentation).
fn clear_mask() -> std::io::Result<()> {
    nix::sys::signal::pthread_sigmask(
        nix::sys::signal::SigmaskHow::SIG_SETMASK,
        Some(&nix::sys::signal::SigSet::empty()),
        None,
    )?;
    Ok(())
}
