//! A slab of values with a free list and generational keys, so memory tracks the
//! work in flight (not the work done) and a key kept after its value left can
//! never reach the value that reused the slot.

use std::cmp::Ordering;
use std::marker::PhantomData;
use std::num::NonZeroU32;

/// A handle to a slot of a `Slab<T>`: its index and the generation of the value
/// it names. Typed, so a task's key cannot index the request slab. Ordered by
/// (index, generation) so it can sit in ordered sets and heaps. A live
/// value's generation is odd, so never 0: `Option<Key<T>>` takes no more
/// room than a key.
pub(super) struct Key<T> {
    index: u32,
    generation: NonZeroU32,
    kind: PhantomData<fn() -> T>,
}

impl<T> Key<T> {
    /// A key for the live value in slot `index`, whose generation is odd.
    fn new(index: u32, generation: u32) -> Self {
        debug_assert!(!generation.is_multiple_of(2), "a key to a free slot");
        Key {
            index,
            generation: NonZeroU32::new(generation).unwrap_or(NonZeroU32::MIN),
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

/// Slots a chunk of values holds (a power of two).
const CHUNK: usize = 1 << CHUNK_BITS;
const CHUNK_BITS: u32 = 12;

/// Values addressed by [`Key`]. Each slot's generation is odd while it holds
/// a live value and even while it is free, so a key (always made from an odd
/// generation) matches only the value it was made for. Generations sit apart
/// from the values, so the values stay as dense as a plain vector. The
/// values are kept in chunks of [`CHUNK`] that never move: a slab of a
/// hundred thousand requests in flight grows a chunk at a time instead of
/// copying itself whole when it doubles (tens of megabytes in one go, a
/// long task on the page).
#[derive(Clone, Debug)]
pub(super) struct Slab<T> {
    chunks: Vec<Vec<T>>,
    generations: Vec<u32>,
    free: Vec<u32>,
    live: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            chunks: Vec::new(),
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
            let g = *g;
            *self.slot_mut(i) = value;
            Key::new(i, g)
        } else {
            let n = self.generations.len();
            let index = u32::try_from(n).unwrap_or_else(|_| unreachable_capacity(n));
            if n.is_multiple_of(CHUNK) {
                self.chunks.push(Vec::with_capacity(CHUNK));
            }
            // The last chunk has room: a new one was just added when it had none.
            if let Some(last) = self.chunks.last_mut() {
                last.push(value);
            }
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
        self.generations.get(key.index as usize) == Some(&key.generation.get())
    }

    fn slot(&self, i: u32) -> &T {
        &self.chunks[(i >> CHUNK_BITS) as usize][i as usize & (CHUNK - 1)]
    }

    fn slot_mut(&mut self, i: u32) -> &mut T {
        &mut self.chunks[(i >> CHUNK_BITS) as usize][i as usize & (CHUNK - 1)]
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
        self.slot(key.index)
    }
}

impl<T> std::ops::IndexMut<Key<T>> for Slab<T> {
    fn index_mut(&mut self, key: Key<T>) -> &mut T {
        debug_assert!(self.contains(key), "stale key {key:?}");
        self.slot_mut(key.index)
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

    #[test]
    fn a_missing_key_takes_no_room() {
        assert_eq!(
            std::mem::size_of::<Option<Key<u8>>>(),
            std::mem::size_of::<Key<u8>>()
        );
    }

    #[test]
    fn values_past_a_chunk_stay_where_they_were_put() {
        let mut s = Slab::default();
        let first = s.insert(0_usize);
        let at = std::ptr::from_ref(&s[first]);
        let keys: Vec<_> = (1..2 * CHUNK + 5).map(|v| s.insert(v)).collect();
        assert_eq!(
            std::ptr::from_ref(&s[first]),
            at,
            "a value moved as the slab grew"
        );
        assert!(keys.iter().enumerate().all(|(i, &k)| s[k] == i + 1));
        // Freed slots in any chunk are reused, newest first.
        let (a, b) = (keys[3], keys[CHUNK + 7]);
        s.remove(a);
        s.remove(b);
        assert_eq!(s.insert(99).index(), b.index());
        assert_eq!(s.insert(98).index(), a.index());
        assert_eq!(s.len(), 2 * CHUNK + 5);
    }
}
