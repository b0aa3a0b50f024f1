//! Signals to events: a signal-hook thread feeding the supervisor's channel.
//!
//! SIGCHLD becomes [`Event::Child`], so the end of an attempt is noticed at once, without
//! polling; the signals retry forwards become [`Event::Signal`], marked when the kernel sent them
//! (a terminal's Ctrl-C or hangup), which signal-hook's `extended-siginfo` reveals.

use std::io;
use std::sync::mpsc::{Receiver, channel};
use std::thread;

use signal_hook::consts::{SIGCHLD, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2};
use signal_hook::iterator::SignalsInfo;
use signal_hook::iterator::exfiltrator::WithOrigin;
use signal_hook::low_level::siginfo::Cause;

/// Signals that reach the running attempt and stop the retrying.
pub const STOP_SIGNALS: [i32; 4] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT];
/// Signals passed on to the running attempt; retrying goes on.
pub const PASS_ON_SIGNALS: [i32; 2] = [SIGUSR1, SIGUSR2];

/// What the supervisor hears about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A child changed state: reap.
    Child,
    /// retry received `signal`; `from_kernel` when the kernel sent it (a terminal's Ctrl-C,
    /// Ctrl-\ or hangup), not another process's `kill`.
    Signal {
        /// The signal number.
        signal: i32,
        /// Sent by the kernel (si_code SI_KERNEL).
        from_kernel: bool,
    },
}

/// Clears the signal mask, installs the handlers and starts the thread that turns signals into
/// events. Call before any other thread starts (threads inherit the mask).
///
/// The mask survives `exec`, and some parents leave signals blocked: with SIGCHLD or TERM
/// blocked in every thread, neither an attempt's end nor a TERM would ever be noticed. So
/// retry unblocks every signal at start (coreutils `timeout` unblocks SIGCHLD and SIGALRM,
/// the ones it waits on), and each attempt starts with an empty mask too.
///
/// Signals that were ignored when retry started are left ignored, for retry and so for the
/// command: a POSIX shell starts an asynchronous list (`cmd &`) of a non-interactive shell with
/// INT and QUIT ignored (XCU 2.11, <https://pubs.opengroup.org/onlinepubs/9699919799/utilities/V3_chap02.html#tag_18_11>)
/// so that a terminal's Ctrl-C spares background jobs, and `nohup` ignores HUP; retry keeps
/// both promises. (coreutils `timeout` 9.1 catches INT, QUIT, HUP and TERM whatever their
/// disposition, so its command gets them at their default action.)
///
/// # Errors
/// When the mask cannot be set, a handler cannot be installed or the thread cannot start.
pub fn listen() -> io::Result<Receiver<Event>> {
    nix::sys::signal::pthread_sigmask(
        nix::sys::signal::SigmaskHow::SIG_SETMASK,
        Some(&nix::sys::signal::SigSet::empty()),
        None,
    )?;
    let mut wanted: Vec<i32> = STOP_SIGNALS
        .iter()
        .chain(&PASS_ON_SIGNALS)
        .copied()
        .filter(|&s| !crate::process::is_ignored(s))
        .collect();
    wanted.push(SIGCHLD);
    let mut signals = SignalsInfo::<WithOrigin>::new(&wanted)?;
    let (tx, rx) = channel();
    thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for origin in signals.forever() {
                let event = if origin.signal == SIGCHLD {
                    Event::Child
                } else {
                    Event::Signal {
                        signal: origin.signal,
                        from_kernel: matches!(origin.cause, Cause::Kernel),
                    }
                };
                if tx.send(event).is_err() {
                    break;
                }
            }
        })?;
    Ok(rx)
}
