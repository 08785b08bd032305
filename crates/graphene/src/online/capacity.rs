//! YARN's Capacity Scheduler as the papers use it: each queue is guaranteed a share of the
//! cluster; the next container goes to the queue furthest below its share (running tasks over
//! guaranteed share), within it to the earliest job, and within the job to its runnable tasks
//! in breadth-first (stage) order.
//!
//! The queue and job choice ([`CsQueues`]) takes the choice inside a job as a parameter, so
//! that `cp` (critical-path order) and `graphene+cs` (Graphene's order) change only that.

use super::{fits, relative, serve_queues, Policy, TaskRef};
use crate::model::ResVec;
use crate::sim::View;

pub struct CapacityScheduler {
    queues: CsQueues,
}

impl CapacityScheduler {
    /// `shares`: guaranteed share per queue index (sums to 1).
    pub fn new(shares: Vec<f64>) -> CapacityScheduler {
        CapacityScheduler { queues: CsQueues::new(shares) }
    }
}

impl Policy for CapacityScheduler {
    fn name(&self) -> String {
        "cs".into()
    }

    fn assign(&mut self, view: &View, _machine: usize, free: &ResVec, out: &mut Vec<TaskRef>) {
        self.queues.assign(view, free, out, first_fitting);
    }

    fn job_arrived(&mut self, view: &View, job: u32) {
        self.queues.job_arrived(view, job);
    }

    fn launched(&mut self, view: &View, t: TaskRef) {
        self.queues.launched(view, t);
    }

    fn finished(&mut self, view: &View, t: TaskRef) {
        self.queues.finished(view, t);
    }
}

/// The job's first runnable task in stage order that fits `left` and is not in `chosen`.
/// Tasks of a stage share their requested demand in most traces, so a stage is left at its
/// first task that does not fit rather than scanned to the end.
fn first_fitting(view: &View, job: u32, left: &ResVec, chosen: &[TaskRef]) -> Option<TaskRef> {
    let st = view.job_state(job);
    for &s in &st.runnable_stages {
        for &t in st.runnable_in(s).iter().rev() {
            let tr = TaskRef { job, task: t };
            if chosen.contains(&tr) {
                continue;
            }
            if !fits(view, &view.requested(job, t), left) {
                break;
            }
            return Some(tr);
        }
    }
    None
}

/// Capacity Scheduler queue accounting, with the task choice inside a job left to the caller.
pub(crate) struct CsQueues {
    shares: Vec<f64>,
    running: Vec<u64>,
}

impl CsQueues {
    pub(crate) fn new(shares: Vec<f64>) -> CsQueues {
        let n = shares.len();
        CsQueues { shares, running: vec![0; n] }
    }

    /// A queue the shares did not name gets share 0: it is served only when no named queue
    /// can use the resources.
    pub(crate) fn job_arrived(&mut self, view: &View, job: u32) {
        let q = view.queue(job) as usize;
        if q >= self.shares.len() {
            self.shares.resize(q + 1, 0.0);
            self.running.resize(q + 1, 0);
        }
    }

    pub(crate) fn launched(&mut self, view: &View, t: TaskRef) {
        self.running[view.queue(t.job) as usize] += 1;
    }

    pub(crate) fn finished(&mut self, view: &View, t: TaskRef) {
        let q = view.queue(t.job) as usize;
        self.running[q] = self.running[q].saturating_sub(1);
    }

    /// One container at a time: the neediest queue that still has a job with a fitting task
    /// gets it; `pick(view, job, left, chosen)` names that job's next task (it must fit `left`
    /// and not be in `chosen`, the tasks taken so far in this heartbeat), or `None`. `chosen`
    /// is the output list itself: a heartbeat fills one machine, so it stays short and a
    /// linear scan beats hashing.
    pub(crate) fn assign(
        &self,
        view: &View,
        free: &ResVec,
        out: &mut Vec<TaskRef>,
        mut pick: impl FnMut(&View, u32, &ResVec, &[TaskRef]) -> Option<TaskRef>,
    ) {
        let mut state = (*free, self.running.clone());
        serve_queues(
            self.shares.len(),
            &mut state,
            |(_, running), q| relative(running[q] as f64, self.shares[q]),
            |(left, running), q| {
                for &job in view.active() {
                    if view.queue(job) as usize != q {
                        continue;
                    }
                    if let Some(t) = pick(view, job, left, out) {
                        debug_assert!(fits(view, &view.requested(t.job, t.task), left));
                        left.sub_assign(&view.requested(t.job, t.task));
                        out.push(t);
                        running[q] += 1;
                        return true;
                    }
                }
                false
            },
        );
    }
}
