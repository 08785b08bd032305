//! What the agent sees: one node per unfinished stage of every active job, with Decima's stage
//! features plus the two a multi-resource cluster adds, and the per-job bookkeeping they come
//! from.
//!
//! Node features x_v (divided by the constants below so that TPC-H values fall in about [0, 2]):
//! 0. tasks of the stage not launched yet / [`TASKS_SCALE`] (Decima: tasks remaining);
//! 1. mean estimated task duration / [`DURATION_SCALE`] (Decima: average task duration; the
//!    estimate the simulator shows every policy);
//! 2. tasks of the stage running / [`RUNNING_SCALE`] (Decima: executors on the stage);
//! 3. remaining work, tasks not launched x mean duration / [`WORK_SCALE`] (Decima: remaining
//!    work, in task-seconds);
//! 4. 1 when the stage has a runnable task (Decima: the frontier flag);
//! 5. 1 when that task fits what is left of the heartbeat's machine (new: executors are
//!    interchangeable in Decima, machines with leftover cores and memory are not);
//! 6. the task's requested demand as a dominant share of that machine's capacity (new: how much
//!    of the machine one task takes);
//! 7. the job's dominant share of the cluster (Decima gives every node its job's executor
//!    count; here a job holds resources, not executors; see [`super`] on limits).
//!
//! Job features (the limit score's extra input): the job's dominant share of the cluster, and
//! its remaining work / [`WORK_SCALE`].

use super::super::{fits, next_job_to_try, TaskRef};
use crate::model::{ResVec, MAX_RESOURCES};
use crate::sim::View;

/// Node features.
pub const F: usize = 8;
/// Job features.
pub const J: usize = 2;

/// Tasks: TPC-H stages run 1 to a few hundred tasks (up to ~2,000 at 20g).
pub const TASKS_SCALE: f64 = 200.0;
/// Seconds: TPC-H mean task durations are 0.1 s to ~100 s.
pub const DURATION_SCALE: f64 = 100.0;
/// Running tasks: about one machine's worth of 1-4-core tasks on 16-core machines.
pub const RUNNING_SCALE: f64 = 20.0;
/// Task-seconds: a large TPC-H stage holds ~10^4.
pub const WORK_SCALE: f64 = 1e4;

/// How counts, durations and work become features. A model file says which its weights were
/// trained with (`trained.features`, see [`super::model::Model::scaling`]); files without it
/// are [`Scaling::Linear`], so older models see exactly what they were trained on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scaling {
    /// Value / scale (the constants above): small jobs' values sit near 0, a few thousandths
    /// apart.
    #[default]
    Linear,
    /// `ln(1 + v / unit) / ln(1 + scale / unit)` for features 0, 1 and 3 and the job's
    /// remaining work (tasks: unit 1; seconds: 0.1; task-seconds: 1): the same 0 to about 1
    /// range, but a 10 task-second job and a 100 task-second one differ by 0.25, not 0.009,
    /// so that an order by remaining work (what shortest-work heuristics use) is easy to
    /// express. Running tasks, flags and shares stay linear (they are already of order 1).
    Log,
}

impl Scaling {
    /// The name kept in a model file (`trained.features`); None for the default.
    pub fn name(self) -> Option<&'static str> {
        match self {
            Scaling::Linear => None,
            Scaling::Log => Some("log"),
        }
    }

    pub fn parse(name: &str) -> Option<Scaling> {
        match name {
            "linear" => Some(Scaling::Linear),
            "log" => Some(Scaling::Log),
            _ => None,
        }
    }

    fn tasks(self, v: f64) -> f64 {
        self.apply(v, TASKS_SCALE, 1.0)
    }

    fn duration(self, v: f64) -> f64 {
        self.apply(v, DURATION_SCALE, 0.1)
    }

    fn work(self, v: f64) -> f64 {
        self.apply(v, WORK_SCALE, 1.0)
    }

    fn apply(self, v: f64, scale: f64, unit: f64) -> f64 {
        match self {
            Scaling::Linear => v / scale,
            Scaling::Log => (v / unit).ln_1p() / (scale / unit).ln_1p(),
        }
    }
}

