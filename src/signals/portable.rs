//! Signals as events outside Linux: a signal-hook thread feeding a channel (no signalfd or
//! pidfd there); the attempt's end arrives as SIGCHLD.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread;
use std::time::Instant;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use signal_hook::iterator::SignalsInfo;
use signal_hook::iterator::exfiltrator::WithOrigin;
use signal_hook::low_level::siginfo::Cause;

use super::{Event, Ready};

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
        if STOP_WAKE.get().is_none() {
            let (read, write) = nix::unistd::pipe()?;
            let _ = STOP_WAKE.set((read, write));
        }
        thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                for origin in signals.forever() {
                    if super::STOP_SIGNALS.contains(&origin.signal) {
                        STOPPED.store(true, Ordering::Release);
                        if let Some((_, write)) = STOP_WAKE.get() {
                            let _ = nix::unistd::write(write, b"x");
                        }
                    }
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

/// A stop signal has arrived (it ends the run: the flag is never cleared).
static STOPPED: AtomicBool = AtomicBool::new(false);
/// A pipe the signal thread writes to on a stop signal, to wake [`wait_ready`].
static STOP_WAKE: OnceLock<(OwnedFd, OwnedFd)> = OnceLock::new();

/// Whether a stop signal has arrived.
pub(super) fn stop_arrived() -> bool {
    STOPPED.load(Ordering::Acquire)
}

/// Waits until `fd` is ready for `events`, a stop signal arrives, or `until` passes.
pub(super) fn wait_ready(fd: BorrowedFd<'_>, events: PollFlags, until: Option<Instant>) -> Ready {
    loop {
        if stop_arrived() {
            return Ready::Stop;
        }
        let left = until.map(|t| t.saturating_duration_since(Instant::now()));
        if left.is_some_and(|l| l.is_zero()) {
            return Ready::TimedOut;
        }
        // poll's timeout is whole milliseconds, at most about 24 days: wait again if need be.
        let timeout = left.map_or(PollTimeout::NONE, |l| {
            PollTimeout::try_from(l.as_millis().max(1)).unwrap_or(PollTimeout::MAX)
        });
        let mut fds = vec![PollFd::new(fd, events)];
        if let Some((read, _)) = STOP_WAKE.get() {
            fds.push(PollFd::new(read.as_fd(), PollFlags::POLLIN));
        }
        match poll(&mut fds, timeout) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => {}
            Ok(_) if fds[0].revents().is_some_and(|r| !r.is_empty()) && !stop_arrived() => {
                return Ready::Ready;
            }
            Ok(_) => {}
            Err(_) => return Ready::Ready,
        }
    }
}
