//! Unix process control: spawn an attempt in the right process group, signal it, reap it, stop
//! its whole tree, and end retry by a signal.
//!
//! Design (as coreutils `timeout --foreground`): when retry is the foreground process group of
//! its controlling terminal, the attempt stays in retry's group ([`GroupMode::Shared`]) so it can
//! read the terminal and Ctrl-Z / `fg` work; its tree is found through the process table, with
//! retry a child subreaper on Linux so orphans stay in that tree. Otherwise the attempt leads a
//! group of its own ([`GroupMode::Own`]) and signals go to that group.

use std::ffi::{OsStr, OsString};
use std::fs::OpenOptions;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::process::{ChildStderr, ChildStdin, ChildStdout, Command, Stdio};

use super::Piped;

use nix::errno::Errno;
use nix::sys::signal::{SigSet, SigmaskHow, Signal, kill, killpg, sigprocmask};
use nix::unistd::{Pid, getpgrp, getpid, tcgetpgrp};

/// Where an attempt's processes live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupMode {
    /// In retry's own process group: retry is the terminal's foreground group.
    Shared,
    /// In a new process group led by the attempt: no terminal, or retry is in the background.
    Own,
}

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

/// Makes retry a child subreaper (Linux), so processes orphaned inside an attempt's tree are
/// re-parented to retry and can still be found and stopped. Elsewhere a no-op.
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_child_subreaper(true);
}

/// A running attempt: its pid, valid until [`Attempt::try_reap`] returns its status.
#[derive(Debug)]
pub struct Attempt {
    pid: Pid,
    mode: GroupMode,
}

/// How a reaped attempt ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Exit code.
    Exited(u8),
    /// Death by this signal.
    Signaled(i32),
}

/// Starts `argv[0]` with arguments `argv[1..]` and extra environment `env`; stdin, stdout and
/// stderr are inherited except those `piped` asks for. The program is executed directly, never
/// through a shell.
///
/// In the child, before exec: the signal mask is cleared, and on Linux the child is set to
/// get KILL if retry dies (`PR_SET_PDEATHSIG`, as coreutils `timeout`).
///
/// # Errors
/// The launch error (not found, permission denied, ...), from exec itself.
pub fn spawn(
    argv: &[OsString],
    env: &[(&str, String)],
    mode: GroupMode,
    piped: Piped,
) -> io::Result<Spawned> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no command"))?;
    let mut cmd = supervised(program, env, mode);
    cmd.args(args);
    if piped.stdin {
        cmd.stdin(Stdio::piped());
    }
    if piped.stdout {
        cmd.stdout(Stdio::piped());
    }
    if piped.stderr {
        cmd.stderr(Stdio::piped());
    }
    let mut child = cmd.spawn()?;
    let pid = i32::try_from(child.id()).map_err(io::Error::other)?;
    // The std handle is dropped without waiting: retry reaps by pid in `try_reap`.
    Ok(Spawned {
        attempt: Attempt {
            pid: Pid::from_raw(pid),
            mode,
        },
        stdin: child.stdin.take(),
        stdout: child.stdout.take(),
        stderr: child.stderr.take(),
    })
}

/// Starts a hook: `sh -c script` with extra environment `env`, in a process group of its own,
/// stdin from /dev/null and stdout onto retry's stderr (a hook must not write into the
/// pipeline's stdout).
///
/// # Errors
/// When `sh` cannot be started or stderr cannot be duplicated.
pub fn spawn_hook(script: &str, env: &[(&str, String)]) -> io::Result<Attempt> {
    let mut cmd = supervised(OsStr::new("sh"), env, GroupMode::Own);
    cmd.arg("-c")
        .arg(script)
        .stdin(Stdio::null())
        .stdout(io::stderr().as_fd().try_clone_to_owned()?);
    let child = cmd.spawn()?;
    let pid = i32::try_from(child.id()).map_err(io::Error::other)?;
    Ok(Attempt {
        pid: Pid::from_raw(pid),
        mode: GroupMode::Own,
    })
}

/// A command for `program` under retry's supervision: extra environment, the process group of
/// `mode`, a clean signal mask and (Linux) death with retry.
fn supervised(program: &OsStr, env: &[(&str, String)], mode: GroupMode) -> Command {
    let mut cmd = Command::new(program);
    for (key, value) in env {
        cmd.env(key, value);
    }
    if mode == GroupMode::Own {
        cmd.process_group(0);
    }
    #[cfg(target_os = "linux")]
    let parent = getpid();
    // SAFETY: the closure runs between fork and exec and only makes async-signal-safe system
    // calls (prctl, getppid, sigprocmask); it allocates nothing and takes no locks.
    unsafe {
        cmd.pre_exec(move || {
            #[cfg(target_os = "linux")]
            {
                nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
                // retry died before the line above took effect: do not run unsupervised.
                if nix::unistd::getppid() != parent {
                    return Err(io::Error::from_raw_os_error(libc::ESRCH));
                }
            }
            sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None)?;
            Ok(())
        });
    }
    cmd
}

