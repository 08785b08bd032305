//! One machine's usage over time as a step function.

use std::cell::Cell;

use super::segments::{Fit, Query, Segments};
use crate::model::{ResVec, MAX_RESOURCES};

#[derive(Clone, Debug, Default)]
pub struct Profile {
    /// Strictly increasing breakpoints, each with the usage that holds until the next; the last
    /// segment's usage is always zero. Stored with a min/max tree so that queries skip runs of
    /// segments (see `segments`).
    segs: Segments,
    /// The last earliest-fit query and how far it proved that nothing fits (see `Memo`).
    early: Cell<Option<Memo>>,
    /// The same for latest-fit queries (a bound from above).
    late: Cell<Option<Memo>>,
    /// Where the last search for a time landed (a segment index), to search from next time
    /// (see `Segments::partition_point_near`); kept pointing at the same segment across inserts.
    near: Cell<usize>,
}

/// One query's key and what it proved. Usage only ever grows (`add` is the only change), so a
/// start that did not fit before never fits later: the next identical query may resume where the
/// last one stopped instead of rescanning every full segment from its release time. Placing the
/// alike tasks of a wide stage one after another is exactly such a run of identical queries; with
/// the memo it costs amortized constant segments per task instead of a scan over the machine's
/// whole history, which made a 100,000-task stage take minutes.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Memo {
    from: u64,
    duration: u64,
    demand: ResVec,
    checked: [bool; MAX_RESOURCES],
    /// Earliest-fit: every start in `[from, bound)` is proved infeasible; latest-fit: every end
    /// in `(bound, from]`.
    bound: f64,
}

impl Memo {
    fn same_query(&self, from: f64, duration: f64, demand: &ResVec, checked: &[bool; MAX_RESOURCES]) -> bool {
        self.from == from.to_bits()
            && self.duration == duration.to_bits()
            && self.demand == *demand
            && self.checked == *checked
    }
}

impl Profile {
    /// An empty profile storing the first `width` resources (those some machine has).
    pub fn new(width: usize) -> Profile {
        Profile { segs: Segments::new(width), ..Profile::default() }
    }

    pub fn len(&self) -> usize {
        self.segs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.segs.len() == 0
    }

    /// Index of the segment holding `t`, or None when `t` lies before the first breakpoint.
    fn segment_at(&self, t: f64) -> Option<usize> {
        self.position(|&x| x <= t).checked_sub(1)
    }

    /// `Segments::partition_point` from where the last one landed.
    fn position(&self, pred: impl FnMut(&f64) -> bool) -> usize {
        let i = self.segs.partition_point_near(self.near.get(), pred);
        self.near.set(i);
        i
    }

    pub fn usage_at(&self, t: f64) -> ResVec {
        self.segment_at(t).map_or(ResVec::ZERO, |i| self.segs.usage(i))
    }

    /// Earliest `s >= release`, `s < limit`, such that `demand` fits on `[s, s + duration)`.
    ///
    /// The answer is the one a walk over every segment from `release` gives (the tests check
    /// it against such a walk); the tree only lets it jump over runs of segments. Without one,
    /// it says why: `Err(Some(b))` when the search stopped at `limit` having proved that
    /// nothing starts before `b >= limit` (a bound that lets a caller comparing machines skip
    /// this one until `b`), `Err(None)` when nothing fits.
    pub fn earliest_fit(
        &self,
        release: f64,
        duration: f64,
        demand: &ResVec,
        cap: &ResVec,
        checked: &[bool; MAX_RESOURCES],
        limit: f64,
    ) -> Result<f64, Option<f64>> {
        let mut s = release;
        if s >= limit {
            return Err(Some(s));
        }
        if duration <= 0.0 || self.is_empty() {
            return Ok(s);
        }
        if let Some(m) = self.early.get() {
            if m.same_query(release, duration, demand, checked) {
                s = m.bound;
                if s >= limit {
                    return Err(Some(s));
                }
            }
        }
        let remember = |bound: f64| {
            if bound.is_finite() {
                self.early.set(Some(Memo {
                    from: release.to_bits(),
                    duration: duration.to_bits(),
                    demand: *demand,
                    checked: *checked,
                    bound,
                }));
            }
        };
        let q = Query::new(demand, cap, checked);
        let zero_fits = ResVec::ZERO.fits_with(demand, cap, checked);
        let n = self.len();
        // Segment j covers [time(j), time(j + 1)); "segment" -1 is the zero region before the
        // first breakpoint. Each round skips to the first segment that fits, then to the end of
        // the run of fitting segments it starts.
        let mut j = self.segment_at(s).map_or(-1isize, |i| i as isize);
        loop {
            let first = if j < 0 && zero_fits {
                -1
            } else {
                match self.segs.first_fit(j.max(0) as usize, &q, limit) {
                    Fit::At(f) => f as isize,
                    // Nothing fits before segment p, which starts at or after the limit.
                    Fit::Past(p) => {
                        let bound = self.segs.time(p);
                        remember(bound);
                        return Err(Some(bound));
                    }
                    Fit::Nowhere => return Err(None),
                }
            };
            if first > j {
                s = self.segs.time(first as usize);
                if s >= limit {
                    remember(s);
                    return Err(Some(s));
                }
            }
            let blocked = self.segs.first_blocked((first + 1) as usize, &q);
            let run_end = blocked.map_or(f64::INFINITY, |b| self.segs.time(b));
            if run_end >= s + duration {
                remember(s);
                return Ok(s);
            }
            let b = blocked.expect("a run that ends early ends at a blocked segment");
            if b + 1 >= n {
                return Err(None);
            }
            s = self.segs.time(b + 1);
            if s >= limit {
                remember(s);
                return Err(Some(s));
            }
            j = (b + 1) as isize;
        }
    }

