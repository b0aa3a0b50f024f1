//! One attempt's process: how it ended, and (in `unix.rs`) spawning, process groups, terminal
//! detection, signalling and stopping its whole tree; `stdio.rs` knows which standard
//! descriptors were closed at start, `dispositions.rs` which signals were ignored.
//!
//! Spawning (`launch.rs`) runs the child's set-up of `child.rs` after the vfork clone of
//! `vfork.rs` (Linux, native build) or after `fork` (`fork.rs`: macOS, FreeBSD, the `portable`
//! build, and Linux once the clone was refused). What an attempt's tree is beyond its process
//! group is per OS, chosen here: `linux.rs` (subreaper, `/proc` through `tree.rs`),
//! `freebsd.rs` (`procctl` reaper), `portable.rs` (macOS and the `portable` build: the group).

#[cfg(unix)]
mod child;
#[cfg(unix)]
pub mod dispositions;
#[cfg(unix)]
mod fork;
#[cfg(target_os = "freebsd")]
mod freebsd;
#[cfg(unix)]
mod launch;
#[cfg(linux_native)]
mod linux;
#[cfg(all(unix, not(any(linux_native, target_os = "freebsd"))))]
mod portable;
#[cfg(unix)]
pub mod relay;
mod stdio;
#[cfg(linux_native)]
mod tree;
#[cfg(unix)]
mod unix;
#[cfg(linux_native)]
mod vfork;

#[cfg(target_os = "freebsd")]
use freebsd as os;
#[cfg(linux_native)]
use linux as os;
#[cfg(all(unix, not(any(linux_native, target_os = "freebsd"))))]
use portable as os;

#[cfg(unix)]
pub use launch::{LaunchError, Spawned, spawn, spawn_hook};
pub use stdio::closed_at_start;
#[cfg(unix)]
pub use unix::*;

#[cfg(not(unix))]
compile_error!("retry supervises processes with Unix signals and process groups: Unix only");

use crate::status::{self, CANNOT_EXECUTE, KILLED, NOT_FOUND, TIMED_OUT};

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

/// Which of an attempt's standard streams are pipes to retry (the others are inherited).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Piped {
    /// stdin is fed by retry (`--replay-stdin`).
    pub stdin: bool,
    /// stdout is read by retry (held or matched).
    pub stdout: bool,
    /// stderr is read by retry (matched).
    pub stderr: bool,
    /// stderr goes into the stdout pipe, one pipe for both (`stderr` is then not looked at):
    /// what the attempt writes to them stays in the order written (`--chronic` when retry's
    /// stdout and stderr are one file).
    pub stderr_in_stdout: bool,
}

/// Why an attempt was stopped by retry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// `--timeout` passed.
    Timeout,
    /// `--deadline` passed.
    Deadline,
    /// `--idle-timeout`: the attempt wrote nothing on stdout or stderr for this long.
    Idle(std::time::Duration),
}

/// How an attempt ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It exited with this code.
    Exited(u8),
    /// It died of this signal (not sent by a timeout).
    Signaled(i32),
    /// retry stopped it with `--signal` (TERM); `killed` when KILL was needed after
    /// `--kill-after` (or was the signal).
    Stopped {
        /// Why it was stopped.
        reason: StopReason,
        /// KILL was needed.
        killed: bool,
        /// How long the attempt had run when the stop signal was sent.
        after: std::time::Duration,
        /// How its process then ended, for `--preserve-status`.
        ended: Ended,
    },
    /// retry could not start it (not found, not executable); never retried.
    LaunchFailed {
        /// 127 (not found) or 126 (cannot execute).
        status: u8,
        /// The system's reason.
        message: String,
    },
}

impl Outcome {
    /// The status number: the exit code, `128 + N` for signal N, 124 or 137 when stopped (as
    /// coreutils `timeout`), 126 or 127 for a launch failure.
    pub fn status(&self) -> u8 {
        match self {
            Outcome::Exited(c) => *c,
            Outcome::Signaled(n) => status::of_signal(*n),
            Outcome::Stopped { killed: false, .. } => TIMED_OUT,
            Outcome::Stopped { killed: true, .. } => KILLED,
            Outcome::LaunchFailed { status, .. } => *status,
        }
    }

    /// The outcome of a failed launch: 127 when the program does not exist, else 126.
    pub fn launch_failed(err: &std::io::Error) -> Outcome {
        let status = if err.kind() == std::io::ErrorKind::NotFound {
            NOT_FOUND
        } else {
            CANNOT_EXECUTE
        };
        Outcome::LaunchFailed {
            status,
            message: err.to_string(),
        }
    }
}
