//! Where a stream's bytes go once retry has read them: one of retry's own descriptors (stdout,
//! stderr), with `--chronic` the run's held output ([`crate::held`]) as that stream, or nowhere.

use std::fs::File;
use std::io::{self, Write};
use std::sync::Arc;

use crate::held::{Held, Stream};
use crate::spool::Spool;

/// A destination for bytes; cheap to clone.
#[derive(Clone, Debug)]
pub enum Out {
    /// A duplicate of one of retry's descriptors (written with blocking writes).
    File(Arc<File>),
    /// The held output of `--chronic`, as this stream. Appending never blocks; once the
    /// record is sealed for its write-out, what still comes is dropped.
    Held(Arc<Held>, Stream),
    /// Nowhere: what a successful `--chronic` run's leftovers still write is read and dropped.
    Null,
}

impl Out {
    /// Writes all of `data`.
    ///
    /// # Errors
    /// The file's write error (`BrokenPipe` when its reader is gone); never for the held
    /// output.
    pub fn write_all(&self, data: &[u8]) -> io::Result<()> {
        match self {
            Out::File(file) => (&**file).write_all(data),
            Out::Held(held, stream) => {
                held.push(*stream, data);
                Ok(())
            }
            Out::Null => Ok(()),
        }
    }

    /// Writes everything `spool` holds.
    ///
    /// # Errors
    /// As [`Spool::copy_to`] for a file; the spool's read errors for the held output.
    pub fn copy_from(&self, spool: &Spool) -> io::Result<()> {
        match self {
            Out::File(file) => spool.copy_to(file),
            Out::Null => Ok(()),
            Out::Held(..) => {
                let mut buf = vec![0u8; 1 << 20];
                let mut at = 0;
                loop {
                    let n = spool.read_at(at, &mut buf)?;
                    if n == 0 {
                        return Ok(());
                    }
                    self.write_all(&buf[..n])?;
                    at += n as u64;
                }
            }
        }
    }
}
