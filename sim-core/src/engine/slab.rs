//! A slab of values with a free list and generational keys, so memory tracks the
//! work in flight (not the work done) and a key kept after its value left can
//! never reach the value that reused the slot.

use std::cmp::Ordering;
use std::marker::PhantomData;

/// A handle to a slot of a `Slab<T>`: its index and the generation of the value
/// it names. Typed, so a task's key cannot index the request slab. Ordered by
/// (index, generation) so it can sit in ordered sets and heaps.
pub(super) struct Key<T> {
    index: u32,
    generation: u32,
    kind: PhantomData<fn() -> T>,
}

impl<T> Key<T> {
    fn new(index: u32, generation: u32) -> Self {
        Key {
            index,
            generation,
            kind: PhantomData,
        }
    }

    /// The slot index (stable while the value lives; for display and tests).
    pub(super) fn index(self) -> u32 {
        self.index
    }
}

// Written out rather than derived: a derive would demand `T: Clone` and so on.
impl<T> Clone for Key<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Key<T> {}
impl<T> PartialEq for Key<T> {
    fn eq(&self, o: &Self) -> bool {
        (self.index, self.generation) == (o.index, o.generation)
    }
}
impl<T> Eq for Key<T> {}
impl<T> PartialOrd for Key<T> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<T> Ord for Key<T> {
    fn cmp(&self, o: &Self) -> Ordering {
        (self.index, self.generation).cmp(&(o.index, o.generation))
    }
}
impl<T> std::fmt::Debug for Key<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{}g{}", self.index, self.generation)
    }
}

/// Values addressed by [`Key`]. Each slot's generation is odd while it holds
/// a live value and even while it is free, so a key (always made from an odd
/// generation) matches only the value it was made for. Generations sit apart
/// from the values, so the values stay as dense as a plain vector.
#[derive(Clone, Debug)]
pub(super) struct Slab<T> {
    values: Vec<T>,
    generations: Vec<u32>,
    free: Vec<u32>,
    live: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            values: Vec::new(),
            generations: Vec::new(),
            free: Vec::new(),
            live: 0,
        }
    }
}

impl<T> Slab<T> {
    /// Store a value; reuses the most recently freed slot first.
    pub(super) fn insert(&mut self, value: T) -> Key<T> {
        self.live += 1;
        if let Some(i) = self.free.pop() {
            let g = &mut self.generations[i as usize];
            debug_assert!(g.is_multiple_of(2), "a free slot holds a live value");
            *g = g.wrapping_add(1);
            self.values[i as usize] = value;
            Key::new(i, *g)
        } else {
            let index = u32::try_from(self.values.len())
                .unwrap_or_else(|_| unreachable_capacity(self.values.len()));
            self.values.push(value);
            self.generations.push(1);
            Key::new(index, 1)
        }
    }

    /// Free a value's slot. The key, and every copy of it, goes stale.
    pub(super) fn remove(&mut self, key: Key<T>) {
        debug_assert!(self.contains(key), "removing a stale key {key:?}");
        let g = &mut self.generations[key.index as usize];
        *g = g.wrapping_add(1);
        self.live -= 1;
        self.free.push(key.index);
    }

    /// Whether the key still names a live value.
    pub(super) fn contains(&self, key: Key<T>) -> bool {
        self.generations.get(key.index as usize) == Some(&key.generation)
    }

    /// Values alive now.
    pub(super) fn len(&self) -> usize {
        self.live
    }
}

/// Requests in flight are bounded far below `u32::MAX` by `scenario::bounds`
/// (queues, users and trace sizes); reaching it is a bug, not an input.
fn unreachable_capacity(n: usize) -> u32 {
    panic!("slab holds {n} values: beyond every scenario bound")
}

impl<T> std::ops::Index<Key<T>> for Slab<T> {
    type Output = T;
    fn index(&self, key: Key<T>) -> &T {
        debug_assert!(self.contains(key), "stale key {key:?}");
        &self.values[key.index as usize]
    }
}

impl<T> std::ops::IndexMut<Key<T>> for Slab<T> {
    fn index_mut(&mut self, key: Key<T>) -> &mut T {
        debug_assert!(self.contains(key), "stale key {key:?}");
        &mut self.values[key.index as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reused_slot_does_not_answer_to_the_old_key() {
        let mut s = Slab::default();
        let a = s.insert("a");
        s.remove(a);
        let b = s.insert("b");
        assert_eq!(a.index(), b.index(), "the slot is reused");
        assert!(!s.contains(a), "the old key is stale");
        assert!(s.contains(b));
        assert_eq!(s[b], "b");
        assert_eq!(s.len(), 1);
    }
}