/// One decision's input: the nodes, their edges, their jobs and the candidates.
#[derive(Clone, Debug, Default)]
pub struct Obs {
    pub x: Vec<[f64; F]>,
    /// Children of node v: `child[child_start[v]..child_start[v + 1]]` (node indices).
    child_start: Vec<u32>,
    child: Vec<u32>,
    pub has_parent: Vec<bool>,
    /// Index (into the observation's jobs) of each node's job.
    pub job_of: Vec<u32>,
    /// Nodes of job i: `job_first[i]..job_first[i + 1]`.
    job_first: Vec<u32>,
    pub job_x: Vec<[f64; J]>,
    /// Each job's dominant share of the cluster (what the limit levels are compared with).
    pub share: Vec<f64>,
    /// Nodes the agent may pick: a runnable task that fits the machine. In node order.
    pub cand: Vec<u32>,
    /// (job id, stage id) of each node.
    pub stage: Vec<(u32, u32)>,
}

impl Obs {
    pub fn children(&self, v: usize) -> &[u32] {
        &self.child[self.child_start[v] as usize..self.child_start[v + 1] as usize]
    }

    pub fn jobs(&self) -> usize {
        self.job_first.len().saturating_sub(1)
    }

    pub fn nodes_of(&self, i: usize) -> std::ops::Range<usize> {
        self.job_first[i] as usize..self.job_first[i + 1] as usize
    }

    /// Builds an observation from parts (tests and tools): per job, its node features, its
    /// edges as (parent, child) node indices local to the job (parent < child), which local
    /// nodes are candidates, its job features and share.
    pub fn from_parts(jobs: &[JobParts]) -> Obs {
        let mut b = Builder::default();
        for (ji, (xs, edges, cands, jx, share)) in jobs.iter().enumerate() {
            let base = b.obs.x.len() as u32;
            let mut kids = vec![Vec::new(); xs.len()];
            let mut has_parent = vec![false; xs.len()];
            for &(p, c) in edges {
                assert!(p < c, "edges go from a lower to a higher node index (topological order)");
                kids[p as usize].push(base + c);
                has_parent[c as usize] = true;
            }
            for (v, x) in xs.iter().enumerate() {
                b.node(*x, &kids[v], has_parent[v], (ji as u32, v as u32), cands.contains(&(v as u32)));
            }
            b.end_job(*jx, *share);
        }
        b.finish()
    }
}

/// One job for [`Obs::from_parts`]: node features, (parent, child) edges, candidate nodes, job
/// features, share.
pub type JobParts = (Vec<[f64; F]>, Vec<(u32, u32)>, Vec<u32>, [f64; J], f64);

#[derive(Default)]
struct Builder {
    obs: Obs,
}

impl Builder {
    fn node(&mut self, x: [f64; F], kids: &[u32], has_parent: bool, stage: (u32, u32), cand: bool) {
        let o = &mut self.obs;
        if o.child_start.is_empty() {
            o.child_start.push(0);
        }
        if o.job_first.is_empty() {
            o.job_first.push(0);
        }
        let v = o.x.len() as u32;
        o.x.push(x);
        o.child.extend_from_slice(kids);
        o.child_start.push(o.child.len() as u32);
        o.has_parent.push(has_parent);
        o.job_of.push((o.job_first.len() - 1) as u32);
        o.stage.push(stage);
        if cand {
            o.cand.push(v);
        }
    }

    fn end_job(&mut self, jx: [f64; J], share: f64) {
        let o = &mut self.obs;
        if o.job_first.is_empty() {
            o.job_first.push(0);
        }
        o.job_first.push(o.x.len() as u32);
        o.job_x.push(jx);
        o.share.push(share);
    }

    fn finish(mut self) -> Obs {
        if self.obs.child_start.is_empty() {
            self.obs.child_start.push(0);
        }
        if self.obs.job_first.is_empty() {
            self.obs.job_first.push(0);
        }
        self.obs
    }
}

/// The policy's per-job bookkeeping, indexed by job id (the simulator numbers jobs 0, 1, ... in
/// arrival order). A vector rather than a hash map: every heartbeat looks up every active job,
/// and on the 1,000-machine Alibaba hour hashing was a tenth of the replay's time.
#[derive(Clone, Debug, Default)]
pub struct Tracks(Vec<Option<JobTrack>>);

impl Tracks {
    pub fn get(&self, job: u32) -> Option<&JobTrack> {
        self.0.get(job as usize).and_then(Option::as_ref)
    }

