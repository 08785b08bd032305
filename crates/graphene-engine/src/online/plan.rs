//! `graphene-plan`: a plan across jobs, followed online.
//!
//! `graphene` ranks tasks inside each job by the offline constructor's order and lets packing
//! and a remaining-work term decide between jobs, heartbeat by heartbeat; nothing looks at how
//! the jobs sharing the cluster will unfold together. `graphene-plan` keeps a plan of every
//! active job's remaining tasks on the cluster as it is and launches by it.
//!
//! **The plan.** At a job's arrival or completion (at most once per `every` simulated seconds;
//! the next heartbeat after the trigger builds it), every active job's tasks that have not been
//! launched are placed on a time grid of the whole cluster, starting now:
//! * The grid has [`SLOTS`] slots; its slot length is chosen per plan so that the work left
//!   (the busiest resource's remaining resource-time over the cluster's capacity, plus the
//!   longest remaining task) spans about half of it. Each slot holds what the cluster has
//!   allocated in it, per resource: the cluster counts as one pool of its total capacity (hard
//!   resources at capacity, overbookable ones at the overbooking allowance), so the plan is a
//!   relaxation that ignores which machine a task lands on (the heartbeats decide that).
//! * Running tasks are fixed: each holds its demand from now until its estimated end (launch
//!   time plus estimated duration; a task past its estimate is assumed to end within a slot).
//! * Jobs are planned one after another, in the order of the objective (below). A job's tasks
//!   are placed by list scheduling: of the tasks whose parent stages are all placed (or done, or
//!   running), the one with the highest priScore (the offline constructor's order inside the
//!   job, the same [`PriorityCache`] as `graphene`) goes first, at the earliest slot at or after
//!   its parents' planned ends where its demand fits for its whole estimated duration. A later
//!   job only takes what the earlier ones left: it fills their holes without delaying them.
//!
//! **The objective: mean JCT, by planning jobs in shortest-remaining-work order.** Sequencing
//! jobs shortest-first is what minimises the sum of completion times on one resource (Smith's
//! rule with unit weights; SRPT online), and the sum of completion times is the mean JCT the
//! scheduler is judged by. Planning each job in turn at its earliest finish given the ones
//! before it ("makespan of each job in SRPT order") keeps each job's own DAG order (the
//! constructor's) while the holes it leaves go to the jobs behind it, where a heartbeat-by-
//! heartbeat packer sees neither. `objective=span` orders the jobs by their remaining critical
//! path instead (a job's makespan alone on an empty cluster), `objective=fifo` by arrival (for
//! comparison).
//!
//! **Following it.** At a heartbeat, every runnable stage's next task that fits the machine
//! (hard resources at what is free, overbookable ones up to the allowance as `graphene`) is a
//! candidate, keyed by its planned start slot; the earliest goes first, ties (tasks the plan
//! starts in the same slot, or tasks it could not place) go to graphene's packing score, then
//! the job's place in the objective's order, then arrival. Where plan and reality drift
//! (durations misestimated, tasks ending early, a job arriving between plans) the order still
//! holds: a task whose parents ended early is launched early, and a task not in the plan comes
//! after every planned one, by its job's remaining work. With `hold=S`, a planned task is not
//! launched more than S seconds (plus four grid slots, for rounding) before its planned start,
//! unless the machine runs nothing (the machine waits for a task the plan
//! reserved it for); without it (the default) the policy is work conserving. Fairness is
//! graphene's: the same deficit counters and look-ahead bound (`fair_gate`), charged as
//! `graphene`'s settings say.
//!
//! **Cost.** A plan costs at most `budget` work units (one unit: one slot checked or filled for
//! one task); tasks beyond the budget or the grid stay unplanned. It never reads the wall
//! clock, so a replay is byte-identical for a seed. Options come after the name:
//! `graphene-plan:every=5:budget=2000000:objective=srpt:hold=none` (options separated by colons,
//! or commas where no comma-separated list holds the name).

use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;

use super::fair_gate::FairGate;
use super::priority_cache::PriorityCache;
use super::tetris::{candidates, gate_filter, take, with_allowance, Cand, Chosen};
use super::{work, GrapheneOnline, Policy, TaskRef};
use crate::model::{EdgeKind, ResVec, MAX_RESOURCES};
use crate::sim::{TaskState, View};

