//! Lower bounds on the makespan of any schedule of a DAG on a cluster.
//!
//! * Critical path: the longest chain of task durations.
//! * Total work: max over resources of (sum of duration x demand) / (cluster capacity).
//! * Stage-aware: described and proved on [`stage_aware`]; never below the other two.

use serde::Serialize;

use crate::model::{Cluster, Dag, EdgeKind, ResVec, TaskId, CAPACITY_EPS};

#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct LowerBounds {
    pub critical_path: f64,
    pub total_work: f64,
    pub stage_aware: f64,
}

impl LowerBounds {
    pub fn best(&self) -> f64 {
        self.critical_path.max(self.total_work).max(self.stage_aware)
    }
}

pub fn compute(dag: &Dag, cluster: &Cluster) -> LowerBounds {
    let total = cluster.total_capacity();
    LowerBounds {
        critical_path: critical_path(dag),
        total_work: work(dag, 0..dag.len() as TaskId, &total),
        stage_aware: stage_aware(dag, &cluster.machines),
    }
}

/// Work of a set of tasks: the time the whole cluster would need for them if they could be
/// spread perfectly, max over resources of (sum of duration x demand) / (total capacity).
pub fn twork(dag: &Dag, tasks: impl IntoIterator<Item = TaskId>, total_cap: &ResVec) -> f64 {
    let mut sum = ResVec::ZERO;
    for t in tasks {
        let task = &dag.tasks[t as usize];
        sum.add_assign(&task.demand.scale(task.duration));
    }
    let mut w: f64 = 0.0;
    for r in 0..dag.dims() {
        if total_cap.0[r] > 0.0 {
            w = w.max(sum.0[r] / total_cap.0[r]);
        }
    }
    w
}

fn work(dag: &Dag, tasks: impl IntoIterator<Item = TaskId>, total: &ResVec) -> f64 {
    twork(dag, tasks, total)
}

/// Work of a task set when tasks cannot be split across machines: the larger of the total-work
/// bound and, for each resource r and demand level v, (sum of durations of the tasks demanding
/// at least v of r) / (how many such tasks the machines can run at once, sum over machines of
/// floor(capacity_r / v)). Sound because at any instant a machine holds at most that many of
/// them on r. The capacity slack is the one the resource-time space allows.
pub fn packed_work(dag: &Dag, tasks: &[TaskId], machines: &[ResVec], total: &ResVec) -> f64 {
    packed_work_in(dag, tasks.iter().copied(), &Classes::new(machines, dag.dims()), total, &mut Vec::new())
}

/// The machines' capacities per resource as (capacity, how many machines have it), so that
/// counting slots costs the number of distinct capacities, not of machines: the stage-aware
/// bound counts them for every stage, and a 100,000-stage chain on 1,000 identical machines
/// spent a quarter of its build there. Counts and floors are whole numbers, exact in f64, so
/// the sum is the per-machine sum.
pub(crate) struct Classes(Vec<Vec<(f64, f64)>>);

impl Classes {
    pub(crate) fn new(machines: &[ResVec], dims: usize) -> Classes {
        Classes(
            (0..dims)
                .map(|r| {
                    let mut caps: Vec<f64> = machines.iter().map(|c| c.0[r]).collect();
                    caps.sort_by(f64::total_cmp);
                    let mut classes: Vec<(f64, f64)> = Vec::new();
                    for c in caps {
                        match classes.last_mut() {
                            Some((v, n)) if v.total_cmp(&c).is_eq() => *n += 1.0,
                            _ => classes.push((c, 1.0)),
                        }
                    }
                    classes
                })
                .collect(),
        )
    }

    /// How many tasks demanding `v` of resource `r` the machines can run at once.
    fn slots(&self, r: usize, v: f64) -> f64 {
        self.0[r].iter().map(|&(c, n)| n * ((c * (1.0 + CAPACITY_EPS) + CAPACITY_EPS) / v).floor()).sum()
    }
}

/// [`packed_work`] over machine classes, with a buffer reused between calls.
pub(crate) fn packed_work_in(
    dag: &Dag,
    tasks: impl Iterator<Item = TaskId> + Clone,
    classes: &Classes,
    total: &ResVec,
    by_demand: &mut Vec<(f64, f64)>,
) -> f64 {
    let mut best = work(dag, tasks.clone(), total);
    for r in 0..dag.dims() {
        by_demand.clear();
        by_demand.extend(tasks.clone().map(|t| {
            let task = &dag.tasks[t as usize];
            (task.demand.0[r], task.duration)
        }));
        by_demand.retain(|&(d, dur)| d > 0.0 && dur > 0.0);
        by_demand.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut sum = 0.0;
        let mut i = 0;
        while i < by_demand.len() {
            let v = by_demand[i].0;
            while i < by_demand.len() && by_demand[i].0 == v {
                sum += by_demand[i].1;
                i += 1;
            }
            let slots = classes.slots(r, v);
            if slots >= 1.0 {
                best = best.max(sum / slots);
            }
        }
    }
    best
}

/// Longest path of durations.
pub fn critical_path(dag: &Dag) -> f64 {
    crate::model::paths::top_levels(dag).into_iter().fold(0.0, f64::max)
}