    pub fn get_mut(&mut self, job: u32) -> Option<&mut JobTrack> {
        self.0.get_mut(job as usize).and_then(Option::as_mut)
    }

    pub fn insert(&mut self, job: u32, t: JobTrack) {
        let i = job as usize;
        if self.0.len() <= i {
            self.0.resize_with(i + 1, || None);
        }
        self.0[i] = Some(t);
    }

    pub fn remove(&mut self, job: u32) {
        if let Some(slot) = self.0.get_mut(job as usize) {
            *slot = None;
        }
    }

    /// The start of a heartbeat's assignment: freed resources `left` go back to the committed
    /// stages of `jobs` first (every active job in arrival order, or the machine's own job
    /// alone), each up to its job's limit; jobs given tasks join `touched`.
    pub fn refill_committed(
        &mut self,
        view: &View,
        jobs: &[u32],
        total: &ResVec,
        left: &mut ResVec,
        out: &mut Vec<TaskRef>,
        touched: &mut Vec<u32>,
    ) {
        for &job in jobs {
            let Some(tr) = self.get_mut(job) else { continue };
            if tr.committed.is_empty() {
                continue;
            }
            let committed = std::mem::take(&mut tr.committed);
            for &s in &committed {
                if take(view, tr, total, job, s, tr.limit, false, left, out) > 0 {
                    touched.push(job);
                }
            }
            tr.committed = committed;
        }
    }

    /// The end of a heartbeat's assignment: the picks of the jobs in `touched` are the
    /// simulator's to launch (or not) now, so they stop counting as picked.
    pub fn clear_picks(&mut self, touched: &mut Vec<u32>) {
        for job in touched.drain(..) {
            if let Some(tr) = self.get_mut(job) {
                tr.pend.iter_mut().for_each(|p| *p = 0);
                tr.pend_held = ResVec::ZERO;
            }
        }
    }
}

/// The cluster's total capacity, which shares are measured against.
pub fn cluster_total(view: &View) -> ResVec {
    view.caps.iter().fold(ResVec::ZERO, |a, c| a.add(c))
}

/// What the policy keeps per active job between heartbeats.
#[derive(Clone, Debug)]
pub struct JobTrack {
    pub launched: Vec<u32>,
    pub finished: Vec<u32>,
    /// Mean estimated duration and mean requested demand of each stage's tasks.
    pub mean_dur: Vec<f64>,
    pub demand: Vec<ResVec>,
    /// Requested demand of the job's running tasks.
    pub held: ResVec,
    /// The parallelism limit of the job's last action (a share of the cluster).
    pub limit: f64,
    /// Stages an action picked that still have tasks to launch: they keep getting the job's
    /// freed resources up to the limit, as Decima's executors stay on their stage.
    pub committed: Vec<u32>,
    /// Tasks picked in the current heartbeat, not launched yet: per stage, and their demand.
    pub pend: Vec<u32>,
    pub pend_held: ResVec,
    /// The job's runnable task count after the last launch or finish the policy saw: a finish
    /// that raises it released tasks (see [`super::memo`]).
    pub runnable_seen: usize,
}

impl JobTrack {
    pub fn new(view: &View, job: u32) -> JobTrack {
        let dag = view.dag(job);
        let stages = dag.stages.len();
        let mut mean_dur = vec![0.0; stages];
        let mut demand = vec![ResVec::ZERO; stages];
        for (s, st) in dag.stages.iter().enumerate() {
            let n = st.len.max(1) as f64;
            for t in st.tasks() {
                mean_dur[s] += view.estimated_duration(job, t) / n;
                demand[s].add_assign(&view.requested(job, t).scale(1.0 / n));
            }
        }
        JobTrack {
            launched: vec![0; stages],
            finished: vec![0; stages],
            mean_dur,
            demand,
            held: ResVec::ZERO,
            limit: 0.0,
            committed: Vec::new(),
            pend: vec![0; stages],
            pend_held: ResVec::ZERO,
            runnable_seen: view.job_state(job).runnable_count,
        }
    }

    /// Dominant share of the cluster held by running and just-picked tasks.
    pub fn share(&self, total: &ResVec, hard: &[bool; MAX_RESOURCES]) -> f64 {
        let mut s = 0.0f64;
        for r in 0..MAX_RESOURCES {
            if hard[r] && total.0[r] > 0.0 {
                s = s.max((self.held.0[r] + self.pend_held.0[r]) / total.0[r]);
            }
        }
        s
    }

