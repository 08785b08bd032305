//! What the selection agent sees at a decision: one node per stage that still has tasks to place,
//! grouped by job, with LACHESIS's node features (section IV-A) and the edges between them.
//!
//! Node features x_v (time-like values divided by `cp`, the batch's longest upward rank, so that
//! batches of 1 or 20 jobs and transfer-light or transfer-heavy edges give values of one scale;
//! sums of work and task counts go through ln(1 + .) because they span four orders of magnitude):
//! 0. the job's tasks left to place, ln(1 + n) / 8 (the paper's "number of left tasks" of the job);
//! 1. the job's left work, ln(1 + sum of mean run times of its unplaced tasks / cp) (the paper's
//!    "sum of average execution time for left tasks");
//! 2. the stage's tasks left to place, ln(1 + n) / 8;
//! 3. the stage's left work, ln(1 + sum of mean run times of its unplaced tasks / cp) (the paper's
//!    "average left execution time" of the node);
//! 4. the mean, over the stage's task-to-task in-edges, of the mean transfer time / cp (the
//!    paper's "average time cost of incoming data");
//! 5. the same over its out-edges ("average time cost of outgoing data");
//! 6. rank_up / cp (eq. 5; the largest over the stage's tasks; with per-task decisions
//!    ([`State::ready_rank`]), for a candidate, the largest over its ready tasks, i.e. the rank
//!    of the task the decision would place, so that the score can fall below another stage's
//!    as the stage's highest-rank tasks are placed, as RankUp-DEFT's order does);
//! 7. rank_down / cp (eq. 6; the largest over the stage's tasks);
//! 8. 1 when the stage has a ready task (all parents placed), i.e. it is a candidate;
//! 9. for a candidate, (the earliest time the data of one of its ready tasks exists - the time
//!    the first executor becomes free) / cp: how long its best task would wait for inputs; 0
//!    otherwise. This is the "executor information" of the paper's Figure 4, which does not
//!    list it; without it the policy would not see how far the schedule has progressed.
//! 10. the stage's ready tasks, ln(1 + n) / 8.
//!
//! Edge feature a (eq. 7's h term, one per stage-to-stage edge): the mean transfer time of one
//! task pair's data / cp.
//!
//! Departure: a node is a stage, not a task. The paper's Figure 4 scores "candidate job stages";
//! its features are those of "a job stage"; and the tasks of a TPC-H stage are parallel copies
//! with the same parents, children and ranks up to their own work, so a task-level graph
//! (20,000 nodes for 20 jobs) would repeat one node's inputs hundreds of times per decision.

use std::ops::Range;

use super::super::deft;
use super::super::instance::Instance;
use super::super::plan::Plan;
use super::super::rank;
use crate::model::Dag;

/// Node features.
pub const F: usize = 11;
/// Edge features.
pub const A: usize = 1;

const COUNT: f64 = 8.0;

fn count(n: usize) -> f64 {
    (1.0 + n as f64).ln() / COUNT
}

/// The stage-level structure of an instance, fixed for an episode.
pub struct Graph {
    tasks: Vec<Range<u32>>,
    /// (child stage, edge feature) of each stage.
    children: Vec<Vec<(u32, f64)>>,
    stage_of: Vec<u32>,
    job_of: Vec<u32>,
    jobs: usize,
    /// Per stage, already divided by cp: rank_up, rank_down, mean in-edge and out-edge transfer.
    rank_up: Vec<f64>,
    rank_down: Vec<f64>,
    in_tr: Vec<f64>,
    out_tr: Vec<f64>,
    /// Per task: mean run time over machines, and upward rank (the order inside a stage).
    mean_cost: Vec<f64>,
    task_rank: Vec<f64>,
    cp: f64,
}