    /// Latest `e <= deadline`, `e > limit`, such that `demand` fits on `[e - duration, e)`;
    /// without one, the mirror image of [`Profile::earliest_fit`]'s reasons: `Err(Some(b))`
    /// proves that nothing ends after `b <= limit`.
    pub fn latest_fit(
        &self,
        deadline: f64,
        duration: f64,
        demand: &ResVec,
        cap: &ResVec,
        checked: &[bool; MAX_RESOURCES],
        limit: f64,
    ) -> Result<f64, Option<f64>> {
        let mut e = deadline;
        if e <= limit {
            return Err(Some(e));
        }
        if duration <= 0.0 || self.is_empty() {
            return Ok(e);
        }
        if let Some(m) = self.late.get() {
            if m.same_query(deadline, duration, demand, checked) {
                e = m.bound;
                if e <= limit {
                    return Err(Some(e));
                }
            }
        }
        let remember = |bound: f64| {
            if bound.is_finite() {
                self.late.set(Some(Memo {
                    from: deadline.to_bits(),
                    duration: duration.to_bits(),
                    demand: *demand,
                    checked: *checked,
                    bound,
                }));
            }
        };
        let q = Query::new(demand, cap, checked);
        let zero_fits = ResVec::ZERO.fits_with(demand, cap, checked);
        // The segment whose half-open interval contains instants just before `e`.
        let mut j = self.position(|&x| x < e) as isize - 1;
        loop {
            let last = if j < 0 { Fit::Nowhere } else { self.segs.last_fit(j as usize, &q, limit) };
            let last = match last {
                Fit::At(f) => f as isize,
                // Nothing fits after segment p, which ends at or before the limit.
                Fit::Past(p) => {
                    let bound = self.segs.time(p + 1);
                    remember(bound);
                    return Err(Some(bound));
                }
                Fit::Nowhere if zero_fits => -1,
                Fit::Nowhere => return Err(None),
            };
            if last < j {
                e = self.segs.time((last + 1) as usize);
                if e <= limit {
                    remember(e);
                    return Err(Some(e));
                }
            }
            // The run of fitting segments that ends with `last` starts after the last blocked
            // segment before it, or at -inf when it reaches the zero region and zero fits.
            let blocked = if last <= 0 { None } else { self.segs.last_blocked((last - 1) as usize, &q) };
            let run_start = match blocked {
                Some(b) => self.segs.time(b + 1),
                None if last < 0 || zero_fits => f64::NEG_INFINITY,
                None => self.segs.time(0),
            };
            if run_start <= e - duration {
                remember(e);
                return Ok(e);
            }
            let Some(b) = blocked else { return Err(None) };
            e = self.segs.time(b);
            if e <= limit {
                remember(e);
                return Err(Some(e));
            }
            j = b as isize - 1;
        }
    }

    /// Index of the breakpoint at `t`, creating it (copying the usage that held there) if absent.
    fn split(&mut self, t: f64) -> usize {
        let i = self.position(|&x| x < t);
        if i < self.segs.len() && self.segs.time(i) == t {
            return i;
        }
        self.segs.insert(i, t);
        // The segment the hint named moved one place right if it was at or after `i`.
        let near = self.near.get_mut();
        if *near >= i {
            *near += 1;
        }
        i
    }

