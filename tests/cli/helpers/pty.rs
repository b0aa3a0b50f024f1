//! The one pty launcher: a command on a new pseudo-terminal, either as the session leader with
//! the pty as its controlling terminal and all three standard streams (a user's terminal), or
//! with only its stdout there (to see what it prints on a terminal).

use std::fs::File;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};

use nix::fcntl::{FcntlArg, FdFlag};

/// How the command meets the pty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attach {
    /// Session leader of a new session with the pty as controlling terminal, stdin, stdout and
    /// stderr: the terminal's foreground process group, as a shell's job would be.
    Terminal,
    /// Its stdout only; stdin and stderr as `cmd` has them.
    Stdout,
}

/// Starts `cmd` on a new pty as `attach` says; returns the process and the pty's master side
/// (what a user types into and reads from).
pub fn spawn_on_pty(mut cmd: Command, attach: Attach) -> (Child, File) {
    let pty = nix::pty::openpty(None, None).unwrap();
    // Neither side is inherited as such: the child gets the slave side as its standard
    // streams only, and never the master (which would keep the terminal up).
    for fd in [&pty.master, &pty.slave] {
        nix::fcntl::fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC)).unwrap();
    }
    let slave: OwnedFd = pty.slave;
    cmd.stdout(slave.try_clone().unwrap());
    if attach == Attach::Terminal {
        cmd.stdin(slave.try_clone().unwrap())
            .stderr(slave.try_clone().unwrap());
        // SAFETY: setsid and ioctl are async-signal-safe system calls; nothing is allocated.
        unsafe {
            cmd.pre_exec(|| {
                nix::unistd::setsid()?;
                // The request's type differs between systems (c_ulong on glibc's Linux).
                #[allow(clippy::useless_conversion)]
                if libc::ioctl(0, libc::TIOCSCTTY.into(), 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let child = cmd.spawn().unwrap();
    // The child holds the slave side now: the master reads EIO once the child closes it.
    drop(cmd);
    drop(slave);
    (child, File::from(pty.master))
}

/// Everything written to the pty until every holder of its slave side closed it (Linux reports
/// EIO then).
pub fn read_until_closed(master: &mut File) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match master.read(&mut buf) {
            Ok(0) | Err(_) => return out,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
}

/// Starts retry with `args` as the session leader of a new pty, so it is the terminal's
/// foreground group; the caller's `RETRY_*` and `GITHUB_*` are removed.
pub fn retry_in_terminal(args: &[String]) -> (Child, File) {
    let mut cmd = Command::new(crate::helpers::bin());
    cmd.args(args);
    super::clear_outside_env(&mut cmd);
    super::default_signals(&mut cmd);
    super::seccomp::apply_from_env(&mut cmd);
    spawn_on_pty(cmd, Attach::Terminal)
}

/// Starts an interactive bash (job control on, no rc files) as the session leader of a new
/// pty; returns it and the pty's master side, into which commands are typed.
pub fn interactive_shell() -> (Child, File) {
    let mut cmd = Command::new("bash");
    cmd.args(["--norc", "--noprofile", "-i"]).env("PS1", "$ ");
    super::clear_outside_env(&mut cmd);
    spawn_on_pty(cmd, Attach::Terminal)
}
