//! The output `--chronic` holds back: every attempt's stdout and stderr, its hooks' output and
//! retry's own lines, as one ordered record of (stream, bytes) chunks, to write out in order
//! if the run does not succeed, or to drop if it does (as moreutils' `chronic` does for one
//! command: <https://joeyh.name/code/moreutils/>).
//!
//! Bounded: it holds the last `max` bytes (`--max-output`) and drops the oldest past that,
//! counting them. The bytes live in a ring of `max` bytes: the first [`MEMORY_LIMIT`] in
//! memory, the rest in an unlinked temporary file (mode 0600 in TMPDIR, as [`crate::spool`]
//! makes it), created only when the memory is full. If the file cannot be created or written
//! (TMPDIR missing or full), what it held is dropped and the ring goes on in memory alone, with
//! the reason kept for the write-out ([`Held::trouble`]). Chunks of the same stream that arrive
//! one after the other are one chunk; at most one chunk per [`CHUNK_COST`] bytes of `max` is
//! kept, so many tiny interleaved writes cannot grow the list past the bound either.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::spool::{in_tmpdir, private_tempfile, read_exact_at, write_all_at};

/// Bytes of the ring kept in memory: 8 MiB, as the spool of `--stdout-on-success`.
pub const MEMORY_LIMIT: u64 = crate::spool::MEMORY_LIMIT as u64;
/// Bytes of `max` that each kept chunk stands for at least: at most `max / CHUNK_COST` chunks
/// (and never fewer than `MIN_CHUNKS`) are listed; past that the oldest go, as bytes do.
pub const CHUNK_COST: u64 = 64;
/// The fewest chunks kept whatever `max` is.
const MIN_CHUNKS: u64 = 1024;
/// Read size of the write-out.
const WRITE_OUT_CHUNK: usize = 1 << 20;

/// Which of retry's streams a chunk goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// The held output of a run; see the module doc. Shared by the output pumps and retry's own
/// writer: every method takes `&self`.
#[derive(Debug)]
pub struct Held {
    state: Mutex<State>,
    /// No more bytes are taken ([`Held::seal`]); read without the lock, which the write-out
    /// may hold while it reads.
    sealed: AtomicBool,
}

#[derive(Debug)]
struct State {
    /// The ring's size in bytes (`u64::MAX`: unlimited, never wraps).
    ring: u64,
    /// Ring bytes `0..memory.len()` (at most [`MEMORY_LIMIT`]).
    memory: Vec<u8>,
    /// Ring bytes from [`MEMORY_LIMIT`] on, once there are any.
    file: Option<File>,
    /// The first byte held, as an offset into everything ever pushed.
    start: u64,
    /// One past the last byte held, likewise.
    end: u64,
    /// The chunks from `start` to `end`, oldest first.
    chunks: VecDeque<(Stream, u64)>,
    /// The most chunks listed.
    max_chunks: u64,
    /// Bytes dropped, oldest first, to stay within the bounds (or lost with the file).
    dropped: u64,
    /// Why the file part was given up, if it was.
    trouble: Option<String>,
}

