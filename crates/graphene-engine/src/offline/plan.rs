//! A partial schedule under construction: the resource-time space plus where each task went.
//!
//! Placement walks dependencies per stage: an all-to-all parent stage releases its children once,
//! when its last task in the subset is placed, and a child's release time is the latest end of
//! the parent stage (`stage_end`), so no pass ever expands |parent| x |child| task pairs.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::model::{Dag, EdgeKind, Placement, ResVec, Schedule, TaskId};
use crate::space::Space;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Forward,
    Backward,
}

impl Direction {
    pub fn as_str(&self) -> &'static str {
        match self {
            Direction::Forward => "forward",
            Direction::Backward => "backward",
        }
    }
}

crate::named_enum! {
    /// Which ready task a placement pass takes next.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum PlacementKey {
        /// The paper's rule: the longest ready task.
        Longest = "longest",
        /// The ready task with the longest path through it to the end of the DAG (forward) or from
        /// its start (backward): the same greedy, but aware of what waits behind a task.
        PathLength = "path-length",
        /// Both at once: path length over the longest path plus duration over the longest task,
        /// equal weights. Why: `longest` places a short task that gates a long path last among its
        /// ready peers, and `path-length` places a long task off every long path (which must start
        /// early to fit) after any task on the critical path, however short; one key per plan
        /// cannot serve both, the sum ranks a task high when either is large.
        Mixed = "mixed",
    }
}

impl PlacementKey {
    /// Every key, in the order `--placement` lists them.
    pub fn all() -> Vec<PlacementKey> {
        vec![PlacementKey::Longest, PlacementKey::PathLength, PlacementKey::Mixed]
    }
}

/// Per-task priorities for forward and backward passes, computed once per DAG and key.
pub struct Keys {
    pub key: PlacementKey,
    pub forward: Vec<f64>,
    pub backward: Vec<f64>,
}

impl Keys {
    pub fn new(dag: &Dag, key: PlacementKey) -> Keys {
        match key {
            PlacementKey::Longest => {
                let d: Vec<f64> = dag.tasks.iter().map(|t| t.duration).collect();
                Keys { key, forward: d.clone(), backward: d }
            }
            PlacementKey::PathLength => Keys {
                key,
                forward: crate::model::paths::bottom_levels(dag),
                backward: crate::model::paths::top_levels(dag),
            },
            PlacementKey::Mixed => {
                let d: Vec<f64> = dag.tasks.iter().map(|t| t.duration).collect();
                let mix = |path: Vec<f64>| {
                    let pmax = path.iter().copied().fold(0.0, f64::max);
                    let dmax = d.iter().copied().fold(0.0, f64::max);
                    let norm = |x: f64, max: f64| if max > 0.0 { x / max } else { 0.0 };
                    path.iter().zip(&d).map(|(&p, &x)| norm(p, pmax) + norm(x, dmax)).collect::<Vec<f64>>()
                };
                Keys {
                    key,
                    forward: mix(crate::model::paths::bottom_levels(dag)),
                    backward: mix(crate::model::paths::top_levels(dag)),
                }
            }
        }
    }
}

#[derive(Clone)]
pub struct Plan<'a> {
    dag: &'a Dag,
    pub space: Space,
    machine: Vec<u32>,
    start: Vec<f64>,
    end: Vec<f64>,
    placed: Vec<bool>,
    /// Latest end / earliest start over the placed tasks of each stage.
    stage_end: Vec<f64>,
    stage_start: Vec<f64>,
}

/// Ready-queue entry: highest key first, then lowest id, so placement is deterministic.
#[derive(PartialEq)]
struct Ready {
    key: f64,
    task: TaskId,
}

impl Eq for Ready {}

impl PartialOrd for Ready {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ready {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key.total_cmp(&other.key).then_with(|| other.task.cmp(&self.task))
    }
}

