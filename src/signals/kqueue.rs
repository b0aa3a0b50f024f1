//! The portable event loop's wait (`portable.rs`) on macOS and FreeBSD: one `kevent` call on a
//! kqueue that holds the signal pipe's read end (`EVFILT_READ`) and the running attempt or hook
//! (`EVFILT_PROC` with `NOTE_EXIT`), so the child's end wakes the loop even when its SIGCHLD
//! merged with another one; the time limit is `kevent`'s own timeout (nanoseconds).
//!
//! Signals themselves come through the pipe, not `EVFILT_SIGNAL`: that filter counts
//! deliveries but cannot tell who sent one (a terminal's Ctrl-C from a `kill`), which the
//! supervisor needs, so a `SA_SIGINFO` handler runs for each anyway (kqueue(2)).

use std::cell::Cell;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::time::Instant;

use nix::sys::event::{EvFlags, EventFilter, FilterFlag, KEvent, Kqueue};

/// What ended a wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Woke {
    /// The signal pipe is readable.
    Ready,
    /// The watched child ended.
    Child,
    /// The time limit passed.
    TimedOut,
    /// Interrupted (a signal's handler ran): look again.
    Interrupted,
}

/// The kqueue and the child it watches.
#[derive(Debug)]
pub struct Waiter {
    kq: Kqueue,
    /// The watched child, while it is registered.
    child: Cell<Option<i32>>,
    /// The watched child had already ended when it was registered (`ESRCH`).
    gone: Cell<bool>,
}

fn event(ident: usize, filter: EventFilter, flags: EvFlags, fflags: FilterFlag) -> KEvent {
    KEvent::new(ident, filter, flags, fflags, 0, 0)
}

impl Waiter {
    /// A kqueue watching `pipe`, the signal pipe's read end. A kqueue is not inherited by
    /// children, so it needs no close-on-exec.
    ///
    /// # Errors
    /// When the kqueue cannot be made or the pipe registered.
    pub fn new(pipe: BorrowedFd<'static>) -> io::Result<Waiter> {
        let kq = Kqueue::new()?;
        let read = event(
            usize::try_from(pipe.as_raw_fd()).map_err(io::Error::other)?,
            EventFilter::EVFILT_READ,
            EvFlags::EV_ADD,
            FilterFlag::empty(),
        );
        kq.kevent(&[read], &mut [], None)?;
        Ok(Waiter {
            kq,
            child: Cell::new(None),
            gone: Cell::new(false),
        })
    }

    /// Watches child `pid` for its end (`EVFILT_PROC`, `NOTE_EXIT`, once).
    pub fn watch_child(&self, pid: i32) {
        self.unwatch_child();
        let Ok(ident) = usize::try_from(pid) else {
            return;
        };
        let change = event(
            ident,
            EventFilter::EVFILT_PROC,
            EvFlags::EV_ADD | EvFlags::EV_ONESHOT,
            FilterFlag::NOTE_EXIT,
        );
        match self.kq.kevent(&[change], &mut [], None) {
            Ok(_) => self.child.set(Some(pid)),
            // Already gone (not yet reaped): the next wait says so at once.
            Err(nix::errno::Errno::ESRCH) => self.gone.set(true),
            Err(_) => {}
        }
    }

    /// Stops watching the child (a one-shot event that fired is gone already).
    pub fn unwatch_child(&self) {
        self.gone.set(false);
        if let Some(pid) = self.child.take()
            && let Ok(ident) = usize::try_from(pid)
        {
            let change = event(
                ident,
                EventFilter::EVFILT_PROC,
                EvFlags::EV_DELETE,
                FilterFlag::empty(),
            );
            let _ = self.kq.kevent(&[change], &mut [], None);
        }
    }

    /// Waits until the pipe is readable, the child ends, or `until` passes (`None`: no limit).
    pub fn wait(&self, until: Option<Instant>) -> Woke {
        if self.gone.replace(false) {
            return Woke::Child;
        }
        let timeout = until.map(|t| {
            let left = t.saturating_duration_since(Instant::now());
            libc::timespec {
                tv_sec: libc::time_t::try_from(left.as_secs()).unwrap_or(libc::time_t::MAX),
                tv_nsec: libc::c_long::from(i32::try_from(left.subsec_nanos()).unwrap_or(0)),
            }
        });
        let mut out = [event(
            0,
            EventFilter::EVFILT_READ,
            EvFlags::empty(),
            FilterFlag::empty(),
        ); 2];
        match self.kq.kevent(&[], &mut out, timeout) {
            Ok(0) if until.is_some_and(|t| Instant::now() >= t) => Woke::TimedOut,
            Ok(0) | Err(_) => Woke::Interrupted,
            Ok(n) => {
                if out[..n]
                    .iter()
                    .any(|e| e.filter() == Ok(EventFilter::EVFILT_PROC))
                {
                    self.child.set(None);
                    Woke::Child
                } else {
                    Woke::Ready
                }
            }
        }
    }
}
