//! A queue of requests waiting for admission, by priority level: the front
//! is the first request of the most urgent level that has one. With one
//! level (first come, first served) it is a plain double-ended queue.

use std::collections::VecDeque;

/// Each class's level in pool `pool`: under the priority policy its
/// priority's rank among the classes' distinct priorities (0 the most
/// urgent), else 0 for all.
pub(super) fn priority_levels(s: &crate::Scenario, pool: &crate::scenario::Serving) -> Vec<u8> {
    let classes = &s.workload.classes;
    if pool.scheduling_policy != Some(crate::scenario::SchedulingPolicy::Priority) {
        return vec![0; classes.len()];
    }
    let priority = |k: &crate::scenario::RequestClass| k.priority.unwrap_or(0);
    let mut distinct: Vec<u32> = classes.iter().map(priority).collect();
    distinct.sort_unstable();
    distinct.dedup();
    classes
        .iter()
        // At most 64 classes, so at most 64 levels.
        .map(|k| distinct.partition_point(|&p| p < priority(k)) as u8)
        .collect()
}

#[derive(Clone, Debug)]
pub(super) struct Waiting<T> {
    /// One queue per level, the most urgent first.
    levels: Vec<VecDeque<T>>,
    len: usize,
}

impl<T> Waiting<T> {
    /// An empty queue of `levels` levels (at least one).
    pub(super) fn new(levels: usize) -> Self {
        Waiting {
            levels: (0..levels.max(1)).map(|_| VecDeque::new()).collect(),
            len: 0,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Behind every request of its level.
    pub(super) fn push_back(&mut self, level: u8, id: T) {
        self.levels[usize::from(level)].push_back(id);
        self.len += 1;
        self.check();
    }

    /// Ahead of every request of its level (a preempted sequence).
    pub(super) fn push_front(&mut self, level: u8, id: T) {
        self.levels[usize::from(level)].push_front(id);
        self.len += 1;
        self.check();
    }

    /// The next request to admit.
    pub(super) fn front(&self) -> Option<&T> {
        if self.len == 0 {
            return None;
        }
        self.levels.iter().find_map(|q| q.front())
    }

    pub(super) fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let id = self.levels.iter_mut().find_map(|q| q.pop_front());
        debug_assert!(id.is_some(), "the count held a request no level holds");
        self.len -= usize::from(id.is_some());
        self.check();
        id
    }

    /// The count is the levels' own (at most 64 levels: cheap).
    fn check(&self) {
        debug_assert_eq!(
            self.len,
            self.levels.iter().map(VecDeque::len).sum::<usize>(),
            "the waiting count disagrees with its levels"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_urgent_level_goes_first_and_each_level_in_order() {
        let ids: Vec<u32> = (10..15).collect();
        let mut q = Waiting::new(3);
        q.push_back(2, ids[0]);
        q.push_back(0, ids[1]);
        q.push_back(2, ids[2]);
        q.push_back(0, ids[3]);
        q.push_front(2, ids[4]);
        assert_eq!(q.len(), 5);
        let order: Vec<u32> = std::iter::from_fn(|| q.pop_front()).collect();
        assert_eq!(order, vec![ids[1], ids[3], ids[4], ids[0], ids[2]]);
        assert!(q.is_empty() && q.front().is_none());
    }
}
