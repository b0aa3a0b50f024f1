//! A bounded-memory byte store: the first bytes in memory, the rest in an unlinked temporary
//! file; one writer appends while readers follow it by offset.
//!
//! `tempfile::SpooledTempFile` has one cursor for reading and writing, so it cannot be read
//! while it grows; this keeps its idea (memory up to a threshold, then `tempfile::tempfile()`,
//! which is unlinked at creation, mode 0600, in TMPDIR) and adds followers.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// Bytes kept in memory before spilling to a temporary file: 8 MiB.
pub const MEMORY_LIMIT: usize = 8 << 20;

/// An append-only byte store with bounded memory; see the module doc.
#[derive(Debug)]
pub struct Spool {
    state: Mutex<State>,
    grew: Condvar,
    memory_limit: usize,
    /// The most bytes stored in all; `None`: no limit.
    max_len: Option<u64>,
}

#[derive(Debug, Default)]
struct State {
    memory: Vec<u8>,
    file: Option<Arc<File>>,
    /// Bytes stored in all (memory first, then file).
    len: u64,
    /// The writer is done: no byte will follow `len`.
    finished: bool,
    /// The writer could not store everything it had: why. Implies `finished`.
    failed: Option<String>,
}

/// The error inside [`Spool::append`]'s error when the spool's `max_len` is reached.
#[derive(Debug)]
pub struct LimitReached;

impl std::fmt::Display for LimitReached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("more bytes than the spool may hold")
    }
}

impl std::error::Error for LimitReached {}

/// Whether `e` says the spool's `max_len` was reached (not a file that was too large).
pub fn is_limit(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<LimitReached>())
}

/// What a follower may do next (see [`Spool::wait_beyond`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ahead {
    /// Bytes are stored up to this length (greater than the offset asked about).
    Data(u64),
    /// The writer finished and the offset is the end.
    End,
    /// The offset is where the writer failed ([`Spool::fail`]): bytes after it are missing.
    Failed,
    /// The follower was cancelled.
    Cancelled,
}

impl Spool {
    /// An empty spool keeping up to [`MEMORY_LIMIT`] bytes in memory.
    pub fn new() -> Spool {
        Spool::with_memory_limit(MEMORY_LIMIT)
    }

    /// An empty spool keeping up to `memory_limit` bytes in memory.
    pub fn with_memory_limit(memory_limit: usize) -> Spool {
        Spool::with_limits(memory_limit, None)
    }

