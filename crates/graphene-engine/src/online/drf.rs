//! `drf`: Dominant Resource Fairness across queues.
//!
//! A queue's dominant share is the largest, over resources, of what its running tasks were
//! allocated divided by the cluster's total; divided by the queue's entitled share it says how
//! far the queue is above (> 1) or below (< 1) its entitlement. The next task goes to the queue
//! with the lowest such ratio that has something fitting (ties: lower queue index); within a
//! queue, jobs in arrival order and each job's tasks in stage order, as `fifo` does. Queues
//! without an entitled share come last. Every resource counts, overbookable ones included: DRF
//! is about what a queue holds, not what a machine can squeeze in.

use super::fifo::fill_from_job;
use super::{next_job_to_try, relative, serve_queues, Policy, TaskRef};
use crate::model::ResVec;
use crate::sim::View;

pub struct Drf {
    shares: Vec<f64>,
    /// Allocation of the running tasks per queue.
    alloc: Vec<ResVec>,
    total: Option<ResVec>,
    /// The copy of `alloc` a heartbeat works on, kept for the next one.
    scratch: Vec<ResVec>,
}

impl Drf {
    pub fn new(shares: Vec<f64>) -> Drf {
        let n = shares.len();
        Drf { shares, alloc: vec![ResVec::ZERO; n], total: None, scratch: Vec::new() }
    }

    fn total(&mut self, view: &View) -> ResVec {
        *self.total.get_or_insert_with(|| view.caps.iter().fold(ResVec::ZERO, |a, c| a.add(c)))
    }
}

/// Dominant share of `alloc` in `total` over the first `dims` resources.
fn dominant(alloc: &ResVec, total: &ResVec, dims: usize) -> f64 {
    (0..dims).filter(|&r| total.0[r] > 0.0).map(|r| alloc.0[r] / total.0[r]).fold(0.0, f64::max)
}

impl Policy for Drf {
    fn name(&self) -> String {
        "drf".into()
    }

    fn job_arrived(&mut self, view: &View, job: u32) {
        let q = view.queue(job) as usize;
        if q >= self.shares.len() {
            self.shares.resize(q + 1, 0.0);
            self.alloc.resize(q + 1, ResVec::ZERO);
        }
        self.total(view);
    }

    /// An empty heartbeat works on a copy of the queues' allocations and changes nothing.
    fn idle_is_stable(&self) -> bool {
        true
    }

    fn assign(&mut self, view: &View, _machine: usize, free: &ResVec, out: &mut Vec<TaskRef>) {
        // The first job that may give a task while nothing is taken (and `free` is all there
        // is): where every queue's walk starts until one takes something. None: every queue
        // would come back empty (most heartbeats of a deep workload, where little is runnable).
        let Some(first) = next_job_to_try(view, 0, free, out) else { return };
        let total = self.total(view);
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clone_from(&self.alloc);
        let mut state = (*free, scratch);
        serve_queues(
            self.shares.len(),
            &mut state,
            |(_, alloc), q| relative(dominant(&alloc[q], &total, view.dims), self.shares[q]),
            |(left, alloc), q| {
                let mut next = if out.is_empty() { Some(first) } else { next_job_to_try(view, 0, left, out) };
                while let Some(job) = next {
                    if view.queue(job) as usize == q && fill_from_job(view, job, left, out, 1) == 1 {
                        let t = *out.last().expect("just pushed");
                        alloc[q].add_assign(&view.requested(t.job, t.task));
                        return true;
                    }
                    next = next_job_to_try(view, job + 1, left, out);
                }
                false
            },
        );
        self.scratch = state.1;
    }

    fn launched(&mut self, view: &View, t: TaskRef) {
        self.alloc[view.queue(t.job) as usize].add_assign(&view.requested(t.job, t.task));
    }

    fn finished(&mut self, view: &View, t: TaskRef) {
        let q = view.queue(t.job) as usize;
        self.alloc[q].sub_assign(&view.requested(t.job, t.task));
        for r in 0..view.dims {
            // Float residue from many add/sub pairs must not make an idle queue look busy.
            if self.alloc[q].0[r] < 1e-9 {
                self.alloc[q].0[r] = 0.0;
            }
        }
    }
}