impl Held {
    /// An empty record holding at most `max` bytes (`None`: unlimited).
    pub fn new(max: Option<u64>) -> Held {
        let ring = max.unwrap_or(u64::MAX);
        Held {
            state: Mutex::new(State {
                ring,
                memory: Vec::new(),
                file: None,
                start: 0,
                end: 0,
                chunks: VecDeque::new(),
                max_chunks: (ring / CHUNK_COST).max(MIN_CHUNKS),
                dropped: 0,
                trouble: None,
            }),
            sealed: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends `bytes` for `stream`, dropping the oldest bytes past the bounds; `false` (and
    /// nothing taken) once the record is sealed.
    pub fn push(&self, stream: Stream, bytes: &[u8]) -> bool {
        if self.sealed() {
            return false;
        }
        let mut s = self.lock();
        // Sealed while this waited for the lock: the write-out has its chunks already.
        if self.sealed() {
            return false;
        }
        s.push(stream, bytes);
        true
    }

    /// Takes no more bytes: from now on [`Held::push`] returns `false`. Call before the
    /// write-out, so that what is said after it is written, not held.
    pub fn seal(&self) {
        let _s = self.lock();
        self.sealed.store(true, Ordering::Release);
    }

    /// Whether the record is sealed.
    pub fn sealed(&self) -> bool {
        self.sealed.load(Ordering::Acquire)
    }

    /// Bytes held now.
    pub fn len(&self) -> u64 {
        let s = self.lock();
        s.end - s.start
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes dropped so far to stay within the bounds.
    pub fn dropped(&self) -> u64 {
        self.lock().dropped
    }

    /// Why part of the output could not be held on disk, if so (the file could not be created
    /// or written): from then on only the last [`MEMORY_LIMIT`] bytes were held.
    pub fn trouble(&self) -> Option<String> {
        self.lock().trouble.clone()
    }

    /// Drops everything held (the run succeeded): the memory is freed and the file closed.
    pub fn clear(&self) {
        let mut s = self.lock();
        s.memory = Vec::new();
        s.file = None;
        s.start = s.end;
        s.chunks.clear();
    }

    /// Writes everything held, in order: stdout chunks to `stdout`, stderr chunks to
    /// `stderr`. A stream that fails is written no more (the other goes on); returns each
    /// stream's first error. Blocks on readers that do not read: run it in a thread the
    /// supervisor can leave behind.
    pub fn write_out(&self, stdout: &File, stderr: &File) -> (io::Result<()>, io::Result<()>) {
        let (mut out, mut err) = (Ok(()), Ok(()));
        let (chunks, mut at) = {
            let s = self.lock();
            (s.chunks.iter().copied().collect::<Vec<_>>(), s.start)
        };
        let mut buf = vec![0u8; WRITE_OUT_CHUNK];
        for (stream, len) in chunks {
            let (to, result) = match stream {
                Stream::Stdout => (stdout, &mut out),
                Stream::Stderr => (stderr, &mut err),
            };
            let mut left = len;
            while left > 0 && result.is_ok() {
                let n = usize::try_from(left).map_or(buf.len(), |l| l.min(buf.len()));
                // The lock only while reading: the write may block on a reader for good.
                let read = self.lock().read(at, &mut buf[..n]);
                *result = read.and_then(|()| (&*to).write_all(&buf[..n]));
                at += n as u64;
                left -= n as u64;
            }
            at += left;
        }
        (out, err)
    }
}

impl State {
    fn push(&mut self, stream: Stream, mut bytes: &[u8]) {
        // More than the ring holds: only its last `ring` bytes can stay.
        if bytes.len() as u64 > self.ring {
            let skip = bytes.len() - usize::try_from(self.ring).unwrap_or(bytes.len());
            self.drop_oldest(self.end - self.start);
            self.dropped += skip as u64;
            self.start += skip as u64;
            self.end += skip as u64;
            bytes = &bytes[skip..];
        }
        if bytes.is_empty() {
            return;
        }
        let len = bytes.len() as u64;
        // Room first: the bytes overwrite the oldest ones in the ring.
        let over = (self.end - self.start + len).saturating_sub(self.ring);
        self.drop_oldest(over);
        if let Err(e) = self.store(self.end, bytes) {
            // Held in memory alone from now on, where storing cannot fail.
            self.give_up_the_file(&e);
            return self.push(stream, bytes);
        }
        self.end += len;
        match self.chunks.back_mut() {
            Some((last, n)) if *last == stream => *n += len,
            _ => self.chunks.push_back((stream, len)),
        }
        while self.chunks.len() as u64 > self.max_chunks {
            let oldest = self.chunks.front().map_or(0, |c| c.1);
            self.drop_oldest(oldest);
        }
    }

    /// Drops the oldest `n` bytes held.
    fn drop_oldest(&mut self, mut n: u64) {
        n = n.min(self.end - self.start);
        self.start += n;
        self.dropped += n;
        while n > 0 {
            let Some(front) = self.chunks.front_mut() else {
                break;
            };
            if front.1 > n {
                front.1 -= n;
                break;
            }
            n -= front.1;
            self.chunks.pop_front();
        }
    }

    /// Stores `bytes` at offset `at` of everything pushed, wrapping around the ring.
    fn store(&mut self, mut at: u64, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let pos = at % self.ring;
            let room = usize::try_from(self.ring - pos).unwrap_or(usize::MAX);
            let n = bytes.len().min(room);
            self.store_at(pos, &bytes[..n])?;
            bytes = &bytes[n..];
            at += n as u64;
        }
        Ok(())
    }

    /// Stores `bytes` at ring position `pos` (they do not pass the ring's end).
    fn store_at(&mut self, pos: u64, bytes: &[u8]) -> io::Result<()> {
        let in_memory = MEMORY_LIMIT.min(self.ring);
        let mut bytes = bytes;
        let mut pos = pos;
        if pos < in_memory {
            let n = bytes.len().min((in_memory - pos) as usize);
            let (from, to) = (pos as usize, pos as usize + n);
            if self.memory.len() < to {
                self.memory.resize(to, 0);
            }
            self.memory[from..to].copy_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            pos += n as u64;
        }
        if bytes.is_empty() {
            return Ok(());
        }
        if self.file.is_none() {
            self.file = Some(private_tempfile().map_err(|e| in_tmpdir("create", &e))?);
        }
        if let Some(file) = &self.file {
            write_all_at(file, bytes, pos - in_memory).map_err(|e| in_tmpdir("write", &e))?;
        }
        Ok(())
    }

    /// The file part failed with `e`: the ring goes on in memory alone (at most
    /// [`MEMORY_LIMIT`] bytes), keeping the most recent bytes held that fit in it (all of them
    /// when the file was never written, as when it could not be created); only if those
    /// cannot be read back is everything held dropped.
    fn give_up_the_file(&mut self, e: &io::Error) {
        self.trouble.get_or_insert_with(|| e.to_string());
        let ring = MEMORY_LIMIT.min(self.ring);
        let keep = (self.end - self.start).min(ring);
        let from = self.end - keep;
        let mut kept = vec![0u8; usize::try_from(keep).unwrap_or(0)];
        let readable = self.read(from, &mut kept).is_ok();
        self.drop_oldest(if readable {
            from - self.start
        } else {
            keep + from - self.start
        });
        self.file = None;
        self.memory.clear();
        self.ring = ring;
        self.max_chunks = (self.ring / CHUNK_COST).max(MIN_CHUNKS);
        if readable {
            // Within the memory ring now: storing cannot fail.
            let _ = self.store(from, &kept);
        }
        while self.chunks.len() as u64 > self.max_chunks {
            let oldest = self.chunks.front().map_or(0, |c| c.1);
            self.drop_oldest(oldest);
        }
    }

    /// Reads the held bytes from offset `at` (of everything pushed) into `buf`.
    fn read(&self, mut at: u64, mut buf: &mut [u8]) -> io::Result<()> {
        let in_memory = MEMORY_LIMIT.min(self.ring);
        while !buf.is_empty() {
            let pos = at % self.ring;
            let room = usize::try_from(self.ring - pos).unwrap_or(usize::MAX);
            let n = buf.len().min(room);
            let (here, rest) = buf.split_at_mut(n);
            let mut pos = pos;
            let mut here = here;
            if pos < in_memory {
                let m = here.len().min((in_memory - pos) as usize);
                let from = pos as usize;
                let have = self.memory.get(from..from + m).ok_or_else(|| {
                    io::Error::new(io::ErrorKind::UnexpectedEof, "held bytes missing")
                })?;
                here[..m].copy_from_slice(have);
                here = &mut here[m..];
                pos += m as u64;
            }
            if !here.is_empty() {
                let file = self.file.as_ref().ok_or_else(|| {
                    io::Error::new(io::ErrorKind::UnexpectedEof, "held bytes missing")
                })?;
                read_exact_at(file, here, pos - in_memory)?;
            }
            buf = rest;
            at += n as u64;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek};

    /// What `held` writes out: (stdout, stderr).
    fn written(held: &Held) -> (Vec<u8>, Vec<u8>) {
        let (mut out, mut err) = (tempfile::tempfile().unwrap(), tempfile::tempfile().unwrap());
        let (a, b) = held.write_out(&out, &err);
        a.unwrap();
        b.unwrap();
        let read = |f: &mut File| {
            let mut v = Vec::new();
            f.rewind().unwrap();
            f.read_to_end(&mut v).unwrap();
            v
        };
        (read(&mut out), read(&mut err))
    }

    #[test]
    fn keeps_chunks_in_order_per_stream() {
        let held = Held::new(Some(1 << 20));
        held.push(Stream::Stdout, b"a1 ");
        held.push(Stream::Stderr, b"e1 ");
        held.push(Stream::Stdout, b"a2 ");
        held.push(Stream::Stdout, b"a3");
        assert_eq!(held.lock().chunks.len(), 3, "a2 and a3 are one chunk");
        assert_eq!(written(&held), (b"a1 a2 a3".to_vec(), b"e1 ".to_vec()));
        assert_eq!(held.dropped(), 0);
    }

    #[test]
    fn drops_the_oldest_past_the_bound_and_counts_them() {
        let held = Held::new(Some(10));
        held.push(Stream::Stdout, b"0123456");
        held.push(Stream::Stderr, b"abcdef");
        assert_eq!(held.len(), 10);
        assert_eq!(held.dropped(), 3);
        assert_eq!(written(&held), (b"3456".to_vec(), b"abcdef".to_vec()));
        // One push larger than the ring keeps its tail.
        held.push(Stream::Stdout, b"ABCDEFGHIJKLMNOP");
        assert_eq!(held.dropped(), 3 + 10 + 6);
        assert_eq!(written(&held), (b"GHIJKLMNOP".to_vec(), Vec::new()));
    }

    #[test]
    fn spills_past_memory_and_wraps_in_the_file() {
        let held = Held::new(Some(MEMORY_LIMIT + 1000));
        let data: Vec<u8> = (0..=255u8)
            .cycle()
            .take(MEMORY_LIMIT as usize + 5000)
            .collect();
        for piece in data.chunks(777) {
            held.push(Stream::Stdout, piece);
        }
        held.push(Stream::Stderr, b"end");
        assert!(held.lock().file.is_some());
        assert_eq!(held.len(), MEMORY_LIMIT + 1000);
        let (out, err) = written(&held);
        assert_eq!(err, b"end");
        assert_eq!(out, data[data.len() - (MEMORY_LIMIT as usize + 997)..]);
    }

    #[test]
    fn sealed_takes_nothing_and_clear_drops_all() {
        let held = Held::new(None);
        assert!(held.push(Stream::Stdout, b"x"));
        held.clear();
        assert!(held.is_empty());
        held.seal();
        assert!(!held.push(Stream::Stdout, b"y"));
        assert_eq!(written(&held), (Vec::new(), Vec::new()));
    }

    #[test]
    fn tiny_interleaved_chunks_are_bounded_too() {
        let held = Held::new(Some(64 * 2048));
        for _ in 0..5000 {
            held.push(Stream::Stdout, b"o");
            held.push(Stream::Stderr, b"e");
        }
        assert_eq!(held.lock().chunks.len(), 2048);
        assert_eq!(held.dropped(), 10_000 - 2048);
        let (out, err) = written(&held);
        assert_eq!((out.len(), err.len()), (1024, 1024));
    }

    #[test]
    fn a_file_that_fails_leaves_the_memory_ring_with_the_most_recent_bytes() {
        let held = Held::new(Some(MEMORY_LIMIT * 2));
        {
            let mut s = held.lock();
            s.push(Stream::Stdout, &vec![b'a'; MEMORY_LIMIT as usize - 10]);
            s.give_up_the_file(&io::Error::other("disk full"));
            s.push(Stream::Stderr, b"after");
            s.push(Stream::Stdout, b"0123456789");
        }
        assert_eq!(held.trouble().as_deref(), Some("disk full"));
        // 8 MiB - 10 + 5 + 10 came; the ring holds 8 MiB: the oldest 5 bytes are dropped.
        assert_eq!(held.dropped(), 5);
        let mut out = vec![b'a'; MEMORY_LIMIT as usize - 15];
        out.extend_from_slice(b"0123456789");
        assert_eq!(written(&held), (out, b"after".to_vec()));
    }

    #[test]
    fn a_file_that_fails_after_wrapping_keeps_what_it_can_read_back() {
        // The file worked, the ring wrapped in it, then a write failed (a full disk): the
        // most recent 8 MiB, read back from memory and file, stay in order.
        let held = Held::new(Some(MEMORY_LIMIT + 1000));
        let data: Vec<u8> = (0..=250u8)
            .cycle()
            .take(MEMORY_LIMIT as usize + 3000)
            .collect();
        for piece in data.chunks(4099) {
            held.push(Stream::Stdout, piece);
        }
        held.lock().give_up_the_file(&io::Error::other("disk full"));
        held.push(Stream::Stdout, b"tail");
        let mut all = data.clone();
        all.extend_from_slice(b"tail");
        let (out, err) = written(&held);
        assert!(err.is_empty());
        assert_eq!(out.len(), MEMORY_LIMIT as usize);
        assert!(
            out == all[all.len() - MEMORY_LIMIT as usize..],
            "not the most recent bytes"
        );
        assert_eq!(held.dropped(), all.len() as u64 - MEMORY_LIMIT);
    }
}
