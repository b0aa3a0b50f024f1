//! Linux (native build): a child is started with the vfork clone of `vfork.rs` while it is
//! allowed, else with `fork`; retry is a child subreaper (`PR_SET_CHILD_SUBREAPER`, prctl(2)), so
//! whatever an attempt started stays among retry's descendants, which `tree.rs` reads from
//! `/proc`, even after `setsid` or `set -m` moved it to another process group or session.

use std::os::fd::OwnedFd;

use nix::errno::Errno;
use nix::sys::wait::{Id, WaitPidFlag, waitid};
use nix::unistd::Pid;

use super::child::{Failed, Prepared};
use super::spawned::GroupMode;

/// Makes retry a child subreaper and notes the children it already had.
pub fn become_reaper() {
    let _ = nix::sys::prctl::set_child_subreaper(true);
    super::tree::record_inherited(has_children());
}

/// retry's live descendants that are its to stop: the running attempt's or hook's processes.
pub fn descendants() -> Vec<Pid> {
    super::tree::descendants()
}

/// After the attempt's own process was reaped: signals (`Some`) or only looks for (`None`)
/// what is left of its tree; whether anything was.
pub fn rest(_pid: Pid, _mode: GroupMode, signal: Option<i32>) -> super::Left {
    // Whatever is left hangs below a child of retry (orphans come to the subreaper): with
    // no child at all, nothing is left, and the process table need not be read.
    if !has_children() {
        return super::Left::Nothing;
    }
    // The attempt's pid may belong to another process by now: only the process table is asked.
    let rest = descendants();
    if let Some(signal) = signal {
        for &pid in &rest {
            super::group::send(pid, signal);
        }
    }
    match rest.len() {
        0 => super::Left::Nothing,
        n => super::Left::Processes(n as u64),
    }
}

/// Whether retry has any child, live or ended and not yet reaped (`waitid` with `WNOWAIT`
/// reaps nothing; it fails with ECHILD when there is none).
fn has_children() -> bool {
    // WNOHANG never blocks and WNOWAIT leaves any child's status to be reaped later. A status
    // nix cannot name (a real-time signal's death) is an error too, but not ECHILD.
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    waitid(Id::All, flags) != Err(Errno::ECHILD)
}

/// Starts the plan: with the vfork clone of `vfork.rs` while it is allowed, else (and from the
/// first refusal on) with `fork` and `exec`. Returns the pid and the pidfd the clone gave
/// (`None` after `fork`, and on a kernel before 5.2).
///
/// # Errors
/// What `clone` or `fork`, the child's set-up or exec said.
pub fn start(plan: &Prepared) -> Result<(libc::pid_t, Option<OwnedFd>), Failed> {
    if super::vfork::usable() {
        match super::vfork::spawn(plan) {
            Ok(started) => return Ok(started),
            Err(super::vfork::Error::Failed(failed)) => return Err(failed),
            Err(super::vfork::Error::Refused) => {}
        }
    }
    super::fork::spawn(plan).map(|pid| (pid, None))
}
