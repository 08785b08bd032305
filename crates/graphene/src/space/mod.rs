//! The resource-time space: per machine, how much of each resource is in use over time.
//!
//! Each machine keeps a step function of usage: breakpoint times and the usage that holds from
//! one breakpoint to the next (zero before the first and after the last). This is the one hot
//! structure of the offline constructor, so the choice matters:
//!
//! * the segments sit in a gap buffer with a min/max tree over it (`segments`): an earliest-fit
//!   query binary-searches the segment holding the release time, then jumps from one run of
//!   segments where the task fits to the next instead of visiting every segment (on a saturated
//!   cluster the release time lies far behind the first hole, and the old segment-by-segment
//!   walk made a 100,000-task layered DAG quadratic: 6.2 x 10^9 segment visits); the walk stops
//!   as soon as the candidate start passes the best answer another machine already gave;
//! * an insertion splits at most two segments and adds the demand to the segments it covers;
//!   the buffer shifts the shorter side (forward placement inserts near the end of a machine's
//!   history, backward placement near its front) and recomputes the tree above what moved;
//! * a per-machine memo of the last query (`profile::Memo`) makes the alike tasks of a wide
//!   stage cost amortized constant work each;
//! * cloning (the constructor clones the space for each subset order) is a flat copy.
//!
//! Latest-fit queries (backward placement) mirror earliest-fit from the other end. The answers
//! are exactly those of the segment-by-segment walk (a property test holds the two together).

mod profile;
mod segments;

pub use profile::Profile;

use crate::model::{ResVec, MAX_RESOURCES};

/// Every resource is held to capacity in the offline space: an offline plan cannot model the
/// slowdown that overbooking causes, so it never overbooks.
const ALL: [bool; MAX_RESOURCES] = [true; MAX_RESOURCES];

#[derive(Clone, Debug)]
pub struct Space {
    caps: Vec<ResVec>,
    profiles: Vec<Profile>,
    /// Earliest start and latest end of anything placed (None while empty).
    span: Option<(f64, f64)>,
}

impl Space {
    pub fn new(caps: &[ResVec]) -> Space {
        // Resources past the last one some machine has are never used by anything that fits.
        let width =
            caps.iter().filter_map(|c| (0..MAX_RESOURCES).rev().find(|&k| c.0[k] != 0.0)).max().map_or(1, |k| k + 1);
        Space { caps: caps.to_vec(), profiles: vec![Profile::new(width); caps.len()], span: None }
    }

    pub fn machines(&self) -> usize {
        self.caps.len()
    }

    pub fn capacity(&self, m: usize) -> &ResVec {
        &self.caps[m]
    }

    pub fn span(&self) -> Option<(f64, f64)> {
        self.span
    }

    /// Length of time between the first start and the last end.
    pub fn makespan(&self) -> f64 {
        self.span.map_or(0.0, |(a, b)| b - a)
    }

    /// The machine and start of the earliest slot at or after `release` where `demand` fits for
    /// `duration`; ties go to the lowest machine index.
    pub fn earliest(&self, release: f64, duration: f64, demand: &ResVec) -> (usize, f64) {
        let mut best: Option<(usize, f64)> = None;
        for (m, prof) in self.profiles.iter().enumerate() {
            if !demand.fits_in(&self.caps[m]) {
                continue;
            }
            let limit = best.map_or(f64::INFINITY, |b| b.1);
            if let Some(s) = prof.earliest_fit(release, duration, demand, &self.caps[m], &ALL, limit) {
                best = Some((m, s));
                if s <= release {
                    break;
                }
            }
        }
        best.expect("a task that fits some machine always fits after its last breakpoint")
    }

    /// The machine and end of the latest slot ending at or before `deadline` where `demand`
    /// fits for `duration`; ties go to the lowest machine index.
    pub fn latest(&self, deadline: f64, duration: f64, demand: &ResVec) -> (usize, f64) {
        let mut best: Option<(usize, f64)> = None;
        for (m, prof) in self.profiles.iter().enumerate() {
            if !demand.fits_in(&self.caps[m]) {
                continue;
            }
            let limit = best.map_or(f64::NEG_INFINITY, |b| b.1);
            if let Some(e) = prof.latest_fit(deadline, duration, demand, &self.caps[m], &ALL, limit) {
                best = Some((m, e));
                if e >= deadline {
                    break;
                }
            }
        }
        best.expect("a task that fits some machine always fits before its first breakpoint")
    }

    /// The earliest start on machine `m` alone, for policies that choose the machine themselves.
    pub fn earliest_on(&self, m: usize, release: f64, duration: f64, demand: &ResVec) -> Option<f64> {
        if !demand.fits_in(&self.caps[m]) {
            return None;
        }
        self.profiles[m].earliest_fit(release, duration, demand, &self.caps[m], &ALL, f64::INFINITY)
    }

    /// Usage of machine `m` at instant `t`.
    pub fn usage_at(&self, m: usize, t: f64) -> ResVec {
        self.profiles[m].usage_at(t)
    }

    pub fn insert(&mut self, m: usize, start: f64, end: f64, demand: &ResVec) {
        if end > start {
            self.profiles[m].add(start, end, demand);
        }
        self.span = Some(match self.span {
            None => (start, end),
            Some((a, b)) => (a.min(start), b.max(end)),
        });
    }

    /// Total breakpoints over all machines, for statistics.
    pub fn breakpoints(&self) -> usize {
        self.profiles.iter().map(|p| p.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: &[f64]) -> ResVec {
        ResVec::from_slice(x)
    }

    #[test]
    fn earliest_fills_holes_and_respects_release() {
        let mut s = Space::new(&[v(&[4.0, 4.0])]);
        s.insert(0, 0.0, 10.0, &v(&[3.0, 1.0]));
        s.insert(0, 12.0, 20.0, &v(&[3.0, 1.0]));
        // 2 cpu does not fit during [0,10) or [12,20): the 2-wide hole [10,12) fits a 2-long task.
        assert_eq!(s.earliest(0.0, 2.0, &v(&[2.0, 1.0])), (0, 10.0));
        assert_eq!(s.earliest(0.0, 3.0, &v(&[2.0, 1.0])), (0, 20.0));
        assert_eq!(s.earliest(0.0, 3.0, &v(&[1.0, 1.0])), (0, 0.0));
        assert_eq!(s.earliest(11.0, 1.0, &v(&[2.0, 1.0])), (0, 11.0));
    }

    #[test]
    fn latest_mirrors_earliest() {
        let mut s = Space::new(&[v(&[4.0]), v(&[4.0])]);
        s.insert(0, -10.0, 0.0, &v(&[4.0]));
        s.insert(1, -5.0, 0.0, &v(&[4.0]));
        assert_eq!(s.latest(0.0, 5.0, &v(&[1.0])), (1, -5.0));
        s.insert(1, -10.0, -5.0, &v(&[4.0]));
        assert_eq!(s.latest(0.0, 5.0, &v(&[1.0])), (0, -10.0));
        assert_eq!(s.makespan(), 10.0);
    }

    #[test]
    fn machine_choice_prefers_earliest_then_lowest_index() {
        let mut s = Space::new(&[v(&[2.0]), v(&[2.0]), v(&[8.0])]);
        s.insert(0, 0.0, 5.0, &v(&[2.0]));
        assert_eq!(s.earliest(0.0, 1.0, &v(&[1.0])), (1, 0.0));
        assert_eq!(s.earliest(0.0, 1.0, &v(&[4.0])), (2, 0.0));
    }
}
