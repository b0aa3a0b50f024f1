//! Spawning without `fork`'s cost (Linux): a `clone(CLONE_VM | CLONE_VFORK | CLONE_PIDFD)`
//! child that runs the set-up of [`super::child`] on its own stack in retry's memory while
//! retry's thread waits, then calls `execve`. `CLONE_PIDFD` hands back a pidfd of the child at
//! no extra cost: it travels in the attempt ([`super::Attempt::take_pidfd`]), whose end the
//! event loop watches through it instead of opening one.
//!
//! # When the clone is refused
//! A seccomp filter may refuse the clone (`ENOSYS`, `EPERM`), and an emulator may not support
//! it: `qemu-user` cannot share memory between two processes, so it runs a vfork clone as a
//! plain `fork` — the child's report of a failed exec would then never reach retry — but it
//! refuses `CLONE_PIDFD` with `EINVAL`, and that refusal is what retry sees. On `ENOSYS`,
//! `EINVAL` or `EPERM` retry remembers that the clone is refused and starts this and every
//! later child with `fork` and `exec` ([`super::fork`]), with the same guarantees; nothing is
//! tried beforehand, so the usual path makes no extra system call. Should a clone succeed
//! without sharing memory (the child's first write, `started`, is not seen), the same switch is
//! made for the children after it.

use std::ffi::{c_int, c_void};
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use super::child::{self, Failed, Prepared};

/// Stack for the child: it runs a handful of system calls, then `execve`.
const CHILD_STACK: usize = 64 * 1024;

/// The vfork clone was refused (or did not share memory) once: use `fork` from then on.
static REFUSED: AtomicBool = AtomicBool::new(false);

/// Whether the vfork clone is still worth trying (it has not been refused in this process).
pub fn usable() -> bool {
    !REFUSED.load(Ordering::Relaxed)
}

/// What the child shares with the parent: the plan, and what the launch came to.
struct Shared<'a> {
    plan: &'a Prepared,
    /// Set by the child first: unseen by the parent when the clone did not share memory.
    started: bool,
    /// 0 while the launch goes on; the errno that ended it otherwise.
    error: c_int,
    /// The error came from the set-up before exec (retry's own), not from exec.
    setup: bool,
}

/// Why [`spawn`] did not start the child.
#[derive(Debug)]
pub enum Error {
    /// The clone was refused (`ENOSYS`, `EINVAL`, `EPERM`): start the child another way.
    Refused,
    /// The clone ran and the launch failed.
    Failed(Failed),
}

/// Starts the prepared command; returns its pid, with the pidfd that `CLONE_PIDFD` gave
/// (`None` on a kernel before 5.2), once it has called `execve` (or failed).
///
/// # Errors
/// [`Error::Refused`] when the clone is not allowed here (remembered: [`usable`] is then
/// false); [`Error::Failed`] with [`Failed::Exec`] (`ENOENT` when no candidate exists, `EACCES`
/// when one exists but cannot be executed, or whatever `execve` said) or [`Failed::Own`] (what
/// `clone` or the set-up said).
pub fn spawn(plan: &Prepared) -> Result<(libc::pid_t, Option<OwnedFd>), Error> {
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
        started: false,
        error: 0,
        setup: false,
    };
    let mut pidfd: c_int = -1;
    // Block every signal around the clone, so no signal handler can run in the child while it
    // shares retry's memory (glibc's posix_spawn does the same); the child sets its own mask.
    let old = child::block_all();
    // SAFETY: `child` is an `extern "C"` function that only makes async-signal-safe system
    // calls on data prepared before the clone (`shared` and the plan it borrows live on this
    // stack frame, which stays put: CLONE_VFORK suspends this thread until the child has
    // called execve or _exit); the child has its own stack `top`; SIGCHLD as the exit signal
    // makes it an ordinary child for waitpid; CLONE_PIDFD writes the pidfd into `pidfd`
    // (passed as the parent_tid argument, as clone(2) says).
    let pid = unsafe {
        libc::clone(
            child,
            top.cast::<c_void>(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PIDFD | libc::SIGCHLD,
            (&raw mut shared).cast::<c_void>(),
            &raw mut pidfd,
        )
    };
    let clone_error = io::Error::last_os_error();
    child::restore_mask(&old);
    drop(stack);
    if pid < 0 {
        return Err(match clone_error.raw_os_error() {
            Some(libc::ENOSYS | libc::EINVAL | libc::EPERM) => {
                REFUSED.store(true, Ordering::Relaxed);
                Error::Refused
            }
            _ => Error::Failed(Failed::Own(clone_error)),
        });
    }
    // CLONE_VFORK guarantees the child has exec'd or exited, so its writes to `shared`
    // happened before these reads, unless memory was not shared at all.
    if !shared.started {
        REFUSED.store(true, Ordering::Relaxed);
    }
    let pidfd = if pidfd >= 0 {
        // SAFETY: the kernel just opened this descriptor for us (close-on-exec); nobody else
        // owns it.
        Some(unsafe { OwnedFd::from_raw_fd(pidfd) })
    } else {
        None
    };
    if shared.error != 0 {
        drop(pidfd);
        child::reap(pid);
        return Err(Error::Failed(Failed::of_child(shared.error, shared.setup)));
    }
    Ok((pid, pidfd))
}

