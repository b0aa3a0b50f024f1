//! Processes recorded by `storm` and `pid-sleep` in a directory: each file holds a pid and its
//! creation time, so that a reused pid is never taken for the process recorded.

use std::path::Path;

use windows_sys::Win32::Foundation::{CloseHandle, FALSE, FILETIME, HANDLE, STILL_ACTIVE};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, GetExitCodeProcess, GetProcessTimes, OpenProcess,
    PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_TERMINATE, TerminateProcess,
};

use crate::fail;

/// A process's creation time (100 ns since 1601), or `None` when it cannot be opened or has
/// ended.
pub fn creation_if_running(pid: u32) -> Option<u64> {
    // SAFETY: OpenProcess takes plain values; the handle it returns is checked, then closed.
    unsafe {
        let handle = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, pid);
        if handle.is_null() {
            return None;
        }
        let made = creation(handle);
        let mut code = 0u32;
        let queried = GetExitCodeProcess(handle, &mut code);
        CloseHandle(handle);
        (queried != FALSE && code == STILL_ACTIVE as u32).then_some(made?)
    }
}

/// The creation time of the process `handle` names.
///
/// # Safety
/// `handle` must be a valid process handle with query access.
unsafe fn creation(handle: HANDLE) -> Option<u64> {
    let zero = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut made, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
    // SAFETY: the caller's valid handle, and four FILETIMEs to write.
    let ok = unsafe { GetProcessTimes(handle, &mut made, &mut exited, &mut kernel, &mut user) };
    (ok != FALSE).then(|| (u64::from(made.dwHighDateTime) << 32) | u64::from(made.dwLowDateTime))
}

/// Records this process in `file`: its creation time, written whole (through a file beside it,
/// renamed). `storm` names the file by its pid in its directory.
pub fn record_self(file: &Path) {
    // SAFETY: the pseudo-handle of this process is always valid.
    let made = unsafe { creation(GetCurrentProcess()) }.unwrap_or(0);
    let partial = file.with_extension("partial");
    let text = format!("{} {made}", std::process::id());
    let written = std::fs::write(&partial, text).and_then(|()| std::fs::rename(&partial, file));
    if let Err(e) = written {
        fail(&format!("{}: {e}", file.display()));
    }
}

/// The records in `dir` (files `storm` or `pid-sleep` wrote): (pid, creation time).
pub fn recorded(dir: &Path) -> impl Iterator<Item = (u32, u64)> {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| fail(&format!("{}: {e}", dir.display())));
    entries.filter_map(|entry| {
        let path = entry.ok()?.path();
        if path.extension().is_some_and(|e| e == "partial") {
            return None;
        }
        let text = std::fs::read_to_string(path).ok()?;
        let (pid, made) = text.trim().split_once(' ')?;
        Some((pid.parse().ok()?, made.parse().ok()?))
    })
}

/// Whether process `pid` is running and is the one created at `made`.
pub fn same_alive(pid: u32, made: u64) -> bool {
    creation_if_running(pid) == Some(made)
}

/// Terminates process `pid` if it is the one created at `made`.
pub fn kill_same(pid: u32, made: u64) {
    if !same_alive(pid, made) {
        return;
    }
    // SAFETY: OpenProcess takes plain values; the handle it returns is checked, then closed.
    unsafe {
        let handle = OpenProcess(
            PROCESS_TERMINATE | PROCESS_QUERY_LIMITED_INFORMATION,
            FALSE,
            pid,
        );
        if !handle.is_null() {
            if creation(handle) == Some(made) {
                TerminateProcess(handle, 1);
            }
            CloseHandle(handle);
        }
    }
}