    /// Tasks of stage `s` neither launched nor picked in this heartbeat.
    pub fn unlaunched(&self, view: &View, job: u32, s: usize) -> u32 {
        view.dag(job).stages[s].len.saturating_sub(self.launched[s] + self.pend[s])
    }

    /// After an action on `stage` with `limit`: the job's limit is the action's, and the stage
    /// is committed (it keeps getting the job's freed resources).
    pub fn commit(&mut self, stage: u32, limit: f64) {
        self.limit = limit;
        if !self.committed.contains(&stage) {
            self.committed.push(stage);
        }
    }

    /// Books the launch of task `t` of this job; returns its stage. A stage is uncommitted once
    /// every task of it is launched (it has nothing left to give freed resources to, and no
    /// action can pick it again).
    pub fn book_launch(&mut self, view: &View, t: TaskRef) -> usize {
        let dag = view.dag(t.job);
        let s = dag.tasks[t.task as usize].stage as usize;
        self.launched[s] += 1;
        self.held.add_assign(&view.requested(t.job, t.task));
        if self.launched[s] >= dag.stages[s].len {
            self.committed.retain(|&c| c as usize != s);
        }
        s
    }

    /// Books the finish of task `t` of this job (one that does not end the job).
    pub fn book_finish(&mut self, view: &View, t: TaskRef) {
        let s = view.dag(t.job).tasks[t.task as usize].stage as usize;
        self.finished[s] += 1;
        self.held.sub_assign(&view.requested(t.job, t.task));
    }

    fn remaining_work(&self, view: &View, job: u32) -> f64 {
        (0..self.launched.len()).map(|s| self.unlaunched(view, job, s) as f64 * self.mean_dur[s]).sum()
    }
}

/// The next runnable task of stage `s` not picked yet in this heartbeat (tasks are picked
/// lowest id first, so the first `pend` of them are taken).
pub fn next_task(view: &View, track: &JobTrack, job: u32, s: u32) -> Option<u32> {
    view.job_state(job).runnable_in(s).iter().rev().nth(track.pend[s as usize] as usize).copied()
}

/// Whether some runnable task not picked yet fits `left`: exactly when [`observe`] would give
/// candidates, at a fraction of its cost (no features, no allocation). A heartbeat on a machine
/// whose leftovers fit nothing then skips the observation and the network altogether.
///
/// `picked` is what this heartbeat picked so far. Only the jobs the simulator's index of jobs
/// says may fit ([`View::next_job_may_fit`]) and the jobs with a pick are tried: a job without
/// one offers each runnable stage's lowest task, the task the index holds, so the others have
/// nothing that fits. So the test costs the jobs that may fit, not every waiting job (thousands
/// at a time on the Alibaba hour).
pub fn any_fits(view: &View, jobs: &Tracks, left: &ResVec, picked: &[TaskRef]) -> bool {
    let mut from = 0;
    while let Some(job) = next_job_to_try(view, from, left, picked) {
        let fits_here = jobs.get(job).is_some_and(|tr| {
            view.job_state(job)
                .runnable_stages
                .iter()
                .any(|&s| next_task(view, tr, job, s).is_some_and(|t| fits(view, &view.requested(job, t), left)))
        });
        if fits_here {
            return true;
        }
        let Some(next) = job.checked_add(1) else { break };
        from = next;
    }
    false
}

/// The observation for machine `machine` (capacity `cap`) with `left` free, over `jobs`.
pub fn observe(view: &View, jobs: &Tracks, total: &ResVec, cap: &ResVec, left: &ResVec) -> Obs {
    observe_scaled(view, jobs, total, cap, left, Scaling::Linear)
}

