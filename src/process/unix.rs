//! Unix process control: a started attempt ([`Attempt`]) in the right process group, signal
//! it, reap it, stop its whole tree, and end retry by a signal.
//!
//! Design (worked out against coreutils `timeout`, which puts itself and its command in one
//! new group, and tried in and out of a terminal): when retry is the foreground process group
//! of its controlling terminal as an attempt starts, that attempt stays in retry's group
//! ([`GroupMode::Shared`]) so it can read the terminal and Ctrl-Z / `fg` work; otherwise the
//! attempt leads a group of its own ([`GroupMode::Own`]) and signals go to that group. The mode
//! is decided anew for every attempt, so `retry ... &` followed by `fg` gives the next attempt
//! the terminal. Whatever the mode, the attempt's whole tree is also found through the process
//! table (Linux), with retry a child subreaper, so processes that left the group (`setsid`,
//! `set -m`) are stopped too.

use std::cell::RefCell;
use std::os::fd::{AsFd, OwnedFd};

use nix::errno::Errno;
use nix::unistd::Pid;

use super::group::{send, send_group};
use super::spawned::GroupMode;

/// Makes retry the reaper of its descendants where the system has one (Linux
/// `PR_SET_CHILD_SUBREAPER`, FreeBSD `PROC_REAP_ACQUIRE`), so processes orphaned inside an
/// attempt's tree are re-parented to retry and can still be found and stopped, and notes the
/// children retry already had (not its to stop). Elsewhere (macOS, the `portable` build) a
/// no-op: the attempt's process group is all retry can reach. Call once, before the first
/// attempt.
pub fn become_subreaper() {
    super::os::become_reaper();
}

/// A running attempt: its pid, valid until [`Attempt::try_reap`] returns its status, and the
/// pidfd its start gave, if any, until the event loop takes it ([`Attempt::take_pidfd`]).
#[derive(Debug)]
pub struct Attempt {
    pid: Pid,
    mode: GroupMode,
    /// The pidfd of the vfork clone (`CLONE_PIDFD`, Linux 5.2, native build); `None` once
    /// taken, after a start with `fork`, and on other systems.
    pidfd: RefCell<Option<OwnedFd>>,
}

/// How a reaped attempt ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Exit code.
    Exited(u32),
    /// Death by this signal.
    Signaled(i32),
}

impl Attempt {
    /// The attempt (or hook) with process id `pid`, started in `mode`, with the pidfd its
    /// start gave (`None`: none).
    pub(super) fn new(pid: Pid, mode: GroupMode, pidfd: Option<OwnedFd>) -> Attempt {
        Attempt {
            pid,
            mode,
            pidfd: RefCell::new(pidfd),
        }
    }

    /// Its process id (valid until reaped).
    pub fn pid(&self) -> i32 {
        self.pid.as_raw()
    }

    /// The pidfd its start gave (the vfork clone's `CLONE_PIDFD`: Linux, native build), handed
    /// over once, for the event loop to watch the attempt's end through instead of opening one;
    /// `None` after that, when it was started with `fork`, and on other systems.
    pub fn take_pidfd(&self) -> Option<OwnedFd> {
        self.pidfd.take()
    }

    /// Passes `signal` on to the attempt: its process group in [`GroupMode::Own`], the child
    /// itself in [`GroupMode::Shared`] (the group there holds retry too).
    /// Raw numbers, so that real-time signals (`SIGRTMIN..=SIGRTMAX`) pass too.
    pub fn forward(&self, signal: i32) {
        match self.mode {
            GroupMode::Own => {
                send_group(self.pid, signal);
            }
            GroupMode::Shared => send(self.pid, signal),
        }
    }

    /// The process group mode the attempt was started in.
    pub fn mode(&self) -> GroupMode {
        self.mode
    }

    /// Sends signal number `signal` (real-time ones included) to every process of the
    /// attempt while its own process is not yet reaped: its process group in
    /// [`GroupMode::Own`] (the child alone in [`GroupMode::Shared`]), then every descendant of
    /// retry that the system lists (Linux: `/proc`; FreeBSD: the reaper's), which takes in
    /// processes that moved to another group or session.
    pub fn signal_tree(&self, signal: i32) {
        match self.mode {
            GroupMode::Own => {
                send_group(self.pid, signal);
            }
            GroupMode::Shared => send(self.pid, signal),
        }
        for pid in super::os::descendants() {
            if pid != self.pid {
                send(pid, signal);
            }
        }
    }

