//! An exact solver for small DAGs (`build-schedule --exact`): branch and bound over the
//! resource-time space that proves a schedule optimal, or reports how far from optimal it may be.
//!
//! Why a solver of our own: the model has continuous (f64) time, several resources per machine,
//! and every task choosing one machine; the constraint-programming crates looked at
//! (pumpkin-solver) have integer time and a cumulative constraint without optional tasks, so a
//! machine choice would need a time-indexed encoding and scaled times, which is neither exact for
//! f64 data nor small. A schedule-generation branch and bound needs neither.
//!
//! # The search space and why it is complete
//!
//! A node is a partial schedule built by the serial schedule-generation scheme: a branch picks a
//! task whose parents are all placed and a machine, and puts the task at the earliest start on
//! that machine where it fits for its whole duration (all resources held to capacity, as the
//! offline constructor does) after its parents end. Take any optimal schedule and move tasks
//! earlier (on any machine) while that is possible: the makespan does not grow, and the result is
//! *active* (no task can start earlier anywhere). List its tasks by (start, id). Placing them in
//! that order, each on its machine, puts each exactly where it was (a task that fitted earlier
//! given the tasks that start before it could have been moved there, since tasks that start later
//! are not running then). So it suffices to search lists in which starts never decrease (ties by
//! id): one list per schedule. Every later task then starts at or after the last start `h`, so a
//! task is placed at its earliest fit from max(release, h), which for the lists of active
//! schedules is the same place; the search depends on the partial schedule only through its
//! state after `h`. Rules that remove more, each keeping some optimal schedule:
//!
//! * left shift: a branch that starts task i at s is dropped when another ready task j fits
//!   somewhere in a slot after h ending by s (every later task starts at s or after, so that
//!   slot stays free and j could move there: the schedule would not be active);
//! * machines: of several machines with the same capacities and the same usage after h (two
//!   idle ones, typically), only the first is tried; relabelling their futures is a symmetry,
//!   since nothing in the search looks before h;
//! * tasks: of tasks alike in duration, demand, parents and children (the tasks of a stage whose
//!   edges are all-to-all), the lower id goes first; swapping them is a symmetry as well;
//! * memory: two nodes with the same state after h (placed set, last placement, each machine's
//!   running tasks by end and demand, releases beyond h) have the same subtree, so a state
//!   searched in full this round is not searched again. States are kept as 128-bit digests
//!   (SipHash under two keys; a false match, which would prune wrongly, has odds near 2^-100
//!   over a whole search), at most `MEMO_MAX` per round.
//!
//! # Bounds and the search order
//!
//! Every later task starts at or after the last start `h`, so a node's bound is the largest of:
//! the latest end so far; for each unplaced task, its earliest possible start (the earliest fit
//! on any machine for ready tasks, its parents' earliest ends otherwise) plus its duration plus
//! the longest chain after it; and, per resource, the time by which the capacity left after `h`
//! (the machines minus what placed tasks still use) covers the unplaced work, computed for the
//! plain demands and for transformed ones that no machine can hold more of: "tasks demanding at
//! least v" with floor(capacity / v) slots per machine, and dual feasible functions (a demand
//! over capacity - k counts as a full machine, one under k as nothing) on integer data.
//! With integer durations every start of an active schedule is an integer, so bounds round up.
//!
//! The search raises a proven lower bound: round after round it looks for a schedule no longer
//! than the bound (depth first, pruning nodes whose bound exceeds it); a round that finds none
//! proves the optimum larger, and the next round's target is the least bound pruned. The first
//! schedule found is optimal. The incumbent (the constructor's and improver's schedule) prunes
//! as well, so the result is never worse than it, and a search stopped by its node budget or the
//! time limit returns the incumbent with the bound proven so far. Everything but the time limit
//! is deterministic: the node budget makes results repeatable on every machine.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};

use serde::Serialize;

