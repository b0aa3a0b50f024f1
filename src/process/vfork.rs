//! Spawning without `fork`'s cost (Linux): a `clone(CLONE_VM | CLONE_VFORK)` child that only
//! sets the parent-death signal, the signal mask and the dispositions retry changed for itself
//! (back to what they were at start), the process group and the descriptors, then calls
//! `execve`. Everything it needs (argv, envp, the PATH candidates, the
//! descriptor plan) is prepared in the parent first, so the child allocates nothing and takes
//! no lock: it makes only async-signal-safe system calls, as glibc's own `posix_spawn` does
//! (`sysdeps/unix/sysv/linux/spawni.c`). `posix_spawn` itself cannot be used: it has no
//! `PR_SET_PDEATHSIG`.

use std::ffi::{CString, OsStr, OsString, c_char, c_int, c_void};
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::ptr;

/// Stack for the child: it runs a handful of system calls, then `execve`.
const CHILD_STACK: usize = 64 * 1024;

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

/// Everything the child needs, prepared before the clone.
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
    stdio: [Stdio; 3],
    /// retry's pid, for the parent-death race check.
    parent: libc::pid_t,
    /// The dispositions to set before exec ([`super::dispositions::for_children`]).
    dispositions: [(c_int, libc::sighandler_t); super::dispositions::TOUCHED.len()],
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
            // SAFETY: getpid has no preconditions.
            parent: unsafe { libc::getpid() },
            dispositions: super::dispositions::for_children(),
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

/// What the child shares with the parent: the plan, and the error the launch met.
struct Shared<'a> {
    plan: &'a Prepared,
    /// 0 while the launch goes on; the errno that ended it otherwise.
    error: c_int,
    /// The error came from the set-up before exec (retry's own), not from exec.
    setup: bool,
}

/// Why [`spawn`] failed.
#[derive(Debug)]
pub enum Failed {
    /// exec refused every candidate: the command cannot be run.
    Exec(io::Error),
    /// retry could not start the child: `clone` failed (a process limit, no memory), or its
    /// set-up before exec did.
    Own(io::Error),
}

impl From<Failed> for io::Error {
    fn from(failed: Failed) -> io::Error {
        match failed {
            Failed::Exec(e) | Failed::Own(e) => e,
        }
    }
}

/// Starts the prepared command; returns its pid once it has called `execve` (or failed).
///
/// # Errors
/// [`Failed::Exec`] with `ENOENT` when no candidate exists, `EACCES` when one exists but
/// cannot be executed, or whatever `execve` said; [`Failed::Own`] with what `clone` or the
/// set-up said.
pub fn spawn(plan: &Prepared) -> Result<libc::pid_t, Failed> {
    // Left uninitialised: the child writes its frames before reading them, and zeroing 64 KiB
    // would touch sixteen pages the child never uses (a stack is used from the top).
    let mut stack: Vec<std::mem::MaybeUninit<u8>> = Vec::with_capacity(CHILD_STACK);
    // SAFETY: the allocation holds at least CHILD_STACK bytes; the top is 16-byte aligned down,
    // as the x86-64 and AArch64 ABIs require of a new stack; it stays alive until `clone`
    // returns, and with CLONE_VFORK `clone` returns only once the child has exec'd or exited.
    let top = unsafe {
        let end = stack.as_mut_ptr().add(CHILD_STACK);
        end.sub(end as usize % 16)
    };
    let mut shared = Shared {
        plan,
        error: 0,
        setup: false,
    };
    // Block every signal around the clone, so no signal handler can run in the child while it
    // shares retry's memory (glibc's posix_spawn does the same); the child sets its own mask.
    let mut all: libc::sigset_t = unsafe_zeroed_sigset();
    let mut old: libc::sigset_t = unsafe_zeroed_sigset();
    // SAFETY: both sets are initialised plain data; pthread_sigmask only reads `all` and
    // writes `old`.
    unsafe {
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
    }
    // SAFETY: `child` is an `extern "C"` function that only makes async-signal-safe system
    // calls on data prepared before the clone (`shared` and the plan it borrows live on this
    // stack frame, which stays put: CLONE_VFORK suspends this thread until the child has
    // called execve or _exit); the child has its own stack `top`; SIGCHLD as the exit signal
    // makes it an ordinary child for waitpid.
    let pid = unsafe {
        libc::clone(
            child,
            top.cast::<c_void>(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            (&raw mut shared).cast::<c_void>(),
        )
    };
    let clone_error = io::Error::last_os_error();
    // SAFETY: restores the mask saved above.
    unsafe {
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, ptr::null_mut());
    }
    drop(stack);
    if pid < 0 {
        return Err(Failed::Own(clone_error));
    }
    // The child is suspended-parent-safe: CLONE_VFORK guarantees it has exec'd or exited, so
    // its write to `shared.error` happened before this read.
    if shared.error != 0 {
        reap(pid);
        let e = io::Error::from_raw_os_error(shared.error);
        return Err(if shared.setup {
            Failed::Own(e)
        } else {
            Failed::Exec(e)
        });
    }
    Ok(pid)
}

