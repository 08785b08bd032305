//! A machine's usage segments in a gap buffer, with a min/max tree over it.
//!
//! Why: on a saturated cluster an earliest-fit query starts at a task's release time, which lies
//! far behind the point where the machine has room, and a flat walk visits every segment in
//! between. On a 100,000-task layered DAG that was 6.2 x 10^9 segment visits for 5.5 x 10^7
//! queries, 98% of them over segments where the task does not fit, in runs of about 50. The
//! tree answers "first segment from here where this demand fits" and "first segment from here
//! where it does not" by skipping whole subtrees: per resource, the minimum usage of a subtree
//! says whether any segment in it *may* fit (a necessary condition), and the maximum whether
//! some segment in it may not. So a query costs about one descent per run of fitting or
//! blocked segments instead of one step per segment.
//!
//! Why the internal nodes are f32 bounds and the segments' usage is stored once, in f64: a scan
//! over a thousand machines' trees is bound by memory, not arithmetic (a million-task build
//! missed the cache on most tree nodes it read). A node only has to say "maybe" whenever some
//! segment under it passes, so its minimum is rounded down and its maximum up; a search that
//! descends on a "maybe" and finds nothing climbs on, and each segment is decided exactly from
//! its own f64 usage, so answers are unchanged. The tree takes half the bytes it did (leaves
//! were stored twice, as their own minimum and maximum, all in f64).
//!
//! Why a gap buffer: breakpoints are inserted where tasks start and end. Forward placement puts
//! them near the end of a machine's history and backward placement near its front, so the
//! buffer keeps free slots at both ends and shifts only the short side; the tree nodes above
//! the shifted slots are recomputed, which is proportional to the shift, not to the history.
//! Empty slots are neutral in the tree (+inf minimum, -inf maximum), so they are never a match.
//!
//! Only the first `width` resources are stored: the ones some machine of the space has. A
//! demand on a resource no machine has fits nowhere (except within the capacity slack), and
//! [`Segments::add`] widens the store if such a demand is ever added, so answers are exact.

use crate::model::{ResVec, CAPACITY_EPS, MAX_RESOURCES};

#[derive(Clone, Debug, Default)]
pub(super) struct Segments {
    /// Resources stored per segment.
    width: usize,
    /// Physical slots (a power of two, or 0 before the first insert).
    cap: usize,
    /// Physical slot of logical segment 0.
    base: usize,
    len: usize,
    /// Start time of each slot's segment.
    times: Vec<f64>,
    /// Per slot and resource, the usage of its segment (exact; the leaves of the tree).
    usage: Vec<f64>,
    /// Per internal tree node (1..cap) and resource, bounds on the usage of the occupied slots
    /// under it: `min` at most their minimum, `max` at least their maximum (+inf / -inf when it
    /// covers none). In f32, rounded outward: a search only needs a node's verdict to be
    /// possible whenever a slot under it passes (it descends and finds out), and half the bytes
    /// keep more of the tree in cache, where a scan over a thousand machines' trees misses it.
    /// Slots are decided exactly from `usage`.
    min: Vec<f32>,
    max: Vec<f32>,
}

/// The largest f32 at most `x`.
#[inline]
fn down(x: f64) -> f32 {
    let f = x as f32;
    if f as f64 > x {
        f.next_down()
    } else {
        f
    }
}

/// The least f32 at least `x`.
#[inline]
fn up(x: f64) -> f32 {
    let f = x as f32;
    if (f as f64) < x {
        f.next_up()
    } else {
        f
    }
}

/// A query's demand, with the capacity test spelled exactly as [`ResVec::fits_with`] spells it,
/// so that a subtree's minimum or maximum gives the same verdict as the segment that holds it.
pub(super) struct Query {
    demand: [f64; MAX_RESOURCES],
    threshold: [f64; MAX_RESOURCES],
    checked: [bool; MAX_RESOURCES],
}

impl Query {
    pub fn new(demand: &ResVec, cap: &ResVec, checked: &[bool; MAX_RESOURCES]) -> Query {
        let mut threshold = [0.0; MAX_RESOURCES];
        for k in 0..MAX_RESOURCES {
            threshold[k] = cap.0[k] * (1.0 + CAPACITY_EPS) + CAPACITY_EPS;
        }
        Query { demand: demand.0, threshold, checked: *checked }
    }

    #[inline]
    fn over(&self, k: usize, used: f64) -> bool {
        self.checked[k] && used + self.demand[k] > self.threshold[k]
    }
}