/// Slots of the plan's time grid.
pub const SLOTS: usize = 2048;

/// With `hold`, how many slots of the plan's grid a planned start may lie beyond the hold.
const HOLD_SLACK_SLOTS: f64 = 4.0;

/// The order jobs are planned in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Objective {
    /// Least remaining work first (mean JCT).
    Srpt,
    /// Shortest remaining critical path first.
    Span,
    /// Arrival order.
    Fifo,
}

/// `graphene-plan`'s options.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanOptions {
    /// Simulated seconds at least between two plans (0: at every arrival and completion).
    pub every: f64,
    /// Work units one plan may spend.
    pub budget: u64,
    pub objective: Objective,
    /// Launch a planned task at most this many seconds before its planned start (None: any time).
    pub hold: Option<f64>,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions { every: 0.0, budget: 2_000_000, objective: Objective::Srpt, hold: None }
    }
}

impl PlanOptions {
    /// Reads `key=value:...` (the part of the scheduler name after `graphene-plan:`; commas
    /// separate options too).
    pub fn parse(spec: &str) -> crate::Result<PlanOptions> {
        let mut o = PlanOptions::default();
        let bad = |msg: String| crate::Error::Usage(format!("graphene-plan options '{spec}': {msg}"));
        for part in spec.split([':', ',']).filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').ok_or_else(|| bad(format!("'{part}' is not key=value")))?;
            let num = |v: &str| -> crate::Result<f64> {
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| bad(format!("{k}={v}: not a finite number >= 0")))
            };
            match k {
                "every" => o.every = num(v)?,
                "budget" => {
                    o.budget = v.parse::<u64>().map_err(|_| bad(format!("budget={v}: not a whole number")))?;
                }
                "objective" => {
                    o.objective = match v {
                        "srpt" => Objective::Srpt,
                        "span" => Objective::Span,
                        "fifo" => Objective::Fifo,
                        _ => return Err(bad(format!("objective={v}: known are srpt, span, fifo"))),
                    }
                }
                "hold" => o.hold = if v == "none" { None } else { Some(num(v)?) },
                _ => return Err(bad(format!("unknown option '{k}' (known: every, budget, objective, hold)"))),
            }
        }
        Ok(o)
    }
}

/// What the plans cost, for reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlanStats {
    pub plans: u64,
    /// Work units spent over all plans, and the most any one plan spent.
    pub units: u64,
    pub max_units: u64,
    /// Tasks placed over all plans, and tasks left unplanned (budget or grid exhausted).
    pub placed: u64,
    pub unplanned: u64,
}

struct JobInfo {
    pri: Arc<Vec<f32>>,
    /// Work (as `graphene`'s SRPT term) of the tasks not launched yet.
    rem: f64,
    /// Launch time of each task (NaN: not launched).
    launched_at: Vec<f64>,
}

pub struct GraphenePlan {
    opts: PlanOptions,
    overbook: f64,
    cache: PriorityCache,
    jobs: HashMap<u32, JobInfo>,
    gate: FairGate,
    total: Option<ResVec>,
    /// Planned start time per task of each planned job (infinite: not placed).
    planned: HashMap<u32, Vec<f64>>,
    /// Each job's place in the objective's order at the last plan.
    rank: HashMap<u32, u32>,
    last_plan: f64,
    dirty: bool,
    /// The last `assign` built a plan (its state moved) or held a task back (the answer
    /// depends on the clock).
    unstable: bool,
    /// The last plan's slot length (seconds).
    slot: f64,
    pub stats: PlanStats,
    cands: Vec<Cand>,
    /// Scratch: one pass's candidates that holding lets through, then that the gate allows.
    held: Vec<Cand>,
    kept: Vec<Cand>,
    /// Scratch: a job's fitting stages.
    stages: Vec<u32>,
}

