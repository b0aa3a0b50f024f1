//! Independent jobs on several threads, results in job order.
//!
//! Threads take jobs from a shared counter and keep a workspace of their own (storage reused
//! from job to job); each result goes back to its job's place. A job must depend only on its
//! index (each draws from a random stream derived from it), so the results are the same for any
//! thread count.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `requested` threads, or one per core when 0.
pub(crate) fn thread_count(requested: usize) -> usize {
    if requested > 0 {
        requested
    } else {
        std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
    }
}

/// Runs `job(workspace, j)` for every `j` in `0..jobs` on up to `threads` threads (0: one per
/// core), each thread with a workspace made by `init`; returns the results in the order of `j`.
/// A panic in a job is resumed on the caller's thread.
pub(crate) fn map_with<W, R, I, F>(jobs: usize, threads: usize, init: I, job: F) -> Vec<R>
where
    R: Send,
    I: Fn() -> W + Sync,
    F: Fn(&mut W, usize) -> R + Sync,
{
    let threads = thread_count(threads).min(jobs.max(1));
    if threads <= 1 {
        let mut ws = init();
        return (0..jobs).map(|j| job(&mut ws, j)).collect();
    }
    let next = AtomicUsize::new(0);
    let done: Vec<Vec<(usize, R)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut ws = init();
                    let mut mine = Vec::new();
                    loop {
                        let j = next.fetch_add(1, Ordering::Relaxed);
                        if j >= jobs {
                            break mine;
                        }
                        mine.push((j, job(&mut ws, j)));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    let mut slots: Vec<Option<R>> = (0..jobs).map(|_| None).collect();
    for (j, r) in done.into_iter().flatten() {
        slots[j] = Some(r);
    }
    slots
        .into_iter()
        .map(|r| r.expect("every job ran once"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_job_order_on_any_thread_count() {
        for threads in [0, 1, 2, 7, 100] {
            let got = map_with(
                50,
                threads,
                || 0u32,
                |runs, j| {
                    *runs += 1;
                    j * j
                },
            );
            assert_eq!(got, (0..50).map(|j| j * j).collect::<Vec<_>>());
        }
        assert!(map_with(0, 2, || (), |(), j| j).is_empty());
    }
}
