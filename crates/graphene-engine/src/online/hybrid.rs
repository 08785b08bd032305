//! Graphene's offline half fed to an agnostic online part, to measure what each half is worth:
//!
//! * `graphene+cs`: the Capacity Scheduler's queue and job choice ([`CsQueues`]), but within a
//!   job the runnable task with the highest priScore first (ties: lower task id).
//! * `graphene+tetris`: Tetris's packing alignment multiplied by priScore, over the runnable
//!   tasks of all jobs in one pool; no remaining-work (SRPT) term and no fairness, so the
//!   offline order is the only thing added to plain packing. A task with priScore 0 (the last
//!   of its job's order) scores 0 and still runs when nothing better fits. Candidates and ties
//!   as in `tetris` (stage-level, earlier job, lower stage).
//!
//! priScore comes from the same [`PriorityCache`] as `graphene` (offline constructor for large
//! jobs, the cheap BFS rule below its bypass threshold, cached by DAG shape), computed once per
//! job on arrival.

use std::collections::HashMap;
use std::sync::Arc;

use super::capacity::CsQueues;
use super::cp::best_in_job;
use super::priority_cache::PriorityCache;
use super::tetris::{best, candidates, take, Cand, Chosen};
use super::{GrapheneOnline, Policy, TaskRef};
use crate::model::ResVec;
use crate::sim::View;

/// priScore per task of each active job.
struct Priorities {
    cache: PriorityCache,
    jobs: HashMap<u32, Arc<Vec<f64>>>,
}

impl Priorities {
    fn new(cfg: &GrapheneOnline) -> Priorities {
        Priorities { cache: PriorityCache::new(cfg.bypass_tasks, cfg.offline_machines), jobs: HashMap::new() }
    }

    fn arrived(&mut self, view: &View, job: u32) {
        let pri = self.cache.job_scores(view, job, None);
        self.jobs.insert(job, Arc::new(pri.iter().map(|&p| p as f64).collect()));
    }

    fn finished(&mut self, view: &View, t: TaskRef) {
        if view.job_state(t.job).left == 0 {
            self.jobs.remove(&t.job);
        }
    }
}

pub struct GrapheneCs {
    queues: CsQueues,
    pri: Priorities,
}

impl GrapheneCs {
    pub fn new(shares: Vec<f64>, cfg: &GrapheneOnline) -> GrapheneCs {
        GrapheneCs { queues: CsQueues::new(shares), pri: Priorities::new(cfg) }
    }

    /// The queue settings `cs` takes (accounting, user limit, YARN's mechanics).
    pub(crate) fn with_queues(mut self, f: impl FnOnce(CsQueues) -> CsQueues) -> GrapheneCs {
        self.queues = f(self.queues);
        self
    }
}

impl Policy for GrapheneCs {
    fn name(&self) -> String {
        "graphene+cs".into()
    }

    fn job_arrived(&mut self, view: &View, job: u32) {
        self.queues.job_arrived(view, job);
        self.pri.arrived(view, job);
    }

    /// As `cs`'s queues say (see `CsQueues::idle_is_stable`).
    fn idle_is_stable(&self) -> bool {
        self.queues.idle_is_stable()
    }

    fn assign(&mut self, view: &View, machine: usize, free: &ResVec, out: &mut Vec<TaskRef>) {
        let pri = &self.pri.jobs;
        self.queues.assign(view, machine, free, out, false, |view, job, left, chosen| {
            pri.get(&job).and_then(|score| best_in_job(view, job, left, chosen, score))
        });
    }

    fn launched(&mut self, view: &View, t: TaskRef) {
        self.queues.launched(view, t);
    }

    fn finished(&mut self, view: &View, t: TaskRef) {
        self.queues.finished(view, t);
        self.pri.finished(view, t);
    }
}

pub struct GrapheneTetris {
    pri: Priorities,
    cands: Vec<Cand>,
    stages: Vec<u32>,
}

impl GrapheneTetris {
    pub fn new(cfg: &GrapheneOnline) -> GrapheneTetris {
        GrapheneTetris { pri: Priorities::new(cfg), cands: Vec::new(), stages: Vec::new() }
    }
}

impl Policy for GrapheneTetris {
    fn name(&self) -> String {
        "graphene+tetris".into()
    }

    fn job_arrived(&mut self, view: &View, job: u32) {
        self.pri.arrived(view, job);
    }

    fn assign(&mut self, view: &View, machine: usize, free: &ResVec, out: &mut Vec<TaskRef>) {
        let Some(cap) = view.caps.get(machine).copied() else { return };
        let mut left = *free;
        let mut cands = std::mem::take(&mut self.cands);
        let mut chosen = Chosen::default();
        candidates(view, &cap, &left, &mut self.stages, &mut cands);
        while !cands.is_empty() {
            let score = |c: &Cand| c.align * self.pri.jobs.get(&c.job).map_or(0.0, |p| p[c.task as usize]);
            let i = best(&cands, score);
            take(view, &cap, &mut cands, i, &mut left, &mut chosen, out);
        }
        self.cands = cands;
    }

    fn finished(&mut self, view: &View, t: TaskRef) {
        self.pri.finished(view, t);
    }
}