/// [`observe`] with the features scaled by `scaling`.
pub fn observe_scaled(
    view: &View,
    jobs: &Tracks,
    total: &ResVec,
    cap: &ResVec,
    left: &ResVec,
    scaling: Scaling,
) -> Obs {
    let hard = view.hard;
    let mut b = Builder::default();
    let mut local = Vec::new();
    for (ji, &job) in view.active().iter().enumerate() {
        let Some(tr) = jobs.get(job) else { continue };
        let dag = view.dag(job);
        let share = tr.share(total, &hard);
        local.clear();
        local.resize(dag.stages.len(), u32::MAX);
        let base = b.obs.x.len() as u32;
        let mut n = 0;
        for (s, st) in dag.stages.iter().enumerate() {
            if tr.finished[s] < st.len {
                local[s] = base + n;
                n += 1;
            }
        }
        let _ = ji;
        let mut kids = Vec::new();
        for (s, st) in dag.stages.iter().enumerate() {
            if local[s] == u32::MAX {
                continue;
            }
            kids.clear();
            kids.extend(st.children.iter().map(|e| local[e.stage as usize]).filter(|&u| u != u32::MAX));
            let has_parent = st.parents.iter().any(|e| local[e.stage as usize] != u32::MAX);
            let next = next_task(view, tr, job, s as u32);
            let fit = next.is_some_and(|t| fits(view, &view.requested(job, t), left));
            let unl = tr.unlaunched(view, job, s) as f64;
            let running = tr.launched[s].saturating_sub(tr.finished[s]) as f64;
            let mut on_machine = 0.0f64;
            for r in 0..view.dims {
                if hard[r] && cap.0[r] > 0.0 {
                    on_machine = on_machine.max(tr.demand[s].0[r] / cap.0[r]);
                }
            }
            let x = [
                scaling.tasks(unl),
                scaling.duration(tr.mean_dur[s]),
                running / RUNNING_SCALE,
                scaling.work(unl * tr.mean_dur[s]),
                f64::from(next.is_some()),
                f64::from(fit),
                on_machine.min(1.0),
                share,
            ];
            b.node(x, &kids, has_parent, (job, s as u32), fit);
        }
        if n > 0 {
            b.end_job([share, scaling.work(tr.remaining_work(view, job))], share);
        }
    }
    b.finish()
}

/// Picks runnable tasks of `stage` that fit `left` while the job's share is below `limit` (the
/// first regardless, when `force`); returns how many. Decima's rule for turning a ⟨stage,
/// parallelism limit⟩ action into launches, shared by the `decima` policy and `graphene::env`.
#[allow(clippy::too_many_arguments)]
pub fn take(
    view: &View,
    tr: &mut JobTrack,
    total: &ResVec,
    job: u32,
    stage: u32,
    limit: f64,
    force: bool,
    left: &mut ResVec,
    out: &mut Vec<TaskRef>,
) -> usize {
    let mut n = 0;
    while let Some(t) = next_task(view, tr, job, stage) {
        if !(tr.share(total, &view.hard) < limit || (force && n == 0)) {
            break;
        }
        let d = view.requested(job, t);
        if !fits(view, &d, left) {
            break;
        }
        left.sub_assign(&d);
        tr.pend[stage as usize] += 1;
        tr.pend_held.add_assign(&d);
        out.push(TaskRef { job, task: t });
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_scaling_is_the_old_division_and_log_spreads_small_values() {
        for v in [0.0, 0.03, 1.0, 37.0, 200.0, 1e4] {
            assert_eq!(Scaling::Linear.tasks(v), v / TASKS_SCALE);
            assert_eq!(Scaling::Linear.duration(v), v / DURATION_SCALE);
            assert_eq!(Scaling::Linear.work(v), v / WORK_SCALE);
        }
        let l = Scaling::Log;
        assert_eq!(l.work(0.0), 0.0);
        assert!((l.work(WORK_SCALE) - 1.0).abs() < 1e-12 && (l.tasks(TASKS_SCALE) - 1.0).abs() < 1e-12);
        assert!((l.duration(DURATION_SCALE) - 1.0).abs() < 1e-12);
        // 10 and 100 task-seconds: a quarter apart, against 0.009 linearly.
        assert!(l.work(100.0) - l.work(10.0) > 0.2, "{}", l.work(100.0) - l.work(10.0));
        let xs: Vec<f64> = [0.0, 0.5, 3.0, 40.0, 900.0, 5e4].iter().map(|&v| l.work(v)).collect();
        assert!(xs.windows(2).all(|w| w[0] < w[1]), "monotone: {xs:?}");
        assert_eq!(Scaling::parse("log"), Some(Scaling::Log));
        assert_eq!(Scaling::parse("linear"), Some(Scaling::Linear));
        assert_eq!(Scaling::parse("cubic"), None);
        assert_eq!((Scaling::Linear.name(), Scaling::Log.name()), (None, Some("log")));
    }
}