impl<'a> Plan<'a> {
    pub fn new(dag: &'a Dag, caps: &[ResVec]) -> Plan<'a> {
        let n = dag.len();
        let s = dag.stages.len();
        Plan {
            dag,
            space: Space::new(caps),
            machine: vec![u32::MAX; n],
            start: vec![f64::NAN; n],
            end: vec![f64::NAN; n],
            placed: vec![false; n],
            stage_end: vec![f64::NEG_INFINITY; s],
            stage_start: vec![f64::INFINITY; s],
        }
    }

    pub fn makespan(&self) -> f64 {
        self.space.makespan()
    }

    pub fn is_placed(&self, t: TaskId) -> bool {
        self.placed[t as usize]
    }

    /// Records `t` on machine `m` over `[start, end)`. Callers pass both ends as computed by the
    /// space query, never one of them recomputed from the duration: `(e - d) + d` need not equal
    /// `e` in floating point, and that last-bit overlap with a neighbour would be a real overrun.
    fn put(&mut self, t: TaskId, m: usize, start: f64, end: f64) {
        let task = &self.dag.tasks[t as usize];
        self.space.insert(m, start, end, &task.demand);
        let i = t as usize;
        self.machine[i] = m as u32;
        self.start[i] = start;
        self.end[i] = end;
        self.placed[i] = true;
        let s = task.stage as usize;
        self.stage_end[s] = self.stage_end[s].max(end);
        self.stage_start[s] = self.stage_start[s].min(start);
    }

    /// Latest end among the placed parents of `t`.
    fn release(&self, t: TaskId) -> f64 {
        let task = &self.dag.tasks[t as usize];
        let mut r = f64::NEG_INFINITY;
        for e in &self.dag.stages[task.stage as usize].parents {
            let p = &self.dag.stages[e.stage as usize];
            match e.kind {
                EdgeKind::AllToAll => r = r.max(self.stage_end[e.stage as usize]),
                EdgeKind::OneToOne => {
                    let pt = (p.first + task.index) as usize;
                    if self.placed[pt] {
                        r = r.max(self.end[pt]);
                    }
                }
            }
        }
        r
    }

    /// Earliest start among the placed children of `t`.
    fn deadline(&self, t: TaskId) -> f64 {
        let task = &self.dag.tasks[t as usize];
        let mut d = f64::INFINITY;
        for e in &self.dag.stages[task.stage as usize].children {
            let c = &self.dag.stages[e.stage as usize];
            match e.kind {
                EdgeKind::AllToAll => d = d.min(self.stage_start[e.stage as usize]),
                EdgeKind::OneToOne => {
                    let ct = (c.first + task.index) as usize;
                    if self.placed[ct] {
                        d = d.min(self.start[ct]);
                    }
                }
            }
        }
        d
    }

    /// Places the tasks of `subset` (all unplaced, `member[t]` true exactly for them).
    ///
    /// Forward: repeatedly the longest task (or the one first by `keys`) whose parents in the subset are placed goes to the
    /// earliest slot after its placed parents end (and not before the space's current start, so
    /// that it fills holes rather than extending the schedule to the left). Backward is the
    /// mirror image: the longest task whose children in the subset are placed goes to the latest
    /// slot before its placed children start. Dependencies on tasks outside the subset that are
    /// not placed yet are left to the later pass that places them, which runs in the direction
    /// that respects them; that is what the subset orders guarantee.
    pub fn place(&mut self, subset: &[TaskId], member: &[bool], dir: Direction, keys: &Keys) {
        let key = match dir {
            Direction::Forward => &keys.forward,
            Direction::Backward => &keys.backward,
        };
        self.place_by(subset, member, dir, |t| key[t as usize]);
    }

    /// Like [`Plan::place`], with an arbitrary priority: the ready task with the highest `key`
    /// goes next (list scheduling).
    pub fn place_by(&mut self, subset: &[TaskId], member: &[bool], dir: Direction, key: impl Fn(TaskId) -> f64) {
        if subset.is_empty() {
            return;
        }
        let dag = self.dag;
        let forward = dir == Direction::Forward;
        let (floor, ceiling) = match self.space.span() {
            Some((a, b)) => (a, b),
            None => (0.0, 0.0),
        };
        // Unplaced subset members per stage; a stage "blocks" its dependants until it hits zero.
        let mut remaining = vec![0u32; dag.stages.len()];
        for &t in subset {
            remaining[dag.tasks[t as usize].stage as usize] += 1;
        }
        let mut pending = vec![0u32; dag.len()];
        let mut heap = BinaryHeap::with_capacity(subset.len());
        for &t in subset {
            let task = &dag.tasks[t as usize];
            let stage = &dag.stages[task.stage as usize];
            let edges = if forward { &stage.parents } else { &stage.children };
            let mut count = 0u32;
            for e in edges {
                match e.kind {
                    EdgeKind::AllToAll => {
                        if remaining[e.stage as usize] > 0 {
                            count += 1;
                        }
                    }
                    EdgeKind::OneToOne => {
                        let other = dag.stages[e.stage as usize].first + task.index;
                        if member[other as usize] {
                            count += 1;
                        }
                    }
                }
            }
            if count == 0 {
                heap.push(Ready { key: key(t), task: t });
            } else {
                pending[t as usize] = count;
            }
        }
        let mut done = 0usize;
        while let Some(Ready { task: t, .. }) = heap.pop() {
            let task = &dag.tasks[t as usize];
            if forward {
                let release = self.release(t).max(floor);
                let (m, s) = self.space.earliest(release, task.duration, &task.demand);
                self.put(t, m, s, s + task.duration);
            } else {
                let deadline = self.deadline(t).min(ceiling);
                let (m, e) = self.space.latest(deadline, task.duration, &task.demand);
                self.put(t, m, e - task.duration, e);
            }
            done += 1;
            let stage = &dag.stages[task.stage as usize];
            remaining[task.stage as usize] -= 1;
            let stage_done = remaining[task.stage as usize] == 0;
            let edges = if forward { &stage.children } else { &stage.parents };
            let mut release = |x: TaskId, heap: &mut BinaryHeap<Ready>| {
                let c = &mut pending[x as usize];
                *c -= 1;
                if *c == 0 {
                    heap.push(Ready { key: key(x), task: x });
                }
            };
            for e in edges {
                let other = &dag.stages[e.stage as usize];
                match e.kind {
                    EdgeKind::AllToAll if stage_done => {
                        for x in other.tasks() {
                            if member[x as usize] {
                                release(x, &mut heap);
                            }
                        }
                    }
                    EdgeKind::AllToAll => {}
                    EdgeKind::OneToOne => {
                        let x = other.first + task.index;
                        if member[x as usize] {
                            release(x, &mut heap);
                        }
                    }
                }
            }
        }
        debug_assert_eq!(done, subset.len(), "every subset member is placed");
    }

    /// Forward re-compaction: every task moved as early as its parents and the resources allow,
    /// taken in start order (ties: end, then task id, a topological order). Why: a subset placed
    /// backward (right-justified against its placed children, or against the end of the space)
    /// keeps the idle time it left at its start, so the chain behind it starts late, and a
    /// forward pass placed after it may have taken a machine that is busy until then; a
    /// forward sweep closes those gaps.
    ///
    /// Two sweeps, the shorter result wins (ties: the first). On the same machines: never later,
    /// because when a task is taken every task already re-placed started no later than this one
    /// did in `self` and moved only earlier on its own machine, so over this task's old slot it
    /// uses at most what it used there before, and the old slot (after parents that end no
    /// later than before) still fits; the search is bounded by the old start, and should
    /// floating point ever disagree the old slot is kept. On any machine (the earliest slot
    /// anywhere, in the same order): no such guarantee, but it can move a task off a machine
    /// that a task started earlier still holds.
    pub fn compacted(&self) -> Plan<'a> {
        let same = self.sweep(false);
        let any = self.sweep(true);
        if any.makespan() < same.makespan() {
            any
        } else {
            same
        }
    }

