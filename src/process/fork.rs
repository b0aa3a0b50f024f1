//! The portable spawn: `fork`, the child's set-up ([`super::child`]), `execve`; what exec or
//! the set-up said comes back through a close-on-exec pipe, as std's `Command` does it (end of
//! file: exec succeeded; 8 bytes: errno and whether the set-up failed).
//!
//! Used on macOS and FreeBSD, by the `portable` build on Linux, and on Linux when the vfork
//! clone is refused (a seccomp filter, an emulator: see `vfork.rs`). Every signal is blocked
//! around the fork so that none of retry's handlers runs in the child, which sets its own
//! dispositions and mask before exec; the child of a process with threads makes only
//! async-signal-safe calls, which is all the set-up does.

use std::os::fd::{AsRawFd, OwnedFd};

use super::child::{self, Failed, Prepared};

/// Starts the prepared command; returns its pid once it has called `execve` (or failed).
///
/// # Errors
/// [`Failed::Exec`] with what `execve` said for the last candidate that mattered;
/// [`Failed::Own`] when the pipe or `fork` failed, or the child's set-up did.
pub fn spawn(plan: &Prepared) -> Result<libc::pid_t, Failed> {
    let (read, write) = super::pipe::cloexec_pipe().map_err(Failed::Own)?;
    let old = child::block_all();
    // SAFETY: the child runs `child_main`, which makes only async-signal-safe calls and ends
    // in execve or _exit; the parent only restores its mask and goes on.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: in the child, with every signal blocked; `plan` and the pipe stay valid (the
        // child has its own copy of the memory and descriptors).
        unsafe { child_main(plan, &write) }
    }
    let fork_error = std::io::Error::last_os_error();
    child::restore_mask(&old);
    drop(write);
    if pid < 0 {
        return Err(Failed::Own(fork_error));
    }
    match read_report(&read) {
        None => Ok(pid),
        Some((error, setup)) => {
            child::reap(pid);
            Err(Failed::of_child(error, setup))
        }
    }
}

/// The child after `fork`: set up and exec; on failure, report through `report` and exit 127.
///
/// # Safety
/// Only in the child of `fork`, with every signal blocked.
unsafe fn child_main(plan: &Prepared, report: &OwnedFd) -> ! {
    // SAFETY: the caller's contract; `setup_and_exec` only returns on failure.
    let (error, setup) = unsafe { child::setup_and_exec(plan) };
    let mut bytes = [0u8; 8];
    bytes[..4].copy_from_slice(&error.to_ne_bytes());
    bytes[4..].copy_from_slice(&i32::from(setup).to_ne_bytes());
    // SAFETY: write of a local buffer to the pipe (8 bytes, below PIPE_BUF: one write), then
    // _exit without running retry's atexit handlers or flushing its stdio buffers.
    unsafe {
        libc::write(report.as_raw_fd(), bytes.as_ptr().cast(), bytes.len());
        libc::_exit(127)
    }
}

/// What the child reported: `None` at end of file (it exec'd), else (errno, set-up failed).
fn read_report(read: &OwnedFd) -> Option<(i32, bool)> {
    let mut bytes = [0u8; 8];
    let mut got = 0;
    while got < bytes.len() {
        match nix::unistd::read(read, &mut bytes[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(nix::errno::Errno::EINTR) => {}
            // A read error on our own pipe: nothing to learn; take it as exec'd.
            Err(_) => return None,
        }
    }
    if got < bytes.len() {
        return None;
    }
    let error = i32::from_ne_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let setup = i32::from_ne_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]) != 0;
    Some((error, setup))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::child::{Stdio, environment};
    use std::ffi::OsString;
    use std::io;

    fn run(argv: &[&str]) -> io::Result<i32> {
        let argv: Vec<OsString> = argv.iter().map(OsString::from).collect();
        let plan = Prepared::new(&argv, &environment(&[], &[]), false, [Stdio::Inherit; 3])?;
        let pid = spawn(&plan).map_err(io::Error::from)?;
        let mut status = 0;
        // SAFETY: waitpid on the child just started, with a valid pointer.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        Ok(libc::WEXITSTATUS(status))
    }

    #[test]
    fn runs_a_program_and_reports_launch_errors() {
        assert_eq!(run(&["sh", "-c", "exit 7"]).unwrap(), 7);
        let e = run(&["no-such-program-xyz"]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        let e = run(&["/etc/passwd"]).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EACCES));
    }
}