impl Graph {
    /// The jobs are the weakly connected components of the stage DAG (in a batch, each job's
    /// DAG; for a single DAG, usually one).
    pub fn new(dag: &Dag, inst: &Instance) -> Graph {
        let ns = dag.stages.len();
        let mut comp: Vec<u32> = (0..ns as u32).collect();
        fn root(c: &mut [u32], mut x: u32) -> u32 {
            while c[x as usize] != x {
                c[x as usize] = c[c[x as usize] as usize];
                x = c[x as usize];
            }
            x
        }
        for (s, st) in dag.stages.iter().enumerate() {
            for e in &st.parents {
                let (a, b) = (root(&mut comp, s as u32), root(&mut comp, e.stage));
                let (lo, hi) = (a.min(b), a.max(b));
                comp[hi as usize] = lo;
            }
        }
        let mut job_id = vec![u32::MAX; ns];
        let mut job_of = vec![0u32; ns];
        let mut jobs = 0u32;
        for s in 0..ns {
            let r = root(&mut comp, s as u32) as usize;
            if job_id[r] == u32::MAX {
                job_id[r] = jobs;
                jobs += 1;
            }
            job_of[s] = job_id[r];
        }
        let up = rank::upward(inst);
        let down = rank::downward(inst, false);
        let cp = up.iter().copied().fold(0.0, f64::max);
        let cp = if cp > 0.0 && cp.is_finite() { cp } else { 1.0 };
        let mean_cost = rank::mean_costs(inst);
        let mut rank_up = vec![0.0; ns];
        let mut rank_down = vec![0.0; ns];
        let mut in_tr = vec![0.0; ns];
        let mut out_tr = vec![0.0; ns];
        let mut tasks = Vec::with_capacity(ns);
        let mut stage_of = vec![0u32; inst.len()];
        for (s, st) in dag.stages.iter().enumerate() {
            let r = st.tasks();
            let (mut ni, mut si, mut no, mut so) = (0usize, 0.0, 0usize, 0.0);
            for t in r.clone() {
                stage_of[t as usize] = s as u32;
                rank_up[s] = f64::max(rank_up[s], up[t as usize] / cp);
                rank_down[s] = f64::max(rank_down[s], down[t as usize] / cp);
                for &(_, d) in inst.parents(t) {
                    ni += 1;
                    si += inst.mean_transfer(d);
                }
                for &(_, d) in inst.children(t) {
                    no += 1;
                    so += inst.mean_transfer(d);
                }
            }
            in_tr[s] = if ni > 0 { si / ni as f64 / cp } else { 0.0 };
            out_tr[s] = if no > 0 { so / no as f64 / cp } else { 0.0 };
            tasks.push(r);
        }
        let children = dag
            .stages
            .iter()
            .enumerate()
            .map(|(s, st)| {
                st.children
                    .iter()
                    .map(|e| (e.stage, inst.mean_transfer(dag.edge_data(s as u32, e.stage)) / cp))
                    .collect()
            })
            .collect();
        Graph {
            tasks,
            children,
            stage_of,
            job_of,
            jobs: jobs as usize,
            rank_up,
            rank_down,
            in_tr,
            out_tr,
            mean_cost,
            task_rank: up,
            cp,
        }
    }

    pub fn stages(&self) -> usize {
        self.tasks.len()
    }

    pub fn jobs(&self) -> usize {
        self.jobs
    }
}

/// One decision's input.
#[derive(Clone, Debug, Default)]
pub struct Obs {
    pub x: Vec<[f64; F]>,
    /// Children of node v: `child[child_start[v]..child_start[v + 1]]` (node index, edge
    /// features).
    child_start: Vec<u32>,
    child: Vec<(u32, [f64; A])>,
    /// Whether some node of the observation has v as a child.
    pub has_parent: Vec<bool>,
    /// Index (into the observation's jobs) of each node's job.
    pub job_of: Vec<u32>,
    /// Nodes of job i: `job_first[i]..job_first[i + 1]` (nodes are grouped by job).
    job_first: Vec<u32>,
    /// Nodes the agent may pick (a ready task), in node order.
    pub cand: Vec<u32>,
    /// The stage of each node.
    pub stage: Vec<u32>,
}

impl Obs {
    pub fn children(&self, v: usize) -> &[(u32, [f64; A])] {
        &self.child[self.child_start[v] as usize..self.child_start[v + 1] as usize]
    }

    pub fn jobs(&self) -> usize {
        self.job_first.len().saturating_sub(1)
    }

    pub fn nodes_of(&self, i: usize) -> Range<usize> {
        self.job_first[i] as usize..self.job_first[i + 1] as usize
    }