use crate::model::{Cluster, Dag, Placement, ResVec, Schedule, TaskId, CAPACITY_EPS, MAX_RESOURCES};
use crate::Deadline;

/// Largest DAG `--exact` accepts: the search is exponential in the tasks, and past a few dozen
/// it proves nothing in any useful time; beyond this it is refused instead of burning its budget.
pub const EXACT_MAX_TASKS: usize = 200;

/// Default node budget of `--exact` (nodes entered; a node costs microseconds on small DAGs).
pub const DEFAULT_EXACT_NODES: u64 = 20_000_000;

/// How the exact search ended.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ExactStatus {
    /// The schedule is proven optimal.
    Optimal,
    /// The time limit stopped the search: the bound is what was proven by then.
    TimeLimit,
    /// The node budget ran out.
    NodeLimit,
}

impl ExactStatus {
    pub fn as_str(&self) -> &'static str {
        match self {
            ExactStatus::Optimal => "optimal",
            ExactStatus::TimeLimit => "time-limit",
            ExactStatus::NodeLimit => "node-limit",
        }
    }
}

/// What the exact search proved, for the schedule's JSON (`search.exact`).
#[derive(Clone, Debug, Serialize)]
pub struct ExactReport {
    pub status: ExactStatus,
    /// No schedule is shorter than this (equal to the makespan when optimal).
    pub lower_bound: f64,
    /// The makespan of the schedule returned.
    pub upper_bound: f64,
    /// (upper_bound - lower_bound) / upper_bound; 0 when optimal.
    pub gap: f64,
    /// Nodes (partial schedules) entered, and the budget.
    pub nodes: u64,
    pub node_budget: u64,
    /// Bound-raising rounds run.
    pub rounds: u32,
    /// The makespan of the schedule the search started from.
    pub from: f64,
}

/// A resource in the volume bound: a weight per task and a capacity per machine such that the
/// weights of tasks running together on a machine never exceed its capacity.
struct Volume {
    weight: Vec<f64>,
    total_cap: f64,
}

/// The instance in flat arrays, with task-level edges (small DAGs only).
struct Inst {
    n: usize,
    m: usize,
    dims: usize,
    dur: Vec<f64>,
    dem: Vec<ResVec>,
    parents: Vec<Vec<u32>>,
    children: Vec<Vec<u32>>,
    /// Longest chain of durations after the task ends.
    tail: Vec<f64>,
    caps: Vec<ResVec>,
    /// fits[j * m + k]: task j fits machine k when it is idle.
    fits: Vec<bool>,
    /// The next-lower task identical to this one, which must be placed first.
    twin: Vec<Option<u32>>,
    volumes: Vec<Volume>,
    /// Machines with equal capacities share a class; tasks with equal demands too.
    machine_class: Vec<u32>,
    demand_class: Vec<u32>,
    /// Every duration is an integer: starts of active schedules are integers, bounds round up.
    integral: bool,
}

fn fits_with(used: &ResVec, extra: &ResVec, cap: &ResVec, dims: usize) -> bool {
    (0..dims).all(|r| used.0[r] + extra.0[r] <= cap.0[r] * (1.0 + CAPACITY_EPS) + CAPACITY_EPS)
}

