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
//! * what a scan over a busy cluster's machines learns (each machine's answer, or a bound on it)
//!   becomes a tournament tree (`repeat`) when the same query comes next (the next alike task of
//!   a stage), which then re-asks only the machine the last placement changed, not every machine;
//! * cloning (the constructor clones the space for each subset order) is a flat copy.
//!
//! Latest-fit queries (backward placement) mirror earliest-fit from the other end. The answers
//! are exactly those of the segment-by-segment walk (a property test holds the two together).

mod profile;
mod repeat;
mod segments;

pub use profile::Profile;

use std::cell::RefCell;

use repeat::{Key, Repeat, Side};

use crate::model::{ResVec, MAX_RESOURCES};

/// A scan that asked at least one machine in this many keeps what it learned for a repeat (see
/// [`Space::best`]). Why 16: a tree costs a write per machine, a rescan a profile query per
/// machine asked, each many times dearer; with 4 (the first rule), a scan that stopped after
/// 100 of 1,000 machines was redone for every alike task of the stage (on the 100,000-task
/// layered DAG on 1,000 machines a quarter of all queries were scans, an eighth with 16).
const WIDE: usize = 16;

/// Every resource is held to capacity in the offline space: an offline plan cannot model the
/// slowdown that overbooking causes, so it never overbooks.
const ALL: [bool; MAX_RESOURCES] = [true; MAX_RESOURCES];

/// The last wide scan's key and each machine's answer or bound, in stored form (the buffer is
/// kept between queries to avoid an allocation per query).
#[derive(Clone, Debug, Default)]
struct Seen {
    key: Option<Key>,
    answers: Vec<Result<f64, Option<f64>>>,
}

#[derive(Clone, Debug)]
pub struct Space {
    caps: Vec<ResVec>,
    profiles: Vec<Profile>,
    /// Earliest start and latest end of anything placed (None while empty).
    span: Option<(f64, f64)>,
    /// What the last wide scan learned, until the next query.
    seen: RefCell<Seen>,
    /// Every machine's answer to the query that is repeating, if one is (see `repeat`).
    repeat: RefCell<Option<Repeat>>,
}

impl Space {
    pub fn new(caps: &[ResVec]) -> Space {
        // Resources past the last one some machine has are never used by anything that fits.
        let width =
            caps.iter().filter_map(|c| (0..MAX_RESOURCES).rev().find(|&k| c.0[k] != 0.0)).max().map_or(1, |k| k + 1);
        Space {
            caps: caps.to_vec(),
            profiles: vec![Profile::new(width); caps.len()],
            span: None,
            seen: RefCell::new(Seen::default()),
            repeat: RefCell::new(None),
        }
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
        self.best(Key::new(Side::Earliest, release, duration, demand))
            .expect("a task that fits some machine always fits after its last breakpoint")
    }

    /// The machine and end of the latest slot ending at or before `deadline` where `demand`
    /// fits for `duration`; ties go to the lowest machine index.
    pub fn latest(&self, deadline: f64, duration: f64, demand: &ResVec) -> (usize, f64) {
        self.best(Key::new(Side::Latest, deadline, duration, demand))
            .expect("a task that fits some machine always fits before its first breakpoint")
    }

    /// The best machine for `key` and its start (earliest) or end (latest).
    ///
    /// A repeat of the query the tree holds is answered from the tree. Otherwise the machines
    /// are scanned in index order, each asked with the best answer so far as its limit, until
    /// one answers the query's own time (nothing can beat it). When that scan visited at least
    /// one machine in [`WIDE`], what it learned of each is kept, and becomes the tree if the very
    /// next query is the same one (the next alike task of a stage); building a tree for every
    /// wide scan cost 12% of a 5,000-task workflow's build on 1,000 machines, where tasks
    /// rarely repeat.
    fn best(&self, key: Key) -> Option<(usize, f64)> {
        let side = key.side;
        let mut repeat = self.repeat.borrow_mut();
        if repeat.as_ref().is_none_or(|r| r.key != key) {
            *repeat = None;
            let mut seen = self.seen.borrow_mut();
            if seen.key == Some(key) {
                // Machines after an early stop are bounded by the query's own time.
                let at = stored(side, f64::from_bits(key.at));
                let rest = |m: usize| if key.demand.fits_in(&self.caps[m]) { Err(Some(at)) } else { Err(None) };
                let answers = &seen.answers;
                *repeat =
                    Some(Repeat::new(key, self.machines(), |m| answers.get(m).copied().unwrap_or_else(|| rest(m))));
                seen.key = None;
            } else {
                return self.scan(key, &mut seen);
            }
        }
        let r = repeat.as_mut().expect("a tree for this key");
        r.best(|m| self.answer(&key, m, f64::INFINITY).ok()).map(|(m, v)| (m, stored(side, v)))
    }

