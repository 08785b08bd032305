//! Tetris (Grandl et al., SIGCOMM'14) as an offline baseline: multi-resource packing that is
//! blind to the DAG beyond "which tasks may run now".
//!
//! The Graphene paper uses Tetris to show what packing alone achieves: at every instant it packs
//! the runnable tasks by alignment (the dot product of a task's demand with a machine's free
//! resources, both normalized by that machine's capacity), so it keeps machines full but may
//! start a long task that blocks the chain behind it (the motivating example in the tests costs
//! almost three times the optimum). Unlike the serial list schedulers it never back-fills holes
//! in the past: it is a chronological simulation, which is how the real scheduler behaves.
//!
//! Cost. Picking the best (task, machine) pair naively is O(runnable x machines) per start. Three
//! observations make it cheap:
//! * tasks with identical demand vectors score identically everywhere, and among them the lowest
//!   id wins the tie, so runnable tasks are kept in demand classes (a stage's tasks usually share
//!   one) and only the class's lowest id competes;
//! * each machine caches its best class; the cache is recomputed only when that machine's free
//!   vector changes (a start or an end on it), and a newly runnable class is compared against
//!   every cache (O(machines) once per class activation);
//! * when a class loses its lowest task, caches that named it are not rescanned at once: a
//!   cached key can then only be too good, never too bad (the class's dot is unchanged and its
//!   lowest id only rises), so it is an upper bound, and a machine is rescanned only when its
//!   stale bound is the best of all machines.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};

use crate::model::{Cluster, Dag, EdgeKind, Placement, ResVec, Schedule, TaskId, CAPACITY_EPS};

/// A machine's best runnable class as of its last scan: higher `dot` wins, then lower `task`.
#[derive(Clone, Copy, Debug)]
struct Best {
    dot: f64,
    task: TaskId,
    class: u32,
}

/// True when `a` is strictly preferred to `b`.
fn better(a: &Best, b: &Best) -> bool {
    match a.dot.total_cmp(&b.dot) {
        Ordering::Greater => true,
        Ordering::Less => false,
        Ordering::Equal => a.task < b.task,
    }
}

/// A running task, ordered so that the earliest end pops first from a max-heap.
#[derive(PartialEq)]
struct Running {
    end: f64,
    task: TaskId,
    machine: u32,
}

impl Eq for Running {}

impl PartialOrd for Running {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Running {
    fn cmp(&self, other: &Self) -> Ordering {
        other.end.total_cmp(&self.end).then_with(|| other.task.cmp(&self.task))
    }
}

struct Packer<'a> {
    dims: usize,
    caps: &'a [ResVec],
    /// Per machine, 1 / capacity^2 (0 where the capacity is 0): the dot product of the two
    /// normalized vectors is sum(demand * free / cap^2).
    inv_sq: Vec<ResVec>,
    used: Vec<ResVec>,
    running: Vec<u32>,
    class_demand: Vec<ResVec>,
    /// Runnable tasks of each class, lowest id on top.
    class_tasks: Vec<BinaryHeap<Reverse<TaskId>>>,
    /// Classes with runnable tasks, and each class's position in it (u32::MAX when absent).
    active: Vec<u32>,
    active_pos: Vec<u32>,
    best: Vec<Option<Best>>,
}