impl GraphenePlan {
    /// `cfg`: graphene's online settings (fairness, charge, kappa, shares, overbooking, the
    /// priority cache's bypass and virtual cluster).
    pub fn new(cfg: &GrapheneOnline, opts: PlanOptions) -> GraphenePlan {
        GraphenePlan {
            overbook: if cfg.overbook.is_finite() { cfg.overbook.max(1.0) } else { 1.0 },
            cache: PriorityCache::new(cfg.bypass_tasks, cfg.offline_machines),
            jobs: HashMap::new(),
            gate: FairGate::new(cfg.shares.clone(), cfg.kappa, cfg.fairness, cfg.charge),
            total: None,
            planned: HashMap::new(),
            rank: HashMap::new(),
            last_plan: f64::NEG_INFINITY,
            dirty: true,
            unstable: false,
            slot: 1.0,
            stats: PlanStats::default(),
            cands: Vec::new(),
            held: Vec::new(),
            kept: Vec::new(),
            stages: Vec::new(),
            opts,
        }
    }

    pub fn deficits(&self) -> &crate::fairness::Deficits {
        self.gate.deficits()
    }

    fn total(&mut self, view: &View) -> ResVec {
        *self.total.get_or_insert_with(|| view.caps.iter().fold(ResVec::ZERO, |a, c| a.add(c)))
    }