impl Inst {
    fn new(dag: &Dag, cluster: &Cluster) -> Inst {
        let n = dag.len();
        let m = cluster.len();
        let dims = dag.dims().min(MAX_RESOURCES);
        let dur: Vec<f64> = dag.tasks.iter().map(|t| t.duration).collect();
        let dem: Vec<ResVec> = dag.tasks.iter().map(|t| t.demand).collect();
        let mut parents = vec![Vec::new(); n];
        let mut children = vec![Vec::new(); n];
        for t in 0..n as TaskId {
            dag.for_each_parent(t, |p| parents[t as usize].push(p));
            dag.for_each_child(t, |c| children[t as usize].push(c));
        }
        for v in parents.iter_mut().chain(children.iter_mut()) {
            v.sort_unstable();
            v.dedup();
        }
        let bl = crate::model::paths::bottom_levels(dag);
        let tail: Vec<f64> = (0..n).map(|j| (bl[j] - dur[j]).max(0.0)).collect();
        let caps = cluster.machines.clone();
        let fits: Vec<bool> = (0..n)
            .flat_map(|j| caps.iter().map(move |c| (j, c)))
            .map(|(j, c)| fits_with(&ResVec::ZERO, &dem[j], c, dims))
            .collect();
        // Twins: same duration, demand, parents and children. Task ids are topological, and a
        // twin has the same parents, so it is never an ancestor of the other.
        let mut twin = vec![None; n];
        for j in 0..n {
            for i in (0..j).rev() {
                if dur[i] == dur[j] && dem[i] == dem[j] && parents[i] == parents[j] && children[i] == children[j] {
                    twin[j] = Some(i as u32);
                    break;
                }
            }
        }
        let integral = dur.iter().all(|d| d.fract() == 0.0 && d.abs() < 1e15);
        let volumes = volumes(n, dims, &dem, &caps);
        let class_of = |v: &[ResVec], i: usize| (0..=i).find(|&x| v[x] == v[i]).expect("i itself") as u32;
        let machine_class = (0..m).map(|k| class_of(&caps, k)).collect();
        let demand_class = (0..n).map(|j| class_of(&dem, j)).collect();
        Inst {
            n,
            m,
            dims,
            dur,
            dem,
            parents,
            children,
            tail,
            caps,
            fits,
            twin,
            volumes,
            machine_class,
            demand_class,
            integral,
        }
    }
}

/// The resources of the volume bound: each plain resource; per resource and demand level v
/// above a third of the capacity, "demands at least v" with floor(capacity / v) slots per machine
/// (wide tasks that cannot share a machine); and, when demands and capacities are integers and
/// the machines alike in that resource, the dual feasible functions f_k (a demand above
/// capacity - k counts as the whole capacity, one below k as nothing, the rest as itself), which
/// never let a machine hold more than its capacity either.
fn volumes(n: usize, dims: usize, dem: &[ResVec], caps: &[ResVec]) -> Vec<Volume> {
    let mut out = Vec::new();
    let slack = |c: f64| c * (1.0 + CAPACITY_EPS) + CAPACITY_EPS;
    for r in 0..dims {
        let total: f64 = caps.iter().map(|c| c.0[r]).sum();
        if total <= 0.0 {
            continue;
        }
        out.push(Volume { weight: (0..n).map(|j| dem[j].0[r]).collect(), total_cap: total });
        let max_cap = caps.iter().map(|c| c.0[r]).fold(0.0, f64::max);
        let mut levels: Vec<f64> = (0..n).map(|j| dem[j].0[r]).filter(|&v| v > 0.0 && v * 3.0 > max_cap).collect();
        levels.sort_by(|a, b| a.total_cmp(b));
        levels.dedup();
        for v in levels {
            let slots: f64 = caps.iter().map(|c| (slack(c.0[r]) / v).floor()).sum();
            if slots >= 1.0 {
                out.push(Volume {
                    weight: (0..n).map(|j| if dem[j].0[r] >= v { 1.0 } else { 0.0 }).collect(),
                    total_cap: slots,
                });
            }
        }
        let c = caps[0].0[r];
        let integer = |x: f64| x.fract() == 0.0 && x.abs() < 1e12;
        if caps.iter().all(|k| k.0[r] == c) && integer(c) && (0..n).all(|j| integer(dem[j].0[r])) {
            let mut ks: Vec<f64> = (0..n).map(|j| dem[j].0[r]).filter(|&v| v > 0.0 && v * 2.0 <= c).collect();
            ks.sort_by(|a, b| a.total_cmp(b));
            ks.dedup();
            for k in ks {
                let f = |x: f64| {
                    if x > c - k {
                        c
                    } else if x < k {
                        0.0
                    } else {
                        x
                    }
                };
                out.push(Volume { weight: (0..n).map(|j| f(dem[j].0[r])).collect(), total_cap: total });
            }
        }
    }
    out
}

