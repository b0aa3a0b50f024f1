//! The default store on Unix (see the module `file_store`): a directory of the user's own
//! with, per KEY, a state file
//! (`STEM.json`, 0600) and a lock file (`STEM.lock`, 0600) on which `flock(2)` is held only
//! for one read-modify-write that changes the state, never across a wait (an operation that
//! changes nothing reads without it). A new state is written to `STEM.tmp` and
//! renamed over `STEM.json`, so a run killed at any moment leaves the old state or the new one,
//! never half of one; and the kernel releases a dead process's `flock`, so a run killed while
//! holding the lock cannot wedge the others. Local file systems only: `flock` over NFS is not
//! reliable. Files do not expire: `$XDG_RUNTIME_DIR` is emptied when the user's last session
//! ends, and the temporary directory by the system's own cleaning; a state file that
//! disappears is a fresh state (full bucket, closed breaker).
//!
//! Every file is opened relative to the directory's descriptor with `O_NOFOLLOW`, after the
//! directory itself was opened with `O_NOFOLLOW` and checked (owned by this user, not writable
//! by group or others), so nobody else can redirect a write.

use std::fs::File;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg, OFlag, openat, renameat};
use nix::sys::stat::{Mode, fstat};

use crate::budget::codec;
use crate::budget::error::StoreError;
use crate::net::bounded::{self, Bounded};
use retry_tool_backoff::shared_state::SharedState;

use super::DEFAULT_LOCK_TIMEOUT;

/// A directory of budget state files.
#[derive(Debug)]
pub struct FileStore {
    dir: PathBuf,
    dir_fd: OwnedFd,
    lock_timeout: Duration,
}

fn dir_error(path: &Path, reason: impl Into<String>) -> StoreError {
    StoreError::Dir {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

impl FileStore {
    /// Creates `dir` (and missing parents) with mode 0700 if needed, opens it and checks it:
    /// it must be a directory, not a symlink, owned by the effective user, and not writable
    /// by group or others.
    ///
    /// # Errors
    /// [`StoreError::Dir`] saying which check failed.
    pub fn open(dir: &Path) -> Result<FileStore, StoreError> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| dir_error(dir, format!("cannot create: {e}")))?;
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let dir_fd = nix::fcntl::open(dir, flags, Mode::empty()).map_err(|e| {
            let is_link = std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink());
            match e {
                // Linux says ENOTDIR for a symlink opened with O_DIRECTORY | O_NOFOLLOW.
                Errno::ELOOP | Errno::ENOTDIR if is_link => dir_error(dir, "is a symlink; refused"),
                Errno::ENOTDIR => dir_error(dir, "is not a directory"),
                e => dir_error(dir, format!("cannot open: {}", std::io::Error::from(e))),
            }
        })?;
        let st = fstat(&dir_fd).map_err(|e| dir_error(dir, format!("cannot stat: {e}")))?;
        let euid = nix::unistd::geteuid().as_raw();
        if st.st_uid != euid {
            return Err(dir_error(
                dir,
                format!(
                    "is owned by uid {}, not by this user (uid {euid}); refused",
                    st.st_uid
                ),
            ));
        }
        if st.st_mode & 0o022 != 0 {
            return Err(dir_error(
                dir,
                format!(
                    "is writable by others (mode {:o}); refused",
                    st.st_mode & 0o7777
                ),
            ));
        }
        Ok(FileStore {
            dir: dir.to_path_buf(),
            dir_fd,
            lock_timeout: DEFAULT_LOCK_TIMEOUT,
        })
    }

    /// This store with another lock timeout (tests under heavy load use a long one).
    pub fn with_lock_timeout(self, timeout: Duration) -> FileStore {
        FileStore {
            lock_timeout: timeout,
            ..self
        }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The path of a file in the directory, for messages.
    pub(super) fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Opens `name` in the directory without following a symlink and without waiting: a FIFO
    /// put in a file's place would otherwise hold the open until a writer comes (a wait outside
    /// the rule of [`crate::signals`]); only a regular file is accepted.
    fn open_in(&self, name: &str, flags: OFlag) -> std::io::Result<File> {
        let flags = flags | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK;
        let file =
            openat(&self.dir_fd, name, flags, Mode::from_bits_truncate(0o600)).map(File::from)?;
        if !file.metadata()?.file_type().is_file() {
            return Err(std::io::Error::other("not a regular file"));
        }
        Ok(file)
    }

    /// Takes `flock(LOCK_EX)` on `lock`: at once if it is free; otherwise a helper thread
    /// blocks in `flock(2)`, which the kernel wakes as soon as the holder releases the lock,
    /// and the run waits for it up to the lock timeout, or until a stop signal arrives
    /// ([`crate::net::bounded`]). (Polling with `LOCK_NB` and sleeps, as a first version did, lets a
    /// waiter miss every moment the lock is free when dozens of runs take it in turn: 40 runs
    /// started together on 2 busy cores gave up after 100 ms by the dozen.) A helper that gets
    /// the lock after the wait was given up finds nobody waiting and releases it at once.
    pub(super) fn lock(&self, lock: File, name: &str) -> Result<Flock<File>, StoreError> {
        let io = |error: Errno| StoreError::Io {
            path: self.path(name),
            error: error.into(),
        };
        let lock = match Flock::lock(lock, FlockArg::LockExclusiveNonblock) {
            Ok(locked) => return Ok(locked),
            Err((file, Errno::EWOULDBLOCK | Errno::EINTR)) => file,
            Err((_, e)) => return Err(io(e)),
        };
        let start = Instant::now();
        let until = start.checked_add(self.lock_timeout).unwrap_or(start);
        let waited = bounded::call("budget-lock", until, move || {
            let mut lock = lock;
            loop {
                match Flock::lock(lock, FlockArg::LockExclusive) {
                    Err((file, Errno::EINTR)) => lock = file,
                    other => break other.map_err(|(_, e)| e),
                }
            }
        });
        match waited {
            Ok(Bounded::Done(Ok(locked))) => Ok(locked),
            Ok(Bounded::Done(Err(e))) => Err(io(e)),
            Ok(Bounded::Stopped) => Err(StoreError::Stopped),
            Ok(Bounded::TimedOut) => Err(StoreError::LockTimeout {
                path: self.path(name),
                waited_ms: u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX),
            }),
            Err(error) => Err(StoreError::Io {
                path: self.path(name),
                error,
            }),
        }
    }

    pub(super) fn write_state(
        &self,
        stem: &str,
        name: &str,
        state: &SharedState,
    ) -> Result<(), StoreError> {
        let tmp = format!("{stem}.tmp");
        let io = |name: &str, error: std::io::Error| StoreError::Io {
            path: self.path(name),
            error,
        };
        let mut file = self
            .open_in(&tmp, OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_TRUNC)
            .map_err(|e| io(&tmp, e))?;
        file.write_all(&codec::encode(state))
            .map_err(|e| io(&tmp, e))?;
        drop(file);
        renameat(&self.dir_fd, tmp.as_str(), &self.dir_fd, name).map_err(|e| io(name, e.into()))
    }

    /// Opens state file `name` for reading.
    pub(super) fn open_read(&self, name: &str) -> std::io::Result<File> {
        self.open_in(name, OFlag::O_RDONLY)
    }

    /// Opens (creating it 0600) lock file `name`.
    pub(super) fn open_lock(&self, name: &str) -> std::io::Result<File> {
        self.open_in(name, OFlag::O_RDWR | OFlag::O_CREAT)
    }
}
