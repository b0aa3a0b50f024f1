//! Writing `--metrics-file`'s textfile ([`super::metrics`] renders it).
//!
//! The file is replaced whole: written to a temporary file in the same directory (a hidden
//! name not ending in `.prom`, which the collector skips), then renamed over PATH, so a reader
//! sees the old file or the new one, never half of one. The counters and the last success are
//! carried over from the file there before ([`super::prom_parse`]). Runs that end together
//! take turns: each holds `flock(2)` on the directory while it reads the old file and renames
//! the new one, so no run's count is lost. The lock is waited for at most [`LOCK_WAIT`], and
//! not at all once a stop signal has arrived (within the rule of [`crate::signals`], through
//! [`crate::net::bounded`]); a run that could not have it still replaces the file whole,
//! and says so. A FIFO, device node, socket or directory at PATH is never replaced.

use std::fs::File;
use std::io::{Read, Write};
#[cfg(unix)]
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[cfg(unix)]
use nix::errno::Errno;
#[cfg(unix)]
use nix::fcntl::{Flock, FlockArg};

use super::metrics::{Carried, RunRecord, render};
use super::prom_parse::{self, escape_label};
use crate::net::bounded::{self, Bounded};

/// The longest a run waits for another run's turn at the metrics file.
pub const LOCK_WAIT: Duration = Duration::from_secs(10);

/// The largest previous file read back; a larger one is replaced.
pub const MAX_PREVIOUS: u64 = 1 << 20;

/// The directory and file name of `path` (a bare name is in the current directory).
fn split(path: &Path) -> Result<(PathBuf, std::ffi::OsString), String> {
    let name = path
        .file_name()
        .ok_or_else(|| "it names no file".to_string())?
        .to_os_string();
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((dir, name))
}

/// What `path` is when it exists and is neither a regular file nor a symbolic link (which the
/// rename replaces, leaving its target alone): `Some("FIFO")`, `Some("character device")`, ...
/// Such a file is never renamed over: a run as root given `/dev/null` would replace the
/// system's null device with a regular file.
#[cfg(windows)]
pub fn not_replaceable(path: &Path) -> Option<&'static str> {
    let kind = std::fs::symlink_metadata(path).ok()?.file_type();
    (kind.is_dir()).then_some("directory")
}

/// (See the Windows item: on Unix, FIFOs, devices and sockets too.)
#[cfg(unix)]
pub fn not_replaceable(path: &Path) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let kind = std::fs::symlink_metadata(path).ok()?.file_type();
    if kind.is_file() || kind.is_symlink() {
        None
    } else if kind.is_dir() {
        Some("directory")
    } else if kind.is_fifo() {
        Some("FIFO")
    } else if kind.is_char_device() {
        Some("character device")
    } else if kind.is_block_device() {
        Some("block device")
    } else if kind.is_socket() {
        Some("socket")
    } else {
        Some("special file")
    }
}

