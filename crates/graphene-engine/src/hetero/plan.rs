//! The state a list scheduler builds: where each task (and each duplicate of it) runs, and each
//! machine's usage over time.

use super::instance::Instance;
use super::timeline::Timeline;
use crate::model::{Placement, Schedule};

/// One run of a task: (machine, start, end).
pub type Run = (u32, f64, f64);

pub struct Plan {
    pub timelines: Vec<Timeline>,
    /// Runs of each task; the first is the task's own placement, later ones are duplicates made
    /// to feed a child without a transfer.
    pub runs: Vec<Vec<Run>>,
}

/// Where the EFT rule puts a task.
#[derive(Clone, Copy, Debug)]
pub struct Choice {
    pub machine: u32,
    pub start: f64,
    pub end: f64,
}

impl Plan {
    pub fn new(inst: &Instance) -> Plan {
        let width = inst.width();
        Plan {
            timelines: (0..inst.machines() as u32).map(|m| Timeline::new(*inst.capacity(m), width)).collect(),
            runs: vec![Vec::new(); inst.len()],
        }
    }

    pub fn placed(&self, t: u32) -> bool {
        !self.runs[t as usize].is_empty()
    }

    /// When the data of parent `p` (sending `data`) can be on machine `m`: the best over its runs
    /// of finish plus transfer (LACHESIS eq. 9).
    pub fn data_at(&self, inst: &Instance, p: u32, data: f64, m: u32) -> f64 {
        self.runs[p as usize].iter().map(|&(pm, _, e)| e + inst.transfer(data, pm, m)).fold(f64::INFINITY, f64::min)
    }

    /// When every input of `t` can be on machine `m` (0 for entry tasks).
    pub fn ready_at(&self, inst: &Instance, t: u32, m: u32) -> f64 {
        inst.parents(t).iter().map(|&(p, d)| self.data_at(inst, p, d, m)).fold(0.0, f64::max)
    }

    /// The earliest finish of `t` on `m` with insertion: the earliest start after its inputs
    /// arrive where its demand fits beside what already runs on `m` for its whole run.
    pub fn eft_on(&self, inst: &Instance, t: u32, m: u32) -> Choice {
        let dur = inst.run_time(t, m);
        let start = self.timelines[m as usize].earliest(self.ready_at(inst, t, m), dur, inst.demand(t));
        Choice { machine: m, start, end: start + dur }
    }

    /// The machine of earliest finish (the first one on a tie).
    pub fn eft(&self, inst: &Instance, t: u32) -> Choice {
        let mut best: Option<Choice> = None;
        for m in 0..inst.machines() as u32 {
            if !inst.fits(t, m) {
                continue;
            }
            let c = self.eft_on(inst, t, m);
            if best.is_none_or(|b| c.end < b.end) {
                best = Some(c);
            }
        }
        best.expect("every task fits some machine (checked when the cluster was resolved)")
    }

    pub fn commit(&mut self, inst: &Instance, t: u32, c: Choice) {
        self.timelines[c.machine as usize].insert(c.start, c.end, inst.demand(t));
        self.runs[t as usize].push((c.machine, c.start, c.end));
    }

    /// The schedule (own placements) and the duplicates.
    pub fn finish(self) -> (Schedule, Vec<Placement>) {
        let mut placements = Vec::with_capacity(self.runs.len());
        let mut copies = Vec::new();
        for (t, runs) in self.runs.into_iter().enumerate() {
            for (i, (machine, start, end)) in runs.into_iter().enumerate() {
                let p = Placement { task: t as u32, machine, start, end };
                if i == 0 {
                    placements.push(p);
                } else {
                    copies.push(p);
                }
            }
        }
        (Schedule { placements }, copies)
    }
}