    /// Stops the attempt's whole tree with `signal` ([`Attempt::signal_tree`]), then CONT so
    /// that a stopped process can act on it, as coreutils `timeout` does; 0 sends nothing at
    /// all, and no CONT follows KILL.
    pub fn stop_tree(&self, signal: i32) {
        if signal == 0 {
            return;
        }
        self.signal_tree(signal);
        if signal != libc::SIGKILL && signal != libc::SIGCONT {
            self.signal_tree(libc::SIGCONT);
        }
    }

    /// After the attempt's own process was reaped: sends signal number `signal` to whatever
    /// is left of its tree (Linux, FreeBSD: retry's descendants; elsewhere: its process group
    /// in [`GroupMode::Own`]). Returns what was left to signal.
    pub fn signal_rest(&self, signal: i32) -> super::Left {
        self.rest(Some(signal))
    }

    /// After the attempt's own process was reaped: whether anything of its tree is still
    /// alive (zombies do not count).
    pub fn rest_alive(&self) -> bool {
        self.rest(None).any()
    }

    fn rest(&self, signal: Option<i32>) -> super::Left {
        super::os::rest(self.pid, self.mode, signal)
    }

    /// Reaps every child that has ended (orphans adopted as subreaper included) and returns
    /// the attempt's status if it was among them. Never blocks.
    pub fn try_reap(&self) -> Option<Ended> {
        reap_all(Some(self.pid))
    }
}

/// Reaps ended children that are not a running attempt (orphans adopted as subreaper).
pub fn reap_strays() {
    reap_all(None);
}

fn reap_all(attempt: Option<Pid>) -> Option<Ended> {
    let mut ended = None;
    loop {
        let mut raw = 0;
        // SAFETY: waitpid with a valid pointer to a c_int; WNOHANG never blocks.
        let pid = unsafe { libc::waitpid(-1, &mut raw, libc::WNOHANG) };
        if pid < 0 && Errno::last() == Errno::EINTR {
            continue;
        }
        if pid <= 0 {
            return ended;
        }
        if Some(Pid::from_raw(pid)) == attempt {
            if libc::WIFEXITED(raw) {
                ended = Some(Ended::Exited(libc::WEXITSTATUS(raw) as u32));
            } else if libc::WIFSIGNALED(raw) {
                ended = Some(Ended::Signaled(libc::WTERMSIG(raw)));
            }
        }
    }
}

/// Which of retry's own outputs, stdout first, is a pipe whose reader is gone (`| head -1`
/// finished; a pipe whose read end closed polls as an error): any further output is lost, so
/// retrying is pointless. `None` for a file, a terminal, or a pipe still read. Never blocks.
pub fn gone_reader() -> Option<crate::held::Stream> {
    use crate::held::Stream;
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let (stdout, stderr) = (std::io::stdout(), std::io::stderr());
    let mut fds = [
        PollFd::new(stdout.as_fd(), PollFlags::empty()),
        PollFd::new(stderr.as_fd(), PollFlags::empty()),
    ];
    if !matches!(poll(&mut fds, PollTimeout::ZERO), Ok(1..)) {
        return None;
    }
    let broken = |fd: &PollFd<'_>| fd.revents().is_some_and(|r| r.contains(PollFlags::POLLERR));
    if broken(&fds[0]) {
        Some(Stream::Stdout)
    } else if broken(&fds[1]) {
        Some(Stream::Stderr)
    } else {
        None
    }
}

/// Whether retry's stdout and stderr can both take bytes now (a write would not block: room in
/// a pipe, a file, a terminal; a closed or broken one counts, as its writes fail at once).
/// After a stop signal, retry waits for its I/O threads only while this holds. Never blocks.
pub fn outputs_take_bytes() -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let (stdout, stderr) = (std::io::stdout(), std::io::stderr());
    let mut fds = [
        PollFd::new(stdout.as_fd(), PollFlags::POLLOUT),
        PollFd::new(stderr.as_fd(), PollFlags::POLLOUT),
    ];
    matches!(poll(&mut fds, PollTimeout::ZERO), Ok(2))
}

/// Ends retry by `signal`, so its parent sees the same death as the attempt's: core dumps are
/// disabled, the default action restored and the signal raised. Returns only if that did not
/// end the process (a signal whose default action is not to terminate).
pub fn die_by_signal(signal: i32) {
    // Raw numbers, not nix's `Signal`: real-time signals (SIGRTMIN..=SIGRTMAX) must pass too.
    if !(1..=crate::stop_signal::max_signal()).contains(&signal)
        || [libc::SIGSTOP, libc::SIGTSTP, libc::SIGTTIN, libc::SIGTTOU].contains(&signal)
    {
        return;
    }
    let _ = nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_CORE, 0, 0);
    // SAFETY: restoring the default disposition installs no handler; sigset_t is plain data,
    // initialised by sigemptyset before use; raise sends the signal to this thread.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signal);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(signal);
    }
}
