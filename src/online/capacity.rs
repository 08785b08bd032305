//! YARN's Capacity Scheduler as the papers use it: each queue is guaranteed a share of the
//! cluster; the next container goes to the queue furthest below its share (running tasks over
//! guaranteed share), within it to the earliest job, and within the job to its runnable tasks
//! in breadth-first (stage) order.

use super::fifo::fill_from_job;
use super::{Policy, TaskRef};
use crate::model::ResVec;
use crate::sim::View;

pub struct CapacityScheduler {
    /// Guaranteed share per queue index (sums to 1).
    shares: Vec<f64>,
    running: Vec<u64>,
}

impl CapacityScheduler {
    pub fn new(shares: Vec<f64>) -> CapacityScheduler {
        let n = shares.len();
        CapacityScheduler { shares, running: vec![0; n] }
    }
}

impl Policy for CapacityScheduler {
    fn name(&self) -> String {
        "cs".into()
    }

    fn assign(&mut self, view: &View, _machine: usize, free: &ResVec, out: &mut Vec<TaskRef>) {
        let mut left = *free;
        let mut running = self.running.clone();
        // One container at a time: the neediest queue with something that fits gets it.
        let mut blocked = vec![false; self.shares.len()];
        loop {
            let mut order: Vec<usize> = (0..self.shares.len()).filter(|&q| !blocked[q]).collect();
            if order.is_empty() {
                break;
            }
            // A queue without a guaranteed share is never below it: it comes last.
            let usage = |q: usize| if self.shares[q] > 0.0 { running[q] as f64 / self.shares[q] } else { f64::INFINITY };
            order.sort_by(|&a, &b| usage(a).total_cmp(&usage(b)).then(a.cmp(&b)));
            let q = order[0];
            let mut took = false;
            for &job in view.active() {
                if view.queue(job) as usize != q {
                    continue;
                }
                if fill_from_job(view, job, &mut left, out, 1) == 1 {
                    took = true;
                    running[q] += 1;
                    break;
                }
            }
            if !took {
                blocked[q] = true;
            }
        }
    }

    /// A queue the shares did not name gets share 0: it is served only when no named queue
    /// can use the resources.
    fn job_arrived(&mut self, view: &View, job: u32) {
        let q = view.queue(job) as usize;
        if q >= self.shares.len() {
            self.shares.resize(q + 1, 0.0);
            self.running.resize(q + 1, 0);
        }
    }

    fn launched(&mut self, view: &View, t: TaskRef) {
        self.running[view.queue(t.job) as usize] += 1;
    }

    fn finished(&mut self, view: &View, t: TaskRef) {
        self.running[view.queue(t.job) as usize] -= 1;
    }
}
