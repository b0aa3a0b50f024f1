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

/// Whether a stop signal ([`STOP_SIGNALS`]) has arrived, still queued for the event loop
/// or read by it already (either way the run is ending). Always `false` before
/// [`Events::listen`] (the signals then have their default action and end retry themselves).
pub fn stop_arrived() -> bool {
    #[cfg(linux_native)]
    return linux::stop_arrived();
    #[cfg(not(linux_native))]
    return portable::stop_arrived();
}

/// Whether a signal whose `si_code` is `code` was sent by the kernel (a terminal's Ctrl-C,
/// Ctrl-\ or hangup) rather than by a process (`kill`, `sigqueue`): Linux and FreeBSD say
/// `SI_KERNEL`; on macOS, whose terminal signals carry no code of their own, whatever is not
/// one of the `SI_USER`..`SI_MESGQ` codes a process or timer gives (not checked on a Mac here).
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
    if crate::process::dispositions::is_ignored(libc::SIGCHLD) {
        // SAFETY: SIG_DFL installs no handler; called from `listen`, before other threads.
        unsafe { libc::signal(libc::SIGCHLD, libc::SIG_DFL) };
    }
}

/// The signals whose default action ends a process and that retry treats as a stop: passed
/// on to the running attempt or hook (with CONT), no further attempt, and retry ends as that
/// attempt ended (between attempts: by the signal itself, at once). INT, TERM, HUP and QUIT
/// as coreutils `timeout` catches them; ALRM is retry's timer, as `timeout`'s own: the attempt
/// is stopped as at its `--timeout` instead ([`ALARM`]); the rest so that no signal but KILL
/// ends retry while leaving what it started. BUS, SEGV, ILL, FPE, TRAP and SYS count only when
/// a process sends them (`kill`): a fault of retry's own still ends it at once, as it must
/// (the kernel forces the default action of a blocked fault signal; the portable handler
/// restores it). The table is in docs/timeouts-and-signals.md.
pub const STOP_SIGNALS: &[i32] = &[
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGALRM,
    libc::SIGVTALRM,
    libc::SIGPROF,
    libc::SIGXCPU,
    libc::SIGXFSZ,
    libc::SIGABRT,
    libc::SIGSYS,
    libc::SIGTRAP,
    libc::SIGBUS,
    libc::SIGSEGV,
    libc::SIGILL,
    libc::SIGFPE,
    #[cfg(any(target_os = "linux", target_os = "android"))]
    libc::SIGSTKFLT,
    #[cfg(any(target_os = "linux", target_os = "android"))]
    libc::SIGPWR,
    // Linux's SIGIO (SIGPOLL) ends a process by default; on the BSDs it is ignored.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    libc::SIGIO,
    #[cfg(any(target_os = "macos", target_os = "freebsd"))]
    libc::SIGEMT,
];

/// The stop signal that is retry's timer, as coreutils `timeout` takes SIGALRM for its own
/// (<https://github.com/coreutils/coreutils/blob/master/src/timeout.c>, `cleanup`): the running
/// attempt is stopped as at its `--timeout` (`--signal`, then KILL after `--kill-after`; status
/// 124 or 137) and not retried.
pub const ALARM: i32 = libc::SIGALRM;

/// The stop signals a terminal sends to its whole foreground process group (Ctrl-C, Ctrl-\,
/// hangup): sent by the kernel, they have already reached an attempt in retry's group.
const TERMINAL_SIGNALS: [i32; 3] = [libc::SIGINT, libc::SIGQUIT, libc::SIGHUP];

/// Signals passed on to the running attempt; retrying goes on: USR1, USR2 and the real-time
/// signals, which mean what an application makes them mean.
pub fn passed_on(signal: i32) -> bool {
    signal == libc::SIGUSR1
        || signal == libc::SIGUSR2
        || crate::stop_signal::realtime_range()
            .is_some_and(|(min, max)| (min..=max).contains(&signal))
}

/// Whether `signal` is one of [`STOP_SIGNALS`].
pub fn is_stop(signal: i32) -> bool {
    STOP_SIGNALS.contains(&signal)
}

/// Whether a signal with `si_code` `code` from the kernel has reached an attempt in retry's
/// process group too: a terminal's INT, QUIT or HUP ([`TERMINAL_SIGNALS`]); not the kernel's
/// XCPU or XFSZ for retry's own limits, nor ALRM from a timer.
fn from_terminal(signal: i32, code: i32) -> bool {
    TERMINAL_SIGNALS.contains(&signal) && from_kernel(code)
}

/// What the supervisor hears about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A child changed state (the attempt's pidfd or kqueue event, or SIGCHLD): reap.
    Child,
    /// retry received `signal`; `from_kernel` when the kernel sent it through the terminal (a
    /// terminal's Ctrl-C, Ctrl-\ or hangup), not another process's `kill`.
    Signal {
        /// The signal number.
        signal: i32,
        /// Sent by the kernel through the terminal: INT, QUIT or HUP with `si_code`
        /// `SI_KERNEL` (not XCPU, XFSZ or a timer's ALRM, which reach retry alone).
        from_kernel: bool,
    },
}

/// The signals retry listens to: the stop and pass-on signals not ignored at start, and CHLD.
fn wanted() -> Vec<i32> {
    let realtime = crate::stop_signal::realtime_range()
        .into_iter()
        .flat_map(|(min, max)| min..=max);
    let mut wanted: Vec<i32> = STOP_SIGNALS
        .iter()
        .copied()
        .chain([libc::SIGUSR1, libc::SIGUSR2])
        .chain(realtime)
        .filter(|&s| !crate::process::dispositions::is_ignored(s))
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