    /// An empty spool keeping up to `memory_limit` bytes in memory and storing at most
    /// `max_len` bytes in all (`None`: no limit).
    pub fn with_limits(memory_limit: usize, max_len: Option<u64>) -> Spool {
        Spool {
            state: Mutex::new(State::default()),
            grew: Condvar::new(),
            memory_limit,
            max_len,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends `data`. Only one thread may append. On an error, a first part of `data` may be
    /// stored ([`Spool::len`] says how much).
    ///
    /// # Errors
    /// When the temporary file cannot be created or written (the message names TMPDIR), and
    /// with a [`LimitReached`] inside (see [`is_limit`]) when `data` would pass the spool's
    /// `max_len` (the bytes up to it are stored).
    pub fn append(&self, data: &[u8]) -> io::Result<()> {
        let room = self
            .max_len
            .map_or(u64::MAX, |max| max.saturating_sub(self.len()));
        let fits = usize::try_from(room).unwrap_or(usize::MAX).min(data.len());
        self.store(&data[..fits])?;
        if fits < data.len() {
            return Err(io::Error::other(LimitReached));
        }
        Ok(())
    }

    fn store(&self, mut data: &[u8]) -> io::Result<()> {
        let (file, at) = {
            let mut s = self.lock();
            let room = self.memory_limit.saturating_sub(s.memory.len());
            let here = room.min(data.len());
            if here > 0 {
                s.memory.extend_from_slice(&data[..here]);
                s.len += here as u64;
                data = &data[here..];
            }
            if data.is_empty() {
                drop(s);
                self.grew.notify_all();
                return Ok(());
            }
            if s.file.is_none() {
                let file = private_tempfile().map_err(|e| in_tmpdir("create", &e))?;
                s.file = Some(Arc::new(file));
            }
            (s.file.clone(), s.len - s.memory.len() as u64)
        };
        // File I/O outside the lock: readers only read below `len`, we write above it.
        if let Some(file) = file {
            write_all_at(&file, data, at).map_err(|e| in_tmpdir("write", &e))?;
        }
        self.lock().len += data.len() as u64;
        self.grew.notify_all();
        Ok(())
    }

    /// Marks the end: no more bytes will be appended.
    pub fn finish(&self) {
        self.lock().finished = true;
        self.grew.notify_all();
    }

    /// Marks a failed end: the writer could not store what followed, for `why`. Followers that
    /// reach the end see [`Ahead::Failed`].
    pub fn fail(&self, why: String) {
        {
            let mut s = self.lock();
            s.failed = Some(why);
            s.finished = true;
        }
        self.grew.notify_all();
    }

    /// Why the writer failed, if it did ([`Spool::fail`]).
    pub fn failure(&self) -> Option<String> {
        self.lock().failed.clone()
    }

    /// Wakes followers blocked in [`Spool::wait_beyond`] so they can see a cancellation.
    pub fn wake(&self) {
        self.grew.notify_all();
    }

    /// Bytes stored so far.
    pub fn len(&self) -> u64 {
        self.lock().len
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Blocks until bytes exist beyond `offset`, the writer finished, or `cancelled` is set
    /// (checked whenever [`Spool::wake`] or an append wakes the follower).
    pub fn wait_beyond(&self, offset: u64, cancelled: &AtomicBool) -> Ahead {
        let mut s = self.lock();
        loop {
            if cancelled.load(Ordering::Acquire) {
                return Ahead::Cancelled;
            }
            if s.len > offset {
                return Ahead::Data(s.len);
            }
            if s.failed.is_some() {
                return Ahead::Failed;
            }
            if s.finished {
                return Ahead::End;
            }
            s = self.grew.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Copies stored bytes from `offset` into `buf`; returns how many (0 at the stored end).
    ///
    /// # Errors
    /// When the temporary file cannot be read.
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let (file, file_start, end) = {
            let s = self.lock();
            let end = s.len;
            if offset >= end {
                return Ok(0);
            }
            let in_memory = s.memory.len() as u64;
            if offset < in_memory {
                let from = offset as usize;
                let n = buf.len().min(s.memory.len() - from);
                buf[..n].copy_from_slice(&s.memory[from..from + n]);
                return Ok(n);
            }
            (s.file.clone(), in_memory, end)
        };
        let want = buf.len().min((end - offset) as usize);
        match file {
            Some(file) => read_at(&file, &mut buf[..want], offset - file_start),
            None => Ok(0),
        }
    }

    /// Writes everything stored to `out`. The spilled part goes through `std::io::copy`,
    /// which on Linux moves file bytes in the kernel (`copy_file_range`, `sendfile`, `splice`).
    ///
    /// # Errors
    /// Read errors of the temporary file, and write errors of `out`.
    pub fn copy_to(&self, out: &File) -> io::Result<()> {
        let (file, file_len) = {
            let s = self.lock();
            (&*out).write_all(&s.memory)?;
            (s.file.clone(), s.len - s.memory.len() as u64)
        };
        if let Some(file) = file {
            let mut from = &*file;
            from.seek(SeekFrom::Start(0))?;
            let copied = io::copy(&mut from.take(file_len), &mut &*out)?;
            if copied < file_len {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the spooled copy is shorter than recorded",
                ));
            }
        }
        Ok(())
    }

    /// Whether the bytes spilled to a temporary file.
    pub fn spilled(&self) -> bool {
        self.lock().file.is_some()
    }
}

impl Default for Spool {
    fn default() -> Self {
        Spool::new()
    }
}

/// `e`, an error of `what` (create, write) on the temporary file, with TMPDIR named in it.
pub(crate) fn in_tmpdir(what: &str, e: &io::Error) -> io::Error {
    let dir = std::env::temp_dir();
    io::Error::new(
        e.kind(),
        format!(
            "cannot {what} a temporary file in {}: {e}",
            crate::escape::escape(&dir.to_string_lossy())
        ),
    )
}

/// An unlinked temporary file in TMPDIR, mode 0600 from its creation on.
///
/// On Linux, `O_TMPFILE` with mode 0600: `tempfile::tempfile()` opens it with std's default
/// 0666 (less the umask), and a chmod after it would leave a moment in which the copy is
/// readable by others. Where `O_TMPFILE` is not supported, `tempfile::tempfile()`, which falls
/// back to creating a 0600 file and unlinking it at once; the chmod then changes nothing.
pub(crate) fn private_tempfile() -> io::Result<File> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_TMPFILE | libc::O_CLOEXEC)
            .open(std::env::temp_dir());
        if let Ok(file) = opened {
            return Ok(file);
        }
    }
    let file = tempfile::tempfile()?;
    #[cfg(unix)]
    file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    Ok(file)
}

