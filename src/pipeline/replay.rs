//! `--replay-stdin`: read retry's stdin once into a spool, and feed every attempt the same
//! bytes from the start: attempt 1 as they arrive, later attempts the recorded copy.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::process::ChildStdin;
use std::sync::Arc;
use std::thread;

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::PollFlags;

use super::cancel::Cancel;
use crate::spool::{Ahead, Spool};

/// Chunk size for reading stdin and feeding attempts.
const CHUNK: usize = 1 << 20;

/// Starts the thread that records retry's stdin into a spool, independently of any attempt, so
/// an attempt that never reads (or exits early) neither blocks retry nor loses bytes.
///
/// # Errors
/// When stdin cannot be duplicated or the thread cannot start.
pub fn record_stdin() -> io::Result<Arc<Spool>> {
    let mut stdin = File::from(io::stdin().as_fd().try_clone_to_owned()?);
    let spool = Arc::new(Spool::new());
    let writer = spool.clone();
    thread::Builder::new().name("stdin".into()).spawn(move || {
        let mut buf = vec![0u8; CHUNK];
        loop {
            match stdin.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if let Err(e) = writer.append(&buf[..n]) {
                        let _ = writeln!(io::stderr(), "retry: cannot record stdin: {e}");
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        writer.finish();
    })?;
    Ok(spool)
}

/// Feeds the recorded stdin, from its first byte and following it as it grows, into an
/// attempt's stdin pipe, until the end (then closes the pipe), until the attempt stops reading
/// (a broken pipe), or until `cancel`.
pub fn feed(spool: &Spool, pipe: ChildStdin, cancel: &Cancel) {
    let mut pipe = File::from(std::os::fd::OwnedFd::from(pipe));
    // Non-blocking, so a full pipe parks us in `poll`, where cancellation reaches us.
    if let Ok(flags) = fcntl(&pipe, FcntlArg::F_GETFL) {
        let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
        let _ = fcntl(&pipe, FcntlArg::F_SETFL(flags));
    }
    let mut buf = vec![0u8; CHUNK];
    let mut offset = 0u64;
    loop {
        match spool.wait_beyond(offset, cancel.flag()) {
            Ahead::Data(_) => {}
            Ahead::End | Ahead::Cancelled => return,
        }
        let n = match spool.read_at(offset, &mut buf) {
            Ok(n) => n,
            Err(_) => return,
        };
        let mut chunk = &buf[..n];
        while !chunk.is_empty() {
            match pipe.write(chunk) {
                Ok(w) => chunk = &chunk[w..],
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if !cancel.wait_ready(pipe.as_fd(), PollFlags::POLLOUT) {
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
        offset += n as u64;
    }
}