    /// The jobs in the objective's order (ties: arrival, then id).
    fn job_order(&self, view: &View) -> Vec<u32> {
        let mut jobs: Vec<(f64, f64, u32)> = view
            .active()
            .iter()
            .filter_map(|&j| {
                let info = self.jobs.get(&j)?;
                let key = match self.opts.objective {
                    Objective::Srpt => info.rem,
                    Objective::Fifo => 0.0,
                    Objective::Span => remaining_span(view, j),
                };
                Some((key, view.arrival(j), j))
            })
            .collect();
        jobs.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2)));
        jobs.into_iter().map(|x| x.2).collect()
    }

    /// Builds the plan (module docs).
    fn replan(&mut self, view: &View) {
        let total = self.total(view);
        let now = view.now;
        let dims = view.dims;
        let mut cap = [0.0f64; MAX_RESOURCES];
        for r in 0..dims {
            cap[r] = if view.hard[r] { total.0[r] } else { total.0[r] * self.overbook };
        }
        let order = self.job_order(view);
        // Slot length: half the grid for the work left (busiest resource) plus the longest task.
        let mut load = [0.0f64; MAX_RESOURCES];
        let mut longest: f64 = 0.0;
        for &j in &order {
            let st = view.job_state(j);
            for (t, s) in st.state.iter().enumerate() {
                let t = t as u32;
                let d = view.estimated_duration(j, t);
                match s {
                    TaskState::Waiting | TaskState::Runnable => {
                        let q = view.requested(j, t);
                        for r in 0..dims {
                            load[r] += d.max(0.0) * q.0[r].max(0.0);
                        }
                        longest = longest.max(d);
                    }
                    TaskState::Running => {
                        let at = self.jobs[&j].launched_at.get(t as usize).copied().unwrap_or(now);
                        longest = longest.max(at + d - now);
                    }
                    TaskState::Done => {}
                }
            }
        }
        let span = (0..dims).filter(|&r| cap[r] > 0.0).map(|r| load[r] / cap[r]).fold(0.0, f64::max) + longest;
        let slot = if span.is_finite() && span > 0.0 { span / (SLOTS as f64 / 2.0) } else { 1.0 };
        let slots_of = |d: f64| -> usize {
            let n = (d.max(0.0) / slot).ceil();
            if n.is_finite() {
                (n as usize).clamp(1, SLOTS + 1)
            } else {
                SLOTS + 1
            }
        };
        // Usage per slot and resource, running tasks first.
        let mut used = vec![0.0f64; SLOTS * dims];
        let mut units: u64 = 0;
        let mut ends: HashMap<u32, Vec<usize>> = HashMap::new();
        for &j in &order {
            let st = view.job_state(j);
            let info = &self.jobs[&j];
            let mut end = vec![usize::MAX; st.state.len()];
            for (t, s) in st.state.iter().enumerate() {
                match s {
                    TaskState::Done => end[t] = 0,
                    TaskState::Running => {
                        let at = info.launched_at.get(t).copied().filter(|a| a.is_finite()).unwrap_or(now);
                        let left = at + view.estimated_duration(j, t as u32) - now;
                        let n = slots_of(left).min(SLOTS);
                        let q = clamp_to(&view.requested(j, t as u32), &cap, dims);
                        for k in 0..n {
                            for r in 0..dims {
                                used[k * dims + r] += q.0[r];
                            }
                        }
                        units += n as u64;
                        end[t] = n;
                    }
                    _ => {}
                }
            }
            ends.insert(j, end);
        }
        let mut placed_total = 0u64;
        let mut unplanned = 0u64;
        let mut planned: HashMap<u32, Vec<f64>> = HashMap::new();
        for &j in &order {
            let dag = view.dag(j);
            let st = view.job_state(j);
            let pri = self.jobs[&j].pri.clone();
            let end = ends.get_mut(&j).expect("every job has ends");
            let mut start = vec![f64::INFINITY; dag.len()];
            // Per stage: its tasks without a known end; stages become ready when every parent
            // stage has none.
            let mut unresolved: Vec<u32> = dag
                .stages
                .iter()
                .map(|s| s.tasks().filter(|&t| end[t as usize] == usize::MAX).count() as u32)
                .collect();
            let mut pushed = vec![false; dag.stages.len()];
            let mut heap: BinaryHeap<(OrdF32, std::cmp::Reverse<u32>)> = BinaryHeap::new();
            let mut ready_stages: Vec<u32> = Vec::new();
            let stage_ready =
                |s: usize, unresolved: &[u32]| dag.stages[s].parents.iter().all(|e| unresolved[e.stage as usize] == 0);
            for s in 0..dag.stages.len() {
                if unresolved[s] > 0 && stage_ready(s, &unresolved) {
                    ready_stages.push(s as u32);
                }
            }
            loop {
                for s in ready_stages.drain(..) {
                    if pushed[s as usize] {
                        continue;
                    }
                    pushed[s as usize] = true;
                    for t in dag.stages[s as usize].tasks() {
                        if end[t as usize] == usize::MAX && st.state[t as usize] != TaskState::Running {
                            let p = pri.get(t as usize).copied().unwrap_or(0.0);
                            heap.push((OrdF32(p), std::cmp::Reverse(t)));
                        }
                    }
                }
                let Some((_, std::cmp::Reverse(t))) = heap.pop() else { break };
                let tu = t as usize;
                let task = &dag.tasks[tu];
                let mut est = 0usize;
                for e in &dag.stages[task.stage as usize].parents {
                    let p = &dag.stages[e.stage as usize];
                    let pe = match e.kind {
                        EdgeKind::AllToAll => p.tasks().map(|pt| end[pt as usize]).max().unwrap_or(0),
                        EdgeKind::OneToOne => end[(p.first + task.index) as usize],
                    };
                    units += if e.kind == EdgeKind::AllToAll { p.len as u64 } else { 1 };
                    est = est.max(pe);
                }
                let len = slots_of(view.estimated_duration(j, t));
                let q = clamp_to(&view.requested(j, t), &cap, dims);
                let mut at =
                    if units < self.opts.budget { earliest(&used, &q, &cap, dims, est, len, &mut units) } else { None };
                if units > self.opts.budget {
                    at = None;
                }
                match at {
                    Some(s0) => {
                        for k in s0..s0 + len {
                            for r in 0..dims {
                                used[k * dims + r] += q.0[r];
                            }
                        }
                        units += len as u64;
                        start[tu] = now + s0 as f64 * slot;
                        end[tu] = s0 + len;
                        placed_total += 1;
                    }
                    None => {
                        // Unplanned: its children (and their subtrees) stay unplanned too.
                        end[tu] = SLOTS * 4;
                        unplanned += 1;
                    }
                }
                let s = task.stage as usize;
                unresolved[s] -= 1;
                if unresolved[s] == 0 {
                    for c in &dag.stages[s].children {
                        let cs = c.stage as usize;
                        if !pushed[cs] && unresolved[cs] > 0 && stage_ready(cs, &unresolved) {
                            ready_stages.push(cs as u32);
                        }
                    }
                }
            }
            planned.insert(j, start);
        }
        self.planned = planned;
        self.slot = slot;
        self.rank = order.iter().enumerate().map(|(i, &j)| (j, i as u32)).collect();
        self.last_plan = now;
        self.dirty = false;
        self.stats.plans += 1;
        self.stats.units += units;
        self.stats.max_units = self.stats.max_units.max(units);
        self.stats.placed += placed_total;
        self.stats.unplanned += unplanned;
    }

    /// The order key of candidate `c`: planned start (infinite when unplanned; unplanned tasks
    /// then go by their job's remaining work), to be compared with packing and rank after it.
    fn start_of(&self, c: &Cand) -> f64 {
        self.planned.get(&c.job).and_then(|v| v.get(c.task as usize)).copied().unwrap_or(f64::INFINITY)
    }
}