/// One branch: task `task` on machine `machine` at `start`.
#[derive(Clone, Copy)]
struct Child {
    task: u32,
    machine: u32,
    start: f64,
}

enum Stop {
    /// A schedule no longer than the target was found.
    Found,
    Time,
    Nodes,
}

struct Search<'a> {
    inst: &'a Inst,
    deadline: &'a Deadline,
    budget: u64,
    nodes: u64,
    placed: Vec<bool>,
    start: Vec<f64>,
    end: Vec<f64>,
    machine: Vec<u32>,
    /// Tasks on each machine, in placement order.
    on: Vec<Vec<u32>>,
    /// Unplaced parents per task.
    pending: Vec<u32>,
    /// The last task placed and its start (starts never decrease along a branch).
    last: Option<(u32, f64)>,
    max_end: f64,
    /// Round target: nodes with a larger bound are pruned.
    target: f64,
    /// Least bound pruned above the target (the next round's target).
    next: f64,
    /// Incumbent.
    ub: f64,
    best: Option<Vec<Placement>>,
    /// States whose subtree this round searched in full without a schedule within the target,
    /// by a 128-bit digest of the state (see [`Search::state_key`]).
    memo: HashSet<u128>,
}

/// Most states remembered per round (about 32 bytes each); past it the search goes on without
/// remembering more, which costs nodes, never correctness.
const MEMO_MAX: usize = 4_000_000;

/// Slack for bounds computed with divisions: a bound is lowered by this before it prunes, so
/// that rounding never cuts off a schedule exactly at the bound.
fn soften(b: f64) -> f64 {
    b - 1e-9 * b.abs().max(1.0)
}

/// The least T such that the capacity of `v` left in [h, T] by the tasks still running
/// (`ends`, by end) holds `need`.
fn fill(h: f64, ends: &[(f64, u32)], v: &Volume, need: f64) -> f64 {
    let mut active: f64 = ends.iter().map(|&(_, i)| v.weight[i as usize]).sum();
    let (mut cur, mut area) = (h, 0.0);
    for &(e, i) in ends {
        let slope = (v.total_cap - active).max(0.0);
        if slope > 0.0 && area + slope * (e - cur) >= need {
            return cur + (need - area) / slope;
        }
        area += slope * (e - cur);
        cur = e;
        active -= v.weight[i as usize];
    }
    cur + (need - area) / v.total_cap
}

/// Per machine, the placed tasks still running after `h` as (end, task), by end.
type Running = Vec<Vec<(f64, u32)>>;

impl<'a> Search<'a> {
    fn running(&self, h: f64) -> Running {
        (0..self.inst.m)
            .map(|k| {
                let mut v: Vec<(f64, u32)> = self.on[k]
                    .iter()
                    .filter(|&&i| self.end[i as usize] > h)
                    .map(|&i| (self.end[i as usize], i))
                    .collect();
                v.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                v
            })
            .collect()
    }

    /// Earliest start at or after `from` (>= h) where task `j` fits on machine `k`. Every placed
    /// task starts by h, so usage after `from` only falls: a task fits for its whole duration
    /// as soon as it fits at its start, and the candidates are `from` and the later ends.
    fn fit(&self, run: &[(f64, u32)], k: usize, j: usize, from: f64) -> f64 {
        let inst = self.inst;
        let cap = &inst.caps[k];
        let mut used = ResVec::ZERO;
        let mut first = run.len();
        for (x, &(e, i)) in run.iter().enumerate() {
            if e > from {
                if first == run.len() {
                    first = x;
                }
                used.add_assign(&inst.dem[i as usize]);
            }
        }
        if inst.dur[j] <= 0.0 || fits_with(&used, &inst.dem[j], cap, inst.dims) {
            return from;
        }
        let mut x = first;
        while x < run.len() {
            let e = run[x].0;
            while x < run.len() && run[x].0 == e {
                used.sub_assign(&inst.dem[run[x].1 as usize]);
                x += 1;
            }
            if fits_with(&used, &inst.dem[j], cap, inst.dims) {
                return e;
            }
        }
        run.last().map_or(from, |r| r.0.max(from))
    }

