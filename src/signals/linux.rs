//! The supervisor's one event source on Linux, on one thread: retry's signals read from a
//! `signalfd`, the running attempt's end from a `pidfd`, and every wait and timeout as the
//! timeout of one `ppoll` on the monotonic clock. No signal handler, no helper thread, no
//! periodic wake-up. See signalfd(2), pidfd_open(2) and ppoll(2).
//!
//! The signals are blocked first, in the thread that later starts every other thread (so all
//! inherit the mask), which queues them for the `signalfd`; `ssi_code` still tells a
//! terminal's Ctrl-C (sent by the kernel, `SI_KERNEL`) from a `kill`.

use std::cell::RefCell;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use nix::poll::{PollFd, PollFlags, ppoll};
use nix::sys::signal::{SigSet, SigmaskHow, pthread_sigmask};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::time::TimeSpec;

use super::event::{Event, Ready};
use super::listen::{clear_mask, reap_own_children, wanted};
use super::roles::{from_terminal, is_stop};
use crate::process::Attempt;

/// The signalfd, and the pidfd of the child being watched.
#[derive(Debug)]
pub struct Events {
    signals: SignalFd,
    child: RefCell<Option<OwnedFd>>,
}

impl Events {
    /// Clears the mask, then blocks the wanted signals (stop, pass-on and CHLD, less those
    /// ignored at start) in the calling thread and opens a `signalfd` for them. Call before
    /// any other thread starts.
    ///
    /// # Errors
    /// When the mask cannot be set or the `signalfd` cannot be opened.
    pub fn listen() -> io::Result<Events> {
        clear_mask()?;
        reap_own_children();
        let wanted = wanted();
        // Raw sets: nix's `Signal` has no real-time signals.
        let set = raw_set(wanted.iter().copied());
        let stops = raw_set(wanted.iter().copied().filter(|&s| is_stop(s)));
        pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), None)?;
        let signals = SignalFd::with_flags(&set, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)?;
        // A second signalfd for the stop signals alone, never read: it is readable exactly
        // while one is queued, which every wait outside the event loop asks (`wait_ready`).
        if STOP_WATCH.get().is_none() {
            let watch =
                SignalFd::with_flags(&stops, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)?;
            let _ = STOP_WATCH.set(watch);
        }
        Ok(Events {
            signals,
            child: RefCell::new(None),
        })
    }

    /// Watches `child` (the running attempt or hook) through a pidfd, so its end wakes the
    /// wait even if SIGCHLD was coalesced with another: the one its clone gave
    /// (`CLONE_PIDFD`, Linux 5.2), which it hands over, else one from `pidfd_open` (Linux 5.3).
    /// Without either (an older kernel, a seccomp filter that refuses them) SIGCHLD alone does
    /// it, which the signalfd always reads.
    pub fn watch_child(&self, child: &Attempt) {
        self.watch(child.pid(), child.take_pidfd());
    }

    /// Watches child `pid` through `given`, its pidfd, else one opened for it.
    fn watch(&self, pid: i32, given: Option<OwnedFd>) {
        *self.child.borrow_mut() = given.or_else(|| pidfd(pid));
    }

    /// Stops watching: call once the child is reaped (its pidfd stays readable).
    pub fn unwatch_child(&self) {
        *self.child.borrow_mut() = None;
    }

    /// The next event, waiting at most until `until` (`None`: no limit); `None` when that
    /// time came first. A queued event is returned even when `until` has already passed.
    pub fn wait(&self, until: Option<Instant>) -> Option<Event> {
        loop {
            if let Some(event) = self.read_signal() {
                return Some(event);
            }
            let timeout =
                until.map(|t| TimeSpec::from_duration(t.saturating_duration_since(Instant::now())));
            let child = self.child.borrow();
            // Room for both, so that no wait grows the vector.
            let mut fds = Vec::with_capacity(2);
            fds.push(PollFd::new(self.signals.as_fd(), PollFlags::POLLIN));
            if let Some(fd) = child.as_ref() {
                fds.push(PollFd::new(fd.as_fd(), PollFlags::POLLIN));
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
                // Cannot happen with valid descriptors; look at the child rather than spin.
                Err(_) => return Some(Event::Child),
            }
        }
    }

    /// The next queued event, without waiting.
    pub fn try_next(&self) -> Option<Event> {
        self.read_signal()
    }

    fn read_signal(&self) -> Option<Event> {
        let info = self.signals.read_signal().ok().flatten()?;
        let signal = i32::try_from(info.ssi_signo).unwrap_or(0);
        Some(if signal == libc::SIGCHLD {
            Event::Child
        } else {
            if is_stop(signal) {
                STOP_READ.store(true, Ordering::Release);
            }
            Event::Signal {
                signal,
                from_kernel: from_terminal(signal, info.ssi_code),
            }
        })
    }
}

