//! Cancelling an attempt's I/O threads: a flag for threads blocked on a spool, and a pipe that
//! becomes readable for threads blocked in `poll`.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

/// A one-shot cancellation shared by an attempt's I/O threads.
#[derive(Debug)]
pub struct Cancel {
    flag: AtomicBool,
    read: OwnedFd,
    write: OwnedFd,
}

impl Cancel {
    /// A fresh, uncancelled token.
    ///
    /// # Errors
    /// When the pipe cannot be created.
    pub fn new() -> io::Result<Cancel> {
        let (read, write) = crate::process::cloexec_pipe()?;
        Ok(Cancel {
            flag: AtomicBool::new(false),
            read,
            write,
        })
    }

    /// Cancels: sets the flag and makes the pipe readable.
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::Release);
        let _ = nix::unistd::write(&self.write, b"x");
    }

    /// The flag, for [`crate::spool::Spool::wait_beyond`].
    pub fn flag(&self) -> &AtomicBool {
        &self.flag
    }

    /// Whether [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }

    /// Sleeps up to `millis` milliseconds, or until `fd` has an error or hang-up (its reader
    /// closed) or the token is cancelled; returns `false` when cancelled or on such an error.
    pub fn nap(&self, fd: BorrowedFd<'_>, millis: u16) -> bool {
        let mut fds = [
            PollFd::new(fd, PollFlags::empty()),
            PollFd::new(self.read.as_fd(), PollFlags::POLLIN),
        ];
        match poll(&mut fds, PollTimeout::from(millis)) {
            Ok(_) | Err(nix::errno::Errno::EINTR) => {
                let closed = fds[0].revents().is_some_and(|r| !r.is_empty());
                !closed && !self.is_cancelled()
            }
            Err(_) => !self.is_cancelled(),
        }
    }

    /// Blocks until `fd` is ready for `events` (or has an error or hang-up) or the token is
    /// cancelled; returns `false` when cancelled.
    pub fn wait_ready(&self, fd: BorrowedFd<'_>, events: PollFlags) -> bool {
        loop {
            let mut fds = [
                PollFd::new(fd, events),
                PollFd::new(self.read.as_fd(), PollFlags::POLLIN),
            ];
            match poll(&mut fds, PollTimeout::NONE) {
                Err(nix::errno::Errno::EINTR) => continue,
                Err(_) => return !self.is_cancelled(),
                Ok(_) => {
                    let ready = fds[0].revents().is_some_and(|r| !r.is_empty());
                    if ready {
                        return true;
                    }
                    if self.is_cancelled() {
                        return false;
                    }
                }
            }
        }
    }
}
