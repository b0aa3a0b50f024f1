//! The child's side of a spawn, shared by both ways of starting it (the vfork clone of
//! `vfork.rs` on Linux, `fork.rs` everywhere): a plan prepared in the parent (argv, envp, the
//! `PATH` candidates, the descriptors, the dispositions), and the set-up that the child runs
//! between the clone or fork and `execve`.
//!
//! The set-up allocates nothing and takes no lock: it makes only async-signal-safe system calls
//! on the prepared plan, as glibc's own `posix_spawn` does (`sysdeps/unix/sysv/linux/spawni.c`),
//! which is what a child may do after `fork` in a process with threads. In order: die with
//! retry (Linux `PR_SET_PDEATHSIG`, FreeBSD `PROC_PDEATHSIG_CTL`; macOS has neither, see
//! docs/platforms.md) and do not run at all if retry already died; the dispositions (retry's
//! handlers back to the default, SIGPIPE and SIGCHLD as they were at start); the process group;
//! descriptors 0, 1 and 2; an empty signal mask; `execve` of each candidate in turn, as
//! `execvp` does. `posix_spawn` is not used: it has no parent-death signal.

use std::ffi::{CString, OsStr, OsString, c_char, c_int};
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::ptr;

use nix::errno::Errno;
use nix::sys::signal::{SigSet, SigmaskHow};
use nix::sys::wait::waitpid;
use nix::unistd::Pid;

/// How the child's descriptor 0, 1 or 2 is set up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stdio {
    /// Left as retry has it.
    Inherit,
    /// `dup2` of this descriptor (a pipe end; retry closes its copy after the spawn).
    From(RawFd),
    /// Closed in the child (retry was started with it closed).
    Closed,
}

/// Everything the child needs, prepared before the clone or fork.
#[derive(Debug)]
pub struct Prepared {
    /// Paths to try in order: the program itself when it holds a `/`, else each `PATH` entry
    /// joined with it.
    candidates: Vec<CString>,
    /// The candidates come from a `PATH` search (the program's name holds no `/`).
    searched: bool,
    /// argv, kept alive for `argv_ptrs`.
    _argv: Vec<CString>,
    /// NULL-terminated pointers into `_argv`.
    argv_ptrs: Vec<*const c_char>,
    /// For each candidate: `/bin/sh`, the candidate and the arguments, NULL-terminated, for
    /// a script without a `#!` line (`ENOEXEC`), as `execvp` does.
    sh_argv_ptrs: Vec<Vec<*const c_char>>,
    /// envp, kept alive for `envp_ptrs`.
    _envp: Vec<CString>,
    /// NULL-terminated pointers into `_envp`.
    envp_ptrs: Vec<*const c_char>,
    /// Lead a new process group.
    own_group: bool,
    /// Descriptors 0, 1, 2.
    pub(super) stdio: [Stdio; 3],
    /// retry's pid, for the parent-death race check.
    parent: libc::pid_t,
    /// The dispositions to set before exec, in order: retry's handlers (portable signals, as
    /// many as the system has real-time signals) back to the default, then SIGPIPE and SIGCHLD
    /// as they were at start. Made before the clone or fork: the child only reads it.
    dispositions: Vec<(c_int, libc::sighandler_t)>,
}

const SH: &std::ffi::CStr = c"/bin/sh";