/// A bound that uses stage structure: barriers force whole stages to run one after another, and
/// each stage needs at least its total work's worth of time.
///
/// Definitions (W(X) is the packed-work bound of a task set X, [`packed_work`]: at least the
/// total-work bound of X on the whole cluster, and more when X's tasks are too wide for several
/// to share a machine):
///
/// * head(t), a lower bound on the start of task t in any feasible schedule: 0 for tasks without
///   parents; otherwise the max over all-to-all parent stages p of F(p), and over one-to-one
///   parents q of head(q) + dur(q). F(p), a lower bound on the end of p's last task, is
///   max( max_{x in p} head(x) + dur(x), min_{x in p} head(x) + W(p) ).
/// * tail(t), a lower bound on the time between t's end and the end of the schedule, is the
///   mirror image over children (with G(c) = max( max_x dur(x) + tail(x), W(c) + min_x tail(x) )).
///
/// The bound is the max of (a) head(t) + dur(t) + tail(t) over tasks, (b) for each stage s,
/// min head(s) + W(s) + min tail(s), (c) for each head value h, h + TW({t : head(t) >= h}) with
/// TW the plain total-work bound, and (d) W(all tasks).
///
/// Proof sketch. By induction in topological order, head(t) <= start(t) in every feasible
/// schedule: an all-to-all parent stage p must have ended entirely, its tasks all start at or
/// after min head(p) and need at least W(p) of time together (no schedule does more work per unit
/// of time than the whole cluster's capacity, nor runs more wide tasks at once than fit side by
/// side on the machines), and each runs at least its duration after its own
/// head; a one-to-one parent q ends no earlier than head(q) + dur(q). tail is the same argument
/// run backwards from the schedule's end. Then (a) holds because t occupies [start, end] with at
/// least tail(t) after it; (b) because every task of s runs inside [min head(s), makespan -
/// min tail(s)] and their work needs W(s) of that window; (c) because all tasks with head >= h
/// run inside [h, makespan]; (d) because every task runs inside [0, makespan]. (a) with the
/// longest chain is at least the critical path, since
/// head and tail are at least the plain path lengths, and (c) with h = 0 is the total work bound,
/// so the result is never below max(critical path, total work).
pub fn stage_aware(dag: &Dag, machines: &[ResVec]) -> f64 {
    let total = &machines.iter().fold(ResVec::ZERO, |a, c| a.add(c));
    let n = dag.len();
    let ns = dag.stages.len();
    let classes = Classes::new(machines, dag.dims());
    let mut buf = Vec::new();
    let stage_work: Vec<f64> =
        dag.stages.iter().map(|s| packed_work_in(dag, s.tasks(), &classes, total, &mut buf)).collect();
    // Heads, in topological order.
    let mut head = vec![0.0f64; n];
    let mut fin = vec![0.0f64; ns];
    for (s, stage) in dag.stages.iter().enumerate() {
        let mut min_head = f64::INFINITY;
        let mut max_end: f64 = 0.0;
        for t in stage.tasks() {
            let task = &dag.tasks[t as usize];
            let mut h: f64 = 0.0;
            for e in &stage.parents {
                h = h.max(match e.kind {
                    EdgeKind::AllToAll => fin[e.stage as usize],
                    EdgeKind::OneToOne => {
                        let q = (dag.stages[e.stage as usize].first + task.index) as usize;
                        head[q] + dag.tasks[q].duration
                    }
                });
            }
            head[t as usize] = h;
            min_head = min_head.min(h);
            max_end = max_end.max(h + task.duration);
        }
        fin[s] = if stage.len == 0 { 0.0 } else { max_end.max(min_head + stage_work[s]) };
    }
    // Tails, in reverse topological order.
    let mut tail = vec![0.0f64; n];
    let mut gin = vec![0.0f64; ns];
    for (s, stage) in dag.stages.iter().enumerate().rev() {
        let mut min_tail = f64::INFINITY;
        let mut max_len: f64 = 0.0;
        for t in stage.tasks() {
            let task = &dag.tasks[t as usize];
            let mut q: f64 = 0.0;
            for e in &stage.children {
                q = q.max(match e.kind {
                    EdgeKind::AllToAll => gin[e.stage as usize],
                    EdgeKind::OneToOne => {
                        let c = (dag.stages[e.stage as usize].first + task.index) as usize;
                        tail[c] + dag.tasks[c].duration
                    }
                });
            }
            tail[t as usize] = q;
            min_tail = min_tail.min(q);
            max_len = max_len.max(task.duration + q);
        }
        gin[s] = if stage.len == 0 { 0.0 } else { max_len.max(min_tail + stage_work[s]) };
    }
    let mut bound: f64 = 0.0;
    // (a) and (b)
    for (s, stage) in dag.stages.iter().enumerate() {
        if stage.len == 0 {
            continue;
        }
        let mut min_head = f64::INFINITY;
        let mut min_tail = f64::INFINITY;
        for t in stage.tasks() {
            let i = t as usize;
            bound = bound.max(head[i] + dag.tasks[i].duration + tail[i]);
            min_head = min_head.min(head[i]);
            min_tail = min_tail.min(tail[i]);
        }
        bound = bound.max(min_head + stage_work[s] + min_tail);
    }
    // (c): sweep head values from the largest down, accumulating work.
    let mut by_head: Vec<TaskId> = (0..n as TaskId).collect();
    by_head.sort_by(|&a, &b| head[b as usize].total_cmp(&head[a as usize]));
    let mut acc = ResVec::ZERO;
    let mut i = 0;
    while i < n {
        let h = head[by_head[i] as usize];
        while i < n && head[by_head[i] as usize] == h {
            let task = &dag.tasks[by_head[i] as usize];
            acc.add_assign(&task.demand.scale(task.duration));
            i += 1;
        }
        let mut w: f64 = 0.0;
        for r in 0..dag.dims() {
            if total.0[r] > 0.0 {
                w = w.max(acc.0[r] / total.0[r]);
            }
        }
        bound = bound.max(h + w);
    }
    bound.max(packed_work_in(dag, 0..n as TaskId, &classes, total, &mut buf))
}