    pub fn add(&mut self, start: f64, end: f64, demand: &ResVec) {
        let a = self.split(start);
        let b = self.split(end);
        self.segs.add(a, b, demand);
    }
}

#[cfg(test)]
mod tests {
    //! The profile against an oracle: a plain list of segments walked one by one, the way the
    //! profile answered before it had a tree. Answers must agree exactly, including after many
    //! insertions at both ends and in the middle, with repeated queries (the memo) and limits.
    use super::*;
    use proptest::prelude::*;

    /// Usage as a list of (start, usage) segments, the last one zero.
    #[derive(Default)]
    struct Flat {
        seg: Vec<(f64, ResVec)>,
    }

    impl Flat {
        fn split(&mut self, t: f64) -> usize {
            let i = self.seg.partition_point(|s| s.0 < t);
            if i < self.seg.len() && self.seg[i].0 == t {
                return i;
            }
            let carried = if i == 0 { ResVec::ZERO } else { self.seg[i - 1].1 };
            self.seg.insert(i, (t, carried));
            i
        }

        fn add(&mut self, a: f64, b: f64, d: &ResVec) {
            let i = self.split(a);
            let j = self.split(b);
            for s in &mut self.seg[i..j] {
                s.1.add_assign(d);
            }
        }

        fn usage(&self, j: isize) -> ResVec {
            if j < 0 {
                ResVec::ZERO
            } else {
                self.seg[j as usize].1
            }
        }

        fn earliest(&self, release: f64, dur: f64, d: &ResVec, cap: &ResVec, limit: f64) -> Option<f64> {
            let all = [true; MAX_RESOURCES];
            let mut s = release;
            if s >= limit {
                return None;
            }
            if dur <= 0.0 || self.seg.is_empty() {
                return Some(s);
            }
            let mut j = self.seg.partition_point(|x| x.0 <= s) as isize - 1;
            loop {
                let end = self.seg.get((j + 1) as usize).map_or(f64::INFINITY, |x| x.0);
                if !self.usage(j).fits_with(d, cap, &all) {
                    s = end;
                    if s >= limit || s == f64::INFINITY {
                        return None;
                    }
                } else if end >= s + dur {
                    return Some(s);
                }
                j += 1;
            }
        }

        fn latest(&self, deadline: f64, dur: f64, d: &ResVec, cap: &ResVec, limit: f64) -> Option<f64> {
            let all = [true; MAX_RESOURCES];
            let mut e = deadline;
            if e <= limit {
                return None;
            }
            if dur <= 0.0 || self.seg.is_empty() {
                return Some(e);
            }
            let mut j = self.seg.partition_point(|x| x.0 < e) as isize - 1;
            loop {
                let start = if j < 0 { f64::NEG_INFINITY } else { self.seg[j as usize].0 };
                if !self.usage(j).fits_with(d, cap, &all) {
                    e = start;
                    if e <= limit || e == f64::NEG_INFINITY {
                        return None;
                    }
                } else if start <= e - dur {
                    return Some(e);
                }
                j -= 1;
            }
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        /// Add a task at [start, start + len) with this demand.
        Add(i32, u8, [u8; 2]),
        Earliest(i32, u8, [u8; 2], Option<i32>),
        Latest(i32, u8, [u8; 2], Option<i32>),
    }

    fn op() -> impl Strategy<Value = Op> {
        let demand = [0u8..6, 0u8..6];
        prop_oneof![
            (-40i32..40, 1u8..9, demand.clone()).prop_map(|(s, l, d)| Op::Add(s, l, d)),
            (-50i32..50, 0u8..9, demand.clone(), proptest::option::of(-50i32..60))
                .prop_map(|(s, l, d, lim)| Op::Earliest(s, l, d, lim)),
            (-50i32..50, 0u8..9, demand, proptest::option::of(-60i32..50))
                .prop_map(|(s, l, d, lim)| Op::Latest(s, l, d, lim)),
        ]
    }

    fn v(d: [u8; 2]) -> ResVec {
        ResVec::from_slice(&[d[0] as f64, d[1] as f64 * 0.5])
    }