impl Prepared {
    /// Prepares `argv` (program first) with the environment `env` (the whole environment of
    /// the child, `NAME=value` pairs), in a new process group when `own_group`.
    ///
    /// # Errors
    /// `InvalidInput` for an empty argv or a NUL byte in an argument or variable.
    pub fn new(
        argv: &[OsString],
        env: &[(OsString, OsString)],
        own_group: bool,
        stdio: [Stdio; 3],
    ) -> io::Result<Prepared> {
        let program = argv
            .first()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no command"))?;
        let path = env
            .iter()
            .find(|(k, _)| k.as_bytes() == b"PATH")
            .map(|(_, v)| v.clone());
        let candidates = candidates(program, path.as_deref())?;
        let argv: Vec<CString> = argv
            .iter()
            .map(|a| {
                // Room for the NUL, so that CString::new need not grow the buffer.
                let mut bytes = Vec::with_capacity(a.len() + 1);
                bytes.extend_from_slice(a.as_bytes());
                cstring(bytes)
            })
            .collect::<io::Result<_>>()?;
        let envp: Vec<CString> = env
            .iter()
            .map(|(k, v)| {
                let mut kv = Vec::with_capacity(k.len() + v.len() + 2);
                kv.extend_from_slice(k.as_bytes());
                kv.push(b'=');
                kv.extend_from_slice(v.as_bytes());
                cstring(kv)
            })
            .collect::<io::Result<_>>()?;
        let argv_ptrs = nul_terminated(&argv);
        let sh_argv_ptrs = candidates
            .iter()
            .map(|c| {
                [SH.as_ptr(), c.as_ptr()]
                    .into_iter()
                    .chain(argv.iter().skip(1).map(|a| a.as_ptr()))
                    .chain(std::iter::once(ptr::null()))
                    .collect()
            })
            .collect();
        let envp_ptrs = nul_terminated(&envp);
        // Retry's own handlers first (none on Linux's native path, which reads signals from a
        // signalfd; exec would reset them anyway, but a signal arriving between the unmasking
        // and exec must not run retry's handler in the child), then SIGPIPE and SIGCHLD as
        // they were at start, which overrides a handler for SIGCHLD.
        let dispositions = super::dispositions::caught()
            .into_iter()
            .map(|s| (s, libc::SIG_DFL))
            .chain(super::dispositions::for_children())
            .collect();
        Ok(Prepared {
            searched: !program.as_bytes().contains(&b'/'),
            candidates,
            _argv: argv,
            argv_ptrs,
            sh_argv_ptrs,
            _envp: envp,
            envp_ptrs,
            own_group,
            stdio,
            parent: nix::unistd::getpid().as_raw(),
            dispositions,
        })
    }
}

fn cstring(bytes: Vec<u8>) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "an argument or variable holds a NUL byte",
        )
    })
}

fn nul_terminated(strings: &[CString]) -> Vec<*const c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(ptr::null()))
        .collect()
}

/// The paths `execvp` would try for `program` under `path` (`PATH`; when unset, glibc's
/// default `/bin:/usr/bin`). An empty `PATH` entry means the current directory.
fn candidates(program: &OsStr, path: Option<&OsStr>) -> io::Result<Vec<CString>> {
    let name = program.as_bytes();
    if name.is_empty() {
        return Err(io::Error::from_raw_os_error(libc::ENOENT));
    }
    if name.contains(&b'/') {
        return Ok(vec![cstring(name.to_vec())?]);
    }
    let path = path.map_or(&b"/bin:/usr/bin"[..], |p| p.as_bytes());
    path.split(|&b| b == b':')
        .map(|dir| {
            let mut full = if dir.is_empty() {
                Vec::new()
            } else {
                let mut d = dir.to_vec();
                d.push(b'/');
                d
            };
            full.extend_from_slice(name);
            cstring(full)
        })
        .collect()
}

/// Why a spawn failed.
#[derive(Debug)]
pub enum Failed {
    /// exec refused every candidate: the command cannot be run.
    Exec(io::Error),
    /// retry could not start the child: `clone` or `fork` failed (a process limit, no memory),
    /// or its set-up before exec did.
    Own(io::Error),
}

impl From<Failed> for io::Error {
    fn from(failed: Failed) -> io::Error {
        match failed {
            Failed::Exec(e) | Failed::Own(e) => e,
        }
    }
}

impl Failed {
    /// The failure the child reported: errno `error`, from the set-up (`setup`) or from exec.
    pub(super) fn of_child(error: c_int, setup: bool) -> Failed {
        let e = io::Error::from_raw_os_error(error);
        if setup {
            Failed::Own(e)
        } else {
            Failed::Exec(e)
        }
    }
}

/// Makes the child die with retry, where the system can: Linux's `PR_SET_PDEATHSIG`, FreeBSD's
/// `PROC_PDEATHSIG_CTL` (both KILL, as coreutils `timeout` sets). Returns the errno on failure.
///
/// # Safety
/// Only async-signal-safe calls: for the child between fork and exec.
unsafe fn die_with_parent() -> Result<(), c_int> {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with integer arguments.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) } != 0 {
        return Err(errno());
    }
    #[cfg(target_os = "freebsd")]
    {
        let mut signal: c_int = libc::SIGKILL;
        // SAFETY: procctl on this process (id 0) with a pointer to an int, as
        // PROC_PDEATHSIG_CTL takes.
        if unsafe {
            libc::procctl(
                libc::P_PID,
                0,
                libc::PROC_PDEATHSIG_CTL,
                (&raw mut signal).cast(),
            )
        } != 0
        {
            return Err(errno());
        }
    }
    Ok(())
}

