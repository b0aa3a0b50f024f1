//! The supervisor's one event source, on one thread: retry's signals read from a `signalfd`,
//! the attempt's end from a `pidfd`, and every wait and timeout as the timeout of one `ppoll`
//! on the monotonic clock. No signal handler, no helper thread, no periodic wake-up.
//!
//! The signals are blocked first (in the thread that later starts every other thread, so all
//! of them inherit the mask), which queues them for the `signalfd`; `ssi_code` still tells a
//! terminal's Ctrl-C (sent by the kernel, `SI_KERNEL`) from a `kill`. See signalfd(2),
//! pidfd_open(2) and ppoll(2).

use std::io;
use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd};
use std::time::Instant;

use nix::poll::{PollFd, PollFlags, ppoll};
use nix::sys::signal::{SigSet, SigmaskHow, Signal, sigprocmask};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::time::TimeSpec;

/// Signals that reach the running attempt and stop the retrying.
pub const STOP_SIGNALS: [i32; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];
/// Signals passed on to the running attempt; retrying goes on.
pub const PASS_ON_SIGNALS: [i32; 2] = [libc::SIGUSR1, libc::SIGUSR2];

/// `si_code` of a signal sent by the kernel (a terminal's Ctrl-C, Ctrl-\ or hangup).
const SI_KERNEL: i32 = 0x80;

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

/// The signalfd and the mask it needs.
#[derive(Debug)]
pub struct Waiter {
    signals: SignalFd,
}

impl Waiter {
    /// Blocks the stop signals, USR1, USR2 and CHLD in the calling thread and opens a
    /// `signalfd` for them. A signal that was ignored (SIG_IGN) when retry started stays
    /// ignored, so it never arrives.
    ///
    /// # Errors
    /// When the mask cannot be set or the `signalfd` cannot be opened.
    pub fn new() -> io::Result<Waiter> {
        let mut set = SigSet::empty();
        for &s in STOP_SIGNALS.iter().chain(&PASS_ON_SIGNALS) {
            set.add(Signal::try_from(s).map_err(io::Error::from)?);
        }
        set.add(Signal::SIGCHLD);
        sigprocmask(SigmaskHow::SIG_BLOCK, Some(&set), None)?;
        let signals = SignalFd::with_flags(&set, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)?;
        Ok(Waiter { signals })
    }

    /// Waits for the next event until `until` (`None`: no limit); `None` when that time
    /// came first. `child` is the running attempt's pidfd, if any. A queued event is returned
    /// even when `until` has already passed.
    pub fn wait(&self, until: Option<Instant>, child: Option<BorrowedFd<'_>>) -> Option<Event> {
        loop {
            if let Some(event) = self.read_signal() {
                return Some(event);
            }
            let timeout = until.map(|t| {
                let left = t.saturating_duration_since(Instant::now());
                TimeSpec::from_duration(left)
            });
            let mut fds = vec![PollFd::new(self.signals.as_fd(), PollFlags::POLLIN)];
            if let Some(fd) = child {
                fds.push(PollFd::new(fd, PollFlags::POLLIN));
            }
            match ppoll(&mut fds, timeout, None) {
                Ok(0) => return self.read_signal(),
                Ok(_) => {
                    let child_ready = fds
                        .get(1)
                        .and_then(PollFd::revents)
                        .is_some_and(|r| !r.is_empty());
                    if let Some(event) = self.read_signal() {
                        return Some(event);
                    }
                    if child_ready {
                        return Some(Event::Child);
                    }
                }
                Err(nix::errno::Errno::EINTR) => {}
                Err(_) => return Some(Event::Child),
            }
        }
    }

    /// The next queued signal, without waiting.
    pub fn try_next(&self) -> Option<Event> {
        self.read_signal()
    }

    fn read_signal(&self) -> Option<Event> {
        let info = self.signals.read_signal().ok().flatten()?;
        let signal = i32::try_from(info.ssi_signo).unwrap_or(0);
        Some(if signal == libc::SIGCHLD {
            Event::Child
        } else {
            Event::Signal {
                signal,
                from_kernel: info.ssi_code == SI_KERNEL,
            }
        })
    }
}

/// A pidfd for the child `pid` (Linux 5.3); `None` when the kernel has none, and the
/// supervisor then learns of the child's end from SIGCHLD alone.
pub fn pidfd(pid: libc::pid_t) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    let fd = i32::try_from(fd).ok().filter(|&fd| fd >= 0)?;
    // SAFETY: `fd` was just returned by pidfd_open, is open and owned by nobody else.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    // The mask is per thread: each test blocks the signals in its own thread and sends to
    // that thread only (tgkill), so parallel tests do not see each other's signals.
    fn raise_in_this_thread(signal: i32) {
        // SAFETY: tgkill to this process's own thread with a valid signal number.
        unsafe {
            libc::syscall(
                libc::SYS_tgkill,
                libc::getpid(),
                libc::syscall(libc::SYS_gettid),
                signal,
            );
        }
    }

    #[test]
    fn a_timeout_returns_none_and_a_signal_is_read() {
        std::thread::spawn(|| {
            let w = Waiter::new().unwrap();
            let start = Instant::now();
            assert_eq!(w.wait(Some(start + Duration::from_millis(20)), None), None);
            assert!(start.elapsed() >= Duration::from_millis(20));
            raise_in_this_thread(libc::SIGUSR1);
            assert_eq!(
                w.wait(Some(Instant::now()), None),
                Some(Event::Signal {
                    signal: libc::SIGUSR1,
                    from_kernel: false
                })
            );
            assert_eq!(w.try_next(), None);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_child_end_is_seen_through_its_pidfd() {
        std::thread::spawn(|| {
            let w = Waiter::new().unwrap();
            let child = std::process::Command::new("true").spawn().unwrap();
            let fd = pidfd(i32::try_from(child.id()).unwrap()).expect("pidfd_open");
            let limit = Instant::now() + Duration::from_secs(60);
            let mut seen = false;
            while !seen {
                seen = w.wait(Some(limit), Some(fd.as_fd())) == Some(Event::Child);
                assert!(Instant::now() < limit);
            }
            let mut child = child;
            assert!(child.wait().unwrap().success());
        })
        .join()
        .unwrap();
    }
}