/// Total order on f32 for the heap (NaN lowest).
#[derive(Clone, Copy, PartialEq)]
struct OrdF32(f32);
impl Eq for OrdF32 {}
impl PartialOrd for OrdF32 {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for OrdF32 {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// `q` with every resource at most `cap`'s (so any task fits an empty grid).
fn clamp_to(q: &ResVec, cap: &[f64; MAX_RESOURCES], dims: usize) -> ResVec {
    let mut out = *q;
    for r in 0..dims {
        out.0[r] = out.0[r].max(0.0).min(cap[r]);
    }
    out
}

/// The earliest slot `>= from` where `q` fits `cap` for `len` slots, counting the slots
/// checked in `units`; None when the grid ends first.
fn earliest(
    used: &[f64],
    q: &ResVec,
    cap: &[f64; MAX_RESOURCES],
    dims: usize,
    from: usize,
    len: usize,
    units: &mut u64,
) -> Option<usize> {
    let fits =
        |k: usize| (0..dims).all(|r| used[k * dims + r] + q.0[r] <= cap[r] * (1.0 + crate::model::CAPACITY_EPS) + 1e-9);
    let mut s = from;
    let mut k = from;
    while s + len <= SLOTS {
        if k == s + len {
            return Some(s);
        }
        *units += 1;
        if fits(k) {
            k += 1;
        } else {
            s = k + 1;
            k = s;
        }
    }
    None
}

/// The longest chain of estimated durations through `job`'s tasks not done yet (running tasks
/// count their whole estimate).
fn remaining_span(view: &View, job: u32) -> f64 {
    let dag = view.dag(job);
    let st = view.job_state(job);
    // Stage order is topological: per stage, the longest path ending at it (a stage's length
    // is its longest task left).
    let mut best = vec![0.0f64; dag.stages.len()];
    let mut out: f64 = 0.0;
    for (s, stage) in dag.stages.iter().enumerate() {
        let own = stage
            .tasks()
            .filter(|&t| st.state[t as usize] != TaskState::Done)
            .map(|t| view.estimated_duration(job, t))
            .fold(0.0, f64::max);
        let before = stage.parents.iter().map(|e| best[e.stage as usize]).fold(0.0, f64::max);
        best[s] = before + own;
        out = out.max(best[s]);
    }
    out
}

impl Policy for GraphenePlan {
    fn name(&self) -> String {
        "graphene-plan".into()
    }

    fn job_arrived(&mut self, view: &View, job: u32) {
        let total = self.total(view);
        let dag = view.dag(job);
        let pri = self.cache.job_scores(view, job, None);
        let rem = (0..dag.len() as u32).map(|t| work(view, &total, job, t)).sum();
        self.jobs.insert(job, JobInfo { pri, rem, launched_at: vec![f64::NAN; dag.len()] });
        self.gate.ensure_group(view, view.queue(job) as usize);
        self.gate.arrived(view);
        self.dirty = true;
    }

    fn idle_is_stable(&self) -> bool {
        !self.unstable
    }

