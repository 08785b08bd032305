//! YARN's Capacity Scheduler as the papers use it: each queue is guaranteed a share of the
//! cluster; the next container goes to the queue furthest below its share (running tasks over
//! guaranteed share), within it to the earliest job, and within the job to its runnable tasks
//! in breadth-first (stage) order.

use super::fifo::fill_from_job;
use super::{relative, serve_queues, Policy, TaskRef};
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
        // One container at a time: the neediest queue with something that fits gets it.
        let mut state = (*free, self.running.clone());
        serve_queues(
            self.shares.len(),
            &mut state,
            |(_, running), q| relative(running[q] as f64, self.shares[q]),
            |(left, running), q| {
                let took = view
                    .active()
                    .iter()
                    .any(|&job| view.queue(job) as usize == q && fill_from_job(view, job, left, out, 1) == 1);
                if took {
                    running[q] += 1;
                }
                took
            },
        );
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
