//! The default store on Windows (see the module `file_store`): the state file is read whole
//! and replaced by a rename (`MoveFileExW` with `MOVEFILE_REPLACE_EXISTING`, what std's
//! `fs::rename` does), so a run killed at any moment leaves the old state or the new one; the
//! lock file is locked with `LockFileEx`, which Windows releases when a
//! process dies. The directory must be a directory, not a symbolic link or junction; it is the
//! user's own by the default ACL of the temporary directory it is made in (`%TEMP%`).

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::DEFAULT_LOCK_TIMEOUT;
use crate::budget::codec::{self, MAX_STATE_BYTES};
use crate::budget::error::StoreError;
use crate::budget::key::BudgetKey;
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

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Locks `lock`: at once if it is free; otherwise a helper thread blocks in `LockFileEx`
    /// and the run waits for it up to the lock timeout, or until a stop event arrives.
    fn lock(&self, lock: File, name: &str) -> Result<File, StoreError> {
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

    fn read_state(&self, name: &str) -> Result<SharedState, StoreError> {
        let io = |error: std::io::Error| StoreError::Io {
            path: self.path(name),
            error,
        };
        let mut bytes = Vec::new();
        match File::open(self.path(name)) {
            Ok(file) => {
                if !file.metadata().map_err(io)?.is_file() {
                    return Err(io(std::io::Error::other("not a regular file")));
                }
                file.take(MAX_STATE_BYTES + 1)
                    .read_to_end(&mut bytes)
                    .map_err(io)?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(e)),
        }
        if bytes.len() as u64 > MAX_STATE_BYTES {
            return Err(StoreError::Corrupt {
                place: self.path(name).display().to_string(),
                reason: format!("larger than {MAX_STATE_BYTES} bytes"),
            });
        }
        codec::decode(&bytes).map_err(|reason| StoreError::Corrupt {
            place: self.path(name).display().to_string(),
            reason,
        })
    }

    fn write_state(&self, stem: &str, name: &str, state: &SharedState) -> Result<(), StoreError> {
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

    /// As on Unix: first without the lock, and under it only when `f` changes the state.
    ///
    /// # Errors
    /// [`StoreError::LockTimeout`], [`StoreError::Stopped`], [`StoreError::Io`] or
    /// [`StoreError::Corrupt`].
    pub fn update<R>(
        &self,
        key: &BudgetKey,
        mut f: impl FnMut(&mut SharedState) -> R,
    ) -> Result<R, StoreError> {
        let stem = key.file_stem();
        let lock_name = format!("{stem}.lock");
        let data_name = format!("{stem}.json");
        let seen = self.read_state(&data_name)?;
        let mut unchanged = seen;
        let result = f(&mut unchanged);
        if unchanged == seen {
            return Ok(result);
        }
        let lock_file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(self.path(&lock_name))
            .map_err(|e| StoreError::Io {
                path: self.path(&lock_name),
                error: e,
            })?;
        let locked = self.lock(lock_file, &lock_name)?;
        let before = self.read_state(&data_name)?;
        let mut state = before;
        let result = f(&mut state);
        if state != before {
            self.write_state(&stem, &data_name, &state)?;
        }
        drop(locked);
        Ok(result)
    }
}
