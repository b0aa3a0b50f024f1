//! Writing where nobody may be reading on Unix (see the module `outlet`): retry's own stderr
//! and files that may be FIFOs (`GITHUB_OUTPUT`), without ever blocking past a stop signal or
//! the run's time limit. This is the rule of [`crate::signals`] applied to output: every wait
//! is [`signals::wait_ready`].
//!
//! retry's stderr is shared with the attempts (and often with the user's shell), so its file
//! description cannot be made non-blocking: that would make the others' writes fail with
//! `EAGAIN`. Instead retry writes through a description of its own. A pipe, FIFO or terminal
//! is opened again through `/proc/self/fd/2` with `O_NONBLOCK` (a new description of the same
//! pipe or terminal; Linux); a socket is written with `send(MSG_DONTWAIT)`; a regular file or
//! block device never waits on a reader and is written as it is. Where none of this works, retry
//! waits until the descriptor has room, then writes at most `PIPE_BUF` bytes, which a pipe with
//! room takes at once.
//!
//! How long a write may wait: until the run's deadline (the patience, [`Stderr::set_patience`],
//! which the run's writer passes on to [`append`] too), or without a time limit when there is
//! none, but never past a stop signal: once one has arrived, a write that cannot go out at once
//! is dropped (an error, for a file), so retry ends by the signal at once.
//!
//! No state of the process is kept here: [`Stderr`] belongs to retry's one writer of a run
//! ([`crate::report::Writer`]), and an error said before a run exists makes one of its own.

use std::cell::{Cell, OnceCell};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::time::Instant;

use nix::errno::Errno;
use nix::poll::PollFlags;

use crate::signals::{self, Ready};

/// How retry's own writes reach a descriptor.
#[derive(Debug)]
enum Target {
    /// A regular file or block device: a write never waits on a reader.
    Plain,
    /// A non-blocking description of the same pipe, FIFO or terminal.
    Reopened(OwnedFd),
    /// A socket: `send` with `MSG_DONTWAIT`.
    Socket,
    /// None of the above could be had: wait for room, then write at most `PIPE_BUF` bytes.
    PollFirst,
}

/// retry's stderr as retry's own words reach it: how it is written (found at the first write)
/// and how long a write may wait for its reader (the patience).
#[derive(Debug, Default)]
pub struct Stderr {
    /// How retry writes to its stderr, found at the first write.
    target: OnceCell<Target>,
    /// The most a write waits for, as an instant; `None`: until a stop signal.
    patience: Cell<Option<Instant>>,
}

impl Stderr {
    /// retry's stderr, looked at when first written to; writes wait until a stop signal.
    pub fn new() -> Stderr {
        Stderr::default()
    }

    /// From now on, writes wait for a reader at most until `until` (the run's deadline;
    /// `None`: until a stop signal arrives).
    pub fn set_patience(&self, until: Option<Instant>) {
        self.patience.set(until);
    }

    /// The most a write waits for ([`Stderr::set_patience`]).
    pub fn patience(&self) -> Option<Instant> {
        self.patience.get()
    }

    /// Writes all of `bytes` to retry's stderr, waiting for the reader within the rules of
    /// this module. Call with a whole line (or lines) at a time: each call is one `write` when
    /// there is room, so the line is not split by the attempt's own output.
    ///
    /// # Errors
    /// The write error; [`io::ErrorKind::Interrupted`] when a stop signal came first,
    /// [`io::ErrorKind::TimedOut`] when the patience ran out (part of `bytes` may be written).
    pub fn write(&self, bytes: &[u8]) -> io::Result<()> {
        let fd = io::stderr();
        let target = self.target.get_or_init(|| target_for(fd.as_fd()));
        write_all(fd.as_fd(), target, bytes, self.patience())
    }
}

/// What kind of description `fd` is, and how to write to it without blocking.
fn target_for(fd: BorrowedFd<'_>) -> Target {
    let Ok(meta) = File::from(match fd.try_clone_to_owned() {
        Ok(owned) => owned,
        Err(_) => return Target::PollFirst,
    })
    .metadata() else {
        return Target::PollFirst;
    };
    let kind = meta.file_type();
    if kind.is_file() || kind.is_block_device() {
        return Target::Plain;
    }
    if kind.is_socket() {
        return Target::Socket;
    }
    reopen_nonblocking(fd).map_or(Target::PollFirst, Target::Reopened)
}

/// A new, non-blocking description of the pipe, FIFO or terminal `fd` is open on (Linux's
/// `/proc/self/fd`); close-on-exec, and never a controlling terminal.
fn reopen_nonblocking(fd: BorrowedFd<'_>) -> Option<OwnedFd> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let path = format!("/proc/self/fd/{}", fd.as_raw_fd());
        std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path)
            .ok()
            .map(OwnedFd::from)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = fd;
        None
    }
}