    fn release(&self, j: usize) -> f64 {
        self.inst.parents[j]
            .iter()
            .filter(|&&p| self.placed[p as usize])
            .map(|&p| self.end[p as usize])
            .fold(0.0, f64::max)
    }

    /// Machine `k`'s usage after h, as a comparable signature: (capacity class, then per
    /// running task its end and demand class).
    fn signature(&self, run: &[(f64, u32)], k: usize) -> Vec<u64> {
        let inst = self.inst;
        let mut v: Vec<(u64, u64)> =
            run.iter().map(|&(e, i)| (e.to_bits(), inst.demand_class[i as usize] as u64)).collect();
        v.sort_unstable();
        let mut out = Vec::with_capacity(2 + 2 * v.len());
        out.push(inst.machine_class[k] as u64);
        out.push(v.len() as u64);
        for (a, b) in v {
            out.push(a);
            out.push(b);
        }
        out
    }

    /// A digest of everything the rest of the search depends on: the placed set, the last
    /// placement (start h and task, for ties), each machine's usage after h (machines of one
    /// capacity class in sorted order, since they are interchangeable) and the release (beyond
    /// h) of each unplaced task. Two nodes with equal states have identical subtrees.
    fn state_key(&self, h: f64, sigs: &[Vec<u64>]) -> u128 {
        let inst = self.inst;
        let mut key: Vec<u64> = Vec::with_capacity(64);
        let mut word = 0u64;
        for j in 0..inst.n {
            if self.placed[j] {
                word |= 1 << (j % 64);
            }
            if j % 64 == 63 || j + 1 == inst.n {
                key.push(word);
                word = 0;
            }
        }
        key.push(self.last.map_or(u64::MAX, |(t, _)| t as u64));
        key.push(h.to_bits());
        let mut sorted: Vec<&Vec<u64>> = sigs.iter().collect();
        sorted.sort();
        for s in sorted {
            key.extend_from_slice(s);
        }
        for j in 0..inst.n {
            if !self.placed[j] {
                let r = self.release(j);
                if r > h {
                    key.push(j as u64);
                    key.push(r.to_bits());
                }
            }
        }
        let digest = |salt: u64| {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            salt.hash(&mut hasher);
            key.hash(&mut hasher);
            hasher.finish()
        };
        ((digest(0x9e37_79b9_7f4a_7c15) as u128) << 64) | digest(0x2545_f491_4f6c_dd1d) as u128
    }

    fn place(&mut self, c: Child) {
        let j = c.task as usize;
        self.placed[j] = true;
        self.start[j] = c.start;
        self.end[j] = c.start + self.inst.dur[j];
        self.machine[j] = c.machine;
        self.on[c.machine as usize].push(c.task);
        for &ch in &self.inst.children[j] {
            self.pending[ch as usize] -= 1;
        }
    }

    fn unplace(&mut self, c: Child) {
        let j = c.task as usize;
        self.placed[j] = false;
        self.on[c.machine as usize].pop();
        for &ch in &self.inst.children[j] {
            self.pending[ch as usize] += 1;
        }
    }

