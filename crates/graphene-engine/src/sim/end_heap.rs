//! End keys in an indexed 4-ary min-heap, each entry named by a slot number: the earliest is a
//! lookup, rekeying or removing a slot logarithmic.
//!
//! Two users. A machine keeps its running tasks' ends here, slot = the task's position in its
//! `running` list (which removes a task by swapping the last one into its place; the heap
//! follows that renumbering with [`EndHeap::swap_remove`]): a machine of the Alibaba hour runs
//! about a hundred tasks at once, and scanning all their keys at every end was about 30% of its
//! `fifo` replay. And the event queue keeps each machine's earliest end here, slot = machine
//! ([`super::events::EventQueue::set_end`]), [`Key::NONE`] for a machine that runs nothing.
//!
//! Keys other than [`Key::NONE`] are unique (their sequence numbers are), so the earliest is
//! the same whatever the heap's layout.

use super::events::Key;

/// Children per heap node: a machine's ends are popped from the top and sifted down, and a
/// wider node halves the levels that walk (about four levels for a hundred tasks).
const ARITY: usize = 4;

#[derive(Clone, Copy)]
struct Entry {
    key: Key,
    /// The slot.
    pos: u32,
}

#[derive(Default)]
pub(super) struct EndHeap {
    /// Every slot's key, in heap order (the earliest first), inline so that sifting compares
    /// without an indirection.
    heap: Vec<Entry>,
    /// Per slot: where its entry is in `heap`.
    at: Vec<u32>,
}

impl EndHeap {
    /// How many slots there are.
    pub fn len(&self) -> usize {
        self.at.len()
    }

    /// The earliest end: (slot, key).
    pub fn first(&self) -> Option<(usize, Key)> {
        self.heap.first().map(|e| (e.pos as usize, e.key))
    }

    #[cfg(test)]
    pub fn get(&self, i: usize) -> Key {
        self.heap[self.at[i] as usize].key
    }

    /// Appends a slot (on a machine: the task appended to `running`).
    pub fn push(&mut self, key: Key) {
        let pos = self.at.len() as u32;
        self.at.push(self.heap.len() as u32);
        self.heap.push(Entry { key, pos });
        self.sift_up(self.heap.len() - 1);
    }

    /// Changes the key of slot `i`.
    pub fn set(&mut self, i: usize, key: Key) {
        let h = self.at[i] as usize;
        let old = std::mem::replace(&mut self.heap[h].key, key);
        if key == old {
            return;
        }
        if key < old {
            self.sift_up(h);
        } else {
            self.sift_down(h);
        }
    }

    /// Changes the key of slot `i` without restoring the heap, to
    /// rewrite many at once; [`EndHeap::rebuild`] must follow.
    pub fn set_unordered(&mut self, i: usize, key: Key) {
        self.heap[self.at[i] as usize].key = key;
    }

    /// Restores the heap after [`EndHeap::set_unordered`], in linear time.
    pub fn rebuild(&mut self) {
        if self.heap.len() > 1 {
            for h in (0..=(self.heap.len() - 2) / ARITY).rev() {
                self.sift_down(h);
            }
        }
    }

    /// Removes slot `i` the way `Vec::swap_remove` removes a task from `running`: the last
    /// slot takes its number.
    pub fn swap_remove(&mut self, i: usize) {
        let h = self.at[i] as usize;
        let bottom = self.heap.pop().expect("a running task has an end");
        if h < self.heap.len() {
            // The bottom entry fills the hole: it may belong above it or below.
            self.place(h, bottom);
            self.sift_up(h);
            self.sift_down(self.at[bottom.pos as usize] as usize);
        }
        let moved = self.at.len() - 1;
        if i != moved {
            let hm = self.at[moved];
            self.heap[hm as usize].pos = i as u32;
            self.at[i] = hm;
        }
        self.at.pop();
    }

    fn place(&mut self, h: usize, e: Entry) {
        self.at[e.pos as usize] = h as u32;
        self.heap[h] = e;
    }

    fn sift_up(&mut self, mut h: usize) {
        let e = self.heap[h];
        while h > 0 {
            let parent = (h - 1) / ARITY;
            let p = self.heap[parent];
            if e.key >= p.key {
                break;
            }
            self.place(h, p);
            h = parent;
        }
        self.place(h, e);
    }

    fn sift_down(&mut self, mut h: usize) {
        let n = self.heap.len();
        let e = self.heap[h];
        loop {
            let first = ARITY * h + 1;
            if first >= n {
                break;
            }
            let mut least = first;
            for c in first + 1..(first + ARITY).min(n) {
                if self.heap[c].key < self.heap[least].key {
                    least = c;
                }
            }
            let c = self.heap[least];
            if c.key >= e.key {
                break;
            }
            self.place(h, c);
            h = least;
        }
        self.place(h, e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Against a plain vector edited the same way (pushes, rekeys, bulk rekeys, swap-removals of
    /// the earliest and of any position): the earliest and every position's key always agree.
    #[test]
    fn follows_a_vector_edited_alike() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut seq = 0u64;
        let mut key = |rng: &mut ChaCha8Rng| {
            seq += 1;
            Key::new(f64::from(rng.gen_range(0..50u32)), seq)
        };
        let mut ends = EndHeap::default();
        let mut plain: Vec<Key> = Vec::new();
        for _ in 0..20_000 {
            match rng.gen_range(0..10u32) {
                0..=3 => {
                    let k = key(&mut rng);
                    ends.push(k);
                    plain.push(k);
                }
                4 | 5 if !plain.is_empty() => {
                    let i = rng.gen_range(0..plain.len());
                    let k = key(&mut rng);
                    ends.set(i, k);
                    plain[i] = k;
                }
                6 if !plain.is_empty() => {
                    for (i, p) in plain.iter_mut().enumerate() {
                        *p = key(&mut rng);
                        ends.set_unordered(i, *p);
                    }
                    ends.rebuild();
                }
                7 | 8 if !plain.is_empty() => {
                    let (i, _) = ends.first().unwrap();
                    ends.swap_remove(i);
                    plain.swap_remove(i);
                }
                _ if !plain.is_empty() => {
                    let i = rng.gen_range(0..plain.len());
                    ends.swap_remove(i);
                    plain.swap_remove(i);
                }
                _ => {}
            }
            let earliest = plain.iter().enumerate().min_by_key(|&(_, k)| *k).map(|(i, &k)| (i, k));
            assert_eq!(ends.first(), earliest);
            for (i, &k) in plain.iter().enumerate() {
                assert_eq!(ends.get(i), k);
            }
        }
    }
}
