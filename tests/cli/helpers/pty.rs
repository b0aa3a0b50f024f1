//! The one pty launcher: a command on a new pseudo-terminal, either as the session leader with
//! the pty as its controlling terminal and all three standard streams (a user's terminal), or
//! with only its stdout there (to see what it prints on a terminal).

use std::fs::File;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};

use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

/// A new pty's two sides.
pub struct Pty {
    /// What a user types into and reads from.
    pub master: OwnedFd,
    /// The terminal a program writes to.
    pub slave: OwnedFd,
}

/// A new pty of `size` (`None`: the system's default), both sides opened close-on-exec at
/// once: with `openpty` and `fcntl` after it, a process another test thread started in between
/// inherited the master, and kept the terminal up after the test closed its own copy (a hang-up
/// that did not come).
pub fn open_pty(size: Option<&nix::pty::Winsize>) -> Pty {
    use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd};
    let flags = OFlag::O_RDWR | OFlag::O_NOCTTY | OFlag::O_CLOEXEC;
    let master = nix::pty::posix_openpt(flags).unwrap();
    nix::pty::grantpt(&master).unwrap();
    nix::pty::unlockpt(&master).unwrap();
    let name = slave_name(&master);
    let slave = nix::fcntl::open(name.as_str(), flags, Mode::empty()).unwrap();
    if let Some(size) = size {
        // SAFETY: TIOCSWINSZ on an open terminal with a pointer to a Winsize.
        let rc = unsafe { libc::ioctl(slave.as_raw_fd(), libc::TIOCSWINSZ, size as *const _) };
        assert_eq!(rc, 0, "TIOCSWINSZ: {}", std::io::Error::last_os_error());
    }
    // SAFETY: the descriptor posix_openpt returned, now owned here alone.
    let master = unsafe { OwnedFd::from_raw_fd(master.into_raw_fd()) };
    Pty { master, slave }
}

/// The path of `master`'s slave side: `ptsname_r` where there is one (Linux), elsewhere
/// `ptsname` under a lock (it returns a static buffer another thread's call may overwrite).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn slave_name(master: &nix::pty::PtyMaster) -> String {
    nix::pty::ptsname_r(master).unwrap()
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn slave_name(master: &nix::pty::PtyMaster) -> String {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _held = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: every call in this process goes through LOCK, so the static buffer is not
    // overwritten before the copy into a String.
    unsafe { nix::pty::ptsname(master) }.unwrap()
}

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
pub fn spawn_on_pty(cmd: Command, attach: Attach) -> (Child, File) {
    spawn_on_pty_sized(cmd, attach, None)
}

/// [`spawn_on_pty`] on a pty of `columns` columns (and 24 rows); `None`: the system's default
/// size (0 by 0 on Linux, which programs read as unknown).
pub fn spawn_on_pty_sized(mut cmd: Command, attach: Attach, columns: Option<u16>) -> (Child, File) {
    let size = columns.map(|ws_col| nix::pty::Winsize {
        ws_row: 24,
        ws_col,
        ws_xpixel: 0,
        ws_ypixel: 0,
    });
    let pty = open_pty(size.as_ref());
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

/// Starts the binary users run ([`super::release::release_bin`]) with `args` and the
/// variables `env` (the caller's `RETRY_*` and `GITHUB_*` removed) as the session leader of a
/// new pty of `columns` columns.
pub fn retry_on_pty(args: &[&str], env: &[(&str, &str)], columns: u16) -> (Child, File) {
    let mut cmd = Command::new(super::release::release_bin());
    super::clear_outside_env(&mut cmd);
    cmd.args(args).envs(env.iter().copied());
    spawn_on_pty_sized(cmd, Attach::Terminal, Some(columns))
}

/// Sets the size of the terminal whose master side is `master` to `columns` by 24, as a
/// terminal emulator does when its window is resized (the kernel sends SIGWINCH to the
/// terminal's foreground group).
pub fn resize(master: &File, columns: u16) {
    let size = libc::winsize {
        ws_row: 24,
        ws_col: columns,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCSWINSZ reads a `winsize` from the valid pointer given.
    let rc = unsafe {
        libc::ioctl(
            std::os::fd::AsRawFd::as_raw_fd(master),
            libc::TIOCSWINSZ,
            &size,
        )
    };
    assert_eq!(rc, 0, "TIOCSWINSZ: {}", std::io::Error::last_os_error());
}

/// Starts an interactive bash (job control on, no rc files) as the session leader of a new
/// pty; returns it and the pty's master side, into which commands are typed.
pub fn interactive_shell() -> (Child, File) {
    let mut cmd = Command::new("bash");
    cmd.args(["--norc", "--noprofile", "-i"]).env("PS1", "$ ");
    super::clear_outside_env(&mut cmd);
    spawn_on_pty(cmd, Attach::Terminal)
}

/// What a pty shows, read by a thread of its own, so that a test can wait for some bytes
/// (within the hang limit) and still act while the program runs.
pub struct Screen {
    chunks: std::sync::mpsc::Receiver<Vec<u8>>,
    /// Everything read so far.
    pub seen: Vec<u8>,
}

impl Screen {
    /// Starts reading `master` (a clone of it: the caller keeps its handle to resize it).
    pub fn read(master: &File) -> Screen {
        let mut master = master.try_clone().unwrap();
        let (tx, chunks) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = master.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Screen {
            chunks,
            seen: Vec::new(),
        }
    }

    /// Reads until what was seen holds `needle` `times` times; panics after the hang limit.
    pub fn wait_for(&mut self, needle: &[u8], times: usize) {
        let start = std::time::Instant::now();
        while self
            .seen
            .windows(needle.len())
            .filter(|w| *w == needle)
            .count()
            < times
        {
            let left = super::HANG_LIMIT.saturating_sub(start.elapsed());
            match self.chunks.recv_timeout(left) {
                Ok(chunk) => self.seen.extend_from_slice(&chunk),
                Err(_) => panic!(
                    "{:?} never showed {times} time(s): {:?}",
                    String::from_utf8_lossy(needle),
                    String::from_utf8_lossy(&self.seen)
                ),
            }
        }
    }

    /// Reads until the pty is closed (every holder of its slave side is gone); returns all
    /// that was seen.
    pub fn until_closed(mut self) -> Vec<u8> {
        while let Ok(chunk) = self.chunks.recv_timeout(super::HANG_LIMIT) {
            self.seen.extend_from_slice(&chunk);
        }
        self.seen
    }
}
