//! `--lock PATH` on Unix (see the module `lock`):
//!
//! An exclusive `flock(2)` lock (`LOCK_EX`) on PATH, held from before the first attempt to the
//! end of the run. The kernel releases it when retry ends, however it ends (a KILL too: the
//! lock belongs to the open file description, which dies with the last descriptor to it). The
//! descriptor is close-on-exec, so no attempt or hook inherits it: a daemon an attempt leaves
//! running does not keep the lock. PATH is opened as the budget store opens its files: without
//! following a symlink, without waiting (a FIFO put there would hold an open), and only a
//! regular file owned by this user and not writable by others is accepted; a missing PATH is
//! created 0600. An existing PATH that cannot be opened for writing (a read-only file system)
//! is locked read-only, and then holds no pid. Local file systems only: `flock` over NFS is
//! not reliable.
//!
//! When another run holds it: a wait up to a time limit, within the rule of
//! [`crate::signals`]: a helper thread blocks in `flock(2)`, which the kernel wakes as soon as
//! the holder releases the lock, and the run waits for it with [`bounded::call`], ending at
//! the limit or at once on a stop signal (polling with `LOCK_NB` would miss the moments the
//! lock is free when many runs take it in turn, as `crate::budget::file_store` found).
//!
//! The holder writes its pid into PATH once it holds the lock, so that a run that finds it
//! busy can name the holder; only into an empty PATH or one holding a pid, never over other
//! content (`flock -n "$0"` users lock the script itself). A pid whose process no longer
//! exists names nobody: an earlier run left it, and a program that writes none (`flock(1)`)
//! holds the lock now. retry never removes PATH: a run that found it removed while
//! another held it would take a new lock beside the old one. A run that gets the lock on a
//! file that was removed or replaced meanwhile (by another program) takes it again on the file
//! now at PATH.

use std::fs::File;
use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
use std::time::Instant;

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg, OFlag, open};
use nix::sys::stat::Mode;

use crate::net::bounded::{self, Bounded};

use super::{NO_LIMIT, Refused};

/// A lock held: released when dropped (or when retry ends).
#[derive(Debug)]
pub struct Held {
    _file: Flock<File>,
}

/// Takes the lock on `path`, waiting until `until` (`None`: as long as it takes) if another run
/// holds it; calls `waiting` with the holder's pid (when PATH holds the pid of a process that
/// exists) once, when a wait
/// begins. A limit already past means no wait at all.
///
/// # Errors
/// [`Refused`]: busy until the limit, stopped by a signal, or PATH unusable.
pub fn take(
    path: &Path,
    until: Option<Instant>,
    waiting: impl FnOnce(Option<u32>),
) -> Result<Held, Refused> {
    let mut waiting = Some(waiting);
    loop {
        let (file, writable) = open_lock_file(path).map_err(Refused::Failed)?;
        let locked = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(locked) => locked,
            Err((file, Errno::EWOULDBLOCK | Errno::EINTR)) => {
                let holder = read_pid(&file).filter(|&pid| exists(pid));
                if until.is_some_and(|u| u <= Instant::now()) {
                    return Err(Refused::Busy { holder });
                }
                if let Some(waiting) = waiting.take() {
                    waiting(holder);
                }
                wait_for(file, until).map_err(|refused| match refused {
                    Refused::Busy { .. } => Refused::Busy {
                        holder: reopen_and_read_pid(path)
                            .filter(|&pid| exists(pid))
                            .or(holder),
                    },
                    other => other,
                })?
            }
            Err((_, e)) => return Err(Refused::Failed(format!("cannot lock: {}", io(e)))),
        };
        if still_at(path, &locked) {
            if writable {
                write_pid(&locked);
            }
            return Ok(Held { _file: locked });
        }
        // Removed or replaced while this run waited: lock what is at PATH now.
    }
}

/// Waits in a helper thread for `flock(LOCK_EX)` on `file`, until `until` (`None`: without
/// limit) or a stop signal.
fn wait_for(file: File, until: Option<Instant>) -> Result<Flock<File>, Refused> {
    let now = Instant::now();
    let limit = until.unwrap_or_else(|| now.checked_add(NO_LIMIT).unwrap_or(now));
    // The helper keeps the file; a lock it gets after the wait was given up is dropped with
    // the answer nobody takes, and so released at once.
    let waited = bounded::call("lock", limit, move || {
        let mut file = file;
        loop {
            match Flock::lock(file, FlockArg::LockExclusive) {
                Err((again, Errno::EINTR)) => file = again,
                other => return other.map_err(|(_, e)| e),
            }
        }
    });
    match waited {
        Ok(Bounded::Done(Ok(locked))) => Ok(locked),
        Ok(Bounded::Done(Err(e))) => Err(Refused::Failed(format!("cannot lock: {}", io(e)))),
        Ok(Bounded::Stopped) => Err(Refused::Stopped),
        Ok(Bounded::TimedOut) => Err(Refused::Busy { holder: None }),
        Err(e) => Err(Refused::Failed(format!("cannot wait for the lock: {e}"))),
    }
}

