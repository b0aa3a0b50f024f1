//! Where an attempt's processes live ([`GroupMode`]: in retry's process group or in one of its
//! own), and signalling a process or a process group by number: raw numbers, not nix's
//! `Signal` or rustix's, which cannot name a real-time signal (`SIGRTMIN..=SIGRTMAX`) without
//! `unsafe`, so that those pass too.

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;

use nix::unistd::{Pid, getpgrp, tcgetpgrp};

use super::spawned::GroupMode;

impl GroupMode {
    /// [`GroupMode::Shared`] when retry's process group is the foreground group of its
    /// controlling terminal, else [`GroupMode::Own`].
    pub fn detect() -> GroupMode {
        let tty = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY | libc::O_CLOEXEC)
            .open("/dev/tty");
        match tty.map(|t| tcgetpgrp(&t)) {
            Ok(Ok(pgrp)) if pgrp == getpgrp() => GroupMode::Shared,
            _ => GroupMode::Own,
        }
    }
}

/// Sends signal number `signal` to process `pid` (errors ignored: it may have ended).
pub fn send(pid: Pid, signal: i32) {
    // SAFETY: kill with a pid and a signal number has no memory effects.
    unsafe { libc::kill(pid.as_raw(), signal) };
}

/// Sends signal number `signal` to the process group led by `pid` (0 sends nothing and only
/// asks); whether the group exists (and may be signalled). Raw numbers, not nix's `Signal` or
/// rustix's, which cannot name a real-time signal without `unsafe`: the one `killpg` of retry.
pub fn send_group(pid: Pid, signal: i32) -> bool {
    // SAFETY: killpg with a group id and a signal number has no memory effects.
    unsafe { libc::killpg(pid.as_raw(), signal) == 0 }
}