    /// The scan of [`Space::best`], recording each machine's answer or bound in `seen`.
    fn scan(&self, key: Key, seen: &mut Seen) -> Option<(usize, f64)> {
        let at = stored(key.side, f64::from_bits(key.at));
        seen.answers.clear();
        let mut best: Option<(usize, f64)> = None;
        for m in 0..self.machines() {
            let a = if key.demand.fits_in(&self.caps[m]) {
                self.answer(&key, m, best.map_or(f64::INFINITY, |b| b.1))
            } else {
                Err(None)
            };
            seen.answers.push(a);
            if let Ok(v) = a {
                best = Some((m, v));
                if v <= at {
                    break;
                }
            }
        }
        let wide = self.machines() >= 2 && seen.answers.len() * WIDE >= self.machines();
        seen.key = wide.then_some(key);
        best.map(|(m, v)| (m, stored(key.side, v)))
    }

    /// Machine `m`'s answer to `key` in stored form (smaller is better) when it is below
    /// `limit`, else the bound its search proved (see `Repeat::new`).
    fn answer(&self, key: &Key, m: usize, limit: f64) -> Result<f64, Option<f64>> {
        let (at, duration) = (f64::from_bits(key.at), f64::from_bits(key.duration));
        let (prof, cap) = (&self.profiles[m], &self.caps[m]);
        let v = match key.side {
            Side::Earliest => prof.earliest_fit(at, duration, &key.demand, cap, &ALL, limit),
            Side::Latest => prof.latest_fit(at, duration, &key.demand, cap, &ALL, -limit),
        };
        let side = key.side;
        v.map(|v| stored(side, v)).map_err(|b| b.map(|b| stored(side, b)))
    }

    /// The earliest start on machine `m` alone, for policies that choose the machine themselves.
    pub fn earliest_on(&self, m: usize, release: f64, duration: f64, demand: &ResVec) -> Option<f64> {
        if !demand.fits_in(&self.caps[m]) {
            return None;
        }
        self.profiles[m].earliest_fit(release, duration, demand, &self.caps[m], &ALL, f64::INFINITY).ok()
    }

    /// Usage of machine `m` at instant `t`.
    pub fn usage_at(&self, m: usize, t: f64) -> ResVec {
        self.profiles[m].usage_at(t)
    }

    pub fn insert(&mut self, m: usize, start: f64, end: f64, demand: &ResVec) {
        if end > start {
            self.profiles[m].add(start, end, demand);
            // Usage on `m` grew: its answer to the repeating query may move (its old one is
            // still a bound); no other machine's does.
            if let Some(r) = self.repeat.get_mut() {
                r.touched(m);
            }
            let seen = self.seen.get_mut();
            if let Some(Ok(v)) = seen.answers.get(m).copied().filter(|_| seen.key.is_some()) {
                seen.answers[m] = Err(Some(v));
            }
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

/// A time in the repeat tree's "smaller is better" form: starts as they are, ends negated (the
/// map is its own inverse).
fn stored(side: Side, t: f64) -> f64 {
    match side {
        Side::Earliest => t,
        Side::Latest => -t,
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

    use proptest::prelude::*;

    /// The answer every machine gives alone, best first, ties to the lowest index: what the
    /// scan and the repeat tree must both return.
    fn oracle(s: &Space, at: f64, duration: f64, d: &ResVec, earliest: bool) -> (usize, f64) {
        let mut best: Option<(usize, f64)> = None;
        for m in 0..s.machines() {
            if !d.fits_in(s.capacity(m)) {
                continue;
            }
            let prof = &s.profiles[m];
            let a = if earliest {
                prof.earliest_fit(at, duration, d, s.capacity(m), &ALL, f64::INFINITY).ok()
            } else {
                prof.latest_fit(at, duration, d, s.capacity(m), &ALL, f64::NEG_INFINITY).ok()
            };
            let a = a.expect("fits after everything");
            let better = |b: f64| if earliest { a < b } else { a > b };
            if best.is_none_or(|(_, b)| better(b)) {
                best = Some((m, a));
            }
        }
        best.expect("some machine fits")
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
        /// Runs of the same query with placements in between (the alike tasks of a stage),
        /// mixed with other queries, on machines of two sizes: every answer is the oracle's.
        #[test]
        fn repeated_queries_answer_as_every_machine_alone(
            machines in 2usize..40,
            ops in proptest::collection::vec((any::<bool>(), -20i32..20, 1u8..6, 1u8..4, 1u8..5), 1..60),
        ) {
            let caps: Vec<ResVec> = (0..machines).map(|m| v(&[if m % 3 == 0 { 2.0 } else { 4.0 }])).collect();
            let mut s = Space::new(&caps);
            for &(earliest, at, len, demand, repeats) in &ops {
                let (at, len, d) = (at as f64, len as f64, v(&[demand as f64]));
                for _ in 0..repeats {
                    let want = oracle(&s, at, len, &d, earliest);
                    let got = if earliest { s.earliest(at, len, &d) } else { s.latest(at, len, &d) };
                    prop_assert_eq!(got, want);
                    let (m, t) = got;
                    let start = if earliest { t } else { t - len };
                    s.insert(m, start, start + len, &d);
                }
            }
        }
    }
}