/// Writes the file at `path` for `run`, carrying over what the file there held.
///
/// Returns notices to print as warnings: the previous file could not be read and was
/// replaced; the file was written without this run's turn (another run held it past
/// [`LOCK_WAIT`], or a stop signal came first), so a run ending at the same moment may lose
/// its count.
///
/// # Errors
/// One line saying why the file could not be written or renamed, or that `path` is not a
/// regular file ([`not_replaceable`]) and was left as it is.
// Kept out of the start-up path: see the note on code layout in `crate::telemetry`.
#[cold]
#[inline(never)]
pub fn write(path: &Path, run: &RunRecord) -> Result<Vec<String>, String> {
    let (dir, name) = split(path)?;
    let dir_file = open_dir(&dir)?;
    let mut notices = Vec::new();
    let _turn = match take_turn(dir_file) {
        Ok(turn) => Some(turn),
        Err(why) => {
            notices.push(format!(
                "{why}: written without waiting for its turn, so the count of a run ending \
                 at the same moment may be lost"
            ));
            None
        }
    };
    if let Some(kind) = not_replaceable(path) {
        return Err(format!("it is a {kind}, not a regular file: left as it is"));
    }
    let (before, notice) = match read_previous(path) {
        Ok(None) => (Carried::default(), None),
        Ok(Some(text)) => match Carried::read(&text, &run.job) {
            Ok(carried) => {
                if let Some(other) = other_job(&text, &run.job) {
                    notices.push(format!(
                        "the previous file held the series of job \"{}\", not \"{}\" \
                         (--metrics-job): its counts are not carried over",
                        escape_label(&other),
                        escape_label(&run.job)
                    ));
                }
                (carried, None)
            }
            Err(why) => (Carried::default(), Some(why)),
        },
        Err(why) => (Carried::default(), Some(why)),
    };
    let text = render(run, &before);
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(&name);
    prefix.push(".");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // As a shell's `>` creates a file: 0666 less the umask (the collector must read it).
    #[cfg(unix)]
    builder.permissions(std::fs::Permissions::from_mode(0o666));
    let mut tmp = builder
        .tempfile_in(&dir)
        .map_err(|e| format!("cannot create a temporary file in {}: {e}", dir.display()))?;
    tmp.write_all(text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", tmp.path().display()))?;
    tmp.persist(path)
        .map_err(|e| format!("cannot rename the new file into place: {}", e.error))?;
    if let Some(why) = notice {
        notices.push(format!(
            "the previous file did not parse ({why}): it was replaced"
        ));
    }
    Ok(notices)
}

/// The `job` of the previous file's series when it holds none of `job`'s (another
/// `--metrics-job` wrote it).
fn other_job(text: &str, job: &str) -> Option<String> {
    let samples = prom_parse::parse(text).ok()?;
    if samples
        .iter()
        .any(|s| s.labels.get("job").map(String::as_str) == Some(job))
    {
        return None;
    }
    samples
        .into_iter()
        .find(|s| s.name.starts_with("retry_"))
        .and_then(|s| s.labels.get("job").cloned())
}

/// The previous file's text; `None` when there is none. Opened non-blocking (a FIFO in its
/// place would otherwise hold the open until a writer came) and read only if it is a regular
/// file of at most [`MAX_PREVIOUS`] bytes.
fn read_previous(path: &Path) -> Result<Option<String>, String> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read it: {e}")),
    };
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read it: {e}"))?;
    if !meta.file_type().is_file() {
        return Err("not a regular file".into());
    }
    let mut bytes = Vec::new();
    file.take(MAX_PREVIOUS + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.len() as u64 > MAX_PREVIOUS {
        return Err(format!("larger than {MAX_PREVIOUS} bytes"));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| "not UTF-8".to_string())
}

/// Opens the directory the file is in, to take turns on. O_DIRECTORY: a FIFO (or anything
/// else) in the directory's place is refused at once instead of holding the open until a
/// writer comes.
#[cfg(unix)]
fn open_dir(dir: &Path) -> Result<File, String> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(dir)
        .map_err(|e| format!("cannot open its directory {}: {e}", dir.display()))
}

/// On Windows a directory cannot be locked: the turn is a lock (`LockFileEx`) on `.retry-metrics.lock` in it, which a collector of `*.prom` files skips.
#[cfg(windows)]
fn open_dir(dir: &Path) -> Result<File, String> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(dir.join(".retry-metrics.lock"))
        .map_err(|e| {
            format!(
                "cannot open its directory's lock file in {}: {e}",
                dir.display()
            )
        })
}

/// Takes this run's turn (Windows: see [`open_dir`]), at once when it is free, otherwise
/// waited for in a helper thread at most [`LOCK_WAIT`] and never past a stop event.
///
/// # Errors
/// Why it could not be had (the run goes on without it).
#[cfg(windows)]
fn take_turn(lock: File) -> Result<File, String> {
    match crate::lock::lock_exclusive(&lock, false) {
        Ok(true) => return Ok(lock),
        Ok(false) => {}
        Err(e) => {
            return Err(format!("cannot lock its directory ({e})"));
        }
    }
    let now = Instant::now();
    let waited = bounded::call("metrics-lock", now.checked_add(LOCK_WAIT).unwrap_or(now), {
        move || crate::lock::lock_exclusive(&lock, true).map(|_| lock).ok()
    });
    turn_waited(waited)
}

