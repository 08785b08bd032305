//! Leftovers known to fit no runnable task, so that a heartbeat can skip the scan.
//!
//! On the 1,000-machine Alibaba hour thousands of jobs wait with runnable tasks while most
//! machines hold small leftovers; checking whether any runnable task fits a machine (a scan
//! over every active job's runnable stages) then dominated the replay. A scan looks at each
//! runnable stage's next task (lowest id not picked yet). Those tasks change only when a job
//! arrives, a finish makes tasks runnable, the simulator refuses a pick, or a launch exposes
//! the task behind it; the policy calls [`NoFit::clear`] on each of these, except a launch
//! whose successor asks for at least as much of every hard resource. So once a scan found that
//! nothing fits leftovers `m`, nothing fits any leftovers at most `m` on every hard resource
//! (`fits` is monotone) until a clear; [`NoFit`] keeps the largest such `m`s and answers that
//! without the scan. Decisions are unchanged: it only skips scans whose answer is known.

use crate::model::ResVec;

/// At most this many leftovers are kept (Pareto-maximal ones; the oldest goes first).
const CAP: usize = 32;

#[derive(Clone, Debug, Default)]
pub struct NoFit {
    known: Vec<ResVec>,
    /// Recorded at the end of a heartbeat, kept only if the simulator launched every pick.
    pending: Option<(ResVec, usize)>,
    launched: usize,
}

fn le(a: &ResVec, b: &ResVec, hard: &[bool], dims: usize) -> bool {
    (0..dims).all(|r| !hard[r] || a.0[r] <= b.0[r])
}

impl NoFit {
    /// True when nothing runnable and unpicked can fit `left` (known without a scan).
    pub fn covers(&self, left: &ResVec, hard: &[bool], dims: usize) -> bool {
        self.known.iter().any(|m| le(left, m, hard, dims))
    }

    /// A scan found that nothing fits `left` after `picks` tasks were picked in this heartbeat.
    pub fn record(&mut self, left: ResVec, picks: usize) {
        self.pending = Some((left, picks));
        self.launched = 0;
    }

    /// The simulator launched one pick.
    pub fn launched(&mut self) {
        self.launched += 1;
    }

    /// Called at the start of a heartbeat: the last heartbeat's leftovers join the known ones
    /// if all its picks were launched (a refused pick is runnable again and may fit).
    pub fn settle(&mut self, hard: &[bool], dims: usize) {
        let Some((left, picks)) = self.pending.take() else { return };
        if self.launched != picks {
            self.known.clear();
            return;
        }
        if self.covers(&left, hard, dims) {
            return;
        }
        self.known.retain(|m| !le(m, &left, hard, dims));
        if self.known.len() == CAP {
            self.known.remove(0);
        }
        self.known.push(left);
    }

    /// Tasks became runnable (an arrival, or a finish that released a stage): forget everything.
    pub fn clear(&mut self) {
        self.known.clear();
        self.pending = None;
    }
}
