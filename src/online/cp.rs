//! `cp`: the Capacity Scheduler's queue and job choice, but within a job the runnable task with
//! the longest critical path to the job's end goes first (the papers' "CS with CP order").
//!
//! The queue choice repeats [`super::CapacityScheduler`]'s rule (the queue with the fewest
//! running tasks per unit of guaranteed share gets the next container; queues without a share
//! come last; within the queue, jobs in arrival order). `CapacityScheduler` keeps that rule
//! private and hard-wires breadth-first order inside a job, so [`CsQueues`] restates it with the
//! in-job choice as a parameter; `graphene+cs` (in `hybrid.rs`) shares it.

use std::collections::{HashMap, HashSet};

use super::{fits, relative, serve_queues, Policy, TaskRef};
use crate::model::{paths, ResVec};
use crate::sim::View;

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

    /// A queue the shares did not name gets share 0 (served only when no named queue can use
    /// the machine), as in `CapacityScheduler`.
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
    /// and not be in `chosen`), or `None`.
    pub(crate) fn assign(
        &self,
        view: &View,
        free: &ResVec,
        out: &mut Vec<TaskRef>,
        mut pick: impl FnMut(&View, u32, &ResVec, &HashSet<TaskRef>) -> Option<TaskRef>,
    ) {
        let mut state = (*free, self.running.clone(), HashSet::<TaskRef>::new());
        serve_queues(
            self.shares.len(),
            &mut state,
            |(_, running, _), q| relative(running[q] as f64, self.shares[q]),
            |(left, running, chosen), q| {
                for &job in view.active() {
                    if view.queue(job) as usize != q {
                        continue;
                    }
                    if let Some(t) = pick(view, job, left, chosen) {
                        debug_assert!(fits(view, &view.requested(t.job, t.task), left));
                        left.sub_assign(&view.requested(t.job, t.task));
                        chosen.insert(t);
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

/// The runnable task of `job` with the highest `score` that fits `left` and is not in `chosen`
/// (ties: lower task id, i.e. stage order), scanning every runnable task.
pub(crate) fn best_in_job(
    view: &View,
    job: u32,
    left: &ResVec,
    chosen: &HashSet<TaskRef>,
    score: &[f64],
) -> Option<TaskRef> {
    let st = view.job_state(job);
    let mut best: Option<(f64, u32)> = None;
    for &s in &st.runnable_stages {
        for &t in st.runnable_in(s) {
            let better = match best {
                None => true,
                Some((b, bt)) => score[t as usize] > b || (score[t as usize] == b && t < bt),
            };
            if !better || chosen.contains(&TaskRef { job, task: t }) {
                continue;
            }
            if fits(view, &view.requested(job, t), left) {
                best = Some((score[t as usize], t));
            }
        }
    }
    best.map(|(_, task)| TaskRef { job, task })
}

/// Longest path from each task to the job's end on the durations the scheduler estimates.
pub(crate) fn estimated_bottom_levels(view: &View, job: u32) -> Vec<f64> {
    let mut dag = view.dag(job).clone();
    for (t, task) in dag.tasks.iter_mut().enumerate() {
        let d = view.estimated_duration(job, t as u32);
        task.duration = if d.is_finite() && d >= 0.0 { d } else { 0.0 };
    }
    paths::bottom_levels(&dag)
}

pub struct CriticalPath {
    queues: CsQueues,
    /// Bottom level per task of each active job, computed once on arrival.
    bl: HashMap<u32, Vec<f64>>,
}

impl CriticalPath {
    pub fn new(shares: Vec<f64>) -> CriticalPath {
        CriticalPath { queues: CsQueues::new(shares), bl: HashMap::new() }
    }
}

impl Policy for CriticalPath {
    fn name(&self) -> String {
        "cp".into()
    }

    fn job_arrived(&mut self, view: &View, job: u32) {
        self.queues.job_arrived(view, job);
        self.bl.insert(job, estimated_bottom_levels(view, job));
    }

    fn assign(&mut self, view: &View, _machine: usize, free: &ResVec, out: &mut Vec<TaskRef>) {
        let bl = &self.bl;
        self.queues.assign(view, free, out, |view, job, left, chosen| match bl.get(&job) {
            Some(score) => best_in_job(view, job, left, chosen, score),
            None => None,
        });
    }

    fn launched(&mut self, view: &View, t: TaskRef) {
        self.queues.launched(view, t);
    }

    fn finished(&mut self, view: &View, t: TaskRef) {
        self.queues.finished(view, t);
        if view.job_state(t.job).left == 0 {
            self.bl.remove(&t.job);
        }
    }
}
