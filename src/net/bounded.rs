//! A blocking call that has no non-blocking form (a host name lookup with `getaddrinfo(3)`, a
//! `flock(2)` on a lock another run holds) made within the rule of [`crate::signals`]: it runs
//! in a helper thread of its own, and the run waits for its answer through a pipe with
//! [`signals::wait_ready`], so the wait ends at a time limit or as soon as a stop signal is
//! queued, whichever comes first. A helper still blocked then is left behind: its answer, if it
//! ever comes, finds nobody waiting and is dropped (a late lock is released at once), and the
//! thread ends with the process anyway. Signals are blocked in every thread of retry (they
//! arrive through a signalfd), so the helper's call is never interrupted by one.

#[cfg(unix)]
use std::io::{self, Read, Write};
#[cfg(unix)]
use std::os::fd::AsFd;
#[cfg(unix)]
use std::sync::Arc;
#[cfg(unix)]
use std::sync::mpsc::{TryRecvError, sync_channel};
#[cfg(unix)]
use std::time::Instant;

#[cfg(unix)]
use nix::poll::PollFlags;

#[cfg(windows)]
pub use super::os::call;
#[cfg(unix)]
use crate::signals::{self, Ready};

/// How a bounded call came out.
#[derive(Debug)]
pub enum Bounded<T> {
    /// The call returned this, in time.
    Done(T),
    /// A stop signal arrived first: give up at once, the run ends by it.
    Stopped,
    /// The time limit passed first.
    TimedOut,
}

/// Runs `work` in a helper thread named `name` and waits for its answer until `until`, or
/// until a stop signal arrives (on Windows: `call` of `net/windows.rs`).
///
/// # Errors
/// When the pipe or the thread cannot be made, or the thread panicked.
#[cfg(unix)]
pub fn call<T: Send + 'static>(
    name: &str,
    until: Instant,
    work: impl FnOnce() -> T + Send + 'static,
) -> io::Result<Bounded<T>> {
    let (reader, writer) = io::pipe()?;
    // The thread keeps the read end open too: its one-byte write then never meets a closed
    // pipe (no EPIPE, no SIGPIPE), however long after the wait was given up it comes.
    let reader = Arc::new(reader);
    let keep_open = Arc::clone(&reader);
    // Room for the one answer: the thread never blocks on sending it, and an answer nobody
    // takes is dropped with the channel.
    let (tx, rx) = sync_channel(1);
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let answer = work();
            let _ = tx.send(answer);
            let mut writer = writer;
            let _ = writer.write_all(b"!");
            drop(keep_open);
        })?;
    loop {
        match signals::wait_ready(reader.as_fd(), PollFlags::POLLIN, Some(until)) {
            Ready::Stop => return Ok(Bounded::Stopped),
            Ready::TimedOut => return Ok(Bounded::TimedOut),
            Ready::Ready => match rx.try_recv() {
                Ok(answer) => return Ok(Bounded::Done(answer)),
                Err(TryRecvError::Disconnected) => {
                    return Err(io::Error::other(format!("the {name} thread failed")));
                }
                // Not yet (the byte follows the answer): take the byte, if any, and wait on.
                Err(TryRecvError::Empty) => {
                    let mut byte = [0u8; 1];
                    let _ = (&*reader).read(&mut byte);
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn an_answer_in_time_and_a_call_that_takes_too_long() {
        let soon = Instant::now() + Duration::from_secs(60);
        assert!(matches!(call("t", soon, || 7).unwrap(), Bounded::Done(7)));
        let start = Instant::now();
        let limit = start + Duration::from_millis(50);
        let slow = call("t", limit, || std::thread::sleep(Duration::from_secs(5))).unwrap();
        assert!(matches!(slow, Bounded::TimedOut));
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(50) && took < Duration::from_secs(4),
            "{took:?}"
        );
    }
}