impl Segments {
    pub fn new(width: usize) -> Segments {
        Segments { width: width.clamp(1, MAX_RESOURCES), ..Segments::default() }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    fn logical(&self) -> &[f64] {
        &self.times[self.base..self.base + self.len]
    }

    /// Start time of logical segment `i`.
    pub fn time(&self, i: usize) -> f64 {
        self.times[self.base + i]
    }

    /// Number of leading segments whose start satisfies `pred` (which must be monotone): the
    /// plain binary search, the oracle of [`Segments::partition_point_near`]'s test.
    #[cfg(test)]
    pub fn partition_point(&self, pred: impl FnMut(&f64) -> bool) -> usize {
        self.logical().partition_point(pred)
    }

    /// The same as [`Segments::partition_point`], searched outward from segment `hint`
    /// (galloping: steps of 1, 2, 4... then a binary search in the last step). Why: a machine is
    /// asked about nearly the same time again and again (the tasks of a stage, the stages of a
    /// layer), and a binary search over a history of thousands of segments was a fifth of a
    /// million-task build on 1,000 machines, one cache miss per probe; the answer is usually a
    /// few segments from the last one.
    pub fn partition_point_near(&self, hint: usize, mut pred: impl FnMut(&f64) -> bool) -> usize {
        let xs = self.logical();
        let n = xs.len();
        if n == 0 {
            return 0;
        }
        let h = hint.min(n - 1);
        let mut step = 1;
        if pred(&xs[h]) {
            // The answer is after h.
            let mut lo = h + 1;
            loop {
                let probe = h + step;
                if probe >= n {
                    return lo + xs[lo..].partition_point(&mut pred);
                }
                if !pred(&xs[probe]) {
                    return lo + xs[lo..probe].partition_point(&mut pred);
                }
                lo = probe + 1;
                step *= 2;
            }
        }
        // The answer is at or before h.
        let mut hi = h;
        loop {
            if step > h {
                return xs[..hi].partition_point(&mut pred);
            }
            let probe = h - step;
            if pred(&xs[probe]) {
                return probe + 1 + xs[probe + 1..hi].partition_point(&mut pred);
            }
            hi = probe;
            step *= 2;
        }
    }

    pub fn usage(&self, i: usize) -> ResVec {
        let at = (self.base + i) * self.width;
        let mut v = ResVec::ZERO;
        v.0[..self.width].copy_from_slice(&self.usage[at..at + self.width]);
        v
    }

    /// Inserts a segment starting at `t` as logical segment `i`, carrying the usage of the
    /// segment before it (zero for the first).
    pub fn insert(&mut self, i: usize, t: f64) {
        // Shift the shorter side; when it has no free slot, recentre (or double) first, so that
        // an insert never shifts more than half the segments and, amortized, O(1) of them.
        let left = i < self.len - i;
        if (left && self.base == 0) || (!left && self.base + self.len == self.cap) {
            self.regrow(self.width);
        }
        let w = self.width;
        let p;
        let changed;
        if left {
            let b = self.base;
            self.times.copy_within(b..b + i, b - 1);
            self.usage.copy_within(b * w..(b + i) * w, (b - 1) * w);
            self.base -= 1;
            p = self.base + i;
            changed = (self.base, p);
        } else {
            let (b, e) = (self.base + i, self.base + self.len);
            self.times.copy_within(b..e, b + 1);
            self.usage.copy_within(b * w..e * w, (b + 1) * w);
            p = b;
            changed = (p, e);
        }
        self.times[p] = t;
        let leaf = p * w;
        if i == 0 {
            self.usage[leaf..leaf + w].fill(0.0);
        } else {
            self.usage.copy_within(leaf - w..leaf, leaf);
        }
        self.len += 1;
        self.pull_range(changed.0, changed.1);
    }

    /// Adds `demand` to logical segments `a..b`.
    pub fn add(&mut self, a: usize, b: usize, demand: &ResVec) {
        if a >= b {
            return;
        }
        let needed = (0..MAX_RESOURCES).rev().find(|&k| demand.0[k] != 0.0).map_or(0, |k| k + 1);
        if needed > self.width {
            self.regrow(needed);
        }
        let w = self.width;
        for p in self.base + a..self.base + b {
            for (u, d) in self.usage[p * w..(p + 1) * w].iter_mut().zip(&demand.0) {
                *u += d;
            }
        }
        self.pull_range(self.base + a, self.base + b - 1);
    }

    /// Reallocates (or recentres in place) with free slots at both ends and room for `width`
    /// resources, and rebuilds the tree.
    fn regrow(&mut self, width: usize) {
        // Double when over half full, so that recentring leaves a quarter free on each side.
        let cap = if 2 * self.len < self.cap { self.cap } else { (self.cap * 2).max(8) };
        let base = (cap - self.len) / 2;
        let mut times = vec![0.0; cap];
        let mut usage = vec![0.0; cap * width];
        for i in 0..self.len {
            times[base + i] = self.times[self.base + i];
            let (to, from) = ((base + i) * width, (self.base + i) * self.width);
            usage[to..to + self.width].copy_from_slice(&self.usage[from..from + self.width]);
        }
        let min = vec![f32::INFINITY; cap * width];
        let max = vec![f32::NEG_INFINITY; cap * width];
        *self = Segments { width, cap, base, len: self.len, times, usage, min, max };
        if cap > 1 {
            self.pull_range(0, cap - 1);
        }
    }

    /// Whether physical slot `p` holds a segment.
    #[inline]
    fn occupied(&self, p: usize) -> bool {
        p >= self.base && p < self.base + self.len
    }

    /// Node `node`'s bounds on resource `k`: its stored ones, or a slot's exact usage (+inf /
    /// -inf for an empty slot, which bounds nothing).
    #[inline]
    fn bounds(&self, node: usize, k: usize) -> (f64, f64) {
        if node >= self.cap {
            let p = node - self.cap;
            if self.occupied(p) {
                let u = self.usage[p * self.width + k];
                (u, u)
            } else {
                (f64::INFINITY, f64::NEG_INFINITY)
            }
        } else {
            (self.min[node * self.width + k] as f64, self.max[node * self.width + k] as f64)
        }
    }

    /// Recomputes the internal nodes above physical slots `lo..=hi`.
    fn pull_range(&mut self, lo: usize, hi: usize) {
        let w = self.width;
        let (mut l, mut h) = ((lo + self.cap) / 2, (hi + self.cap) / 2);
        while l >= 1 {
            for node in l..=h {
                for k in 0..w {
                    let (a0, a1) = self.bounds(2 * node, k);
                    let (b0, b1) = self.bounds(2 * node + 1, k);
                    self.min[node * w + k] = down(a0.min(b0));
                    self.max[node * w + k] = up(a1.max(b1));
                }
            }
            l /= 2;
            h /= 2;
        }
    }

    /// Whether some occupied slot under `node` may fit `q` (true whenever one does; exact for a
    /// slot).
    #[inline]
    fn may_fit(&self, node: usize, q: &Query) -> bool {
        if node >= self.cap {
            let p = node - self.cap;
            return self.occupied(p)
                && self.usage[p * self.width..(p + 1) * self.width].iter().enumerate().all(|(k, &u)| !q.over(k, u));
        }
        let m = &self.min[node * self.width..(node + 1) * self.width];
        m.iter().enumerate().all(|(k, &u)| !q.over(k, u as f64))
    }

    /// Whether some occupied slot under `node` may not fit `q` (true whenever one does not;
    /// exact for a slot).
    #[inline]
    fn has_blocked(&self, node: usize, q: &Query) -> bool {
        if node >= self.cap {
            let p = node - self.cap;
            return self.occupied(p)
                && self.usage[p * self.width..(p + 1) * self.width].iter().enumerate().any(|(k, &u)| q.over(k, u));
        }
        let m = &self.max[node * self.width..(node + 1) * self.width];
        m.iter().enumerate().any(|(k, &u)| q.over(k, u as f64))
    }

    /// Resources beyond the stored width hold nothing, so they decide alike for every segment.
    fn rest_fits(&self, q: &Query) -> bool {
        (self.width..MAX_RESOURCES).all(|k| !q.over(k, 0.0))
    }

    /// First logical segment at or after `from` where `q` fits, searched only while segments
    /// start before `limit`: `Past(i)` when segment `i` starts at or after `limit` and none
    /// before it (from `from` on) fits. Why the limit: a machine asked during a scan only has to
    /// beat the best answer so far, and on a busy machine the first fit often lies far beyond it;
    /// without the limit the search walked there (two thirds of the tree steps of a
    /// 100,000-task layered DAG on 1,000 machines).
    pub fn first_fit(&self, from: usize, q: &Query, limit: f64) -> Fit {
        if from >= self.len || !self.rest_fits(q) {
            return Fit::Nowhere;
        }
        let stop = |node: usize| {
            let slot = self.leftmost(node);
            (self.times[slot] >= limit).then_some(slot)
        };
        self.rightward(self.base + from, |n| self.may_fit(n, q), stop).logical(self.base)
    }

    /// First logical segment at or after `from` where `q` does not fit.
    pub fn first_blocked(&self, from: usize, q: &Query) -> Option<usize> {
        if from >= self.len {
            return None;
        }
        if !self.rest_fits(q) {
            return Some(from);
        }
        self.rightward(self.base + from, |n| self.has_blocked(n, q), |_| None).logical(self.base).index()
    }

    /// Last logical segment at or before `upto` where `q` fits, searched only while segments
    /// end after `limit` (the mirror of [`Segments::first_fit`]): `Past(i)` when segment `i`
    /// ends at or before `limit` (at the start of segment `i + 1`) and none after it (up to
    /// `upto`) fits.
    pub fn last_fit(&self, upto: usize, q: &Query, limit: f64) -> Fit {
        if upto >= self.len || !self.rest_fits(q) {
            return Fit::Nowhere;
        }
        let stop = |node: usize| {
            // The search moves left from `upto`, so this subtree's last slot is before it and
            // occupied; it ends where the next slot starts.
            let slot = self.rightmost(node);
            (self.times[slot + 1] <= limit).then_some(slot)
        };
        self.leftward(self.base + upto, |n| self.may_fit(n, q), stop).logical(self.base)
    }

    /// Last logical segment at or before `upto` where `q` does not fit.
    pub fn last_blocked(&self, upto: usize, q: &Query) -> Option<usize> {
        if upto >= self.len {
            return None;
        }
        if !self.rest_fits(q) {
            return Some(upto);
        }
        self.leftward(self.base + upto, |n| self.has_blocked(n, q), |_| None).logical(self.base).index()
    }

    /// The first physical slot under `node`.
    fn leftmost(&self, node: usize) -> usize {
        let levels = self.cap.trailing_zeros() - node.ilog2();
        (node << levels) - self.cap
    }

    /// The last physical slot under `node`.
    fn rightmost(&self, node: usize) -> usize {
        let levels = self.cap.trailing_zeros() - node.ilog2();
        ((node + 1) << levels) - 1 - self.cap
    }

    /// The first occupied slot at or after slot `p` whose leaf passes `pass`, where `pass` on a
    /// node is true whenever some leaf under it passes (it may also be true when none does).
    /// Before descending into a passing subtree `stop` may end the search (`Past` of the slot
    /// it names): everything before that subtree has been ruled out.
    ///
    /// A depth-first search in slot order that starts at the leaf and climbs only as far as it
    /// must: a match a few slots away costs a few steps, one far away about two tree heights.
    /// Empty slots never pass (their bounds are infinite the wrong way).
    fn rightward(&self, p: usize, pass: impl Fn(usize) -> bool, stop: impl Fn(usize) -> Option<usize>) -> Fit {
        let mut node = p + self.cap;
        loop {
            if pass(node) {
                if node >= self.cap {
                    return Fit::At(node - self.cap);
                }
                if let Some(slot) = stop(node) {
                    return Fit::Past(slot);
                }
                node *= 2;
                continue;
            }
            // The next subtree to the right: climb while this is a right child.
            while node & 1 == 1 {
                if node == 1 {
                    return Fit::Nowhere;
                }
                node >>= 1;
            }
            node += 1;
        }
    }

    /// The mirror of [`Segments::rightward`]: the last passing slot at or before `p`.
    fn leftward(&self, p: usize, pass: impl Fn(usize) -> bool, stop: impl Fn(usize) -> Option<usize>) -> Fit {
        let mut node = p + self.cap;
        loop {
            if pass(node) {
                if node >= self.cap {
                    return Fit::At(node - self.cap);
                }
                if let Some(slot) = stop(node) {
                    return Fit::Past(slot);
                }
                node = 2 * node + 1;
                continue;
            }
            // The next subtree to the left: climb while this is a left child.
            while node & 1 == 0 {
                node >>= 1;
            }
            if node == 1 {
                return Fit::Nowhere;
            }
            node -= 1;
        }
    }
}

/// What a search for a fitting segment found: the segment, the segment where it stopped at its
/// limit, or (to the end of the history) nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fit {
    At(usize),
    Past(usize),
    Nowhere,
}

