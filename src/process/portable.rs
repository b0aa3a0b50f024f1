//! macOS, and the `portable` build on Linux: no reaper and no process table that retry reads,
//! so an attempt's tree is its process group. macOS has no `PR_SET_CHILD_SUBREAPER` (a process
//! orphaned inside an attempt goes to launchd) and no `PR_SET_PDEATHSIG` (an attempt outlives
//! a retry killed by KILL): a process that left the attempt's group (`setsid`, `set -m`) is not
//! stopped with it there. docs/platforms.md says so for users.

use std::os::fd::OwnedFd;

use nix::unistd::Pid;

use super::child::{Failed, Prepared};
use super::spawned::GroupMode;

/// Nothing to become on macOS: the group is all retry can reach. In the `portable` build on
/// Linux retry still becomes a child subreaper, only so that the attempt's orphans come to it
/// to be reaped, as launchd reaps them at once on macOS: a container's PID 1 may leave them as
/// zombies for seconds, and a zombie still counts as a member of the group ([`rest`]). Nothing
/// is looked up through it: the tree is still the group.
pub fn become_reaper() {
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_child_subreaper(true);
}

/// Without a process table to read, nothing beyond the process group can be found.
pub fn descendants() -> Vec<Pid> {
    Vec::new()
}

/// After the attempt's own process was reaped: signals (`Some`) or only looks for (`None`)
/// what is left of its process group (only when it has one of its own); whether anything was.
pub fn rest(pid: Pid, mode: GroupMode, signal: Option<i32>) -> super::Left {
    // A group's id is not reused while the group has members. Signal 0 only asks.
    if mode == GroupMode::Own && super::group::send_group(pid, signal.unwrap_or(0)) {
        super::Left::Group
    } else {
        super::Left::Nothing
    }
}

/// Starts the plan with `fork` and `exec`; returns the pid (and no pidfd).
///
/// # Errors
/// What `fork` or the child's set-up or exec said.
pub fn start(plan: &Prepared) -> Result<(libc::pid_t, Option<OwnedFd>), Failed> {
    super::fork::spawn(plan).map(|pid| (pid, None))
}