    fn sweep(&self, any_machine: bool) -> Plan<'a> {
        let n = self.dag.len();
        let mut out = Plan::new(self.dag, &self.space_caps());
        let Some((floor, _)) = self.space.span() else {
            return out;
        };
        let mut order: Vec<TaskId> = (0..n as TaskId).filter(|&t| self.placed[t as usize]).collect();
        order.sort_by(|&a, &b| {
            let (a, b) = (a as usize, b as usize);
            self.start[a].total_cmp(&self.start[b]).then(self.end[a].total_cmp(&self.end[b])).then(a.cmp(&b))
        });
        for t in order {
            let i = t as usize;
            let task = &self.dag.tasks[i];
            let release = out.release(t).max(floor);
            if any_machine {
                let (m, s) = out.space.earliest(release, task.duration, &task.demand);
                out.put(t, m, s, s + task.duration);
                continue;
            }
            let m = self.machine[i] as usize;
            let (s, e) = match out.space.earliest_on(m, release, task.duration, &task.demand) {
                Some(s) if s < self.start[i] => (s, s + task.duration),
                _ => (self.start[i], self.end[i]),
            };
            out.put(t, m, s, e);
        }
        out
    }

    fn space_caps(&self) -> Vec<ResVec> {
        (0..self.space.machines()).map(|m| *self.space.capacity(m)).collect()
    }

    /// The finished schedule, shifted to start at time 0.
    pub fn into_schedule(self) -> Schedule {
        let shift = self.space.span().map_or(0.0, |(a, _)| a);
        let placements = (0..self.dag.len())
            .map(|i| {
                debug_assert!(self.placed[i]);
                Placement {
                    task: i as TaskId,
                    machine: self.machine[i],
                    start: self.start[i] - shift,
                    end: self.end[i] - shift,
                }
            })
            .collect();
        Schedule { placements }
    }
}
