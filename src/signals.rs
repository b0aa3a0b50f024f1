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

/// Installs the handlers and starts the thread that turns signals into events.
///
/// Signals that were ignored when retry started are left ignored (as coreutils `timeout` does:
/// a background job of a non-interactive shell ignores INT and QUIT), so the child inherits that.
///
/// # Errors
/// When a handler cannot be installed or the thread cannot start.
pub fn listen() -> io::Result<Receiver<Event>> {
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