    /// The volume bound from time `h`: for each volume resource and each tail length q, the
    /// unplaced tasks whose chain after them is at least q must be done by T - q, in the
    /// capacity left in [h, T - q] by what still runs after h; the least such T.
    fn volume_bound(&self, h: f64, run: &Running) -> f64 {
        let inst = self.inst;
        let mut bound = h;
        let mut ends: Vec<(f64, u32)> = run.iter().flatten().copied().collect();
        ends.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut todo: Vec<usize> = (0..inst.n).filter(|&j| !self.placed[j]).collect();
        todo.sort_by(|&a, &b| inst.tail[b].total_cmp(&inst.tail[a]));
        for v in &inst.volumes {
            let mut need = 0.0;
            let mut x = 0;
            while x < todo.len() {
                let q = inst.tail[todo[x]];
                while x < todo.len() && inst.tail[todo[x]] == q {
                    need += v.weight[todo[x]] * inst.dur[todo[x]];
                    x += 1;
                }
                if need > 0.0 {
                    bound = bound.max(fill(h, &ends, v, need) + q);
                }
            }
        }
        bound
    }

    fn round_up(&self, b: f64) -> f64 {
        let b = soften(b);
        if self.inst.integral {
            b.ceil()
        } else {
            b
        }
    }

    fn dfs(&mut self, depth: usize) -> Option<Stop> {
        let inst = self.inst;
        self.nodes += 1;
        if self.nodes > self.budget {
            return Some(Stop::Nodes);
        }
        if self.nodes.is_multiple_of(1024) && self.deadline.expired() {
            return Some(Stop::Time);
        }
        if depth == inst.n {
            let mk = self.max_end;
            if mk < self.ub {
                self.ub = mk;
                self.best = Some(
                    (0..inst.n)
                        .map(|i| Placement {
                            task: i as TaskId,
                            machine: self.machine[i],
                            start: self.start[i],
                            end: self.end[i],
                        })
                        .collect(),
                );
            }
            return (mk <= self.target + 1e-9 * self.target.abs().max(1.0)).then_some(Stop::Found);
        }
        let (last_t, h) = match self.last {
            Some((t, s)) => (Some(t), s),
            None => (None, 0.0),
        };
        let run = self.running(h);
        let sigs: Vec<Vec<u64>> = (0..inst.m).map(|k| self.signature(&run[k], k)).collect();
        let key = self.state_key(h, &sigs);
        if self.memo.contains(&key) {
            return None;
        }
        // Of machines alike after h, the first.
        let machines: Vec<usize> = (0..inst.m).filter(|&k| !(0..k).any(|k0| sigs[k0] == sigs[k])).collect();
        // Ready tasks: the branches, each task's earliest start (for the bound) and its
        // earliest finish (for the left-shift rule).
        let mut kids: Vec<Child> = Vec::new();
        let mut est = vec![f64::INFINITY; inst.n];
        let mut finish: Vec<(u32, f64)> = Vec::new();
        for j in 0..inst.n {
            if self.placed[j] || self.pending[j] > 0 {
                continue;
            }
            if let Some(tw) = inst.twin[j] {
                if !self.placed[tw as usize] {
                    continue;
                }
            }
            let r = self.release(j).max(h);
            let mut first_finish = f64::INFINITY;
            for &k in &machines {
                if !inst.fits[j * inst.m + k] {
                    continue;
                }
                let s = self.fit(&run[k], k, j, r);
                first_finish = first_finish.min(s + inst.dur[j]);
                est[j] = est[j].min(s);
                if s > h || last_t.is_none_or(|t| j as u32 > t) {
                    kids.push(Child { task: j as u32, machine: k as u32, start: s });
                }
            }
            finish.push((j as u32, first_finish));
        }
        // Left shift: a branch starting at s is useless when another ready task could run in a
        // slot after h that ends by s (and starts before s: a zero-length task at s would not
        // be a move earlier); every later task starts at s or after, so that slot stays free.
        kids.retain(|c| {
            !finish.iter().any(|&(j, e)| j != c.task && (e < c.start || (e == c.start && inst.dur[j as usize] > 0.0)))
        });
        // Earliest starts of tasks not ready yet, in topological (id) order.
        let mut bound = self.max_end;
        for j in 0..inst.n {
            if self.placed[j] {
                continue;
            }
            if est[j] == f64::INFINITY {
                let mut e = h;
                for &p in &inst.parents[j] {
                    let p = p as usize;
                    e = e.max(if self.placed[p] { self.end[p] } else { est[p] + inst.dur[p] });
                }
                if let Some(tw) = inst.twin[j] {
                    if !self.placed[tw as usize] {
                        e = e.max(est[tw as usize]);
                    }
                }
                est[j] = e;
            }
            bound = bound.max(est[j] + inst.dur[j] + inst.tail[j]);
        }
        bound = bound.max(self.volume_bound(h, &run));
        let bound = self.round_up(bound);
        if bound > self.target || bound >= self.ub {
            if bound < self.ub {
                self.next = self.next.min(bound);
            }
            return None;
        }
        // Earliest start first, then the longest chain behind the task.
        kids.sort_by(|a, b| {
            a.start.total_cmp(&b.start).then_with(|| {
                let (x, y) = (a.task as usize, b.task as usize);
                (inst.dur[y] + inst.tail[y]).total_cmp(&(inst.dur[x] + inst.tail[x])).then(a.task.cmp(&b.task))
            })
        });
        let saved = (self.last, self.max_end);
        for c in kids {
            self.place(c);
            self.last = Some((c.task, c.start));
            self.max_end = saved.1.max(self.end[c.task as usize]);
            let r = self.dfs(depth + 1);
            self.unplace(c);
            self.last = saved.0;
            self.max_end = saved.1;
            if r.is_some() {
                return r;
            }
        }
        if self.memo.len() < MEMO_MAX {
            self.memo.insert(key);
        }
        None
    }
}

