//! FreeBSD: retry is the reaper of its descendants (`procctl(PROC_REAP_ACQUIRE)`, procctl(2)),
//! so a process orphaned inside an attempt is re-parented to retry, not to init, and the
//! kernel lists them all (`PROC_REAP_GETPIDS`), each with the child of retry it descends from
//! (`pi_subtree`): what an attempt started is found even after `setsid` moved it to another
//! process group or session. The children retry already had at start, and what descends from
//! them, are left alone. A process that made itself a reaper hides its own descendants from
//! the list (procctl(2)); its process group is still signalled.

use std::os::fd::OwnedFd;
use std::sync::OnceLock;

use libc::{c_int, c_uint, pid_t};
use nix::unistd::Pid;

use super::child::{Failed, Prepared};
use super::spawned::GroupMode;

/// `PROC_REAP_STATUS` (sys/procctl.h).
const PROC_REAP_STATUS: c_int = 4;
/// The entry was filled by the kernel.
const REAPER_PIDINFO_VALID: c_uint = 0x1;
/// The entry is a direct child of the reaper.
const REAPER_PIDINFO_CHILD: c_uint = 0x2;
/// The process is a zombie (FreeBSD 13.1 and later; earlier ones leave it unset).
const REAPER_PIDINFO_ZOMBIE: c_uint = 0x8;

/// `struct procctl_reaper_status`.
#[repr(C)]
struct ReaperStatus {
    rs_flags: c_uint,
    rs_children: c_uint,
    rs_descendants: c_uint,
    rs_reaper: pid_t,
    rs_pid: pid_t,
    rs_pad0: [c_uint; 15],
}

/// `struct procctl_reaper_pidinfo`.
#[repr(C)]
#[derive(Clone, Copy)]
struct PidInfo {
    pi_pid: pid_t,
    pi_subtree: pid_t,
    pi_flags: c_uint,
    pi_pad0: [c_uint; 15],
}

/// `struct procctl_reaper_pids`.
#[repr(C)]
struct ReaperPids {
    rp_count: c_uint,
    rp_pad0: [c_uint; 15],
    rp_pids: *mut PidInfo,
}

/// retry's children at start: not its to stop, nor what descends from them.
static INHERITED: OnceLock<Vec<pid_t>> = OnceLock::new();

/// Makes retry a reaper and notes the children it already had.
pub fn become_reaper() {
    // SAFETY: procctl on this process with no data, as PROC_REAP_ACQUIRE takes.
    let _ = unsafe {
        libc::procctl(
            libc::P_PID,
            0,
            libc::PROC_REAP_ACQUIRE,
            std::ptr::null_mut(),
        )
    };
    INHERITED.get_or_init(|| {
        listing()
            .iter()
            .filter(|p| p.pi_flags & REAPER_PIDINFO_CHILD != 0)
            .map(|p| p.pi_pid)
            .collect()
    });
}

/// retry's live descendants that are its to stop: the running attempt's or hook's processes.
pub fn descendants() -> Vec<Pid> {
    let inherited = INHERITED.get().map(Vec::as_slice).unwrap_or(&[]);
    listing()
        .iter()
        .filter(|p| p.pi_flags & REAPER_PIDINFO_ZOMBIE == 0)
        .filter(|p| !inherited.contains(&p.pi_subtree))
        .map(|p| Pid::from_raw(p.pi_pid))
        .collect()
}

/// After the attempt's own process was reaped: signals (`Some`) or only looks for (`None`)
/// what is left of its tree; whether anything was.
pub fn rest(_pid: Pid, _mode: GroupMode, signal: Option<i32>) -> super::Left {
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

/// Every descendant the kernel lists for retry as reaper (empty when it is not one).
fn listing() -> Vec<PidInfo> {
    // SAFETY: ReaperStatus is plain data; zeroed is a valid value for it.
    let mut status: ReaperStatus = unsafe { std::mem::zeroed() };
    // SAFETY: procctl on this process with a pointer to the struct PROC_REAP_STATUS fills.
    if unsafe { libc::procctl(libc::P_PID, 0, PROC_REAP_STATUS, (&raw mut status).cast()) } != 0 {
        return Vec::new();
    }
    // Room for processes started between the two calls; the kernel fills no more than asked.
    let room = status.rs_descendants as usize + 16;
    // SAFETY: PidInfo is plain data; zeroed entries read as not VALID.
    let mut pids = vec![unsafe { std::mem::zeroed::<PidInfo>() }; room];
    let mut request = ReaperPids {
        rp_count: c_uint::try_from(room).unwrap_or(c_uint::MAX),
        rp_pad0: [0; 15],
        rp_pids: pids.as_mut_ptr(),
    };
    // SAFETY: procctl with a request whose array holds `rp_count` entries.
    if unsafe {
        libc::procctl(
            libc::P_PID,
            0,
            libc::PROC_REAP_GETPIDS,
            (&raw mut request).cast(),
        )
    } != 0
    {
        return Vec::new();
    }
    pids.into_iter()
        .take_while(|p| p.pi_flags & REAPER_PIDINFO_VALID != 0)
        .collect()
}

/// Starts the plan with `fork` and `exec`; returns the pid (and no pidfd).
///
/// # Errors
/// What `fork` or the child's set-up or exec said.
pub fn start(plan: &Prepared) -> Result<(libc::pid_t, Option<OwnedFd>), Failed> {
    super::fork::spawn(plan).map(|pid| (pid, None))
}
