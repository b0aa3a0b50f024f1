//! The pipeline's pipes on Windows (see `pipeline/mod.rs`), where an anonymous pipe can be
//! neither polled nor made non-blocking: a pump waits for something to read by asking
//! `PeekNamedPipe` how many bytes wait
//! (<https://learn.microsoft.com/en-us/windows/win32/api/namedpipeapi/nf-namedpipeapi-peeknamedpipe>),
//! between naps of at most [`NAP`], and looks at its [`Cancel`] on every round; once the attempt
//! has ended it reads only what is there. A write (to the attempt's stdin, to retry's
//! stdout) blocks while the pipe is full: the thread doing it is one the supervisor can leave
//! behind. What an attempt's leftovers write after it ended is not passed on (no pipe is kept):
//! they end with its job, at the latest when retry does.

use std::fs::File;
use std::io::{self, Read};
use std::os::windows::io::{AsHandle, AsRawHandle, OwnedHandle};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use windows_sys::Win32::Foundation::HANDLE;
use windows_sys::Win32::System::Pipes::PeekNamedPipe;

/// What a pump reads: a pipe's handle.
pub type Source = OwnedHandle;

/// The longest nap of a pump waiting for output: the latency it adds to output, and the rate
/// at which an idle pump wakes (the naps start at 1 ms and double while nothing comes).
const NAP: Duration = Duration::from_millis(16);

/// A duplicate of `stream` (retry's stdin, stdout or stderr) as a file of retry's own.
///
/// # Errors
/// When the handle cannot be duplicated.
pub fn dup(stream: &impl AsHandle) -> io::Result<File> {
    Ok(File::from(stream.as_handle().try_clone_to_owned()?))
}

/// A pipe: (read end, write end), neither inherited but by a child it is given to.
///
/// # Errors
/// When the pipe cannot be made.
pub fn pipe() -> io::Result<(Source, Source)> {
    let (read, write) = io::pipe()?;
    Ok((read.into(), write.into()))
}

/// Nothing to switch on Windows, where an anonymous pipe cannot be made non-blocking:
/// [`read_drained`] never waits, and a write waits while the pipe is full.
pub fn set_nonblocking(_file: &File, _on: bool) {}

/// Reads what is in the pipe now, without waiting: `WouldBlock` when nothing is there.
///
/// # Errors
/// The read's error.
pub fn read_drained(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    match waiting(file) {
        Some(0) => Err(io::ErrorKind::WouldBlock.into()),
        Some(n) => {
            let take = buf.len().min(n);
            file.read(&mut buf[..take])
        }
        // The writers closed it (or it is no pipe): the read says which.
        None => file.read(buf),
    }
}

/// No pipe is kept for what leftovers write (see the module).
pub fn keep_rest(_file: File) -> Option<Source> {
    None
}

/// A read of stdin said it would block (a handle opened for overlapped I/O): a nap of at most
/// [`NAP`] before the next read, as Windows cannot wait for a handle to become readable.
pub fn wait_stdin(_stdin: &File) {
    std::thread::sleep(NAP);
}

/// Whether a read of stdin failed because there is none: a process started without a stdin
/// handle reads it as `ERROR_INVALID_HANDLE`.
pub fn no_stdin(e: &io::Error) -> bool {
    e.raw_os_error() == Some(windows_sys::Win32::Foundation::ERROR_INVALID_HANDLE as i32)
}

/// The bytes waiting in pipe `file`; `None` when it cannot be asked (the writers closed it,
/// or it is not a pipe).
fn waiting(file: &File) -> Option<usize> {
    let mut available = 0u32;
    // SAFETY: a valid handle; no buffer is read, only the count is written.
    let ok = unsafe {
        PeekNamedPipe(
            file.as_raw_handle() as HANDLE,
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            &raw mut available,
            std::ptr::null_mut(),
        )
    };
    (ok != 0).then(|| usize::try_from(available).unwrap_or(usize::MAX))
}

/// A one-shot cancellation shared by an attempt's I/O threads: a flag they look at between
/// naps.
#[derive(Debug)]
pub struct Cancel {
    flag: AtomicBool,
}

impl Cancel {
    /// A fresh, uncancelled token.
    ///
    /// # Errors
    /// Never on Windows (the Unix token makes a pipe).
    pub fn new() -> io::Result<Cancel> {
        Ok(Cancel {
            flag: AtomicBool::new(false),
        })
    }

    /// Cancels.
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::Release);
    }

    /// The flag, for [`crate::spool::Spool::wait_beyond`].
    pub fn flag(&self) -> &AtomicBool {
        &self.flag
    }

    /// Whether [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }

    /// Sleeps `millis` milliseconds; `false` when cancelled.
    pub fn nap(&self, _file: &File, millis: u16) -> bool {
        std::thread::sleep(Duration::from_millis(millis.into()));
        !self.is_cancelled()
    }

    /// Waits until pipe `file` holds something to read, or its writers closed it, or the
    /// token is cancelled (`false`).
    pub fn wait_readable(&self, file: &File) -> bool {
        let mut nap = Duration::from_millis(1);
        loop {
            if self.is_cancelled() {
                return false;
            }
            match waiting(file) {
                Some(0) => {}
                _ => return true,
            }
            std::thread::sleep(nap);
            nap = (nap * 2).min(NAP);
        }
    }

    /// Whether to write now (a write to a full pipe then blocks): `false` when cancelled.
    pub fn wait_writable(&self, _file: &File) -> bool {
        !self.is_cancelled()
    }
}

/// Nothing to grow on Windows (a pipe's buffer is set when it is made).
pub fn grow_pipe<T>(_pipe: &T) {}

/// Whether retry's stdout and stderr are one file: not told on Windows, so never (two pipes
/// then carry an attempt's output under `--chronic`).
pub fn same_file<A, B>(_a: &A, _b: &B) -> bool {
    false
}
