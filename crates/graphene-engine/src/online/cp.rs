//! `cp`: the Capacity Scheduler's queue and job choice, but within a job the runnable task with
//! the longest critical path to the job's end goes first (the papers' "CS with CP order").
//! The queue and job choice is [`CsQueues`], shared with `cs` and `graphene+cs`.

use std::collections::HashMap;

use super::capacity::CsQueues;
use super::{fits, Policy, TaskRef};
use crate::model::{paths, ResVec};
use crate::sim::View;

/// The runnable task of `job` with the highest `score` that fits `left` and is not in `chosen`
/// (ties: lower task id, i.e. stage order), scanning every runnable task.
pub(crate) fn best_in_job(view: &View, job: u32, left: &ResVec, chosen: &[TaskRef], score: &[f64]) -> Option<TaskRef> {
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

    /// The queue settings `cs` takes (accounting, user limit, YARN's mechanics).
    pub(crate) fn with_queues(mut self, f: impl FnOnce(CsQueues) -> CsQueues) -> CriticalPath {
        self.queues = f(self.queues);
        self
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

    /// As `cs`'s queues say (see `CsQueues::idle_is_stable`).
    fn idle_is_stable(&self) -> bool {
        self.queues.idle_is_stable()
    }

    fn assign(&mut self, view: &View, machine: usize, free: &ResVec, out: &mut Vec<TaskRef>) {
        let bl = &self.bl;
        self.queues.assign(view, machine, free, out, false, |view, job, left, chosen| match bl.get(&job) {
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
