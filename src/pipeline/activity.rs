//! When an attempt last wrote anything, for `--idle-timeout`: the output pumps note the time of
//! every read, the supervisor asks when the attempt went quiet.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The time of an attempt's last output, shared by its pumps and the supervisor.
#[derive(Debug)]
pub struct Activity {
    /// When the attempt's I/O started: the origin of `last`.
    start: Instant,
    /// Milliseconds from `start` to the last read of output (0: none yet).
    last: AtomicU64,
}

impl Activity {
    /// No output yet: quiet since now.
    pub fn new() -> Activity {
        Activity {
            start: Instant::now(),
            last: AtomicU64::new(0),
        }
    }

    /// Output arrived now. One atomic store per read: pumps read up to 1 MiB at a time.
    pub fn touch(&self) {
        let ms = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last.fetch_max(ms, Ordering::Relaxed);
    }

    /// When the last output arrived (to the millisecond, never later than it did), or when the
    /// attempt's I/O started if none has.
    pub fn quiet_since(&self) -> Instant {
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
}