/// The most bytes written at once when retry cannot make the write itself non-blocking: a
/// pipe with any room takes this many at once (POSIX's `PIPE_BUF` is at least 512).
const SAFE_WRITE: usize = 512;

/// Writes all of `bytes` to `fd` as `target` says, waiting for room through
/// [`signals::wait_ready`] (until a stop signal, or `patience`).
fn write_all(
    fd: BorrowedFd<'_>,
    target: &Target,
    mut bytes: &[u8],
    patience: Option<Instant>,
) -> io::Result<()> {
    while !bytes.is_empty() {
        let written = match target {
            Target::Plain => nix::unistd::write(fd, bytes),
            Target::Reopened(own) => nix::unistd::write(own, bytes),
            Target::Socket => nix::sys::socket::send(
                std::os::fd::AsRawFd::as_raw_fd(&fd),
                bytes,
                nix::sys::socket::MsgFlags::MSG_DONTWAIT | no_sigpipe(),
            ),
            Target::PollFirst => match wait(fd, patience) {
                Ok(()) => nix::unistd::write(fd, &bytes[..bytes.len().min(SAFE_WRITE)]),
                Err(e) => return Err(e),
            },
        };
        match written {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(Errno::EINTR) => {}
            Err(Errno::EAGAIN) => match target {
                Target::Reopened(own) => wait(own.as_fd(), patience)?,
                _ => wait(fd, patience)?,
            },
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// `MSG_NOSIGNAL` where the system has it (retry ignores SIGPIPE anyway).
fn no_sigpipe() -> nix::sys::socket::MsgFlags {
    #[cfg(any(target_os = "linux", target_os = "freebsd"))]
    return nix::sys::socket::MsgFlags::MSG_NOSIGNAL;
    #[cfg(not(any(target_os = "linux", target_os = "freebsd")))]
    return nix::sys::socket::MsgFlags::empty();
}

/// Waits for room on `fd`, within the rules of this module (at most until `patience`).
fn wait(fd: BorrowedFd<'_>, patience: Option<Instant>) -> io::Result<()> {
    match signals::wait_ready(fd, PollFlags::POLLOUT, patience) {
        Ready::Ready => Ok(()),
        Ready::Stop => Err(io::Error::new(
            io::ErrorKind::Interrupted,
            "stopped by a signal while the reader was not reading",
        )),
        Ready::TimedOut => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the reader did not read before the deadline",
        )),
    }
}

/// Appends `bytes` to the file at `path` (created, mode 0666 less the umask, if missing), in
/// one write where possible. The file is opened without waiting: a FIFO with no reader is an
/// error at once, and a FIFO whose reader does not read is waited for within the rules of
/// this module, at most until `patience` (the run's, [`Stderr::patience`]).
///
/// # Errors
/// When the file cannot be opened or written; [`io::ErrorKind::Interrupted`] when a stop
/// signal came first, [`io::ErrorKind::TimedOut`] when the patience ran out.
pub fn append(path: &Path, bytes: &[u8], patience: Option<Instant>) -> io::Result<()> {
    let file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENXIO) => io::Error::new(
                io::ErrorKind::BrokenPipe,
                "it is a FIFO that no process has open for reading",
            ),
            _ => e,
        })?;
    let kind = file.metadata()?.file_type();
    if kind.is_file() || kind.is_block_device() {
        let mut file = file;
        file.write_all(bytes)?;
        return file.flush();
    }
    let fd = OwnedFd::from(file);
    write_all(
        fd.as_fd(),
        &Target::Reopened(fd.try_clone()?),
        bytes,
        patience,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_to_a_file_and_refuses_a_fifo_without_reader_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        append(&path, b"a=1\n", None).unwrap();
        append(&path, b"b=2\n", None).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a=1\nb=2\n");
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let start = Instant::now();
        let e = append(&fifo, b"x\n", None).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::BrokenPipe, "{e}");
        assert!(start.elapsed().as_secs() < 5);
    }

    #[test]
    fn a_full_pipe_is_waited_for_only_until_the_patience() {
        let (read, write) = nix::unistd::pipe().unwrap();
        let target = Target::Reopened(reopen_nonblocking(write.as_fd()).unwrap());
        let patience = Some(Instant::now() + std::time::Duration::from_millis(50));
        let big = vec![b'x'; 4 << 20];
        let e = write_all(write.as_fd(), &target, &big, patience).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        drop(read);
    }
}
