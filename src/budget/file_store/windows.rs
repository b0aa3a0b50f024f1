//! The default store on Windows (see the module `file_store`): the state file is read whole
//! and replaced by a rename (`MoveFileExW` with `MOVEFILE_REPLACE_EXISTING`, what std's
//! `fs::rename` does), so a run killed at any moment leaves the old state or the new one; the
//! lock file is locked with `LockFileEx`, which Windows releases when a
//! process dies. The directory must be a directory, not a symbolic link or junction; it is the
//! user's own by the default ACL of the temporary directory it is made in (`%TEMP%`).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::DEFAULT_LOCK_TIMEOUT;
use crate::budget::codec;
use crate::budget::error::StoreError;
use crate::lock::lock_exclusive;
use crate::net::bounded::{self, Bounded};
use retry_tool_backoff::shared_state::SharedState;

/// A directory of budget state files.
#[derive(Debug)]
pub struct FileStore {
    dir: PathBuf,
    lock_timeout: Duration,
}

fn dir_error(path: &Path, reason: impl Into<String>) -> StoreError {
    StoreError::Dir {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

impl FileStore {
    /// Creates `dir` (and missing parents) if needed and checks it: a directory, not a
    /// symbolic link or junction.
    ///
    /// # Errors
    /// [`StoreError::Dir`] saying which check failed.
    pub fn open(dir: &Path) -> Result<FileStore, StoreError> {
        std::fs::create_dir_all(dir).map_err(|e| dir_error(dir, format!("cannot create: {e}")))?;
        let meta = std::fs::symlink_metadata(dir)
            .map_err(|e| dir_error(dir, format!("cannot open: {e}")))?;
        if meta.file_type().is_symlink() {
            return Err(dir_error(dir, "is a symlink; refused"));
        }
        if !meta.is_dir() {
            return Err(dir_error(dir, "is not a directory"));
        }
        Ok(FileStore {
            dir: dir.to_path_buf(),
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

    pub(super) fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Locks `lock`: at once if it is free; otherwise a helper thread blocks in `LockFileEx`
    /// and the run waits for it up to the lock timeout, or until a stop event arrives.
    pub(super) fn lock(&self, lock: File, name: &str) -> Result<File, StoreError> {
        match lock_exclusive(&lock, false) {
            Ok(true) => return Ok(lock),
            Ok(false) => {}
            Err(error) => {
                return Err(StoreError::Io {
                    path: self.path(name),
                    error,
                });
            }
        }
        let start = Instant::now();
        let until = start.checked_add(self.lock_timeout).unwrap_or(start);
        let waited = bounded::call("budget-lock", until, move || {
            lock_exclusive(&lock, true).map(|_| lock)
        });
        match waited {
            Ok(Bounded::Done(Ok(locked))) => Ok(locked),
            Ok(Bounded::Done(Err(error))) | Err(error) => Err(StoreError::Io {
                path: self.path(name),
                error,
            }),
            Ok(Bounded::Stopped) => Err(StoreError::Stopped),
            Ok(Bounded::TimedOut) => Err(StoreError::LockTimeout {
                path: self.path(name),
                waited_ms: u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX),
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
        let mut file = File::create(self.path(&tmp)).map_err(|e| io(&tmp, e))?;
        file.write_all(&codec::encode(state))
            .map_err(|e| io(&tmp, e))?;
        drop(file);
        std::fs::rename(self.path(&tmp), self.path(name)).map_err(|e| io(name, e))
    }

    /// Opens state file `name` for reading: a regular file only.
    pub(super) fn open_read(&self, name: &str) -> std::io::Result<File> {
        let file = File::open(self.path(name))?;
        if !file.metadata()?.is_file() {
            return Err(std::io::Error::other("not a regular file"));
        }
        Ok(file)
    }

    /// Opens (creating it) lock file `name`.
    pub(super) fn open_lock(&self, name: &str) -> std::io::Result<File> {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(self.path(name))
    }
}
