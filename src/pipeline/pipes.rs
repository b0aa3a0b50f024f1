//! The pipes between retry and an attempt: grown where the system allows, and whether two of
//! retry's descriptors are one file.

use std::os::fd::AsFd;

/// Pipe size asked for on Linux: fewer, larger reads and writes per byte copied.
#[cfg(target_os = "linux")]
const PIPE_SIZE: i32 = 1 << 20;

/// Grows a pipe to [`PIPE_SIZE`] where the system allows (Linux; up to
/// `/proc/sys/fs/pipe-max-size`); anything else is left as it is.
pub(super) fn grow_pipe<F: AsFd>(fd: &F) {
    #[cfg(target_os = "linux")]
    let _ = nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_SETPIPE_SZ(PIPE_SIZE));
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
}

/// Whether `a` and `b` are the same open file, pipe or terminal (`fstat`: the same device and
/// inode), as retry's stdout and stderr are under `2>&1`, in a cron job whose mail takes both,
/// or on a terminal. `false` when either cannot be looked at.
pub(super) fn same_file<A: AsFd, B: AsFd>(a: &A, b: &B) -> bool {
    match (
        nix::sys::stat::fstat(a.as_fd()),
        nix::sys::stat::fstat(b.as_fd()),
    ) {
        (Ok(a), Ok(b)) => a.st_dev == b.st_dev && a.st_ino == b.st_ino,
        _ => false,
    }
}