    fn assign(&mut self, view: &View, machine: usize, free: &ResVec, out: &mut Vec<TaskRef>) {
        let total = self.total(view);
        self.unstable = false;
        if self.dirty && view.now - self.last_plan >= self.opts.every {
            self.replan(view);
            self.unstable = true;
        }
        let Some(cap) = view.caps.get(machine).copied() else { return };
        let mut left = with_allowance(view, free, &cap, self.overbook);
        let mut chosen = Chosen::default();
        // Every fitting stage's next task, found once and kept up to date after each pick
        // (`take`). Holding and the fairness gate may narrow a pass to a subset, written into
        // the reused buffers `held` and `kept`; a pass that narrows nothing reads `all` itself.
        let mut all = std::mem::take(&mut self.cands);
        let mut held = std::mem::take(&mut self.held);
        let mut kept = std::mem::take(&mut self.kept);
        candidates(view, &cap, &left, &mut self.stages, &mut all);
        self.gate.begin(view);
        loop {
            // A machine running nothing (and given nothing yet in this heartbeat) never holds:
            // an idle cluster could otherwise wait forever for a plan that drifted.
            let busy = !out.is_empty() || (0..view.dims).any(|r| free.0[r] < cap.0[r] * (1.0 - 1e-9));
            let mut cands: &[Cand] = &all;
            if let (Some(h), true) = (self.opts.hold, busy) {
                // Planned starts are rounded up to whole slots, and a chain of tasks rounds up
                // once per task: a few slots of tolerance keep "now" from reading as "later".
                let until = view.now + h + HOLD_SLACK_SLOTS * self.slot;
                held.clear();
                held.extend(all.iter().copied().filter(|c| {
                    let s = self.start_of(c);
                    !s.is_finite() || s <= until
                }));
                if held.len() < all.len() {
                    self.unstable = true;
                }
                cands = &held;
            }
            if cands.is_empty() {
                break;
            }
            let set = if self.gate.enabled() {
                let set = gate_filter(&mut self.gate, view, &total, cands, &mut kept);
                if kept.is_empty() {
                    break;
                }
                cands = &kept;
                Some(set)
            } else {
                None
            };
            let key = |c: &Cand| {
                let s = self.start_of(c);
                let rank = self.rank.get(&c.job).copied().unwrap_or(u32::MAX);
                let rem = self.jobs.get(&c.job).map_or(0.0, |i| i.rem);
                (s, rank, rem, c.align)
            };
            let mut best = 0;
            for i in 1..cands.len() {
                let (a, b) = (key(&cands[i]), key(&cands[best]));
                let better =
                    a.0.total_cmp(&b.0)
                        .then(b.3.total_cmp(&a.3))
                        .then(a.1.cmp(&b.1))
                        .then(a.2.total_cmp(&b.2))
                        .then(view.arrival(cands[i].job).total_cmp(&view.arrival(cands[best].job)))
                        .is_lt();
                if better {
                    best = i;
                }
            }
            let c = cands[best];
            if let Some(set) = set {
                let f = self.gate.charge_of(view, &total, c.job, c.task);
                self.gate.chose(TaskRef { job: c.job, task: c.task }, view.queue(c.job) as usize, f, set);
            }
            let i = all.iter().position(|x| x.job == c.job && x.task == c.task).expect("a candidate of this pass");
            take(view, &cap, &mut all, i, &mut left, &mut chosen, out);
        }
        self.cands = all;
        self.held = held;
        self.kept = kept;
    }

    fn launched(&mut self, view: &View, t: TaskRef) {
        let total = self.total(view);
        if self.gate.enabled() {
            let f = self.gate.charge_of(view, &total, t.job, t.task);
            self.gate.launched(view, &total, t, view.queue(t.job) as usize, f);
        }
        if let Some(info) = self.jobs.get_mut(&t.job) {
            info.rem = (info.rem - work(view, &total, t.job, t.task)).max(0.0);
            if let Some(a) = info.launched_at.get_mut(t.task as usize) {
                *a = view.now;
            }
        }
    }

