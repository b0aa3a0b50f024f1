//! The waits of [`super`] on Windows: a socket's readiness with `WSAPoll`
//! (<https://learn.microsoft.com/en-us/windows/win32/api/winsock2/nf-winsock2-wsapoll>) in
//! steps of at most 20 ms, between which a stop event ([`signals::stop_arrived`]) is looked
//! for; and a blocking call in a helper thread, whose end is waited for with
//! [`signals::wait_ready`] on the thread's handle.

use std::io;
use std::os::windows::io::{AsRawHandle, AsRawSocket, AsSocket as WinSocket};
use std::sync::mpsc::sync_channel;
use std::time::{Duration, Instant};

use windows_sys::Win32::Networking::WinSock::{POLLRDNORM, POLLWRNORM, WSAPOLLFD, WSAPoll};

use super::Interest;
use super::bounded::Bounded;
use crate::signals::{self, Ready};

/// What a socket is on Windows.
pub use std::os::windows::io::AsSocket;

/// The longest single `WSAPoll`: a stop event is looked for between two.
const STEP: Duration = Duration::from_millis(20);

/// Waits until `socket` is ready for `interest` (an error or hang-up counts as ready), a stop
/// event has arrived, or `until` passes.
pub fn wait_socket(socket: &impl WinSocket, interest: Interest, until: Instant) -> Ready {
    let events = match interest {
        Interest::Read => POLLRDNORM,
        Interest::Write => POLLWRNORM,
    };
    loop {
        if signals::stop_arrived() {
            return Ready::Stop;
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ready::TimedOut;
        }
        let mut fd = WSAPOLLFD {
            fd: socket.as_socket().as_raw_socket() as usize,
            events,
            revents: 0,
        };
        let ms = i32::try_from(left.min(STEP).as_millis())
            .unwrap_or(20)
            .max(1);
        // SAFETY: one valid WSAPOLLFD for the length given.
        let n = unsafe { WSAPoll(&raw mut fd, 1, ms) };
        if n != 0 {
            // Ready, or an error the caller's next call reports.
            return Ready::Ready;
        }
    }
}

/// Whether `e`, from a non-blocking `connect`, says the connection is under way
/// (`WSAEWOULDBLOCK`).
pub fn in_progress(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::WouldBlock
}

/// Runs `work` in a helper thread named `name` and waits for its answer until `until`, or
/// until a stop event arrives (see [`super::bounded::call`]).
///
/// # Errors
/// When the thread cannot be made, or it panicked.
pub fn call<T: Send + 'static>(
    name: &str,
    until: Instant,
    work: impl FnOnce() -> T + Send + 'static,
) -> io::Result<Bounded<T>> {
    let (tx, rx) = sync_channel(1);
    let thread = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let _ = tx.send(work());
        })?;
    match signals::wait_ready(thread.as_raw_handle(), Some(until)) {
        Ready::Stop => Ok(Bounded::Stopped),
        Ready::TimedOut => Ok(Bounded::TimedOut),
        Ready::Ready => rx
            .try_recv()
            .map(Bounded::Done)
            .map_err(|_| io::Error::other(format!("the {name} thread failed"))),
    }
}
