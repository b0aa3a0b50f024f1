//! When an attempt last wrote anything, for `--idle-timeout`: the output pumps note the time of
//! every read and of the end of every write that passes output on, the supervisor asks when the
//! attempt went quiet.
//!
//! Time retry itself spends passing output on (a write blocked by a slow reader downstream) is
//! not the attempt's silence: the attempt is then blocked writing into retry's pipe, because
//! retry is not reading it. So while any pump is writing, the attempt is not quiet, and its
//! silence counts from when the last write ended, if that came after its last output.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The time of an attempt's last output, shared by its pumps and the supervisor.
#[derive(Debug)]
pub struct Activity {
    /// When the attempt's I/O started: the origin of `last`.
    start: Instant,
    /// Milliseconds from `start` to the last read of output or end of a write (0: none yet).
    last: AtomicU64,
    /// Pumps now writing output on.
    writing: AtomicU32,
}

/// A pump writing output on ([`Activity::writing`]); when dropped, the write has ended.
#[derive(Debug)]
pub struct Writing<'a>(&'a Activity);

impl Drop for Writing<'_> {
    fn drop(&mut self) {
        self.0.touch();
        // Release: a supervisor that sees the count drop sees the time just stored.
        self.0.writing.fetch_sub(1, Ordering::Release);
    }
}

impl Activity {
    /// No output yet: quiet since now.
    pub fn new() -> Activity {
        Activity {
            start: Instant::now(),
            last: AtomicU64::new(0),
            writing: AtomicU32::new(0),
        }
    }

    /// Output arrived now. One atomic store per read: pumps read up to 1 MiB at a time.
    pub fn touch(&self) {
        let ms = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last.fetch_max(ms, Ordering::Relaxed);
    }

    /// A pump starts writing output on; it is done when the guard is dropped.
    pub fn writing(&self) -> Writing<'_> {
        self.writing.fetch_add(1, Ordering::Relaxed);
        Writing(self)
    }

    /// When the attempt went quiet: now while a pump is writing its output on, else when the
    /// last output arrived or the last write of it ended (to the millisecond, never later than
    /// it did), or when the attempt's I/O started if neither has happened.
    pub fn quiet_since(&self) -> Instant {
        if self.writing.load(Ordering::Acquire) > 0 {
            return Instant::now();
        }
        let ms = self.last.load(Ordering::Relaxed);
        self.start
            .checked_add(Duration::from_millis(ms))
            .unwrap_or(self.start)
    }
}

impl Default for Activity {
    fn default() -> Activity {
        Activity::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_since_the_start_then_since_the_last_output() {
        let a = Activity::new();
        let start = a.quiet_since();
        assert!(start <= Instant::now());
        std::thread::sleep(Duration::from_millis(30));
        a.touch();
        let later = a.quiet_since();
        assert!(
            later >= start + Duration::from_millis(29),
            "{later:?} {start:?}"
        );
        assert!(later <= Instant::now());
    }

    #[test]
    fn a_write_in_progress_is_not_quiet_and_its_end_restarts_the_silence() {
        let a = Activity::new();
        a.touch();
        let read = a.quiet_since();
        let writing = a.writing();
        std::thread::sleep(Duration::from_millis(30));
        let during = a.quiet_since();
        assert!(
            during >= read + Duration::from_millis(29),
            "busy, not quiet"
        );
        let second = a.writing();
        drop(writing);
        assert!(a.quiet_since() >= during, "another pump still writes");
        drop(second);
        let after = a.quiet_since();
        assert!(
            after >= read + Duration::from_millis(29),
            "{after:?} {read:?}"
        );
        assert!(after <= Instant::now());
    }
}
