//! Pipes for an attempt's standard streams, for the event loops and for the tests: both ends
//! close-on-exec, so that no other child inherits them (macOS has no `pipe2`).

/// A pipe (read end, write end), both ends close-on-exec.
///
/// # Errors
/// When the system has no descriptors left.
#[cfg(unix)]
pub fn cloexec_pipe() -> std::io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    #[cfg(not(target_os = "macos"))]
    {
        Ok(nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?)
    }
    // macOS has no pipe2: the flag is set just after. Only the thread that spawns runs
    // children, so none can inherit the ends in between.
    #[cfg(target_os = "macos")]
    {
        use nix::fcntl::{FcntlArg, FdFlag, fcntl};
        let (read, write) = nix::unistd::pipe()?;
        for fd in [&read, &write] {
            fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))?;
        }
        Ok((read, write))
    }
}
