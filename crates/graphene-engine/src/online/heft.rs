//! `heft` online: HEFT's two halves (Topcuoglu et al.) in the heartbeat model, for clusters whose
//! machines differ in speed (`replay --speeds`, or `speed` in a cluster file).
//!
//! * Task priority: the upward rank, the longest path of estimated durations from the task to
//!   the job's end. HEFT weighs each task by its mean cost over the processors; on machines that
//!   differ only in speed that is the duration times the mean of 1 / speed, the same factor for
//!   every task, so the order is the bottom level's. The replayed traces carry no data on their
//!   edges, so the communication term is zero. All active jobs share one list (HEFT knows no
//!   queues, like `tetris`).
//! * Processor choice: HEFT puts the task where it finishes first. At a heartbeat only one
//!   machine asks for work, so the highest-ranked task goes to it unless a faster machine has
//!   room for it right now (it would finish there sooner; that machine takes it at its next
//!   heartbeat, within `--heartbeat` seconds). A faster machine that is busy but frees up soon
//!   is not waited for: the policy does not guess finish times.
//!
//! Candidates are stage-level, as in `tetris`: each runnable stage offers its next runnable task
//! not chosen yet, ranked by the stage's highest upward rank, so a pass costs O(runnable stages)
//! plus the machines scanned for a faster one. Capacity is YARN's: hard resources only (disk
//! and network may be overbooked, as for `cs` and `cp`). Ties: earlier job, then lower stage.

use std::collections::HashMap;

use super::cp::estimated_bottom_levels;
use super::{fits, Policy, TaskRef};
use crate::model::ResVec;
use crate::sim::View;

#[derive(Default)]
pub struct HeftOnline {
    /// Per active job, the upward rank of each stage (the highest of its tasks').
    rank: HashMap<u32, Vec<f64>>,
    /// Machines, fastest first (speeds do not change during a replay): the machines faster
    /// than the asking one are a prefix, found without scanning the cluster.
    by_speed: Vec<usize>,
    /// Tasks picked per (job, stage) in this heartbeat. A stage's picks are always its next
    /// runnable tasks in order, so the next candidate is found by position.
    picked: HashMap<(u32, u32), usize>,
}

impl HeftOnline {
    pub fn new() -> HeftOnline {
        HeftOnline::default()
    }
}

impl Policy for HeftOnline {
    fn name(&self) -> String {
        "heft".into()
    }

    fn job_arrived(&mut self, view: &View, job: u32) {
        let bl = estimated_bottom_levels(view, job);
        let dag = view.dag(job);
        let mut rank = vec![0.0f64; dag.stages.len()];
        for (t, task) in dag.tasks.iter().enumerate() {
            let r = &mut rank[task.stage as usize];
            *r = r.max(bl[t]);
        }
        self.rank.insert(job, rank);
    }

    /// Other machines' free resources, which it reads, change only on launches and finishes.
    fn idle_is_stable(&self) -> bool {
        true
    }

    fn assign(&mut self, view: &View, machine: usize, free: &ResVec, out: &mut Vec<TaskRef>) {
        if self.by_speed.len() != view.caps.len() {
            self.by_speed = (0..view.caps.len()).collect();
            // Stable: equal speeds keep machine order.
            self.by_speed.sort_by(|&a, &b| view.speed(b).total_cmp(&view.speed(a)));
        }
        let speed = view.speed(machine);
        let faster = &self.by_speed[..self.by_speed.partition_point(|&m| view.speed(m) > speed)];
        self.picked.clear();
        let mut left = *free;
        // Stages whose next task belongs on a faster machine, for the rest of this heartbeat.
        let mut elsewhere: Vec<(u32, u32)> = Vec::new();
        loop {
            let mut best: Option<(f64, u32, u32, TaskRef)> = None;
            for &job in view.active() {
                let Some(rank) = self.rank.get(&job) else { continue };
                let st = view.job_state(job);
                for &s in &st.runnable_stages {
                    let r = rank[s as usize];
                    if best.is_some_and(|(b, ..)| r <= b) || elsewhere.contains(&(job, s)) {
                        continue;
                    }
                    let taken = self.picked.get(&(job, s)).copied().unwrap_or(0);
                    let Some(&t) = st.runnable_in(s).iter().rev().nth(taken) else {
                        continue;
                    };
                    if fits(view, &view.requested(job, t), &left) {
                        best = Some((r, job, s, TaskRef { job, task: t }));
                    }
                }
            }
            let Some((_, job, s, t)) = best else { return };
            let d = view.requested(t.job, t.task);
            if faster.iter().any(|&m| fits(view, &d, &view.free(m))) {
                elsewhere.push((job, s));
                continue;
            }
            left.sub_assign(&d);
            *self.picked.entry((job, s)).or_default() += 1;
            out.push(t);
        }
    }

    fn finished(&mut self, view: &View, t: TaskRef) {
        if view.job_state(t.job).left == 0 {
            self.rank.remove(&t.job);
        }
    }
}