/// Reads from `file` at `offset` into `buf` without moving a cursor another reader shares
/// (`pread` on Unix); on Windows with `seek_read`, which moves the handle's cursor: the spools
/// and the held output write at positions of their own or append, never at the cursor.
///
/// # Errors
/// The read error.
pub(crate) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    #[cfg(unix)]
    return std::os::unix::fs::FileExt::read_at(file, buf, offset);
    #[cfg(windows)]
    return std::os::windows::fs::FileExt::seek_read(file, buf, offset);
}

/// Reads exactly `buf.len()` bytes of `file` at `offset` (as [`read_at`]).
///
/// # Errors
/// The read error; `UnexpectedEof` when the file ends first.
pub(crate) fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match read_at(file, buf, offset) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Writes all of `bytes` to `file` at `offset` (`pwrite` on Unix, `seek_write` on Windows).
///
/// # Errors
/// The write error.
pub(crate) fn write_all_at(file: &File, mut bytes: &[u8], mut offset: u64) -> io::Result<()> {
    while !bytes.is_empty() {
        #[cfg(unix)]
        let written = std::os::unix::fs::FileExt::write_at(file, bytes, offset);
        #[cfg(windows)]
        let written = std::os::windows::fs::FileExt::seek_write(file, bytes, offset);
        match written {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                bytes = &bytes[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_bytes_in_order_across_memory_and_file() {
        let spool = Spool::with_memory_limit(10);
        let data: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        for chunk in data.chunks(7) {
            spool.append(chunk).unwrap();
        }
        spool.finish();
        assert!(spool.spilled());
        assert_eq!(spool.len(), 1000);
        let mut out = tempfile::tempfile().unwrap();
        spool.copy_to(&out).unwrap();
        let mut got = Vec::new();
        out.seek(SeekFrom::Start(0)).unwrap();
        out.read_to_end(&mut got).unwrap();
        assert_eq!(got, data);
    }

    #[test]
    fn small_data_stays_in_memory() {
        let spool = Spool::new();
        spool.append(b"hello").unwrap();
        assert!(!spool.spilled());
        let mut buf = [0u8; 3];
        assert_eq!(spool.read_at(2, &mut buf).unwrap(), 3);
        assert_eq!(&buf, b"llo");
        assert_eq!(spool.read_at(5, &mut buf).unwrap(), 0);
    }

    #[test]
    fn followers_wait_for_data_end_or_cancel() {
        let spool = Arc::new(Spool::with_memory_limit(4));
        let cancelled = AtomicBool::new(false);
        let writer = {
            let spool = spool.clone();
            std::thread::spawn(move || {
                spool.append(b"abcdef").unwrap();
                spool.finish();
            })
        };
        let mut got = Vec::new();
        let mut offset = 0;
        loop {
            match spool.wait_beyond(offset, &cancelled) {
                Ahead::Data(_) => {
                    let mut buf = [0u8; 2];
                    let n = spool.read_at(offset, &mut buf).unwrap();
                    got.extend_from_slice(&buf[..n]);
                    offset += n as u64;
                }
                Ahead::End => break,
                Ahead::Cancelled | Ahead::Failed => unreachable!(),
            }
        }
        writer.join().unwrap();
        assert_eq!(got, b"abcdef");
        cancelled.store(true, Ordering::Release);
        assert_eq!(spool.wait_beyond(0, &cancelled), Ahead::Cancelled);
    }

    #[test]
    fn a_limit_stores_what_fits_and_refuses_the_rest() {
        let spool = Spool::with_limits(4, Some(10));
        spool.append(b"abcdef").unwrap();
        let e = spool.append(b"ghijkl").unwrap_err();
        assert!(is_limit(&e), "{e}");
        assert!(!is_limit(&io::Error::from_raw_os_error(libc::EFBIG)));
        assert_eq!(spool.len(), 10);
        let mut buf = [0u8; 10];
        assert_eq!(spool.read_at(6, &mut buf).unwrap(), 4);
        assert_eq!(&buf[..4], b"ghij");
    }

    #[test]
    fn followers_see_a_failure_at_its_offset_only() {
        let spool = Spool::new();
        let cancelled = AtomicBool::new(false);
        spool.append(b"abc").unwrap();
        spool.fail("disk full".into());
        assert_eq!(spool.wait_beyond(0, &cancelled), Ahead::Data(3));
        assert_eq!(spool.wait_beyond(3, &cancelled), Ahead::Failed);
        assert_eq!(spool.failure().as_deref(), Some("disk full"));
    }
}