fn unsafe_zeroed_sigset() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data for which all-zero bytes is a valid (empty) value.
    unsafe { std::mem::zeroed() }
}

/// Reaps a child that failed to exec (it exits at once with 127).
fn reap(pid: libc::pid_t) {
    let mut status = 0;
    loop {
        // SAFETY: waitpid on our own child with a valid status pointer.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r >= 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return;
        }
    }
}

/// The child, between clone and exec. Runs on its own stack in retry's memory while retry's
/// thread is suspended: only async-signal-safe system calls, no allocation, no locks, no
/// unwinding; it ends in `execve` or `_exit`.
extern "C" fn child(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the `Shared` that `spawn` passed, alive and not used by the parent
    // until this child has exec'd or exited (CLONE_VFORK).
    let shared = unsafe { &mut *arg.cast::<Shared<'_>>() };
    let (error, setup) = setup_and_exec(shared.plan);
    shared.error = error;
    shared.setup = setup;
    // SAFETY: _exit ends the child without running atexit handlers or flushing stdio buffers
    // that belong to retry.
    unsafe { libc::_exit(127) }
}

/// Sets the child up and executes the first candidate that runs; returns the errno that ended
/// the launch, and whether the set-up before exec failed (retry's own failure).
fn setup_and_exec(plan: &Prepared) -> (c_int, bool) {
    // SAFETY: (the whole function) every call is an async-signal-safe system call wrapper given
    // valid arguments: constants, descriptors from the plan, and NUL-terminated pointer arrays
    // prepared by `Prepared::new` that outlive the call.
    unsafe {
        // Die with retry (as coreutils `timeout`); if retry already died, do not run at all.
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
            return (errno(), true);
        }
        if libc::getppid() != plan.parent {
            return (libc::ESRCH, true);
        }
        // retry ignores SIGPIPE and sets SIGCHLD to its default for itself: the command gets
        // what they were when retry started (an ignored signal stays ignored across exec).
        // Handlers need no reset: retry installs none (it reads signals from a signalfd), and
        // exec resets caught signals to the default anyway.
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

fn errno() -> c_int {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EINVAL)
}

/// Builds the child's whole environment: retry's own, with `extra` set on top.
pub fn environment(extra: &[(&str, String)]) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| !extra.iter().any(|(e, _)| OsStr::new(e) == k))
        .collect();
    env.extend(extra.iter().map(|(k, v)| {
        (
            OsString::from(k),
            OsString::from_vec(v.clone().into_bytes()),
        )
    }));
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(argv: &[&str], env: &[(OsString, OsString)]) -> io::Result<i32> {
        let argv: Vec<OsString> = argv.iter().map(OsString::from).collect();
        let plan = Prepared::new(&argv, env, false, [Stdio::Inherit; 3])?;
        let pid = spawn(&plan).map_err(io::Error::from)?;
        let mut status = 0;
        // SAFETY: waitpid on the child just started, with a valid pointer.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        Ok(libc::WEXITSTATUS(status))
    }

    #[test]
    fn runs_a_program_found_on_path() {
        let env = environment(&[]);
        assert_eq!(run(&["sh", "-c", "exit 7"], &env).unwrap(), 7);
        assert_eq!(run(&["/bin/sh", "-c", "exit 3"], &env).unwrap(), 3);
    }

    #[test]
    fn passes_the_extra_environment() {
        let env = environment(&[("RETRY_TEST_VFORK", "42".into())]);
        assert_eq!(
            run(&["sh", "-c", "exit $RETRY_TEST_VFORK"], &env).unwrap(),
            42
        );
    }

    #[test]
    fn reports_launch_errors() {
        let env = environment(&[]);
        let e = run(&["no-such-program-xyz"], &env).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        let e = run(&["/etc/passwd"], &env).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EACCES));
        let e = run(&["/no/such/dir/prog"], &env).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn a_script_without_a_shebang_runs_with_sh() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("s");
        std::fs::write(&script, "exit 5\n").unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let env = environment(&[]);
        assert_eq!(run(&[script.to_str().unwrap()], &env).unwrap(), 5);
    }

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
