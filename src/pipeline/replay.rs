//! `--replay-stdin`: read retry's stdin once into a spool, and feed every attempt the same
//! bytes from the start: attempt 1 as they arrive, later attempts the recorded copy.
//!
//! When stdin cannot be read or recorded (a read error, TMPDIR missing or full, more than
//! `--max-replay`), the spool is marked failed at the last byte it holds; an attempt fed up to
//! there has its stdin closed early, and its feeder says so, so that retry never passes a
//! truncated stream off as the whole.

use std::fs::File;
use std::io::{self, Read, Write};
use std::process::ChildStdin;
use std::sync::Arc;
use std::thread;

use super::os::{self, Cancel, Source};
use crate::size::format_size;
use crate::spool::{Ahead, MEMORY_LIMIT, Spool, is_limit};

/// Chunk size for reading stdin and feeding attempts.
const CHUNK: usize = 1 << 20;

/// Starts the thread that records retry's stdin into a spool, independently of any attempt, so
/// an attempt that never reads (or exits early) neither blocks retry nor loses bytes. At most
/// `max_len` bytes are recorded (`None`: no limit); past them the spool fails.
///
/// # Errors
/// When stdin cannot be duplicated or the thread cannot start.
pub fn record_stdin(max_len: Option<u64>) -> io::Result<Arc<Spool>> {
    let stdin = os::dup(&io::stdin())?;
    let spool = Arc::new(Spool::with_limits(MEMORY_LIMIT, max_len));
    let writer = spool.clone();
    thread::Builder::new()
        .name("stdin".into())
        .spawn(move || match record(stdin, &writer) {
            Ok(()) => writer.finish(),
            Err(why) => writer.fail(why),
        })?;
    Ok(spool)
}

/// Copies `stdin` into `spool` to its end; `Err` says why it stopped short.
fn record(mut stdin: File, spool: &Spool) -> Result<(), String> {
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match stdin.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            // A non-blocking stdin (a parent may leave O_NONBLOCK set): wait until readable.
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                os::wait_stdin(&stdin);
                continue;
            }
            // No stdin at all (Windows: no handle was given): nothing to replay, as a closed
            // stdin on Unix.
            Err(e) if os::no_stdin(&e) => return Ok(()),
            Err(e) => return Err(format!("cannot read stdin for --replay-stdin: {e}")),
        };
        if let Err(e) = spool.append(&buf[..n]) {
            return Err(if is_limit(&e) {
                format!(
                    "stdin is longer than --max-replay ({}), so it cannot be replayed",
                    format_size(spool.len())
                )
            } else {
                format!("cannot record stdin for --replay-stdin: {e}")
            });
        }
    }
}

/// How feeding an attempt's stdin ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FeedEnd {
    /// The attempt was fed every byte recorded before the recording failed, and then its stdin
    /// was closed: it saw a truncated stream end as if it were whole.
    pub truncated: bool,
    /// Bytes written to the attempt's stdin.
    pub fed: u64,
    /// The recorded copy could not be read back (the temporary file): why. The attempt's
    /// stdin was closed there, so `truncated` is set too.
    pub error: Option<String>,
}

/// Feeds the recorded stdin, from its first byte and following it as it grows, into an
/// attempt's stdin pipe, until the end (then closes the pipe), until the attempt stops reading
/// (a broken pipe), until the recording failed, or until `cancel`.
pub fn feed(spool: &Spool, pipe: ChildStdin, cancel: &Cancel) -> FeedEnd {
    let mut pipe = File::from(Source::from(pipe));
    // Non-blocking where the system allows, so a full pipe parks us in `poll`, where
    // cancellation reaches us.
    os::set_nonblocking(&pipe, true);
    let mut buf = vec![0u8; CHUNK];
    let mut end = FeedEnd::default();
    loop {
        match spool.wait_beyond(end.fed, cancel.flag()) {
            Ahead::Data(_) => {}
            Ahead::Failed => {
                // Only an attempt that reads all it was given and is still there sees the
                // early end; one that stops reading before it (`head -c 3`) does not.
                end.truncated = drained(&pipe, cancel);
                return end;
            }
            Ahead::End | Ahead::Cancelled => return end,
        }
        let n = match spool.read_at(end.fed, &mut buf) {
            Ok(n) => n,
            Err(e) => {
                end.truncated = true;
                end.error = Some(format!("cannot read back the recorded stdin: {e}"));
                return end;
            }
        };
        let mut chunk = &buf[..n];
        while !chunk.is_empty() {
            match pipe.write(chunk) {
                Ok(w) => chunk = &chunk[w..],
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if !cancel.wait_writable(&pipe) {
                        return end;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return end,
            }
        }
        end.fed += n as u64;
    }
}

/// Waits until the reader of `pipe` has read every byte written to it (`true`), or until it
/// closes its end or `cancel` fires (`false`). Polls every 10 ms: only after a failed recording.
fn drained(pipe: &File, cancel: &Cancel) -> bool {
    loop {
        // Where the system cannot tell, assume the worst: the attempt saw the early end.
        if unread(pipe).is_none_or(|n| n == 0) {
            return !cancel.is_cancelled();
        }
        if !cancel.nap(pipe, 10) {
            return false;
        }
    }
}

/// Bytes written to `pipe` that its reader has not read yet (`FIONREAD`, which Linux answers on
/// either end of a pipe: pipe(7)); `None` where it cannot tell.
fn unread(pipe: &File) -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        if let Ok(n) = rustix::io::ioctl_fionread(pipe) {
            return usize::try_from(n).ok();
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = pipe;
    None
}
