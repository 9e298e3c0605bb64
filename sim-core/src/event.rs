//! The event queue: a binary heap with a total order on (time, insertion sequence).
//!
//! Events at the same instant come out first-in-first-out, so a run never depends
//! on the heap's internal layout.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    time_ns: u64,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.time_ns, self.seq) == (other.time_ns, other.seq)
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the earliest first.
        (other.time_ns, other.seq).cmp(&(self.time_ns, self.seq))
    }
}

/// A priority queue of events keyed by (time, insertion sequence).
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            next_seq: 0,
        }
    }
}

impl<E> EventQueue<E> {
    /// Schedule `event` at `time_ns`.
    pub fn push(&mut self, time_ns: u64, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry {
            time_ns,
            seq,
            event,
        });
    }

    /// The time of the earliest event.
    pub fn peek_time(&self) -> Option<u64> {
        self.heap.peek().map(|e| e.time_ns)
    }

    /// The earliest event, without removing it.
    pub fn peek(&self) -> Option<(u64, &E)> {
        self.heap.peek().map(|e| (e.time_ns, &e.event))
    }

    /// Remove and return the earliest event (FIFO among equal times).
    pub fn pop(&mut self) -> Option<(u64, E)> {
        self.heap.pop().map(|e| (e.time_ns, e.event))
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when no event is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_come_out_first_in_first_out() {
        let mut q = EventQueue::default();
        // Interleave three instants; within each, insertion order must survive.
        for i in 0..1000u32 {
            q.push(u64::from(i % 3) * 10, i);
        }
        let mut last_time = 0;
        let mut last_at_time: Option<u32> = None;
        while let Some((t, i)) = q.pop() {
            assert!(t >= last_time);
            if t != last_time {
                last_at_time = None;
            }
            if let Some(prev) = last_at_time {
                assert!(
                    i > prev,
                    "event {i} came out after {prev} at the same time {t}"
                );
            }
            last_time = t;
            last_at_time = Some(i);
        }
    }

    #[test]
    fn earlier_times_first_regardless_of_insertion() {
        let mut q = EventQueue::default();
        for (t, e) in [(50u64, 'a'), (10, 'b'), (30, 'c'), (10, 'd'), (0, 'e')] {
            q.push(t, e);
        }
        let order: String = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, "ebdca");
    }
}
