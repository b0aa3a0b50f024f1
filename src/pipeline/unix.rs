//! The pipeline's pipes on Unix (see `pipeline/mod.rs`): cancelling an attempt's I/O threads
//! ([`Cancel`]: a flag for threads blocked on a spool, and a pipe that becomes readable for
//! threads blocked in `poll`), pipes grown where the system allows, whether two descriptors are
//! one file, and a pipe drained without blocking once the attempt has ended (`O_NONBLOCK`).

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

/// What a pump reads, and what a leftover process may still hold: a pipe's descriptor.
pub type Source = OwnedFd;

/// A duplicate of `stream` (retry's stdin, stdout or stderr) as a file of retry's own.
///
/// # Errors
/// When the descriptor cannot be duplicated.
pub fn dup(stream: &impl AsFd) -> io::Result<File> {
    Ok(File::from(stream.as_fd().try_clone_to_owned()?))
}

/// A close-on-exec pipe: (read end, write end).
///
/// # Errors
/// When the pipe cannot be made.
pub fn pipe() -> io::Result<(Source, Source)> {
    crate::process::cloexec_pipe()
}

/// Makes reads and writes of `file` not wait (`O_NONBLOCK`, `on`) or wait again: a pump drains
/// what an ended attempt's leftovers keep open without waiting for them; the stdin feeder
/// writes without blocking, so that a full pipe parks it in `poll`, where cancellation
/// reaches it.
pub fn set_nonblocking(file: &File, on: bool) {
    if let Ok(flags) = fcntl(file, FcntlArg::F_GETFL) {
        let flags = OFlag::from_bits_truncate(flags);
        let flags = if on {
            flags | OFlag::O_NONBLOCK
        } else {
            flags - OFlag::O_NONBLOCK
        };
        let _ = fcntl(file, FcntlArg::F_SETFL(flags));
    }
}

/// A read of a draining pipe ([`set_nonblocking`]): `WouldBlock` when nothing is there.
///
/// # Errors
/// The read's error.
pub fn read_drained(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    io::Read::read(file, buf)
}

/// The pipe, kept for what the attempt's leftovers still write (passed on after a success).
pub fn keep_rest(file: File) -> Option<Source> {
    Some(file.into())
}

/// Whether a read of stdin failed because there is none: never on Unix (a closed stdin is
/// noted at start and never recorded).
pub fn no_stdin(_e: &io::Error) -> bool {
    false
}

/// Waits until a non-blocking stdin (a parent may leave `O_NONBLOCK` set) is readable.
pub fn wait_stdin(stdin: &File) {
    let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
    let _ = poll(&mut fds, PollTimeout::NONE);
}

/// A one-shot cancellation shared by an attempt's I/O threads.
#[derive(Debug)]
pub struct Cancel {
    flag: AtomicBool,
    read: OwnedFd,
    write: OwnedFd,
}

impl Cancel {
    /// A fresh, uncancelled token.
    ///
    /// # Errors
    /// When the pipe cannot be created.
    pub fn new() -> io::Result<Cancel> {
        let (read, write) = crate::process::cloexec_pipe()?;
        Ok(Cancel {
            flag: AtomicBool::new(false),
            read,
            write,
        })
    }

    /// Cancels: sets the flag and makes the pipe readable.
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::Release);
        let _ = nix::unistd::write(&self.write, b"x");
    }

    /// The flag, for [`crate::spool::Spool::wait_beyond`].
    pub fn flag(&self) -> &AtomicBool {
        &self.flag
    }

    /// Whether [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }

    /// Sleeps up to `millis` milliseconds, or until `file` has an error or hang-up (its reader
    /// closed) or the token is cancelled; returns `false` when cancelled or on such an error.
    pub fn nap(&self, file: &File, millis: u16) -> bool {
        self.nap_fd(file.as_fd(), millis)
    }

    /// Blocks until `file` is readable (or has an error or hang-up) or the token is
    /// cancelled; returns `false` when cancelled.
    pub fn wait_readable(&self, file: &File) -> bool {
        self.wait_ready(file.as_fd(), PollFlags::POLLIN)
    }

    /// Blocks until `file` has room (or an error or hang-up) or the token is cancelled;
    /// returns `false` when cancelled.
    pub fn wait_writable(&self, file: &File) -> bool {
        self.wait_ready(file.as_fd(), PollFlags::POLLOUT)
    }

    fn nap_fd(&self, fd: BorrowedFd<'_>, millis: u16) -> bool {
        let mut fds = [
            PollFd::new(fd, PollFlags::empty()),
            PollFd::new(self.read.as_fd(), PollFlags::POLLIN),
        ];
        match poll(&mut fds, PollTimeout::from(millis)) {
            Ok(_) | Err(nix::errno::Errno::EINTR) => {
                let closed = fds[0].revents().is_some_and(|r| !r.is_empty());
                !closed && !self.is_cancelled()
            }
            Err(_) => !self.is_cancelled(),
        }
    }

    fn wait_ready(&self, fd: BorrowedFd<'_>, events: PollFlags) -> bool {
        loop {
            let mut fds = [
                PollFd::new(fd, events),
                PollFd::new(self.read.as_fd(), PollFlags::POLLIN),
            ];
            match poll(&mut fds, PollTimeout::NONE) {
                Err(nix::errno::Errno::EINTR) => continue,
                Err(_) => return !self.is_cancelled(),
                Ok(_) => {
                    let ready = fds[0].revents().is_some_and(|r| !r.is_empty());
                    if ready {
                        return true;
                    }
                    if self.is_cancelled() {
                        return false;
                    }
                }
            }
        }
    }
}

/// Pipe size asked for on Linux: fewer, larger reads and writes per byte copied.
#[cfg(target_os = "linux")]
const PIPE_SIZE: i32 = 1 << 20;

/// Grows a pipe to [`PIPE_SIZE`] where the system allows (Linux; up to
/// `/proc/sys/fs/pipe-max-size`); anything else is left as it is.
pub fn grow_pipe<F: AsFd>(fd: &F) {
    #[cfg(target_os = "linux")]
    let _ = nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_SETPIPE_SZ(PIPE_SIZE));
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
}

/// Whether `a` and `b` are the same open file, pipe or terminal (`fstat`: the same device and
/// inode), as retry's stdout and stderr are under `2>&1`, in a cron job whose mail takes both,
/// or on a terminal. `false` when either cannot be looked at.
pub fn same_file<A: AsFd, B: AsFd>(a: &A, b: &B) -> bool {
    match (
        nix::sys::stat::fstat(a.as_fd()),
        nix::sys::stat::fstat(b.as_fd()),
    ) {
        (Ok(a), Ok(b)) => a.st_dev == b.st_dev && a.st_ino == b.st_ino,
        _ => false,
    }
}