impl Packer<'_> {
    #[inline]
    fn fits(&self, m: usize, demand: &ResVec) -> bool {
        let (u, c) = (&self.used[m].0, &self.caps[m].0);
        (0..self.dims).all(|i| u[i] + demand.0[i] <= c[i] * (1.0 + CAPACITY_EPS) + CAPACITY_EPS)
    }

    #[inline]
    fn dot(&self, m: usize, demand: &ResVec) -> f64 {
        let (u, c, w) = (&self.used[m].0, &self.caps[m].0, &self.inv_sq[m].0);
        let mut s = 0.0;
        for i in 0..self.dims {
            s += demand.0[i] * (c[i] - u[i]) * w[i];
        }
        s
    }

    /// The candidate `class` offers on machine `m`, if its lowest task fits there now.
    fn offer(&self, m: usize, class: u32) -> Option<Best> {
        let demand = &self.class_demand[class as usize];
        let Reverse(task) = *self.class_tasks[class as usize].peek()?;
        self.fits(m, demand).then(|| Best { dot: self.dot(m, demand), task, class })
    }

    fn rescan(&mut self, m: usize) {
        let mut best: Option<Best> = None;
        for &c in &self.active {
            if let Some(o) = self.offer(m, c) {
                if best.is_none_or(|b| better(&o, &b)) {
                    best = Some(o);
                }
            }
        }
        self.best[m] = best;
    }

    fn make_runnable(&mut self, class: u32, task: TaskId) {
        let c = class as usize;
        let was_min = self.class_tasks[c].peek().map(|r| r.0);
        self.class_tasks[c].push(Reverse(task));
        if self.active_pos[c] == u32::MAX {
            self.active_pos[c] = self.active.len() as u32;
            self.active.push(class);
        }
        if was_min.is_some_and(|w| w < task) {
            return;
        }
        // The class now offers a better (or a first) candidate: every cache must see it. A stale
        // cache that still beats it stays a valid upper bound.
        for m in 0..self.caps.len() {
            if let Some(o) = self.offer(m, class) {
                if self.best[m].is_none_or(|b| better(&o, &b)) {
                    self.best[m] = Some(o);
                }
            }
        }
    }

    fn take(&mut self, class: u32) -> TaskId {
        let c = class as usize;
        let Reverse(t) = self.class_tasks[c].pop().expect("the chosen class has a task");
        if self.class_tasks[c].is_empty() {
            let pos = self.active_pos[c] as usize;
            self.active.swap_remove(pos);
            if let Some(&moved) = self.active.get(pos) {
                self.active_pos[moved as usize] = pos as u32;
            }
            self.active_pos[c] = u32::MAX;
        }
        t
    }

    /// The globally best (task, machine) pair that fits now, refreshing stale caches on the way.
    fn pick(&mut self) -> Option<(Best, usize)> {
        loop {
            let mut top: Option<(Best, usize)> = None;
            for (m, b) in self.best.iter().enumerate() {
                if let Some(b) = b {
                    if top.is_none_or(|(t, _)| better(b, &t)) {
                        top = Some((*b, m));
                    }
                }
            }
            let (b, m) = top?;
            if self.class_tasks[b.class as usize].peek().map(|r| r.0) == Some(b.task) {
                return Some((b, m));
            }
            self.rescan(m);
        }
    }
}

