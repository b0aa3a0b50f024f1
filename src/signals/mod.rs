//! Signals and child ends as events for the supervisor, which waits on them with a time limit.
//!
//! On Linux (`linux.rs`) one thread does everything: the signals are blocked and read from a
//! `signalfd`, the running attempt's end from a `pidfd`, and every wait is the timeout of one
//! `ppoll`. Elsewhere (`portable.rs`) a signal-hook thread feeds a channel.
//!
//! retry's signal mask is cleared at start: the mask survives `exec`, and some parents leave
//! signals blocked; with SIGCHLD or TERM blocked, neither an attempt's end nor a TERM would be
//! noticed (coreutils `timeout` unblocks SIGCHLD and SIGALRM, the ones it waits on). Each
//! attempt starts with an empty mask too.
//!
//! Signals that were ignored when retry started are left ignored, for retry and so for the
//! command: a POSIX shell starts an asynchronous list (`cmd &`) of a non-interactive shell with
//! INT and QUIT ignored (XCU 2.11, <https://pubs.opengroup.org/onlinepubs/9699919799/utilities/V3_chap02.html#tag_18_11>)
//! so that a terminal's Ctrl-C spares background jobs, and `nohup` ignores HUP; retry keeps
//! both promises. (coreutils `timeout` 9.1 catches INT, QUIT, HUP and TERM whatever their
//! disposition, so its command gets them at their default action.) They are not blocked
//! either: Linux queues a blocked signal even when it is ignored.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(not(target_os = "linux"))]
mod portable;

#[cfg(target_os = "linux")]
pub use linux::Events;
#[cfg(not(target_os = "linux"))]
pub use portable::Events;

/// Signals that reach the running attempt and stop the retrying.
pub const STOP_SIGNALS: [i32; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];
/// Signals passed on to the running attempt; retrying goes on.
pub const PASS_ON_SIGNALS: [i32; 2] = [libc::SIGUSR1, libc::SIGUSR2];

/// What the supervisor hears about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A child changed state (the attempt's pidfd became readable, or SIGCHLD): reap.
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