    /// An observation from explicit parts (tests): per job, its node features, its edges
    /// (parent, child, edge features) in local indices (parents before children) and its
    /// candidates.
    #[allow(clippy::type_complexity)]
    pub fn from_parts(jobs: &[(Vec<[f64; F]>, Vec<(u32, u32, [f64; A])>, Vec<u32>)]) -> Obs {
        let mut o = Obs::default();
        let mut kids: Vec<Vec<(u32, [f64; A])>> = Vec::new();
        for (i, (x, edges, cand)) in jobs.iter().enumerate() {
            let base = o.x.len() as u32;
            o.job_first.push(base);
            for (k, xv) in x.iter().enumerate() {
                o.x.push(*xv);
                o.job_of.push(i as u32);
                o.stage.push(base + k as u32);
                o.has_parent.push(false);
                kids.push(Vec::new());
            }
            for &(p, c, a) in edges {
                kids[(base + p) as usize].push((base + c, a));
                o.has_parent[(base + c) as usize] = true;
            }
            o.cand.extend(cand.iter().map(|c| base + c));
        }
        o.job_first.push(o.x.len() as u32);
        o.child_start.push(0);
        for k in kids {
            o.child.extend(k);
            o.child_start.push(o.child.len() as u32);
        }
        o
    }
}

/// An episode in progress: the plan so far and what is left to place.
pub struct State<'a> {
    inst: &'a Instance,
    g: &'a Graph,
    pub plan: Plan,
    waiting: Vec<usize>,
    /// Ready, unplaced tasks of each stage.
    ready: Vec<Vec<u32>>,
    /// When all inputs of a task exist (the latest earliest finish over its parents).
    ready_time: Vec<f64>,
    done: Vec<f64>,
    left_s: Vec<usize>,
    work_s: Vec<f64>,
    left_j: Vec<usize>,
    work_j: Vec<f64>,
    /// Decisions taken.
    pub decisions: usize,
    /// Feature 6 of a candidate is the rank of its best ready task rather than the stage's
    /// largest (set for per-task decisions; see the module docs).
    pub ready_rank: bool,
}