/// Searches for an optimal schedule of `dag` on `cluster`, starting from `initial` (a valid
/// schedule: the incumbent), within `budget` nodes and `deadline`. Returns the best schedule
/// found (never longer than `initial`) and what was proven.
pub fn solve(
    dag: &Dag,
    cluster: &Cluster,
    initial: Schedule,
    budget: u64,
    deadline: &Deadline,
) -> (Schedule, ExactReport) {
    let inst = Inst::new(dag, cluster);
    let from = initial.makespan();
    let root = crate::lowerbound::compute(dag, cluster).best();
    let mut s = Search {
        inst: &inst,
        deadline,
        budget,
        nodes: 0,
        placed: vec![false; inst.n],
        start: vec![0.0; inst.n],
        end: vec![0.0; inst.n],
        machine: vec![0; inst.n],
        on: vec![Vec::new(); inst.m],
        pending: inst.parents.iter().map(|p| p.len() as u32).collect(),
        last: None,
        max_end: 0.0,
        target: 0.0,
        next: f64::INFINITY,
        ub: from,
        best: None,
        memo: HashSet::new(),
    };
    let mut lb = s.round_up(root).max(0.0);
    let mut rounds = 0;
    let status = loop {
        if lb >= s.ub || inst.n == 0 {
            break ExactStatus::Optimal;
        }
        if inst.n > EXACT_MAX_TASKS {
            // Callers refuse these (api::check_exact); the library stays total.
            break ExactStatus::NodeLimit;
        }
        rounds += 1;
        s.target = lb;
        s.next = f64::INFINITY;
        s.memo.clear();
        match s.dfs(0) {
            Some(Stop::Found) => {
                lb = s.ub;
                break ExactStatus::Optimal;
            }
            Some(Stop::Time) => break ExactStatus::TimeLimit,
            Some(Stop::Nodes) => break ExactStatus::NodeLimit,
            // No schedule within the target: the optimum is at least the least bound pruned
            // above it (or the incumbent, when every pruned bound reached it).
            None => lb = s.next.min(s.ub).max(lb),
        }
    };
    let ub = s.ub;
    let lb = if status == ExactStatus::Optimal { ub } else { lb.min(ub) };
    let report = ExactReport {
        status,
        lower_bound: lb,
        upper_bound: ub,
        gap: if ub > 0.0 { (ub - lb) / ub } else { 0.0 },
        nodes: s.nodes.min(budget),
        node_budget: budget,
        rounds,
        from,
    };
    let schedule = match s.best {
        Some(placements) => Schedule { placements },
        None => initial,
    };
    (schedule, report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ClusterSpec;

    fn block() -> (Dag, Cluster) {
        let dag = crate::formats::native::parse(
            r#"{"resources": ["cpu", "mem"], "stages": [
                {"id": "long", "tasks": 2, "duration": 3, "demands": {"cpu": 6, "mem": 1}},
                {"id": "short", "tasks": 3, "duration": 2, "demands": {"cpu": 6, "mem": 1}}]}"#,
            "block",
        )
        .unwrap();
        let cap = [("cpu".to_string(), 10.0), ("mem".to_string(), 10.0)].into_iter().collect();
        let cluster = ClusterSpec::uniform(2, cap).resolve(&dag.resources).unwrap();
        (dag, cluster)
    }

    fn serial(dag: &Dag) -> Schedule {
        let mut at = 0.0;
        Schedule {
            placements: dag
                .tasks
                .iter()
                .enumerate()
                .map(|(t, task)| {
                    let p = Placement { task: t as TaskId, machine: 0, start: at, end: at + task.duration };
                    at += task.duration;
                    p
                })
                .collect(),
        }
    }

    #[test]
    fn fill_walks_the_capacity_left_by_running_tasks() {
        let v = Volume { weight: vec![1.0, 1.0], total_cap: 2.0 };
        // Idle: 10 units at 2 per time from 1.
        assert_eq!(fill(1.0, &[], &v, 10.0), 6.0);
        // Task 0 holds one unit until 3: 2 units by then, the other 8 at 2 per time.
        assert_eq!(fill(1.0, &[(3.0, 0)], &v, 10.0), 7.0);
        // Enough room before the running task ends.
        assert_eq!(fill(1.0, &[(3.0, 0)], &v, 1.0), 2.0);
    }

    #[test]
    fn the_instance_sees_twins_and_the_bin_packing_bounds() {
        let (dag, cluster) = block();
        let inst = Inst::new(&dag, &cluster);
        assert_eq!(inst.twin, vec![None, Some(0), None, Some(2), Some(3)]);
        assert!(inst.integral);
        // "cpu >= 6": one slot per machine, so 16 units of such work need 8 on 2 machines.
        let slots = inst.volumes.iter().find(|v| v.total_cap == 2.0 && v.weight.iter().all(|&w| w == 1.0));
        assert!(slots.is_some());
    }

    #[test]
    fn the_search_proves_the_block_optimal_from_a_serial_schedule() {
        let (dag, cluster) = block();
        let (s, r) = solve(&dag, &cluster, serial(&dag), 100_000, &Deadline::none());
        assert_eq!(r.status, ExactStatus::Optimal);
        assert_eq!((s.makespan(), r.lower_bound, r.from, r.gap), (6.0, 6.0, 12.0, 0.0));
        assert!(crate::validate::validate_schedule(&dag, &cluster, &s).is_empty());
    }

    #[test]
    fn a_spent_budget_returns_the_incumbent_and_the_bound_proven() {
        let (dag, cluster) = block();
        let (s, r) = solve(&dag, &cluster, serial(&dag), 1, &Deadline::none());
        assert_eq!(r.status, ExactStatus::NodeLimit);
        assert_eq!(s.makespan(), 12.0);
        assert_eq!((r.lower_bound, r.upper_bound, r.nodes, r.node_budget), (6.0, 12.0, 1, 1));
        assert_eq!(r.gap, 0.5);
    }
}
