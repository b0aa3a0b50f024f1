//! retry's own writes on Windows: its stderr and appends to a file, as plain writes. Windows
//! cannot ask a pipe whether it has room without writing, nor make a shared handle
//! non-blocking: a write to a pipe whose reader does not read waits for it (docs/platforms.md
//! says so); a console or a file never does.

use std::cell::Cell;
use std::io::{self, Write};
use std::path::Path;
use std::time::Instant;

/// retry's stderr as retry's own words reach it, with the patience the Unix writer keeps (the
/// run's deadline), which a plain write on Windows cannot honour.
#[derive(Debug, Default)]
pub struct Stderr {
    patience: Cell<Option<Instant>>,
}

impl Stderr {
    /// retry's stderr.
    pub fn new() -> Stderr {
        Stderr::default()
    }

    /// Notes the run's deadline (`None`: none).
    pub fn set_patience(&self, until: Option<Instant>) {
        self.patience.set(until);
    }

    /// The patience noted ([`Stderr::set_patience`]).
    pub fn patience(&self) -> Option<Instant> {
        self.patience.get()
    }

    /// Writes all of `bytes` to retry's stderr, in one call.
    ///
    /// # Errors
    /// The write error.
    pub fn write(&self, bytes: &[u8]) -> io::Result<()> {
        let mut err = io::stderr().lock();
        err.write_all(bytes)?;
        err.flush()
    }
}

/// Appends `bytes` to the file at `path` (created if missing), in one write.
///
/// # Errors
/// When the file cannot be opened or written.
pub fn append(path: &Path, bytes: &[u8], _patience: Option<Instant>) -> io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)?;
    file.write_all(bytes)?;
    file.flush()
}
