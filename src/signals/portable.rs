//! Signals as events outside Linux: a signal-hook thread feeding a channel (no signalfd or
//! pidfd there); the attempt's end arrives as SIGCHLD.

use std::io;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread;
use std::time::Instant;

use signal_hook::iterator::SignalsInfo;
use signal_hook::iterator::exfiltrator::WithOrigin;
use signal_hook::low_level::siginfo::Cause;

use super::Event;

/// The channel the signal thread feeds.
#[derive(Debug)]
pub struct Events {
    rx: Receiver<Event>,
}

impl Events {
    /// Clears the mask, installs the handlers and starts the signal thread. Call before any
    /// other thread starts.
    ///
    /// # Errors
    /// When the mask cannot be set, a handler cannot be installed or the thread cannot start.
    pub fn listen() -> io::Result<Events> {
        super::clear_mask()?;
        let mut signals = SignalsInfo::<WithOrigin>::new(super::wanted())?;
        let (tx, rx) = channel();
        thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                for origin in signals.forever() {
                    let event = if origin.signal == libc::SIGCHLD {
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
        Ok(Events { rx })
    }

    /// The next event, waiting at most until `until` (`None`: no limit); `None` when that
    /// time came first.
    pub fn wait(&self, until: Option<Instant>) -> Option<Event> {
        match until {
            Some(t) => match self
                .rx
                .recv_timeout(t.saturating_duration_since(Instant::now()))
            {
                Ok(e) => Some(e),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => Some(Event::Child),
            },
            None => Some(self.rx.recv().unwrap_or(Event::Child)),
        }
    }

    /// The next queued event, without waiting.
    pub fn try_next(&self) -> Option<Event> {
        self.rx.try_recv().ok()
    }

    /// Watches child `pid` for its end: SIGCHLD does it here.
    pub fn watch_child(&self, _pid: i32) {}

    /// Stops watching the child.
    pub fn unwatch_child(&self) {}
}