pub fn schedule(dag: &Dag, cluster: &Cluster) -> Schedule {
    let n = dag.len();
    let machines = cluster.len();
    let caps = &cluster.machines;
    let inv_sq = caps
        .iter()
        .map(|c| {
            let mut w = ResVec::ZERO;
            for i in 0..dag.dims() {
                if c.0[i] > 0.0 {
                    w.0[i] = 1.0 / (c.0[i] * c.0[i]);
                }
            }
            w
        })
        .collect();

    // Demand classes, keyed by the exact bits of the demand vector.
    let mut class_of = vec![0u32; n];
    let mut class_demand: Vec<ResVec> = Vec::new();
    let mut index: HashMap<[u64; crate::model::MAX_RESOURCES], u32> = HashMap::new();
    for (t, task) in dag.tasks.iter().enumerate() {
        let key = task.demand.0.map(|x| (x + 0.0).to_bits());
        class_of[t] = *index.entry(key).or_insert_with(|| {
            class_demand.push(task.demand);
            (class_demand.len() - 1) as u32
        });
    }
    let classes = class_demand.len();
    let mut p = Packer {
        dims: dag.dims(),
        caps,
        inv_sq,
        used: vec![ResVec::ZERO; machines],
        running: vec![0; machines],
        class_demand,
        class_tasks: (0..classes).map(|_| BinaryHeap::new()).collect(),
        active: Vec::new(),
        active_pos: vec![u32::MAX; classes],
        best: vec![None; machines],
    };

    // Readiness per stage, as in the offline plan: an all-to-all parent stage counts once and
    // releases its children when its last task ends; one-to-one parents count per task.
    let mut stage_left: Vec<u32> = dag.stages.iter().map(|s| s.len).collect();
    let mut barriers: Vec<u32> = dag
        .stages
        .iter()
        .map(|s| s.parents.iter().filter(|e| e.kind == EdgeKind::AllToAll && dag.stages[e.stage as usize].len > 0).count() as u32)
        .collect();
    let mut pairs = vec![0u32; n];
    for stage in &dag.stages {
        let k = stage.parents.iter().filter(|e| e.kind == EdgeKind::OneToOne).count() as u32;
        for t in stage.tasks() {
            pairs[t as usize] = k;
        }
    }
    for (s, stage) in dag.stages.iter().enumerate() {
        if barriers[s] == 0 {
            for t in stage.tasks() {
                if pairs[t as usize] == 0 {
                    p.make_runnable(class_of[t as usize], t);
                }
            }
        }
    }
    for m in 0..machines {
        p.rescan(m);
    }

    let mut placements = vec![Placement { task: 0, machine: 0, start: 0.0, end: 0.0 }; n];
    let mut heap: BinaryHeap<Running> = BinaryHeap::new();
    let mut dirty = vec![false; machines];
    let mut dirty_list: Vec<usize> = Vec::new();
    let mut started = 0usize;
    let mut now = 0.0f64;
    loop {
        while let Some((b, m)) = p.pick() {
            let t = p.take(b.class);
            debug_assert_eq!(t, b.task);
            let task = &dag.tasks[t as usize];
            let end = now + task.duration;
            placements[t as usize] = Placement { task: t, machine: m as u32, start: now, end };
            p.used[m].add_assign(&task.demand);
            p.running[m] += 1;
            heap.push(Running { end, task: t, machine: m as u32 });
            started += 1;
            p.rescan(m);
        }
        let Some(next) = heap.peek().map(|r| r.end) else {
            break;
        };
        now = next;
        while heap.peek().is_some_and(|r| r.end <= now) {
            let Running { task: t, machine, .. } = heap.pop().expect("peeked");
            let m = machine as usize;
            let task = &dag.tasks[t as usize];
            p.running[m] -= 1;
            if p.running[m] == 0 {
                // Resetting an idle machine keeps rounding from accumulating over a long run.
                p.used[m] = ResVec::ZERO;
            } else {
                p.used[m].sub_assign(&task.demand);
            }
            if !dirty[m] {
                dirty[m] = true;
                dirty_list.push(m);
            }
            let s = task.stage as usize;
            stage_left[s] -= 1;
            let stage_done = stage_left[s] == 0;
            for e in &dag.stages[s].children {
                let child = &dag.stages[e.stage as usize];
                match e.kind {
                    EdgeKind::AllToAll if stage_done => {
                        let c = e.stage as usize;
                        barriers[c] -= 1;
                        if barriers[c] == 0 {
                            for x in child.tasks() {
                                if pairs[x as usize] == 0 {
                                    p.make_runnable(class_of[x as usize], x);
                                }
                            }
                        }
                    }
                    EdgeKind::AllToAll => {}
                    EdgeKind::OneToOne => {
                        let x = child.first + task.index;
                        pairs[x as usize] -= 1;
                        if pairs[x as usize] == 0 && barriers[e.stage as usize] == 0 {
                            p.make_runnable(class_of[x as usize], x);
                        }
                    }
                }
            }
        }
        for m in dirty_list.drain(..) {
            dirty[m] = false;
            p.rescan(m);
        }
    }
    assert_eq!(
        started, n,
        "tetris left tasks unscheduled: some runnable task fits no machine (check Cluster::check_fits first)"
    );
    Schedule { placements }
}