/// Sets the child up and executes the first candidate that runs; returns the errno that ended
/// the launch, and whether the set-up before exec failed (retry's own failure).
///
/// # Safety
/// For the child between clone or fork and exec, with every signal blocked: it only makes
/// async-signal-safe system calls on `plan`, which must outlive the call.
pub(super) unsafe fn setup_and_exec(plan: &Prepared) -> (c_int, bool) {
    // SAFETY: (the whole function) every call is an async-signal-safe system call wrapper given
    // valid arguments: constants, descriptors from the plan, and NUL-terminated pointer arrays
    // prepared by `Prepared::new` that outlive the call.
    unsafe {
        // Die with retry (as coreutils `timeout`); if retry already died, do not run at all.
        if let Err(e) = die_with_parent() {
            return (e, true);
        }
        if libc::getppid() != plan.parent {
            return (libc::ESRCH, true);
        }
        for &(signal, handler) in &plan.dispositions {
            libc::signal(signal, handler);
        }
        if plan.own_group && libc::setpgid(0, 0) != 0 {
            return (errno(), true);
        }
        for (target, how) in plan.stdio.iter().enumerate() {
            let target = target as c_int;
            match *how {
                Stdio::Inherit => {}
                Stdio::From(fd) => {
                    if libc::dup2(fd, target) < 0 {
                        return (errno(), true);
                    }
                }
                Stdio::Closed => {
                    libc::close(target);
                }
            }
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, ptr::null_mut());
        let mut result = libc::ENOENT;
        let mut saw_eacces = false;
        for (candidate, sh_argv) in plan.candidates.iter().zip(&plan.sh_argv_ptrs) {
            libc::execve(
                candidate.as_ptr(),
                plan.argv_ptrs.as_ptr(),
                plan.envp_ptrs.as_ptr(),
            );
            let e = errno();
            match e {
                libc::ENOEXEC => {
                    // A script without `#!`: run it with /bin/sh, as execvp does.
                    libc::execve(SH.as_ptr(), sh_argv.as_ptr(), plan.envp_ptrs.as_ptr());
                    return (errno(), false);
                }
                libc::EACCES => saw_eacces = true,
                // As glibc's execvpe: these say this candidate is not the program; try the
                // next.
                libc::ENOENT | libc::ENOTDIR | libc::ESTALE | libc::ENODEV | libc::ETIMEDOUT => {}
                // A PATH entry too long to make a path with: skipped without a word, as
                // glibc's execvpe skips it (nothing found anywhere is still ENOENT).
                libc::ENAMETOOLONG if plan.searched => continue,
                other => return (other, false),
            }
            result = e;
        }
        (if saw_eacces { libc::EACCES } else { result }, false)
    }
}

/// The calling thread's errno.
pub(super) fn errno() -> c_int {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EINVAL)
}

/// Builds the child's whole environment: retry's own less the variables named in `withheld`,
/// with `extra` set on top.
pub fn environment(extra: &[(&str, String)], withheld: &[&str]) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| {
            !extra.iter().any(|(e, _)| OsStr::new(e) == k)
                && !withheld.iter().any(|n| OsStr::new(n) == k)
        })
        .collect();
    env.extend(extra.iter().map(|(k, v)| {
        (
            OsString::from(k),
            OsString::from_vec(v.clone().into_bytes()),
        )
    }));
    env
}

/// Blocks every signal in the calling thread and returns the mask it had, for
/// [`restore_mask`]: around a clone or fork, so that no handler of retry's runs in the child.
pub(super) fn block_all() -> SigSet {
    // pthread_sigmask cannot fail with SIG_SETMASK and a valid set.
    SigSet::all()
        .thread_swap_mask(SigmaskHow::SIG_SETMASK)
        .unwrap_or_else(|_| SigSet::empty())
}

/// Restores the calling thread's mask saved by [`block_all`].
pub(super) fn restore_mask(old: &SigSet) {
    let _ = old.thread_set_mask();
}

/// Reaps a child that failed to exec (it exits at once with 127).
pub(super) fn reap(pid: libc::pid_t) {
    // A status nix cannot name (a real-time signal's death) is an error after the child was
    // reaped all the same: only EINTR means it was not.
    while waitpid(Pid::from_raw(pid), None) == Err(Errno::EINTR) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_candidates_follow_execvp() {
        let c = candidates(OsStr::new("ls"), Some(OsStr::new("/a::/b"))).unwrap();
        let c: Vec<_> = c.iter().map(|s| s.to_str().unwrap().to_owned()).collect();
        assert_eq!(c, ["/a/ls", "ls", "/b/ls"]);
        let c = candidates(OsStr::new("./x"), Some(OsStr::new("/a"))).unwrap();
        assert_eq!(c[0].to_str().unwrap(), "./x");
        assert!(candidates(OsStr::new(""), None).is_err());
    }
}