    fn finished(&mut self, view: &View, t: TaskRef) {
        self.gate.finished(view, t);
        if view.job_state(t.job).left == 0 {
            self.jobs.remove(&t.job);
            self.planned.remove(&t.job);
            self.dirty = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::{parse_dags, LoadOptions};
    use crate::model::{Cluster, ClusterSpec, Dag, Job, Workload};
    use crate::sim::{run, SimConfig, SimResult};
    use crate::validate_replay::validate_replay;

    fn dag(text: &str) -> Dag {
        parse_dags(text, "t.json", &LoadOptions::default()).unwrap().remove(0)
    }

    /// One machine of `cpu` cores, nothing overbookable.
    fn one_machine(d: &Dag, cpu: f64) -> Cluster {
        let mut spec = ClusterSpec::uniform(1, [("cpu".to_string(), cpu)].into_iter().collect());
        spec.overbook = vec![];
        spec.resolve(&d.resources).unwrap()
    }

    fn replay(w: &Workload, c: &Cluster, cfg: GrapheneOnline, opts: PlanOptions, sim: &SimConfig) -> SimResult {
        let mut p = GraphenePlan::new(&cfg, opts);
        let r = run(w, c, &mut p, sim).unwrap();
        assert_eq!(validate_replay(w, c, &r), vec![], "every realized schedule is valid");
        assert!(p.stats.plans > 0 && p.stats.max_units <= PlanOptions::default().budget + SLOTS as u64);
        r
    }

    fn jcts(r: &SimResult) -> Vec<f64> {
        r.jobs.iter().map(|j| j.jct()).collect()
    }

    fn job(name: &str, d: &Dag, arrival: f64) -> Job {
        Job { name: name.into(), arrival, queue: "q".into(), dag: d.clone() }
    }

    /// A long job L (one 100 s task of the whole machine) listed before a short one S (one 10 s
    /// task of the whole machine), both at 0, on one 10-core machine. Shortest remaining work
    /// first plans S at 0 and L after it: S 0-10, L 10-110, JCTs 110 (L) and 10 (S), mean 60.
    /// By arrival (objective=fifo) L goes first: L 0-100, S 100-110, mean 105.
    #[test]
    fn srpt_objective_runs_the_short_job_first() {
        let long = dag(
            r#"{"name": "L", "resources": ["cpu"], "stages": [{"id": "a", "tasks": 1, "duration": 100, "demands": {"cpu": 10}}]}"#,
        );
        let short = dag(
            r#"{"name": "S", "resources": ["cpu"], "stages": [{"id": "a", "tasks": 1, "duration": 10, "demands": {"cpu": 10}}]}"#,
        );
        let w = Workload { jobs: vec![job("L", &long, 0.0), job("S", &short, 0.0)] };
        let c = one_machine(&long, 10.0);
        let sim = SimConfig::default();
        let srpt = replay(&w, &c, GrapheneOnline::default(), PlanOptions::default(), &sim);
        assert_eq!(jcts(&srpt), vec![110.0, 10.0]);
        let fifo = PlanOptions { objective: Objective::Fifo, ..Default::default() };
        assert_eq!(jcts(&replay(&w, &c, GrapheneOnline::default(), fifo, &sim)), vec![100.0, 110.0]);
    }

    /// Two copies of a DAG whose critical path is not breadth-first (the `bfs_bad_pair` of
    /// `graphene`'s tests): roots w (50 s, cpu 8) and x (1 s, cpu 8), y (100 s, cpu 4) x's
    /// child, one 12-core machine, both at 0.
    ///
    /// With the offline constructor's order inside each job (x, y, w; bypass 0) the plan puts
    /// A.x at 0, A.y and A.w at 1 (4 + 8 cores), then B.x when A.w ends (51), B.y right after
    /// it (4 cores beside A.y), B.w when A.y ends (101). Followed online: A.x 0-1; at 1 A.w and
    /// A.y share a planned slot and the better-packing w goes first, then y fits beside it;
    /// B.x 51-52 (planned before B.w), B.y 52-152 (planned before B.w), B.w 101-151. JCTs 101
    /// and 152, graphene's.
    ///
    /// With the cheap breadth-first order (x, w, y; bypass 8), B's w is placed before its y:
    /// the plan starts B.w when B.x ends (52) and B.y only when A.y ends (101), and so does
    /// the replay: JCTs 101 and 201. The order inside a job matters to the plan across jobs.
    #[test]
    fn follows_each_jobs_own_order() {
        let d = dag(r#"{ "name": "bfsbad", "resources": ["cpu"], "stages": [
            {"id": "w", "tasks": 1, "duration": 50,  "demands": {"cpu": 8}},
            {"id": "x", "tasks": 1, "duration": 1,   "demands": {"cpu": 8}},
            {"id": "y", "tasks": 1, "duration": 100, "demands": {"cpu": 4}, "parents": ["x"]} ] }"#);
        let w = Workload { jobs: vec![job("A", &d, 0.0), job("B", &d, 0.0)] };
        let c = one_machine(&d, 12.0);
        let sim = SimConfig::default();
        let constructor = GrapheneOnline { bypass_tasks: 0, ..Default::default() };
        assert_eq!(jcts(&replay(&w, &c, constructor, PlanOptions::default(), &sim)), vec![101.0, 152.0]);
        let bfs = GrapheneOnline { bypass_tasks: 8, ..Default::default() };
        assert_eq!(jcts(&replay(&w, &c, bfs, PlanOptions::default(), &sim)), vec![101.0, 201.0]);
    }

    /// Holding the machine for the plan. One 10-core machine; job A: a (2 s, cpu 5) then its
    /// child b (10 s, cpu 10); job B: one 50 s task of cpu 5; both at 0. A has less work left
    /// (11 against 25 core-seconds over the cluster), so the plan runs a 0-2, b 2-12, and B
    /// only at 12 (its 50 s would overlap b). Work conserving (the default), B fills the 5 free
    /// cores at 0 and b waits for them: a 0-2, B 0-50, b 50-60, JCTs 60 and 50 (mean 55), as
    /// any packer gives. With hold=0, B is held until its planned start: JCTs 12 and 62
    /// (mean 37).
    #[test]
    fn hold_keeps_the_machine_for_the_plan() {
        let a = dag(r#"{"name": "A", "resources": ["cpu"], "stages": [
            {"id": "a", "tasks": 1, "duration": 2, "demands": {"cpu": 5}},
            {"id": "b", "tasks": 1, "duration": 10, "demands": {"cpu": 10}, "parents": ["a"]} ]}"#);
        let b = dag(
            r#"{"name": "B", "resources": ["cpu"], "stages": [{"id": "c", "tasks": 1, "duration": 50, "demands": {"cpu": 5}}]}"#,
        );
        let w = Workload { jobs: vec![job("A", &a, 0.0), job("B", &b, 0.0)] };
        let c = one_machine(&a, 10.0);
        let sim = SimConfig::default();
        assert_eq!(jcts(&replay(&w, &c, GrapheneOnline::default(), PlanOptions::default(), &sim)), vec![60.0, 50.0]);
        let hold = PlanOptions { hold: Some(0.0), ..Default::default() };
        assert_eq!(jcts(&replay(&w, &c, GrapheneOnline::default(), hold, &sim)), vec![12.0, 62.0]);
    }