#[cfg(test)]
pub(super) mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::model::{ClusterSpec, DagBuilder, StageSpec, TaskSpec};
    use crate::validate::validate_schedule;

    pub fn caps(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    /// `n` machines of `capacity`, with nothing overbooked so the validator checks every resource.
    pub fn cluster(dag: &Dag, n: usize, capacity: &[(&str, f64)]) -> Cluster {
        let mut spec = ClusterSpec::uniform(n, caps(capacity));
        spec.overbook.clear();
        spec.resolve(&dag.resources).unwrap()
    }

    pub fn stage(name: &str, tasks: &[(f64, &[f64])], parents: &[(&str, EdgeKind)]) -> StageSpec {
        StageSpec {
            name: name.into(),
            group: None,
            tasks: tasks.iter().map(|(d, v)| TaskSpec { duration: *d, demand: ResVec::from_slice(v) }).collect(),
            parents: parents.iter().map(|(p, k)| (p.to_string(), *k)).collect(),
        }
    }

    pub fn assert_valid(dag: &Dag, cluster: &Cluster, s: &Schedule) {
        assert_eq!(s.placements.len(), dag.len());
        for (i, p) in s.placements.iter().enumerate() {
            assert_eq!(p.task as usize, i);
            assert_eq!(p.end - p.start, dag.tasks[i].duration, "task {i}");
            assert!(dag.tasks[i].demand.fits_in(&cluster.machines[p.machine as usize]));
        }
        assert!(s.placements.iter().map(|p| p.start).fold(f64::INFINITY, f64::min) >= 0.0);
        let v = validate_schedule(dag, cluster, s);
        assert!(v.is_empty(), "violations: {:?}", &v[..v.len().min(5)]);
    }

    /// The paper's motivating example: short cpu-heavy tasks s1..s3 each gate a long, balanced
    /// task L1..L3.
    pub fn motivating() -> (Dag, Cluster) {
        let mut b = DagBuilder::new("motivating", vec!["cpu".into(), "mem".into(), "disk".into()]);
        for (i, d) in [100.0, 98.0, 96.0].iter().enumerate() {
            b.stage(stage(&format!("s{}", i + 1), &[(1.0, &[9.0])], &[]));
            let s = format!("s{}", i + 1);
            b.stage(stage(&format!("L{}", i + 1), &[(*d, &[4.0, 4.0, 4.0])], &[(s.as_str(), EdgeKind::AllToAll)]));
        }
        let dag = b.build().unwrap();
        let c = cluster(&dag, 1, &[("cpu", 12.0), ("mem", 12.0), ("disk", 12.0)]);
        (dag, c)
    }

    /// A reproducible pseudo-random DAG: stages of 1..=max_tasks tasks with mixed durations
    /// (some zero), demands (some zero) and both edge kinds.
    pub fn random_dag(seed: u64, stages: usize, max_tasks: u32) -> Dag {
        let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let mut next = move |k: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % k.max(1)
        };
        let mut b = DagBuilder::new("random", vec!["cpu".into(), "mem".into()]);
        let mut sizes: Vec<u32> = Vec::new();
        for s in 0..stages {
            let len = if s > 0 && next(3) == 0 { sizes[next(s as u64) as usize] } else { 1 + next(max_tasks as u64) as u32 };
            let shared = next(2) == 0;
            let base = (next(10) as f64, [next(5) as f64, next(9) as f64]);
            let tasks: Vec<(f64, [f64; 2])> = (0..len)
                .map(|_| if shared { base } else { (next(10) as f64 * 0.5, [next(5) as f64, next(9) as f64 * 0.5]) })
                .collect();
            let mut parents: Vec<(String, EdgeKind)> = Vec::new();
            for p in 0..s {
                if next(4) == 0 {
                    let kind = if sizes[p] == len && next(2) == 0 { EdgeKind::OneToOne } else { EdgeKind::AllToAll };
                    parents.push((format!("st{p}"), kind));
                }
            }
            let specs: Vec<(f64, &[f64])> = tasks.iter().map(|(d, v)| (*d, &v[..])).collect();
            let ps: Vec<(&str, EdgeKind)> = parents.iter().map(|(n, k)| (n.as_str(), *k)).collect();
            b.stage(stage(&format!("st{s}"), &specs, &ps));
            sizes.push(len);
        }
        b.build().unwrap()
    }

    /// Two machines of different sizes, so fit and normalization differ per machine.
    pub fn mixed_cluster(dag: &Dag) -> Cluster {
        let mut spec = ClusterSpec::uniform(2, caps(&[("cpu", 4.0), ("mem", 8.0)]));
        spec.machines.push(crate::model::MachineGroup { count: 1, capacity: caps(&[("cpu", 8.0), ("mem", 16.0)]) });
        spec.overbook.clear();
        spec.resolve(&dag.resources).unwrap()
    }

    #[test]
    fn motivating_example_serializes_to_297() {
        let (dag, c) = motivating();
        let s = schedule(&dag, &c);
        assert_valid(&dag, &c, &s);
        assert_eq!(s.makespan(), 297.0);
        let at = |name: &str| s.placements[dag.task_by_name(name).unwrap() as usize].start;
        assert_eq!(
            [at("s1[0]"), at("L1[0]"), at("s2[0]"), at("L2[0]"), at("s3[0]"), at("L3[0]")],
            [0.0, 1.0, 101.0, 102.0, 200.0, 201.0]
        );
    }

    #[test]
    fn picks_by_normalized_alignment_then_id_then_machine() {
        // Machine 0: cpu 4, mem 8; machine 1: cpu 8, mem 16 (both idle, free vector = capacity).
        // a (cpu 2, mem 2): dot on m0 = 2/4 + 2/8 = 0.75, on m1 = 2/8 + 2/16 = 0.375.
        // b (cpu 1, mem 6): dot on m0 = 1/4 + 6/8 = 1.0, on m1 = 0.5.
        // c (cpu 2, mem 2), same as a.
        let mut bld = DagBuilder::new("d", vec!["cpu".into(), "mem".into()]);
        bld.stage(stage("a", &[(10.0, &[2.0, 2.0])], &[]));
        bld.stage(stage("b", &[(10.0, &[1.0, 6.0])], &[]));
        bld.stage(stage("c", &[(10.0, &[2.0, 2.0])], &[]));
        let dag = bld.build().unwrap();
        let mut spec = ClusterSpec::uniform(1, caps(&[("cpu", 4.0), ("mem", 8.0)]));
        spec.machines.push(crate::model::MachineGroup { count: 1, capacity: caps(&[("cpu", 8.0), ("mem", 16.0)]) });
        spec.overbook.clear();
        let c = spec.resolve(&dag.resources).unwrap();
        let s = schedule(&dag, &c);
        assert_valid(&dag, &c, &s);
        // b goes first to m0 (1.0). m0 then has cpu 3, mem 2 free: a there scores
        // 2*3/16 + 2*2/64 = 0.4375 > 0.375 on m1, so a joins b on m0 (a beats c by id). m0 is
        // then full on mem; c goes to m1.
        let m: Vec<u32> = s.placements.iter().map(|p| p.machine).collect();
        assert_eq!(m, vec![0, 0, 1]);
        assert!(s.placements.iter().all(|p| p.start == 0.0));
    }

    #[test]
    fn zero_durations_and_demands_release_children_at_once() {
        let mut bld = DagBuilder::new("d", vec!["cpu".into()]);
        bld.stage(stage("z", &[(0.0, &[3.0]), (0.0, &[0.0])], &[]));
        bld.stage(stage("w", &[(5.0, &[4.0]), (2.0, &[0.0])], &[("z", EdgeKind::OneToOne)]));
        bld.stage(stage("v", &[(1.0, &[4.0])], &[("w", EdgeKind::AllToAll)]));
        let dag = bld.build().unwrap();
        let c = cluster(&dag, 1, &[("cpu", 4.0)]);
        let s = schedule(&dag, &c);
        assert_valid(&dag, &c, &s);
        let st: Vec<f64> = s.placements.iter().map(|p| p.start).collect();
        assert_eq!(st, vec![0.0, 0.0, 0.0, 0.0, 5.0]);
        assert_eq!(s.makespan(), 6.0);
    }

    #[test]
    fn random_dags_are_valid() {
        for seed in 0..40 {
            let dag = random_dag(seed, 12, 6);
            let c = mixed_cluster(&dag);
            let s = schedule(&dag, &c);
            assert_valid(&dag, &c, &s);
        }
    }

    /// The definition, evaluated by brute force over every (runnable task, machine) pair.
    fn naive(dag: &Dag, c: &Cluster) -> Vec<(u32, f64)> {
        let n = dag.len();
        let mut out = vec![(u32::MAX, f64::NAN); n];
        let mut finished = vec![false; n];
        let mut running: Vec<(f64, TaskId, usize)> = Vec::new();
        let mut now = 0.0;
        loop {
            loop {
                let mut best: Option<(f64, TaskId, usize)> = None;
                for t in 0..n as TaskId {
                    let mut ready = out[t as usize].0 == u32::MAX;
                    dag.for_each_parent(t, |p| ready &= finished[p as usize]);
                    if !ready {
                        continue;
                    }
                    let d = &dag.tasks[t as usize].demand;
                    for m in 0..c.len() {
                        let mut used = ResVec::ZERO;
                        for &(_, r, rm) in &running {
                            if rm == m {
                                used.add_assign(&dag.tasks[r as usize].demand);
                            }
                        }
                        let cap = &c.machines[m];
                        if !used.fits_with(d, cap, &[true; crate::model::MAX_RESOURCES]) {
                            continue;
                        }
                        let mut free = *cap;
                        free.sub_assign(&used);
                        let dot = d.normalized_by(cap).dot(&free.normalized_by(cap));
                        if best.is_none_or(|(bd, _, _)| dot > bd) {
                            best = Some((dot, t, m));
                        }
                    }
                }
                let Some((_, t, m)) = best else { break };
                out[t as usize] = (m as u32, now);
                running.push((now + dag.tasks[t as usize].duration, t, m));
            }
            let Some(next) = running.iter().map(|r| r.0).min_by(f64::total_cmp) else { break };
            now = next;
            running.retain(|&(e, t, _)| {
                if e <= now {
                    finished[t as usize] = true;
                }
                e > now
            });
        }
        out
    }

    #[test]
    fn matches_brute_force_definition() {
        for seed in 100..160 {
            let dag = if seed % 4 == 0 { random_dag(seed, 25, 9) } else { random_dag(seed, 10, 5) };
            let c = mixed_cluster(&dag);
            let s = schedule(&dag, &c);
            let got: Vec<(u32, f64)> = s.placements.iter().map(|p| (p.machine, p.start)).collect();
            assert_eq!(got, naive(&dag, &c), "seed {seed}");
        }
    }

    #[test]
    fn never_idles_while_a_runnable_task_fits() {
        // A cluster with a machine per task: a chronological packer must start all at once.
        let dag = random_dag(7, 1, 8);
        let c = cluster(&dag, dag.len(), &[("cpu", 8.0), ("mem", 8.0)]);
        let s = schedule(&dag, &c);
        assert_valid(&dag, &c, &s);
        assert!(s.placements.iter().all(|p| p.start == 0.0));
    }
}
