//! The discrete-event queue: a binary min-heap of `(time, sequence)` keyed events.
//!
//! Each simulated client has at most one event pending, so the heap never holds more entries
//! than there are clients; its storage is kept between runs (see [`EventQueue::clear`]), so a
//! run allocates nothing per event. Events at the same time come out in the order they were
//! pushed, which keeps runs deterministic.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// One pending event: at `at` (ms, stored as the bits of a non-negative `f64`, whose order is
/// the order of the numbers), for client `client`, of model-specific kind `kind`.
#[derive(Clone, Copy, Debug)]
struct Entry<K> {
    at: u64,
    seq: u64,
    client: u32,
    kind: K,
}

impl<K> Entry<K> {
    fn key(&self) -> (u64, u64) {
        (self.at, self.seq)
    }
}

impl<K> PartialEq for Entry<K> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl<K> Eq for Entry<K> {}

impl<K> PartialOrd for Entry<K> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<K> Ord for Entry<K> {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest event first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

/// Pending events, earliest first.
#[derive(Debug)]
pub(crate) struct EventQueue<K> {
    heap: BinaryHeap<Entry<K>>,
    seq: u64,
}

impl<K: Copy> EventQueue<K> {
    /// An empty queue.
    pub(crate) fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }

    /// Empties the queue for a new run, keeping its storage.
    pub(crate) fn clear(&mut self) {
        self.heap.clear();
        self.seq = 0;
    }

    /// Schedules `kind` for `client` at `at_ms` (finite, `>= 0`).
    pub(crate) fn push(&mut self, at_ms: f64, client: u32, kind: K) {
        debug_assert!(at_ms.is_finite() && at_ms >= 0.0, "event time {at_ms}");
        // `+ 0.0` turns a -0.0 into +0.0, whose bits sort with the other non-negative numbers.
        let at = (at_ms + 0.0).to_bits();
        self.heap.push(Entry {
            at,
            seq: self.seq,
            client,
            kind,
        });
        self.seq += 1;
    }

    /// Removes and returns the earliest event: `(time ms, client, kind)`.
    pub(crate) fn pop(&mut self) -> Option<(f64, u32, K)> {
        self.heap
            .pop()
            .map(|e| (f64::from_bits(e.at), e.client, e.kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order_then_push_order() {
        let mut q = EventQueue::new();
        q.push(5.0, 0, 'a');
        q.push(1.5, 1, 'b');
        q.push(5.0, 2, 'c');
        q.push(0.0, 3, 'd');
        q.push(1e9, 4, 'e');
        let order: Vec<char> = std::iter::from_fn(|| q.pop()).map(|(_, _, k)| k).collect();
        assert_eq!(order, vec!['d', 'b', 'a', 'c', 'e']);
        q.push(2.0, 7, 'x');
        q.clear();
        assert!(q.pop().is_none());
    }
}
