//! The portable event loop's wait (`portable.rs`) with `poll` on the signal pipe: the
//! `portable` build on Linux and any Unix without kqueue. The attempt's end arrives as SIGCHLD
//! through the pipe, so there is no child to watch here.

use std::io;
use std::os::fd::BorrowedFd;
use std::time::Instant;

use nix::poll::{PollFd, PollFlags, poll};

/// What ended a wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Woke {
    /// The signal pipe is readable.
    Ready,
    /// The watched child ended (never here: SIGCHLD says it).
    #[expect(dead_code, reason = "the kqueue waiter's, which shares this interface")]
    Child,
    /// The time limit passed.
    TimedOut,
    /// Interrupted (a signal's handler ran): look again.
    Interrupted,
}

/// Waits on the signal pipe's read end.
#[derive(Debug)]
pub struct Waiter {
    pipe: BorrowedFd<'static>,
}

impl Waiter {
    /// A waiter on `pipe`, the signal pipe's read end.
    ///
    /// # Errors
    /// Never here (the kqueue waiter's can fail).
    pub fn new(pipe: BorrowedFd<'static>) -> io::Result<Waiter> {
        Ok(Waiter { pipe })
    }

    /// Nothing to watch: SIGCHLD tells of the child's end.
    pub fn watch_child(&self, _pid: i32) {}

    /// Nothing to stop watching.
    pub fn unwatch_child(&self) {}

    /// Waits until the pipe is readable or `until` passes (`None`: no limit).
    pub fn wait(&self, until: Option<Instant>) -> Woke {
        let left = until.map(|t| t.saturating_duration_since(Instant::now()));
        let mut fds = [PollFd::new(self.pipe, PollFlags::POLLIN)];
        match poll(&mut fds, super::poll_timeout::poll_timeout_for(left)) {
            Ok(0) if until.is_some_and(|t| Instant::now() >= t) => Woke::TimedOut,
            Ok(0) | Err(_) => Woke::Interrupted,
            Ok(_) => Woke::Ready,
        }
    }
}