    /// Same seed, misestimated durations: identical replays, each valid; a tiny
    /// budget leaves tasks unplanned and still finishes every job.
    #[test]
    fn deterministic_and_valid_under_misestimation() {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../traces/motivating.json")).unwrap();
        let d = dag(&text);
        let jobs = (0..6)
            .map(|i| Job {
                name: format!("J{i}"),
                arrival: 3.0 * i as f64,
                queue: format!("q{}", i % 2),
                dag: d.clone(),
            })
            .collect();
        let w = Workload { jobs };
        let cap =
            [("cpu".to_string(), 12.0), ("mem".to_string(), 12.0), ("disk".to_string(), 12.0)].into_iter().collect();
        let c = ClusterSpec::uniform(2, cap).resolve(&d.resources).unwrap();
        // Durations misestimated (a falsified cpu=9 demand could exceed the 12-core machines).
        let sim = SimConfig {
            misestimate: Some((-0.5, 0.5)),
            misestimate_what: crate::sim::Misestimated::Durations,
            seed: 11,
            ..Default::default()
        };
        for opts in [
            PlanOptions::default(),
            PlanOptions { every: 5.0, hold: Some(1.0), ..Default::default() },
            PlanOptions { budget: 10, objective: Objective::Span, ..Default::default() },
        ] {
            let once = || {
                let r = replay(&w, &c, GrapheneOnline::default(), opts.clone(), &sim);
                assert_eq!(r.jobs.len(), 6);
                r.runs
                    .iter()
                    .map(|t| (t.job, t.task, t.machine, t.start.to_bits(), t.end.to_bits()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(once(), once(), "{opts:?}");
        }
    }

    #[test]
    fn options_parse_and_reject() {
        let o = PlanOptions::parse("every=5:budget=1000,objective=span:hold=2").unwrap();
        assert_eq!(o, PlanOptions { every: 5.0, budget: 1000, objective: Objective::Span, hold: Some(2.0) });
        assert_eq!(PlanOptions::parse("").unwrap(), PlanOptions::default());
        assert_eq!(PlanOptions::parse("hold=none").unwrap().hold, None);
        for bad in ["every", "every=-1", "every=nan", "budget=1.5", "objective=best", "colour=red"] {
            let e = PlanOptions::parse(bad).unwrap_err().to_string();
            assert!(e.contains("graphene-plan options"), "{bad}: {e}");
        }
    }
}
