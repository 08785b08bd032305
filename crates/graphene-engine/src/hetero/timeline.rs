//! One machine's usage over time, for insertion-based placement: a task may go into any stretch
//! where its demand fits beside what already runs there, not only after the last task placed.
//!
//! A machine holds as many tasks at once as fit its capacity in every resource: a 16-core
//! machine runs sixteen one-core tasks side by side, an executor of one `cpu` slot (the
//! reference instances, LACHESIS's setting) one task at a time. On such one-slot machines the
//! answers are those of a plain list of busy intervals searched for the first long-enough gap.
//!
//! The usage is the offline space's step function ([`crate::space::Profile`]), so a query skips
//! runs of full segments instead of visiting each. Every resource is held to capacity, as in the
//! offline space: a plan cannot model the slowdown overbooking causes. A run of zero length uses
//! nothing (the validator's rule too) and fits anywhere.

use crate::model::{ResVec, MAX_RESOURCES};
use crate::space::Profile;

const ALL: [bool; MAX_RESOURCES] = [true; MAX_RESOURCES];

#[derive(Clone, Debug)]
pub struct Timeline {
    usage: Profile,
    cap: ResVec,
    /// The latest end of anything placed (0 while empty).
    end: f64,
}

impl Timeline {
    /// An idle machine of capacity `cap`, storing the first `width` resources (those some
    /// machine of the cluster has).
    pub fn new(cap: ResVec, width: usize) -> Timeline {
        Timeline { usage: Profile::new(width.max(1)), cap, end: 0.0 }
    }

    /// The earliest start >= `ready` of a run of length `dur` whose `demand` fits beside what
    /// runs on the machine over the whole run. The caller checks that the demand fits the idle
    /// machine; a demand that does not is given the time the machine becomes idle.
    pub fn earliest(&self, ready: f64, dur: f64, demand: &ResVec) -> f64 {
        self.usage.earliest_fit(ready, dur, demand, &self.cap, &ALL, f64::INFINITY).unwrap_or(ready.max(self.end))
    }

    pub fn insert(&mut self, start: f64, end: f64, demand: &ResVec) {
        if end > start {
            self.usage.add(start, end, demand);
        }
        self.end = self.end.max(end);
    }

    /// When the machine last becomes idle.
    pub fn end(&self) -> f64 {
        self.end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(x: f64) -> ResVec {
        ResVec::from_slice(&[x])
    }

    #[test]
    fn a_one_slot_machine_fills_the_first_gap_that_is_long_enough() {
        let mut t = Timeline::new(cpu(1.0), 1);
        for (a, b) in [(0.0, 2.0), (3.0, 5.0), (9.0, 10.0)] {
            t.insert(a, b, &cpu(1.0));
        }
        let one = cpu(1.0);
        assert_eq!(t.earliest(0.0, 1.0, &one), 2.0);
        assert_eq!(t.earliest(0.0, 2.0, &one), 5.0);
        assert_eq!(t.earliest(6.0, 3.0, &one), 6.0);
        assert_eq!(t.earliest(6.0, 3.5, &one), 10.0);
        assert_eq!(t.earliest(11.0, 1.0, &one), 11.0);
        assert_eq!(t.earliest(1.0, 0.0, &one), 1.0, "a zero-length run uses nothing");
        assert_eq!(t.end(), 10.0);
    }

    #[test]
    fn a_machine_holds_as_many_tasks_as_fit_its_capacity() {
        // Four cores, two resources: cpu 4, mem 8.
        let cap = ResVec::from_slice(&[4.0, 8.0]);
        let mut t = Timeline::new(cap, 2);
        let small = ResVec::from_slice(&[1.0, 1.0]);
        for _ in 0..4 {
            let s = t.earliest(0.0, 2.0, &small);
            assert_eq!(s, 0.0);
            t.insert(s, s + 2.0, &small);
        }
        // The fifth one-core task waits for a core.
        assert_eq!(t.earliest(0.0, 2.0, &small), 2.0);
        // Memory binds too: 6 of 8 free only once the four have ended.
        let big_mem = ResVec::from_slice(&[1.0, 5.0]);
        assert_eq!(t.earliest(0.0, 1.0, &big_mem), 2.0);
        t.insert(2.0, 4.0, &ResVec::from_slice(&[3.0, 1.0]));
        // From 2 to 4 one core is left: a one-core task fits there, a two-core one after 4.
        assert_eq!(t.earliest(1.0, 1.0, &small), 2.0);
        assert_eq!(t.earliest(1.0, 1.0, &ResVec::from_slice(&[2.0, 1.0])), 4.0);
        assert_eq!(t.end(), 4.0);
    }
}