impl<'a> State<'a> {
    pub fn new(inst: &'a Instance, g: &'a Graph) -> State<'a> {
        let n = inst.len();
        let ns = g.stages();
        let mut s = State {
            inst,
            g,
            plan: Plan::new(inst),
            waiting: (0..n as u32).map(|t| inst.parents(t).len()).collect(),
            ready: vec![Vec::new(); ns],
            ready_time: vec![0.0; n],
            done: vec![f64::INFINITY; n],
            left_s: g.tasks.iter().map(|r| r.len()).collect(),
            work_s: g.tasks.iter().map(|r| r.clone().map(|t| g.mean_cost[t as usize]).sum()).collect(),
            left_j: vec![0; g.jobs],
            work_j: vec![0.0; g.jobs],
            decisions: 0,
            ready_rank: false,
        };
        for st in 0..ns {
            let j = g.job_of[st] as usize;
            s.left_j[j] += s.left_s[st];
            s.work_j[j] += s.work_s[st];
        }
        for t in 0..n as u32 {
            if s.waiting[t as usize] == 0 {
                s.ready[g.stage_of[t as usize] as usize].push(t);
            }
        }
        s
    }

    pub fn finished(&self) -> bool {
        self.ready.iter().all(|r| r.is_empty())
    }

    /// The observation at this decision (None when every task is placed).
    pub fn observe(&self) -> Option<Obs> {
        if self.finished() {
            return None;
        }
        let g = self.g;
        let cp = g.cp;
        let free = self.plan.timelines.iter().map(|t| t.end()).fold(f64::INFINITY, f64::min);
        let mut o = Obs::default();
        // Local index of each stage that is still open, grouped by job, stage order inside a job
        // (stage ids are topological, so parents come before children).
        let mut by_job: Vec<Vec<u32>> = vec![Vec::new(); g.jobs];
        for s in 0..g.stages() {
            if self.left_s[s] > 0 {
                by_job[g.job_of[s] as usize].push(s as u32);
            }
        }
        let mut local = vec![u32::MAX; g.stages()];
        for stages in by_job.iter().filter(|v| !v.is_empty()) {
            let i = o.job_first.len() as u32;
            o.job_first.push(o.x.len() as u32);
            for &s in stages {
                let su = s as usize;
                let j = g.job_of[su] as usize;
                local[su] = o.x.len() as u32;
                let ready = &self.ready[su];
                let wait = ready.iter().map(|&t| self.ready_time[t as usize]).fold(f64::INFINITY, f64::min);
                let x = [
                    count(self.left_j[j]),
                    (1.0 + self.work_j[j].max(0.0) / cp).ln(),
                    count(self.left_s[su]),
                    (1.0 + self.work_s[su].max(0.0) / cp).ln(),
                    g.in_tr[su],
                    g.out_tr[su],
                    if self.ready_rank && !ready.is_empty() { self.best_ready_rank(s) / cp } else { g.rank_up[su] },
                    g.rank_down[su],
                    f64::from(!ready.is_empty()),
                    if ready.is_empty() { 0.0 } else { (wait - free) / cp },
                    count(ready.len()),
                ];
                if !ready.is_empty() {
                    o.cand.push(local[su]);
                }
                o.x.push(x);
                o.job_of.push(i);
                o.stage.push(s);
            }
        }
        o.job_first.push(o.x.len() as u32);
        o.has_parent = vec![false; o.x.len()];
        o.child_start.push(0);
        for v in 0..o.x.len() {
            for &(c, a) in &g.children[o.stage[v] as usize] {
                let lc = local[c as usize];
                if lc != u32::MAX {
                    o.child.push((lc, [a]));
                    o.has_parent[lc as usize] = true;
                }
            }
            o.child_start.push(o.child.len() as u32);
        }
        Some(o)
    }

    /// Places every ready task of `stage` with DEFT, highest upward rank first (ties: lower id).
    pub fn act(&mut self, stage: u32) {
        let mut tasks = std::mem::take(&mut self.ready[stage as usize]);
        let rank = &self.g.task_rank;
        tasks.sort_by(|&a, &b| rank[b as usize].total_cmp(&rank[a as usize]).then(a.cmp(&b)));
        for t in tasks {
            self.place(stage, t);
        }
        self.decisions += 1;
    }

    /// Places one ready task of `stage` with DEFT: the one [`State::act`] would place first
    /// (highest upward rank, ties: lower id), so that a decision can interleave the tasks of
    /// several stages as RankUp-DEFT does. Returns the task (None if `stage` has no ready task,
    /// which a caller choosing among [`Obs::cand`] never asks for).
    pub fn act_one(&mut self, stage: u32) -> Option<u32> {
        let rank = &self.g.task_rank;
        let ready = &mut self.ready[stage as usize];
        let i = (0..ready.len()).max_by(|&a, &b| {
            let (ta, tb) = (ready[a] as usize, ready[b] as usize);
            rank[ta].total_cmp(&rank[tb]).then(tb.cmp(&ta))
        })?;
        let t = ready.swap_remove(i);
        self.place(stage, t);
        self.decisions += 1;
        Some(t)
    }

    /// The highest upward rank among the ready tasks of `stage` (-inf when none is ready).
    pub fn best_ready_rank(&self, stage: u32) -> f64 {
        self.ready[stage as usize].iter().map(|&t| self.g.task_rank[t as usize]).fold(f64::NEG_INFINITY, f64::max)
    }

    /// Stages with a ready task, in stage order (the candidates of [`State::observe`], without
    /// building the observation).
    pub fn candidates(&self) -> impl Iterator<Item = u32> + '_ {
        self.ready.iter().enumerate().filter(|(_, r)| !r.is_empty()).map(|(s, _)| s as u32)
    }

    /// Places ready task `t` of `stage` with DEFT and releases the children it completes.
    fn place(&mut self, stage: u32, t: u32) {
        let a = deft::allocate(self.inst, &self.plan, t);
        if let Some((p, c)) = a.duplicate {
            self.done[p as usize] = self.done[p as usize].min(c.end);
        }
        deft::commit(self.inst, &mut self.plan, t, &a);
        self.done[t as usize] = self.done[t as usize].min(a.task.end);
        let (s, j) = (stage as usize, self.g.job_of[stage as usize] as usize);
        let w = self.g.mean_cost[t as usize];
        self.left_s[s] -= 1;
        self.work_s[s] -= w;
        self.left_j[j] -= 1;
        self.work_j[j] -= w;
        for &(c, _) in self.inst.children(t) {
            let c = c as usize;
            self.ready_time[c] = self.ready_time[c].max(self.done[t as usize]);
            self.waiting[c] -= 1;
            if self.waiting[c] == 0 {
                self.ready[self.g.stage_of[c] as usize].push(c as u32);
            }
        }
    }

    /// The makespan of the plan so far.
    pub fn makespan(&self) -> f64 {
        self.plan.timelines.iter().map(|t| t.end()).fold(0.0, f64::max)
    }
}
