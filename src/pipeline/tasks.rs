//! I/O threads the supervisor can wait for without giving up its signals: each thread counts
//! itself out when it ends and wakes the supervisor's signal channel, so a stop signal is seen
//! even while a thread is blocked writing to a reader that does not read.

use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::Instant;

/// A group of I/O threads; cheap to clone (all clones count the same threads).
#[derive(Clone, Debug, Default)]
pub struct Tasks(Arc<Count>);

#[derive(Debug, Default)]
struct Count {
    running: Mutex<usize>,
    ended: Condvar,
    /// The threads write to retry's own stdout and stderr and nowhere else that could block.
    to_outputs: bool,
}

/// Counts a thread out when dropped: at its end, and also if it panics.
struct Leaving(Tasks);

impl Drop for Leaving {
    fn drop(&mut self) {
        *self.0.lock() -= 1;
        self.0.0.ended.notify_all();
        wake_supervisor();
    }
}

impl Tasks {
    /// An empty group.
    pub fn new() -> Tasks {
        Tasks::default()
    }

    /// An empty group of threads that write to retry's own stdout and stderr (and block on
    /// nothing else that matters): after a stop signal, a full output ends the wait for them
    /// at once ([`Tasks::to_outputs`]).
    pub fn writing_to_outputs() -> Tasks {
        Tasks(Arc::new(Count {
            to_outputs: true,
            ..Count::default()
        }))
    }

    /// Whether the group was made by [`Tasks::writing_to_outputs`].
    pub fn to_outputs(&self) -> bool {
        self.0.to_outputs
    }

    fn lock(&self) -> MutexGuard<'_, usize> {
        self.0.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts thread `name` running `f`, counted in this group until it ends.
    ///
    /// # Errors
    /// When the thread cannot start.
    pub fn spawn<T, F>(&self, name: &str, f: F) -> io::Result<JoinHandle<T>>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        *self.lock() += 1;
        let leaving = Leaving(self.clone());
        // If the thread cannot start, the closure is dropped, and `leaving` counts it out.
        thread::Builder::new().name(name.into()).spawn(move || {
            let _leaving = leaving;
            f()
        })
    }

    /// Whether every thread of the group has ended.
    pub fn done(&self) -> bool {
        *self.lock() == 0
    }

    /// Waits until every thread has ended or `until` passes; returns whether they all ended.
    pub fn wait_until(&self, until: Instant) -> bool {
        let mut running = self.lock();
        while *running > 0 {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            running = self
                .0
                .ended
                .wait_timeout(running, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }

    /// Waits until every thread has ended.
    pub fn wait(&self) {
        let mut running = self.lock();
        while *running > 0 {
            running = self
                .0
                .ended
                .wait(running)
                .unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Wakes the supervisor, which waits for I/O threads on its event loop ([`crate::signals::wake`]).
fn wake_supervisor() {
    crate::signals::wake();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;
    use std::time::Duration;

    #[test]
    fn counts_threads_until_they_end() {
        let tasks = Tasks::new();
        assert!(tasks.done());
        let (tx, rx) = channel::<()>();
        let handle = tasks.spawn("test", move || rx.recv().is_ok()).unwrap();
        assert!(!tasks.done());
        let soon = Instant::now() + Duration::from_millis(20);
        assert!(!tasks.wait_until(soon), "a blocked thread is still running");
        tx.send(()).unwrap();
        tasks.wait();
        assert!(tasks.done());
        assert!(handle.join().unwrap());
    }
}