/// A started attempt and the pipes asked for with [`Piped`].
#[derive(Debug)]
pub struct Spawned {
    /// The running attempt.
    pub attempt: Attempt,
    /// Its stdin pipe, when piped.
    pub stdin: Option<ChildStdin>,
    /// Its stdout pipe, when piped.
    pub stdout: Option<ChildStdout>,
    /// Its stderr pipe, when piped.
    pub stderr: Option<ChildStderr>,
}

impl Attempt {
    /// Passes `signal` on to the attempt: its process group in [`GroupMode::Own`], the child
    /// itself in [`GroupMode::Shared`] (the group there holds retry too).
    pub fn forward(&self, signal: i32) {
        let Ok(sig) = Signal::try_from(signal) else {
            return;
        };
        let _ = match self.mode {
            GroupMode::Own => killpg(self.pid, sig),
            GroupMode::Shared => kill(self.pid, sig),
        };
    }

    /// Sends `signal` to every process of the attempt: its group in [`GroupMode::Own`]; in
    /// [`GroupMode::Shared`], every descendant of retry (Linux) or the child alone (elsewhere).
    pub fn signal_tree(&self, signal: Signal) {
        match self.mode {
            GroupMode::Own => {
                let _ = killpg(self.pid, signal);
            }
            GroupMode::Shared => signal_descendants(self.pid, signal),
        }
    }

    /// After a stopped attempt's child was reaped: KILL whatever is left of its tree, so
    /// nothing of a stopped attempt keeps running.
    pub fn kill_leftovers(&self) {
        match self.mode {
            GroupMode::Own => {
                let _ = killpg(self.pid, Signal::SIGKILL);
            }
            GroupMode::Shared => {
                // Processes may fork while we look: look again until nothing is left.
                for _ in 0..20 {
                    let left = descendants();
                    if left.is_empty() {
                        break;
                    }
                    for pid in left {
                        let _ = kill(pid, Signal::SIGKILL);
                    }
                }
            }
        }
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
                ended = Some(Ended::Exited(libc::WEXITSTATUS(raw) as u8));
            } else if libc::WIFSIGNALED(raw) {
                ended = Some(Ended::Signaled(libc::WTERMSIG(raw)));
            }
        }
    }
}

/// Signals every live descendant of retry, starting with `first`.
fn signal_descendants(first: Pid, signal: Signal) {
    let _ = kill(first, signal);
    for pid in descendants() {
        if pid != first {
            let _ = kill(pid, signal);
        }
    }
}

/// The live (non-zombie) descendants of retry, from `/proc` (Linux); elsewhere empty.
#[cfg(target_os = "linux")]
fn descendants() -> Vec<Pid> {
    let me = getpid().as_raw();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut table: Vec<(i32, i32)> = Vec::new();
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the command name, which is in parentheses and may contain anything.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next();
        let ppid = fields.next().and_then(|p| p.parse::<i32>().ok());
        if let (Some(state), Some(ppid)) = (state, ppid)
            && state != "Z"
            && state != "X"
        {
            table.push((pid, ppid));
        }
    }
    let mut found = vec![me];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            table
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    found.into_iter().skip(1).map(Pid::from_raw).collect()
}

#[cfg(not(target_os = "linux"))]
fn descendants() -> Vec<Pid> {
    Vec::new()
}

/// Whether retry's stdout is a pipe whose reader is gone (`| head -1` finished): any further
/// output is lost, so retrying is pointless. Never blocks.
pub fn stdout_reader_gone() -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let stdout = std::io::stdout();
    let mut fds = [PollFd::new(stdout.as_fd(), PollFlags::empty())];
    matches!(poll(&mut fds, PollTimeout::ZERO), Ok(1))
        && fds[0]
            .revents()
            .is_some_and(|r| r.contains(PollFlags::POLLERR))
}

/// Whether `signal` was ignored (SIG_IGN) when asked.
pub fn is_ignored(signal: i32) -> bool {
    // SAFETY: sigaction with a null new action only reads the current one into `old`.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Ends retry by `signal`, so its parent sees the same death as the attempt's: core dumps are
/// disabled, the default action restored and the signal raised. Returns only if that did not
/// end the process (a signal whose default action is not to terminate).
pub fn die_by_signal(signal: i32) {
    // Raw numbers, not nix's `Signal`: real-time signals (SIGRTMIN..=SIGRTMAX) must pass too.
    if !(1..=libc::SIGRTMAX()).contains(&signal)
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