/// The set of signal numbers `signals` (real-time ones included; a number that is no signal
/// is left out).
fn raw_set(signals: impl Iterator<Item = i32>) -> SigSet {
    // SAFETY: sigset_t is plain data, initialised by sigemptyset before sigaddset fills it;
    // nix's SigSet wraps exactly such a set.
    unsafe {
        let mut raw: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut raw);
        for signal in signals {
            libc::sigaddset(&mut raw, signal);
        }
        SigSet::from_sigset_t_unchecked(raw)
    }
}

/// The stop signals' own signalfd (see [`Events::listen`]); unset before it.
static STOP_WATCH: OnceLock<SignalFd> = OnceLock::new();

/// A stop signal was read by the event loop (which then ends the run).
static STOP_READ: AtomicBool = AtomicBool::new(false);

/// Whether a stop signal ([`STOP_SIGNALS`](super::roles::STOP_SIGNALS)) has arrived, still
/// queued for the event loop or read by it already (either way the run is ending). Always
/// `false` before [`Events::listen`] (the signals then have their default action and end retry
/// themselves).
pub fn stop_arrived() -> bool {
    if STOP_READ.load(Ordering::Acquire) {
        return true;
    }
    let Some(watch) = STOP_WATCH.get() else {
        return false;
    };
    let mut fds = [PollFd::new(watch.as_fd(), PollFlags::POLLIN)];
    matches!(ppoll(&mut fds, Some(TimeSpec::from_duration(std::time::Duration::ZERO)), None), Ok(n) if n > 0)
}

/// Waits until `fd` is ready for `events` (`POLLIN`, `POLLOUT`; an error or hang-up counts as
/// ready), a stop signal is queued ([`stop_arrived`]), or `until` passes (`None`: no time
/// limit), whichever comes first; at once [`Ready::Stop`] when one has arrived before. The one
/// way retry waits outside its event loop.
pub fn wait_ready(fd: BorrowedFd<'_>, events: PollFlags, until: Option<Instant>) -> Ready {
    if STOP_READ.load(Ordering::Acquire) {
        return Ready::Stop;
    }
    loop {
        let timeout =
            until.map(|t| TimeSpec::from_duration(t.saturating_duration_since(Instant::now())));
        let mut fds = Vec::with_capacity(2);
        fds.push(PollFd::new(fd, events));
        if let Some(watch) = STOP_WATCH.get() {
            fds.push(PollFd::new(watch.as_fd(), PollFlags::POLLIN));
        }
        match ppoll(&mut fds, timeout, None) {
            Ok(0) => return Ready::TimedOut,
            Ok(_) => {
                if fds
                    .get(1)
                    .and_then(PollFd::revents)
                    .is_some_and(|r| !r.is_empty())
                {
                    return Ready::Stop;
                }
                return Ready::Ready;
            }
            Err(nix::errno::Errno::EINTR) => {}
            // A descriptor poll cannot watch (EINVAL, ENOMEM): let the caller try it.
            Err(_) => return Ready::Ready,
        }
        if until.is_some_and(|t| Instant::now() >= t) {
            return Ready::TimedOut;
        }
    }
}

/// A pidfd for child `pid` (`pidfd_open`); `None` when the kernel has none.
fn pidfd(pid: libc::pid_t) -> Option<OwnedFd> {
    let pid = rustix::process::Pid::from_raw(pid)?;
    rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    // The mask is per thread: each test listens in a thread of its own and sends to that
    // thread only (tgkill), so parallel tests do not see each other's signals.
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
    fn a_timeout_returns_none_and_a_signal_is_read_once() {
        std::thread::spawn(|| {
            // SIGCHLD is process-directed: a neighbouring test's child may end up here, so
            // child events are skipped.
            let events = Events::listen().unwrap();
            let start = Instant::now();
            let until = start + Duration::from_millis(20);
            while let Some(event) = events.wait(Some(until)) {
                assert_eq!(event, Event::Child);
            }
            assert!(start.elapsed() >= Duration::from_millis(20));
            raise_in_this_thread(libc::SIGUSR1);
            let mut next = events.wait(Some(Instant::now()));
            while next == Some(Event::Child) {
                next = events.wait(Some(Instant::now()));
            }
            assert_eq!(
                next,
                Some(Event::Signal {
                    signal: libc::SIGUSR1,
                    from_kernel: false
                })
            );
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_child_end_is_seen_through_its_pidfd() {
        std::thread::spawn(|| {
            let events = Events::listen().unwrap();
            let mut child = std::process::Command::new("true").spawn().unwrap();
            events.watch(i32::try_from(child.id()).unwrap(), None);
            let limit = Instant::now() + Duration::from_secs(60);
            while events.wait(Some(limit)) != Some(Event::Child) {
                assert!(Instant::now() < limit, "no child event");
            }
            assert!(child.wait().unwrap().success());
            events.unwatch_child();
        })
        .join()
        .unwrap();
    }
}