/// Opens (creating it 0600 if missing) the lock file at `path`, for writing when it can, and
/// checks it; `true` with a writable descriptor.
fn open_lock_file(path: &Path) -> Result<(File, bool), String> {
    // Looked at first, so that nothing but a regular file is ever opened (a device's open may
    // do something); checked again on the descriptor.
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        refusal(&meta)?;
    }
    let flags = OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK;
    let mode = Mode::from_bits_truncate(0o600);
    let opened = match open(path, flags | OFlag::O_RDWR | OFlag::O_CREAT, mode) {
        Ok(fd) => Ok((fd, true)),
        // An existing file on a read-only file system, or one this user may only read: a
        // read-only descriptor locks as well.
        Err(Errno::EROFS | Errno::EACCES | Errno::EPERM) if path.exists() => {
            open(path, flags | OFlag::O_RDONLY, mode).map(|fd| (fd, false))
        }
        Err(e) => Err(e),
    };
    let (fd, writable) = opened.map_err(|e| match e {
        Errno::ELOOP => "is a symlink; refused".to_string(),
        Errno::EISDIR => "is a directory; refused".to_string(),
        Errno::ENOENT => "cannot create: its directory does not exist".to_string(),
        e if path.exists() => format!("cannot open: {}", io(e)),
        e => format!("cannot create: {}", io(e)),
    })?;
    let file = File::from(fd);
    let meta = file.metadata().map_err(|e| format!("cannot stat: {e}"))?;
    refusal(&meta)?;
    Ok((file, writable))
}

/// Why a file with metadata `meta` is no lock file for this run, if it is none.
fn refusal(meta: &std::fs::Metadata) -> Result<(), String> {
    let kind = meta.file_type();
    if kind.is_symlink() {
        return Err("is a symlink; refused".into());
    }
    if kind.is_dir() {
        return Err("is a directory; refused".into());
    }
    if !kind.is_file() {
        return Err("is not a regular file; refused".into());
    }
    let euid = nix::unistd::geteuid().as_raw();
    if meta.uid() != euid {
        return Err(format!(
            "is owned by uid {}, not by this user (uid {euid}); refused",
            meta.uid()
        ));
    }
    // As the budget store's files: another user who may write it could put a false pid in it.
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "is writable by others (mode {:o}); refused",
            meta.mode() & 0o7777
        ));
    }
    Ok(())
}

/// Whether the file locked is still the one at `path` (not removed or replaced meanwhile).
fn still_at(path: &Path, locked: &Flock<File>) -> bool {
    let (Ok(held), Ok(now)) = (locked.metadata(), std::fs::symlink_metadata(path)) else {
        return false;
    };
    (held.dev(), held.ino()) == (now.dev(), now.ino())
}

/// The longest content of a lock file that retry replaces with its pid: a pid and a newline.
/// Anything else is the user's (cron users often lock the script itself, as `flock -n "$0"`
/// does), and is never touched.
const MAX_PID_FILE_BYTES: u64 = 24;

/// Writes this process's pid into the lock file, if it is empty or holds only a pid (a former
/// holder's): never over anything else. A failure only costs the next run the holder's pid in
/// its message.
fn write_pid(file: &File) {
    let Ok(meta) = file.metadata() else {
        return;
    };
    if meta.len() > MAX_PID_FILE_BYTES || (meta.len() > 0 && read_pid(file).is_none()) {
        return;
    }
    let text = format!("{}\n", std::process::id());
    if nix::unistd::ftruncate(file.as_fd(), 0).is_ok() {
        let _ = file.write_all_at(text.as_bytes(), 0);
    }
}

/// The pid a holder wrote at the start of `file`, if it holds one.
fn read_pid(file: &File) -> Option<u32> {
    let mut buf = [0u8; 24];
    let n = file.read_at(&mut buf, 0).ok()?;
    std::str::from_utf8(&buf[..n])
        .ok()?
        .trim()
        .parse()
        .ok()
        .filter(|&pid| pid > 0)
}