    /// Applies `ops` to a profile and to the flat walk and checks that they agree: every answer
    /// (asked twice, the second through the memo), every bound (a proof that nothing fits before
    /// it), and the usage of every segment at the end. An add starts at `s x step` and is placed
    /// only if it fits there (within `slack`), as the constructor places only what fits.
    fn agrees_with_walk(
        ops: &[Op],
        cap: ResVec,
        demand: impl Fn([u8; 2]) -> ResVec,
        step: f64,
        slack: f64,
    ) -> Result<(), TestCaseError> {
        let all = [true; MAX_RESOURCES];
        let mut p = Profile::new(2);
        let mut flat = Flat::default();
        for o in ops {
            match *o {
                Op::Add(s, l, d) => {
                    let (a, b) = (s as f64 * step, s as f64 * step + l as f64);
                    if flat.earliest(a, l as f64, &demand(d), &cap, a + slack) == Some(a) {
                        p.add(a, b, &demand(d));
                        flat.add(a, b, &demand(d));
                    }
                }
                Op::Earliest(s, l, d, lim) => {
                    let (s, l, d) = (s as f64, l as f64, demand(d));
                    let limit = lim.map_or(f64::INFINITY, f64::from);
                    for _ in 0..2 {
                        prop_assert_eq!(
                            p.earliest_fit(s, l, &d, &cap, &all, limit).ok(),
                            flat.earliest(s, l, &d, &cap, limit)
                        );
                    }
                    if let Err(Some(b)) = p.earliest_fit(s, l, &d, &cap, &all, limit) {
                        prop_assert!(b >= limit);
                        let truth = flat.earliest(s, l, &d, &cap, f64::INFINITY);
                        prop_assert!(truth.is_none_or(|t| t >= b), "bound {} but fits at {:?}", b, truth);
                    }
                }
                Op::Latest(s, l, d, lim) => {
                    let (s, l, d) = (s as f64, l as f64, demand(d));
                    let limit = lim.map_or(f64::NEG_INFINITY, f64::from);
                    for _ in 0..2 {
                        prop_assert_eq!(
                            p.latest_fit(s, l, &d, &cap, &all, limit).ok(),
                            flat.latest(s, l, &d, &cap, limit)
                        );
                    }
                    if let Err(Some(b)) = p.latest_fit(s, l, &d, &cap, &all, limit) {
                        prop_assert!(b <= limit);
                        let truth = flat.latest(s, l, &d, &cap, f64::NEG_INFINITY);
                        prop_assert!(truth.is_none_or(|t| t <= b), "bound {} but fits ending at {:?}", b, truth);
                    }
                }
            }
        }
        for (i, s) in flat.seg.iter().enumerate() {
            prop_assert_eq!(p.usage_at(s.0), s.1, "segment {}", i);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]
        #[test]
        fn profile_answers_as_a_walk_over_every_segment(ops in proptest::collection::vec(op(), 1..160)) {
            agrees_with_walk(&ops, ResVec::from_slice(&[6.0, 3.0]), v, 1.0, 1.0)?;
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
        /// Usages no f32 holds exactly (sums of tenths), so that the tree's rounded bounds say
        /// "maybe" where no segment passes: answers are still the walk's.
        #[test]
        fn rounded_tree_bounds_give_exact_answers(ops in proptest::collection::vec(op(), 1..160)) {
            let tenths = |d: [u8; 2]| ResVec::from_slice(&[d[0] as f64 * 0.1, d[1] as f64 * 0.1 + 1e-9]);
            agrees_with_walk(&ops, ResVec::from_slice(&[0.6, 0.7]), tenths, 0.3, 0.1)?;
        }
    }

    #[test]
    fn a_demand_on_a_resource_past_the_stored_width_widens_the_store() {
        let cap = ResVec::from_slice(&[4.0, 0.0, 0.0]);
        let all = [true; MAX_RESOURCES];
        let mut p = Profile::new(1);
        // Within the capacity slack, a tiny demand on a resource no machine has still fits.
        let tiny = ResVec::from_slice(&[1.0, 0.0, 1e-10]);
        p.add(0.0, 5.0, &tiny);
        assert_eq!(p.usage_at(1.0), tiny);
        assert_eq!(p.earliest_fit(0.0, 1.0, &tiny, &cap, &all, f64::INFINITY).ok(), Some(0.0));
        let two = ResVec::from_slice(&[1.0, 0.0, 9.5e-10]);
        assert_eq!(p.earliest_fit(0.0, 1.0, &two, &cap, &all, f64::INFINITY).ok(), Some(5.0));
    }
}
