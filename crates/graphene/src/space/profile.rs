//! One machine's usage over time as a step function.

use std::cell::Cell;
use std::collections::VecDeque;

use crate::model::{ResVec, MAX_RESOURCES};

#[derive(Clone, Debug, Default)]
pub struct Profile {
    /// Strictly increasing breakpoints. Double-ended: forward placement adds breakpoints at the
    /// end and backward placement at the front, and a deque inserts at either end without
    /// moving the whole history (a `Vec` made backward placement of a long chain quadratic).
    times: VecDeque<f64>,
    /// `usage[i]` holds on `[times[i], times[i+1])`; the last entry is always zero.
    usage: VecDeque<ResVec>,
    /// The last earliest-fit query and how far it proved that nothing fits (see `Memo`).
    early: Cell<Option<Memo>>,
    /// The same for latest-fit queries (a bound from above).
    late: Cell<Option<Memo>>,
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
    pub fn len(&self) -> usize {
        self.times.len()
    }

    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// Index of the segment holding `t`, or None when `t` lies before the first breakpoint.
    fn segment_at(&self, t: f64) -> Option<usize> {
        let i = self.times.partition_point(|&x| x <= t);
        i.checked_sub(1)
    }

    pub fn usage_at(&self, t: f64) -> ResVec {
        self.segment_at(t).map_or(ResVec::ZERO, |i| self.usage[i])
    }

    /// Earliest `s >= release`, `s < limit`, such that `demand` fits on `[s, s + duration)`.
    pub fn earliest_fit(
        &self,
        release: f64,
        duration: f64,
        demand: &ResVec,
        cap: &ResVec,
        checked: &[bool; MAX_RESOURCES],
        limit: f64,
    ) -> Option<f64> {
        let mut s = release;
        if s >= limit {
            return None;
        }
        if duration <= 0.0 || self.times.is_empty() {
            return Some(s);
        }
        if let Some(m) = self.early.get() {
            if m.same_query(release, duration, demand, checked) {
                s = m.bound;
                if s >= limit {
                    return None;
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
        // Segment j covers [seg_start(j), seg_end(j)); "segment" -1 is the zero region before the
        // first breakpoint.
        let mut j = self.segment_at(s).map_or(-1isize, |i| i as isize);
        loop {
            let seg_end = self.times.get((j + 1) as usize).copied().unwrap_or(f64::INFINITY);
            let use_j = if j < 0 { ResVec::ZERO } else { self.usage[j as usize] };
            if !use_j.fits_with(demand, cap, checked) {
                s = seg_end;
                if s >= limit || s == f64::INFINITY {
                    remember(s);
                    return None;
                }
            } else if seg_end >= s + duration {
                remember(s);
                return Some(s);
            }
            j += 1;
        }
    }

    /// Latest `e <= deadline`, `e > limit`, such that `demand` fits on `[e - duration, e)`.
    pub fn latest_fit(
        &self,
        deadline: f64,
        duration: f64,
        demand: &ResVec,
        cap: &ResVec,
        checked: &[bool; MAX_RESOURCES],
        limit: f64,
    ) -> Option<f64> {
        let mut e = deadline;
        if e <= limit {
            return None;
        }
        if duration <= 0.0 || self.times.is_empty() {
            return Some(e);
        }
        if let Some(m) = self.late.get() {
            if m.same_query(deadline, duration, demand, checked) {
                e = m.bound;
                if e <= limit {
                    return None;
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
        // The segment whose half-open interval contains instants just before `e`.
        let mut j = self.times.partition_point(|&x| x < e) as isize - 1;
        loop {
            let seg_start = if j < 0 { f64::NEG_INFINITY } else { self.times[j as usize] };
            let use_j = if j < 0 { ResVec::ZERO } else { self.usage[j as usize] };
            if !use_j.fits_with(demand, cap, checked) {
                e = seg_start;
                if e <= limit || e == f64::NEG_INFINITY {
                    remember(e);
                    return None;
                }
            } else if seg_start <= e - duration {
                remember(e);
                return Some(e);
            }
            j -= 1;
        }
    }

    /// Index of the breakpoint at `t`, creating it (copying the usage that held there) if absent.
    fn split(&mut self, t: f64) -> usize {
        let i = self.times.partition_point(|&x| x < t);
        if i < self.times.len() && self.times[i] == t {
            return i;
        }
        let carried = if i == 0 { ResVec::ZERO } else { self.usage[i - 1] };
        self.times.insert(i, t);
        self.usage.insert(i, carried);
        i
    }

    pub fn add(&mut self, start: f64, end: f64, demand: &ResVec) {
        let a = self.split(start);
        let b = self.split(end);
        for u in self.usage.range_mut(a..b) {
            u.add_assign(demand);
        }
    }
}