impl Fit {
    /// From physical slots to logical segments.
    fn logical(self, base: usize) -> Fit {
        match self {
            Fit::At(p) => Fit::At(p - base),
            Fit::Past(p) => Fit::Past(p - base),
            Fit::Nowhere => Fit::Nowhere,
        }
    }

    /// The segment found, for searches without a limit.
    fn index(self) -> Option<usize> {
        match self {
            Fit::At(i) => Some(i),
            Fit::Past(_) | Fit::Nowhere => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]
        /// The galloping search from any hint lands where the binary search does, for both
        /// predicates the profile asks (`<= t` and `< t`), on histories with repeated ends.
        #[test]
        fn the_search_from_a_hint_is_the_binary_search(
            gaps in proptest::collection::vec(0u8..4, 0..80),
            hint in 0usize..100,
            t in 0u16..250,
        ) {
            let mut segs = Segments::new(1);
            let mut time = 0.0;
            for (i, g) in gaps.iter().enumerate() {
                time += 1.0 + *g as f64;
                segs.insert(i, time);
            }
            let t = t as f64;
            prop_assert_eq!(segs.partition_point_near(hint, |&x| x <= t), segs.partition_point(|&x| x <= t));
            prop_assert_eq!(segs.partition_point_near(hint, |&x| x < t), segs.partition_point(|&x| x < t));
        }
    }
}
