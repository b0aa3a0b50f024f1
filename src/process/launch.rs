//! Starting an attempt or a hook: its descriptors, process group, signal mask and death with
//! retry, through the set-up of [`super::child`]: on Linux with the vfork clone of
//! [`super::vfork`] (no copy of retry's memory) while it is allowed, elsewhere, in the
//! `portable` build and once the clone was refused, with `fork` and `exec` ([`super::fork`]).

use std::ffi::OsString;
use std::io;

use nix::unistd::Pid;

use super::spawned::GroupMode;
use super::spawned::{LaunchError, Piped, Spawned};
use super::unix::Attempt;

/// Starts `argv[0]` with arguments `argv[1..]` and extra environment `env`, in retry's own
/// environment less the variables named in `withheld` (the caller's: `RETRY_ENV_FILE`, which
/// names an outer run's private file); stdin, stdout and stderr are inherited except those
/// `piped` asks for. The program is executed directly, never
/// through a shell (a script without `#!` runs under `/bin/sh`, as `execvp` does).
///
/// In the child, before exec: the signal mask is cleared, SIGPIPE and SIGCHLD get back the
/// disposition they had when retry started ([`super::dispositions`]: ignored stays ignored), and
/// on Linux the child is set to get KILL if retry dies (`PR_SET_PDEATHSIG`, as coreutils
/// `timeout`), and does not run at all if retry died first. A standard descriptor that was
/// closed when retry started ([`super::closed_at_start`]) is closed in the child too, and is
/// then never piped, whatever `piped` asks: `retry -- echo hi >&-` fails as `echo hi >&-` does.
/// With [`Piped::stderr_in_stdout`], the child's stderr is its stdout pipe (`2>&1`), and no
/// stderr pipe is made.
///
/// # Errors
/// [`LaunchError::Command`] with exec's error (not found, permission denied, ...);
/// [`LaunchError::Own`] when retry itself could not start the process.
pub fn spawn(
    argv: &[OsString],
    env: &[(&str, String)],
    withheld: &[&str],
    mode: GroupMode,
    piped: Piped,
) -> Result<Spawned, LaunchError> {
    let closed = [0, 1, 2].map(super::stdio::closed_at_start);
    let merge = piped.stdout && piped.stderr_in_stdout && !closed[1] && !closed[2];
    let want = [
        piped.stdin && !closed[0],
        piped.stdout && !closed[1],
        piped.stderr && !closed[2] && !merge,
    ];
    imp::spawn(argv, env, withheld, mode, closed, want, merge)
}

/// Starts a hook: `sh -c script` with extra environment `env` (less `withheld`, as for
/// [`spawn`]), in a process group of its own,
/// stdin from /dev/null and stdout onto retry's stderr (a hook must not write into the
/// pipeline's stdout); both closed when retry's stderr was closed at start. With `output`
/// (`--chronic`'s capture), its stdout and stderr both go there instead.
///
/// # Errors
/// When `sh` cannot be started or /dev/null cannot be opened.
pub fn spawn_hook(
    script: &str,
    env: &[(&str, String)],
    withheld: &[&str],
    output: Option<std::os::fd::BorrowedFd<'_>>,
) -> io::Result<Attempt> {
    let no_stderr = super::stdio::closed_at_start(2) && output.is_none();
    imp::spawn_hook(script, env, withheld, no_stderr, output).map_err(|e| match e {
        LaunchError::Command(e) | LaunchError::Own(e) => e,
    })
}

mod imp {
    use std::ffi::OsString;
    use std::fs::File;
    use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

    use super::super::child::{self, Failed, Prepared, Stdio};
    use super::{Attempt, GroupMode, LaunchError, Pid, Spawned};

    impl From<Failed> for LaunchError {
        fn from(failed: Failed) -> LaunchError {
            match failed {
                Failed::Exec(e) => LaunchError::Command(e),
                Failed::Own(e) => LaunchError::Own(e),
            }
        }
    }

    pub(super) fn spawn(
        argv: &[OsString],
        env: &[(&str, String)],
        withheld: &[&str],
        mode: GroupMode,
        closed: [bool; 3],
        want: [bool; 3],
        merge: bool,
    ) -> Result<Spawned, LaunchError> {
        // (child's end, retry's end) of each pipe; both close-on-exec (dup2 clears the flag
        // on the child's copy at 0, 1 or 2).
        let mut pipes: [Option<(OwnedFd, OwnedFd)>; 3] = [None, None, None];
        for fd in 0..3 {
            if want[fd] {
                let (read, write) = super::super::pipe::cloexec_pipe().map_err(LaunchError::Own)?;
                pipes[fd] = Some(if fd == 0 {
                    (read, write)
                } else {
                    (write, read)
                });
            }
        }
        let stdio: [Stdio; 3] = std::array::from_fn(|fd| match &pipes[fd] {
            Some((child, _)) => Stdio::From(child.as_raw_fd()),
            None if fd == 2 && merge => match &pipes[1] {
                Some((child, _)) => Stdio::From(child.as_raw_fd()),
                None => Stdio::Inherit,
            },
            None if closed[fd] => Stdio::Closed,
            None => Stdio::Inherit,
        });
        let plan = Prepared::new(
            argv,
            &child::environment(env, withheld),
            mode == GroupMode::Own,
            stdio,
        )
        .map_err(LaunchError::Command)?;
        let (pid, pidfd) = super::super::os::start(&plan)?;
        let [stdin, stdout, stderr] = pipes.map(|p| p.map(|(_child, ours)| ours));
        Ok(Spawned {
            attempt: Attempt::new(Pid::from_raw(pid), mode, pidfd),
            stdin: stdin.map(Into::into),
            stdout: stdout.map(Into::into),
            stderr: stderr.map(Into::into),
        })
    }

    pub(super) fn spawn_hook(
        script: &str,
        env: &[(&str, String)],
        withheld: &[&str],
        no_stderr: bool,
        output: Option<BorrowedFd<'_>>,
    ) -> Result<Attempt, LaunchError> {
        let null = File::open("/dev/null").map_err(LaunchError::Own)?;
        let stdio = match output {
            Some(fd) => [
                Stdio::From(null.as_raw_fd()),
                Stdio::From(fd.as_raw_fd()),
                Stdio::From(fd.as_raw_fd()),
            ],
            None if no_stderr => [Stdio::From(null.as_raw_fd()), Stdio::Closed, Stdio::Closed],
            None => [
                Stdio::From(null.as_raw_fd()),
                Stdio::From(2),
                Stdio::Inherit,
            ],
        };
        let argv = ["sh", "-c", script].map(OsString::from);
        let plan = Prepared::new(&argv, &child::environment(env, withheld), true, stdio)
            .map_err(LaunchError::Command)?;
        let (pid, pidfd) = super::super::os::start(&plan)?;
        Ok(Attempt::new(Pid::from_raw(pid), GroupMode::Own, pidfd))
    }
}
