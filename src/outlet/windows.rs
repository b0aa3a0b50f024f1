//! retry's own writes on Windows: its stderr and appends to a file. Windows cannot ask a pipe
//! whether it has room without writing, nor make a shared handle non-blocking, so each write is
//! made in a helper thread ([`crate::net::bounded::call`]) and waited for until the patience
//! (the run's deadline) or a stop event, whichever comes first: a reader that does not read
//! holds that thread, never the run. A write given up on is left to its thread, and may still
//! come out later.

use std::cell::Cell;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::net::bounded::{self, Bounded};

/// The limit of a write with no patience: a hundred years (a stop event still ends it).
const NO_LIMIT: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// What a write is given even when its patience has run out (the closing lines after the
/// deadline): on Unix a write that finds room goes out at once whatever the patience; here
/// that is a write done within this.
const AT_ONCE: Duration = Duration::from_millis(250);

/// retry's stderr as retry's own words reach it, and how long a write may wait for its reader
/// (the patience).
#[derive(Debug, Default)]
pub struct Stderr {
    patience: Cell<Option<Instant>>,
}

impl Stderr {
    /// retry's stderr; writes wait until a stop event.
    pub fn new() -> Stderr {
        Stderr::default()
    }

    /// From now on, writes wait for a reader at most until `until` (the run's deadline;
    /// `None`: until a stop event).
    pub fn set_patience(&self, until: Option<Instant>) {
        self.patience.set(until);
    }

    /// The most a write waits for ([`Stderr::set_patience`]).
    pub fn patience(&self) -> Option<Instant> {
        self.patience.get()
    }

    /// Writes all of `bytes` to retry's stderr, in one call, within the patience.
    ///
    /// # Errors
    /// The write error; [`io::ErrorKind::Interrupted`] when a stop event came first,
    /// [`io::ErrorKind::TimedOut`] when the patience ran out.
    pub fn write(&self, bytes: &[u8]) -> io::Result<()> {
        let bytes = bytes.to_vec();
        within(self.patience(), move || {
            let mut err = io::stderr().lock();
            err.write_all(&bytes)?;
            err.flush()
        })
    }
}

/// Appends `bytes` to the file at `path` (created if missing), in one write, within
/// `patience` (a named pipe whose reader does not read is given up on then, or at a stop
/// event).
///
/// # Errors
/// When the file cannot be opened or written; [`io::ErrorKind::Interrupted`] when a stop
/// event came first, [`io::ErrorKind::TimedOut`] when the patience ran out.
pub fn append(path: &Path, bytes: &[u8], patience: Option<Instant>) -> io::Result<()> {
    let (path, bytes): (PathBuf, Vec<u8>) = (path.to_path_buf(), bytes.to_vec());
    within(patience, move || {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path)?;
        file.write_all(&bytes)?;
        file.flush()
    })
}

/// Runs `write` in a helper thread and waits for it until `patience` or a stop event.
fn within(
    patience: Option<Instant>,
    write: impl FnOnce() -> io::Result<()> + Send + 'static,
) -> io::Result<()> {
    let now = Instant::now();
    let until = patience
        .unwrap_or_else(|| now.checked_add(NO_LIMIT).unwrap_or(now))
        .max(now + AT_ONCE);
    match bounded::call("write", until, write)? {
        Bounded::Done(written) => written,
        Bounded::Stopped => Err(io::Error::new(
            io::ErrorKind::Interrupted,
            "a stop event came first",
        )),
        Bounded::TimedOut => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "its reader did not read in time",
        )),
    }
}