/// The child, between clone and exec. Runs on its own stack in retry's memory while retry's
/// thread is suspended: only async-signal-safe system calls, no allocation, no locks, no
/// unwinding; it ends in `execve` or `_exit`.
extern "C" fn child(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the `Shared` that `spawn` passed, alive and not used by the parent
    // until this child has exec'd or exited (CLONE_VFORK).
    let shared = unsafe { &mut *arg.cast::<Shared<'_>>() };
    shared.started = true;
    // SAFETY: in the vfork child with every signal blocked (see `spawn`).
    let (error, setup) = unsafe { child::setup_and_exec(shared.plan) };
    shared.error = error;
    shared.setup = setup;
    // SAFETY: _exit ends the child without running atexit handlers or flushing stdio buffers
    // that belong to retry.
    unsafe { libc::_exit(127) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::child::{Stdio, environment};
    use crate::process::{Attempt, GroupMode};
    use nix::unistd::Pid;
    use std::ffi::OsString;

    fn run(argv: &[&str], env: &[(OsString, OsString)]) -> io::Result<i32> {
        let argv: Vec<OsString> = argv.iter().map(OsString::from).collect();
        let plan = Prepared::new(&argv, env, false, [Stdio::Inherit; 3])?;
        let pid = match spawn(&plan) {
            Ok((pid, _pidfd)) => pid,
            Err(Error::Failed(f)) => return Err(f.into()),
            Err(Error::Refused) => panic!("the vfork clone was refused here"),
        };
        let mut status = 0;
        // SAFETY: waitpid on the child just started, with a valid pointer.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        Ok(libc::WEXITSTATUS(status))
    }

    /// Under an emulator that refuses the clone (qemu-user), these tests have nothing to test.
    fn refused_here() -> bool {
        let argv = [OsString::from("true")];
        let plan =
            Prepared::new(&argv, &environment(&[], &[]), false, [Stdio::Inherit; 3]).unwrap();
        match spawn(&plan) {
            Ok((pid, pidfd)) => {
                child::reap(pid);
                drop(pidfd);
                false
            }
            Err(Error::Refused) => {
                eprintln!("skipped: the vfork clone is refused here (an emulator, seccomp)");
                true
            }
            Err(Error::Failed(f)) => panic!("{f:?}"),
        }
    }

    #[test]
    fn runs_a_program_found_on_path_and_passes_the_environment() {
        if refused_here() {
            return;
        }
        let env = environment(&[("RETRY_TEST_VFORK", "42".into())], &[]);
        assert_eq!(run(&["sh", "-c", "exit 7"], &env).unwrap(), 7);
        assert_eq!(run(&["/bin/sh", "-c", "exit 3"], &env).unwrap(), 3);
        assert_eq!(
            run(&["sh", "-c", "exit $RETRY_TEST_VFORK"], &env).unwrap(),
            42
        );
    }

    #[test]
    fn reports_launch_errors() {
        if refused_here() {
            return;
        }
        let env = environment(&[], &[]);
        let e = run(&["no-such-program-xyz"], &env).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        let e = run(&["/etc/passwd"], &env).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EACCES));
        let e = run(&["/no/such/dir/prog"], &env).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn a_script_without_a_shebang_runs_with_sh() {
        if refused_here() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("s");
        std::fs::write(&script, "exit 5\n").unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let env = environment(&[], &[]);
        assert_eq!(run(&[script.to_str().unwrap()], &env).unwrap(), 5);
    }

    #[test]
    fn the_clone_hands_back_a_pidfd_of_the_child() {
        if refused_here() {
            return;
        }
        let argv = [OsString::from("true")];
        let plan =
            Prepared::new(&argv, &environment(&[], &[]), false, [Stdio::Inherit; 3]).unwrap();
        let (pid, pidfd) = spawn(&plan).map_err(|e| format!("{e:?}")).unwrap();
        let attempt = Attempt::new(Pid::from_raw(pid), GroupMode::Own, pidfd);
        let fd = attempt
            .take_pidfd()
            .expect("a pidfd from CLONE_PIDFD (Linux 5.2)");
        assert!(attempt.take_pidfd().is_none(), "taken once");
        // The pidfd becomes readable when the child ends.
        let mut fds = [nix::poll::PollFd::new(
            std::os::fd::AsFd::as_fd(&fd),
            nix::poll::PollFlags::POLLIN,
        )];
        assert_eq!(
            nix::poll::poll(&mut fds, nix::poll::PollTimeout::from(60_000u16)),
            Ok(1)
        );
        child::reap(pid);
    }
}
