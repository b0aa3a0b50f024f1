//! `--lock PATH` on Windows (see the module `lock`): an exclusive lock of the whole file with
//! `LockFileEx`
//! (<https://learn.microsoft.com/en-us/windows/win32/api/fileapi/nf-fileapi-lockfileex>), held
//! from before the first attempt to the end of the run; Windows releases it when retry ends,
//! however it ends. A missing PATH is created; a directory is refused. Another run's lock is
//! waited for in a helper thread blocked in `LockFileEx`, within a time limit and never past a
//! stop event ([`bounded::call`]). The holder writes its pid into an empty PATH (or one holding
//! only a pid), as on Unix; another process cannot read a locked file on Windows, so a busy
//! lock names no holder.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::Path;
use std::time::Instant;

use super::{NO_LIMIT, Refused};
use crate::net::bounded::{self, Bounded};

/// A lock held: released when dropped (or when retry ends).
#[derive(Debug)]
pub struct Held {
    _file: File,
}

/// Takes the lock on `path`, waiting until `until` (`None`: as long as it takes) if another run
/// holds it; calls `waiting` once when a wait begins (with no holder: see the module). A limit
/// already past means no wait at all.
///
/// # Errors
/// [`Refused`]: busy until the limit, stopped by a stop event, or PATH unusable.
pub fn take(
    path: &Path,
    until: Option<Instant>,
    waiting: impl FnOnce(Option<u32>),
) -> Result<Held, Refused> {
    if path.is_dir() {
        return Err(Refused::Failed("it is a directory".into()));
    }
    let (file, writable) = match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
    {
        Ok(file) => (file, true),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => match File::open(path) {
            Ok(file) => (file, false),
            Err(_) => return Err(Refused::Failed(format!("cannot open: {e}"))),
        },
        Err(e) => return Err(Refused::Failed(format!("cannot open: {e}"))),
    };
    let file = match lock_exclusive(&file, false) {
        Ok(true) => file,
        Ok(false) => {
            if until.is_some_and(|u| u <= Instant::now()) {
                return Err(Refused::Busy { holder: None });
            }
            waiting(None);
            let now = Instant::now();
            let limit = until.unwrap_or_else(|| now.checked_add(NO_LIMIT).unwrap_or(now));
            match bounded::call("lock", limit, move || {
                lock_exclusive(&file, true).map(|_| file)
            }) {
                Ok(Bounded::Done(Ok(file))) => file,
                Ok(Bounded::Done(Err(e))) | Err(e) => {
                    return Err(Refused::Failed(format!("cannot lock: {e}")));
                }
                Ok(Bounded::Stopped) => return Err(Refused::Stopped),
                Ok(Bounded::TimedOut) => return Err(Refused::Busy { holder: None }),
            }
        }
        Err(e) => return Err(Refused::Failed(format!("cannot lock: {e}"))),
    };
    if writable {
        write_pid(&file);
    }
    Ok(Held { _file: file })
}

/// Writes this process's pid into the lock file if it is empty or holds only a pid: never over
/// anything else. A failure costs nothing.
fn write_pid(mut file: &File) {
    let mut text = String::new();
    if file.take(24).read_to_string(&mut text).is_err() {
        return;
    }
    let trimmed = text.trim_end();
    if !trimmed.is_empty() && (text.len() > 21 || trimmed.parse::<u32>().is_err()) {
        return;
    }
    let _ = file.set_len(0);
    let _ = file.rewind();
    let _ = writeln!(file, "{}", std::process::id());
}

/// Locks the whole of `file` exclusively with `LockFileEx`: at once or not at all
/// (`LOCKFILE_FAIL_IMMEDIATELY`) unless `wait`, then blocking until it is free. `Ok(false)`:
/// another process holds it (only without `wait`). Windows releases it when the handle closes.
///
/// # Errors
/// The system's error.
pub(crate) fn lock_exclusive(file: &File, wait: bool) -> std::io::Result<bool> {
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::Foundation::{ERROR_LOCK_VIOLATION, HANDLE};
    use windows_sys::Win32::Storage::FileSystem::{
        LOCKFILE_EXCLUSIVE_LOCK, LOCKFILE_FAIL_IMMEDIATELY, LockFileEx,
    };
    use windows_sys::Win32::System::IO::OVERLAPPED;
    let flags = if wait {
        LOCKFILE_EXCLUSIVE_LOCK
    } else {
        LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY
    };
    // SAFETY: a plain C struct, all zeroes valid: the range starts at offset 0.
    let mut overlapped: OVERLAPPED = unsafe { std::mem::zeroed() };
    // SAFETY: a valid file handle, opened for synchronous I/O, and an OVERLAPPED that outlives
    // the call (which completes before it returns).
    let ok = unsafe {
        LockFileEx(
            file.as_raw_handle() as HANDLE,
            flags,
            0,
            u32::MAX,
            u32::MAX,
            &raw mut overlapped,
        )
    };
    if ok != 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    if !wait && e.raw_os_error() == Some(ERROR_LOCK_VIOLATION as i32) {
        return Ok(false);
    }
    Err(e)
}