/// Whether a process with this pid exists: `kill(pid, 0)` succeeds or is refused with `EPERM`
/// (it exists, and belongs to another user), as `kill(2)` describes
/// (<https://man7.org/linux/man-pages/man2/kill.2.html>). A pid in PATH whose process is gone
/// was left by an earlier run while another program (`flock(1)`, say) holds the lock now: it
/// names no holder. A pid reused since by an unrelated process cannot be told apart.
fn exists(pid: u32) -> bool {
    let Ok(raw) = i32::try_from(pid) else {
        return false;
    };
    if raw <= 0 {
        return false;
    }
    matches!(
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(raw), None),
        Ok(()) | Err(Errno::EPERM)
    )
}

/// [`read_pid`] of the file now at `path`.
fn reopen_and_read_pid(path: &Path) -> Option<u32> {
    let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK;
    let file = File::from(open(path, flags, Mode::empty()).ok()?);
    if !file.metadata().ok()?.file_type().is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(24).read_to_string(&mut text).ok()?;
    text.trim().parse().ok().filter(|&pid| pid > 0)
}

/// An errno as the system words it.
fn io(e: Errno) -> std::io::Error {
    e.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_second_lock_is_refused_and_names_the_holder() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("job.lock");
        let held = take(&path, None, |_| panic!("no wait")).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{}\n", std::process::id())
        );
        let now = Some(Instant::now());
        assert_eq!(
            take(&path, now, |_| panic!("no wait")).unwrap_err(),
            Refused::Busy {
                holder: Some(std::process::id())
            }
        );
        drop(held);
        assert!(take(&path, now, |_| {}).is_ok());
    }

    #[test]
    fn a_lock_file_with_other_content_is_locked_but_never_written() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("script.sh");
        let script = "#!/bin/sh\necho the user's own file\n";
        std::fs::write(&path, script).unwrap();
        let held = take(&path, None, |_| {}).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), script);
        assert_eq!(
            take(&path, Some(Instant::now()), |_| {}).unwrap_err(),
            Refused::Busy { holder: None }
        );
        drop(held);
        // A short file that is no pid is kept too; a former holder's pid is replaced.
        std::fs::write(&path, "x\n").unwrap();
        drop(take(&path, None, |_| {}).unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "x\n");
        std::fs::write(&path, "12345\n").unwrap();
        drop(take(&path, None, |_| {}).unwrap());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{}\n", std::process::id())
        );
    }

    /// A pid no process can have: above the kernel's `pid_max`.
    fn dead_pid() -> u32 {
        let max = std::fs::read_to_string("/proc/sys/kernel/pid_max").unwrap();
        max.trim().parse::<u32>().unwrap() + 1
    }

    #[test]
    fn a_stale_pid_names_no_holder() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("b.lock");
        // Held as flock(1) holds it: locked, and no pid written.
        let held = take(&path, None, |_| {}).unwrap();
        let now = Some(Instant::now());
        for (pid, named) in [
            (dead_pid(), None),
            (std::process::id(), Some(std::process::id())),
            // pid 1 exists, though it belongs to another user when the tests are not root.
            (1, Some(1)),
        ] {
            std::fs::write(&path, format!("{pid}\n")).unwrap();
            assert_eq!(
                take(&path, now, |_| panic!("no wait")).unwrap_err(),
                Refused::Busy { holder: named },
                "{pid}"
            );
        }
        assert!(!exists(0) && !exists(u32::MAX) && !exists(dead_pid()));
        drop(held);
    }

    #[test]
    fn what_is_no_lock_file_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let now = Some(Instant::now());
        let failed = |path: &Path| match take(path, now, |_| {}) {
            Err(Refused::Failed(why)) => why,
            other => panic!("{other:?}"),
        };
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(tmp.path().join("target"), &link).unwrap();
        assert_eq!(failed(&link), "is a symlink; refused");
        assert!(
            !tmp.path().join("target").exists(),
            "nothing created through it"
        );
        assert_eq!(failed(tmp.path()), "is a directory; refused");
        let fifo = tmp.path().join("fifo");
        nix::unistd::mkfifo(&fifo, Mode::from_bits_truncate(0o600)).unwrap();
        assert_eq!(failed(&fifo), "is not a regular file; refused");
        let open = tmp.path().join("open.lock");
        std::fs::write(&open, "").unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o664)).unwrap();
        assert_eq!(failed(&open), "is writable by others (mode 664); refused");
        assert_eq!(
            failed(&tmp.path().join("missing/job.lock")),
            "cannot create: its directory does not exist"
        );
    }
}
