//! What a successful attempt's leftover processes still write: once the attempt has ended and
//! its pipes are drained, processes it left running (a background job, a daemon) may still hold
//! them open and write later. After a success that is passed on until every writer has closed
//! the pipe, as `cmd | cat` does: by the relay ([`crate::process::relay`]), or by retry itself
//! ([`pass_on`]) when the relay cannot start; after a failure the pipes are closed (what the
//! attempt left running is being stopped anyway).

use std::fs::File;
use std::io::{self, Read};

use super::os::{self, Source};
use super::out::Out;

/// Read size for what leftovers write.
const CHUNK: usize = 64 << 10;

/// The attempt's stdout and stderr pipes that processes it left running still hold open,
/// after what was in them was read; dropping it closes them (a writer then meets a broken pipe).
#[derive(Debug, Default)]
pub struct Rest {
    /// The stdout pipe.
    pub(super) stdout: Option<Source>,
    /// The stderr pipe.
    pub(super) stderr: Option<Source>,
}

impl Rest {
    /// Whether no pipe is held open.
    pub fn is_empty(&self) -> bool {
        self.stdout.is_none() && self.stderr.is_none()
    }
}

/// Copies what the writers of pipe `source` write to `out`, as it comes, until every writer has
/// closed it (end of file; a read error counts as one). Blocks in `read` meanwhile: run it in a
/// thread the supervisor can leave behind.
///
/// # Errors
/// The first write error (`BrokenPipe` when `out`'s reader is gone); `source` is then closed,
/// so its writers meet a broken pipe too, as they would writing to `out` themselves.
pub(super) fn pass_on(source: Source, out: &Out) -> io::Result<()> {
    let mut source = File::from(source);
    // The pump left it draining (non-blocking).
    os::set_nonblocking(&source, false);
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match source.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return Ok(()),
        };
        out.write_all(&buf[..n])?;
    }
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use std::io::{Seek, Write};

    #[test]
    fn passes_on_until_every_writer_closed() {
        let (read, write) = nix::unistd::pipe().unwrap();
        let second = write.try_clone().unwrap();
        let out = tempfile::tempfile().unwrap();
        let writer = std::thread::spawn(move || {
            let (mut a, mut b) = (File::from(write), File::from(second));
            a.write_all(b"one\n").unwrap();
            drop(a);
            std::thread::sleep(std::time::Duration::from_millis(20));
            b.write_all(b"two\n").unwrap();
        });
        let out = std::sync::Arc::new(out);
        pass_on(read, &Out::File(out.clone())).unwrap();
        writer.join().unwrap();
        let mut got = String::new();
        let mut out = std::sync::Arc::try_unwrap(out).unwrap();
        out.rewind().unwrap();
        out.read_to_string(&mut got).unwrap();
        assert_eq!(got, "one\ntwo\n");
    }

    #[test]
    fn a_failed_write_ends_it_with_the_error() {
        let Ok(full) = File::options().write(true).open("/dev/full") else {
            return;
        };
        let (read, write) = nix::unistd::pipe().unwrap();
        File::from(write).write_all(b"x").unwrap();
        let e = pass_on(read, &Out::File(std::sync::Arc::new(full))).unwrap_err();
        assert!(e.to_string().contains("No space"), "{e}");
    }
}
