//! The waits of [`super`] on Unix: a socket's readiness through [`signals::wait_ready`]
//! (`poll` beside the stop signals).

use std::os::fd::AsFd;
use std::time::Instant;

use nix::poll::PollFlags;

use super::Interest;
use crate::signals::{self, Ready};

/// What a socket is on Unix: a descriptor.
pub use std::os::fd::AsFd as AsSocket;

/// Waits until `socket` is ready for `interest`, a stop signal is queued, or `until` passes.
pub fn wait_socket(socket: &impl AsFd, interest: Interest, until: Instant) -> Ready {
    let events = match interest {
        Interest::Read => PollFlags::POLLIN,
        Interest::Write => PollFlags::POLLOUT,
    };
    signals::wait_ready(socket.as_fd(), events, Some(until))
}

/// Whether `e`, from a non-blocking `connect`, says the connection is under way.
pub fn in_progress(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::EINPROGRESS)
}