/// Takes this run's turn at the directory's files: `flock(LOCK_EX)` on the directory, at once
/// when it is free, otherwise waited for in a helper thread at most [`LOCK_WAIT`] and never
/// past a stop signal.
///
/// # Errors
/// Why it could not be had (the run goes on without it).
#[cfg(unix)]
fn take_turn(dir: File) -> Result<Flock<File>, String> {
    let dir = match Flock::lock(dir, FlockArg::LockExclusiveNonblock) {
        Ok(locked) => return Ok(locked),
        Err((dir, Errno::EWOULDBLOCK | Errno::EINTR)) => dir,
        Err((_, e)) => return Err(format!("cannot lock its directory ({e})")),
    };
    let now = Instant::now();
    let waited = bounded::call(
        "metrics-lock",
        now.checked_add(LOCK_WAIT).unwrap_or(now),
        move || {
            let mut dir = dir;
            loop {
                match Flock::lock(dir, FlockArg::LockExclusive) {
                    Err((file, Errno::EINTR)) => dir = file,
                    other => break other.ok(),
                }
            }
        },
    );
    turn_waited(waited)
}

/// What a wait for the turn came to.
fn turn_waited<T>(waited: std::io::Result<Bounded<Option<T>>>) -> Result<T, String> {
    match waited {
        Ok(Bounded::Done(Some(locked))) => Ok(locked),
        Ok(Bounded::Done(None)) => Err("cannot lock its directory".into()),
        Ok(Bounded::Stopped) => Err("a stop signal came while another run was writing it".into()),
        Ok(Bounded::TimedOut) => Err(format!(
            "another run held its directory's lock for {}s",
            LOCK_WAIT.as_secs()
        )),
        Err(e) => Err(format!("cannot wait for its directory's lock ({e})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::metrics::RunResult;
    use std::time::SystemTime;

    fn run(result: RunResult, attempts: u64) -> RunRecord {
        RunRecord {
            job: "backup".into(),
            ended: SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_250),
            duration: Duration::from_millis(1500),
            attempts,
            counted: 0,
            exit_status: if result == RunResult::Success { 0 } else { 3 },
            result: Some(result),
        }
    }

    #[test]
    fn write_replaces_the_file_whole_and_says_when_the_old_one_did_not_parse() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("job.prom");
        assert!(
            write(&path, &run(RunResult::Success, 1))
                .unwrap()
                .is_empty()
        );
        assert!(
            write(&path, &run(RunResult::Success, 1))
                .unwrap()
                .is_empty()
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("result=\"success\"} 2\n"), "{text}");
        std::fs::write(&path, "garbage here\n").unwrap();
        let notices = write(&path, &run(RunResult::Success, 1)).unwrap();
        assert_eq!(notices.len(), 1, "{notices:?}");
        let notice = &notices[0];
        assert!(notice.contains("line 1"), "{notice}");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("result=\"success\"} 1\n"), "{text}");
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_missing_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = write(
            &dir.path().join("no/such/x.prom"),
            &run(RunResult::Success, 1),
        )
        .unwrap_err();
        assert!(err.contains("directory"), "{err}");
        assert!(write(Path::new("/"), &run(RunResult::Success, 1)).is_err());
        // A FIFO where the directory should be is refused, not waited on.
        #[cfg(unix)]
        {
            let fifo = dir.path().join("fifo");
            nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
            let err = write(&fifo.join("x.prom"), &run(RunResult::Success, 1)).unwrap_err();
            assert!(err.contains("directory"), "{err}");
        }
    }
}
