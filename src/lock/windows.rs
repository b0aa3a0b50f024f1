//! `--lock PATH` on Windows (see the module `lock`): an exclusive lock with `LockFileEx`
//! (<https://learn.microsoft.com/en-us/windows/win32/api/fileapi/nf-fileapi-lockfileex>), held
//! from before the first attempt to the end of the run; Windows releases it when retry ends,
//! however it ends. A missing PATH is created; a directory is refused. Another run's lock is
//! waited for in a helper thread blocked in `LockFileEx`, within a time limit and never past a
//! stop event ([`bounded::call`]). The holder writes its pid into an empty PATH (or one holding
//! only a pid), as on Unix, and a run that finds the lock busy names it. The lock covers one
//! byte far past the end of the file ([`LOCKED_BYTE`]), not the file's content: a byte range a
//! process locks cannot be read by another on Windows, and the pid must stay readable.

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
            let holder = read_pid(path).filter(|&pid| exists(pid));
            if until.is_some_and(|u| u <= Instant::now()) {
                return Err(Refused::Busy { holder });
            }
            waiting(holder);
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
                Ok(Bounded::TimedOut) => {
                    let now = read_pid(path).filter(|&pid| exists(pid));
                    return Err(Refused::Busy {
                        holder: now.or(holder),
                    });
                }
            }
        }
        Err(e) => return Err(Refused::Failed(format!("cannot lock: {e}"))),
    };
    if writable {
        write_pid(&file);
    }
    Ok(Held { _file: file })
}

/// The pid a holder wrote at the start of the file at `path`, if it holds one.
fn read_pid(path: &Path) -> Option<u32> {
    let mut text = String::new();
    File::open(path)
        .ok()?
        .take(24)
        .read_to_string(&mut text)
        .ok()?;
    text.trim_end().parse().ok()
}

/// Whether a process with this pid is running: it can be opened and has not exited
/// (`GetExitCodeProcess` says `STILL_ACTIVE`).
fn exists(pid: u32) -> bool {
    use std::os::windows::io::{FromRawHandle, OwnedHandle, RawHandle};
    use windows_sys::Win32::System::Threading::{
        GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
    };
    /// `STILL_ACTIVE` (259): the exit code of a process that has not ended.
    const STILL_ACTIVE: u32 = 259;
    // SAFETY: opening a process by id for a query; checked for null below.
    let raw = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if raw.is_null() {
        return false;
    }
    // SAFETY: a handle OpenProcess just returned, owned by nothing else.
    let process = unsafe { OwnedHandle::from_raw_handle(raw as RawHandle) };
    let mut code = 0u32;
    // SAFETY: a valid process handle and a pointer to a u32.
    let ok = unsafe {
        GetExitCodeProcess(
            std::os::windows::io::AsRawHandle::as_raw_handle(&process) as _,
            &raw mut code,
        )
    };
    ok != 0 && code == STILL_ACTIVE
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

/// The byte the lock covers: far past any end of file, so that the content (the holder's pid)
/// stays readable by other processes (Windows forbids reading a byte range another process has
/// locked). Locking past the end of a file is allowed.
const LOCKED_BYTE: u64 = 1 << 62;

/// Locks `file` exclusively with `LockFileEx` ([`LOCKED_BYTE`]): at once or not at all
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
    // SAFETY: a plain C struct, all zeroes valid; the offset is set below.
    let mut overlapped: OVERLAPPED = unsafe { std::mem::zeroed() };
    // The offset's low and high halves (the cast keeps each half's bits).
    overlapped.Anonymous.Anonymous.Offset = LOCKED_BYTE as u32;
    overlapped.Anonymous.Anonymous.OffsetHigh = (LOCKED_BYTE >> 32) as u32;
    // SAFETY: a valid file handle, opened for synchronous I/O, and an OVERLAPPED that outlives
    // the call (which completes before it returns).
    let ok = unsafe {
        LockFileEx(
            file.as_raw_handle() as HANDLE,
            flags,
            0,
            1,
            0,
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
