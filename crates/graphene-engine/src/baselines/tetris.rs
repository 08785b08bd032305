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
//! Cost. Picking the best (task, machine) pair naively is O(runnable x machines) per start, too
//! slow for thousands of runnable tasks with distinct demands. What keeps it cheap:
//! * tasks with identical demand vectors score identically everywhere, and among them the lowest
//!   id wins the tie, so runnable tasks are kept in demand classes (a stage's tasks usually share
//!   one) and only the class's lowest id competes;
//! * each machine keeps a short list of its best classes, recomputed only when that machine's
//!   free vector changes (a start or an end on it) or the list runs out; a newly runnable class
//!   is offered to every list (O(machines) once per class activation);
//! * when a class loses its lowest task, no list is searched again at once: the entry's key can
//!   only have become worse (same dot, later id), so stale entries are fixed when they reach the
//!   head, and a list that ran out competes with a bound on what it left out, searching again
//!   only if that bound is the best of all machines. Keeping several entries matters when many
//!   machines favour the same classes: each one that runs out falls back on its next entry;
//! * a search is branch and bound in a k-d tree over the classes' raw demand vectors. For
//!   machine m the score is linear in the demand (sum of demand_i x free_i / cap_i^2), so a
//!   subtree is skipped when the componentwise minimum of its demands does not fit, when it has
//!   no runnable class, or when its componentwise maximum scores below the list's last entry.
//!   The tree holds raw demands, so one tree serves machines of every size;
//! * idle machines of equal capacity have equal candidates, so one copies another's list.
//!
//! On the 5,000-task WfCommons DAGs (a distinct demand vector per task) on 50 machines this
//! runs in roughly 50 ms in a release build; on TPC-H-like stage DAGs in a few ms.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};

use crate::model::{Cluster, Dag, EdgeKind, Placement, ResVec, Schedule, TaskId, CAPACITY_EPS, MAX_RESOURCES};

/// A candidate on some machine: a class, its lowest runnable task and its score there. Higher
/// `dot` wins, then lower `task` (the machine index breaks the remaining ties).
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

/// Classes per k-d tree leaf.
const LEAF: usize = 16;

/// Candidates kept per machine: when the best class of many machines runs out at once, each
/// falls back on its next entry instead of a new search.
const KEEP: usize = 16;

/// A k-d tree node over the classes `lo..hi` (classes are numbered in tree order).
#[derive(Clone, Debug)]
struct Node {
    lo: u32,
    hi: u32,
    /// Children, or u32::MAX for a leaf.
    left: u32,
    right: u32,
    parent: u32,
    min: ResVec,
    max: ResVec,
    /// Classes in the subtree with runnable tasks.
    active: u32,
}

/// Builds the tree over `demands`, returning the nodes and the class order (tree position to
/// original class).
fn build_tree(demands: &[ResVec], dims: usize, scale: &[f64; MAX_RESOURCES]) -> (Vec<Node>, Vec<u32>) {
    let mut order: Vec<u32> = (0..demands.len() as u32).collect();
    let mut nodes: Vec<Node> = Vec::with_capacity(2 * demands.len() / LEAF + 2);
    fn rec(
        nodes: &mut Vec<Node>,
        order: &mut [u32],
        base: usize,
        parent: u32,
        demands: &[ResVec],
        dims: usize,
        scale: &[f64; MAX_RESOURCES],
    ) -> u32 {
        let mut min = ResVec([f64::INFINITY; MAX_RESOURCES]);
        let mut max = ResVec([f64::NEG_INFINITY; MAX_RESOURCES]);
        for &c in order.iter() {
            for i in 0..MAX_RESOURCES {
                min.0[i] = min.0[i].min(demands[c as usize].0[i]);
                max.0[i] = max.0[i].max(demands[c as usize].0[i]);
            }
        }
        let id = nodes.len() as u32;
        let (lo, hi) = (base as u32, (base + order.len()) as u32);
        nodes.push(Node { lo, hi, left: u32::MAX, right: u32::MAX, parent, min, max, active: 0 });
        if order.len() <= LEAF {
            return id;
        }
        // Split the widest dimension (relative to capacity) at the median.
        let dim = (0..dims)
            .max_by(|&a, &b| ((max.0[a] - min.0[a]) * scale[a]).total_cmp(&((max.0[b] - min.0[b]) * scale[b])))
            .unwrap_or(0);
        order.sort_unstable_by(|&a, &b| {
            demands[a as usize].0[dim].total_cmp(&demands[b as usize].0[dim]).then(a.cmp(&b))
        });
        let mid = order.len() / 2;
        let (l, r) = order.split_at_mut(mid);
        let left = rec(nodes, l, base, id, demands, dims, scale);
        let right = rec(nodes, r, base + mid, id, demands, dims, scale);
        nodes[id as usize].left = left;
        nodes[id as usize].right = right;
        id
    }
    if !demands.is_empty() {
        rec(&mut nodes, &mut order, 0, u32::MAX, demands, dims, scale);
    }
    (nodes, order)
}

struct Packer<'a> {
    dims: usize,
    caps: &'a [ResVec],
    /// Per machine, 1 / capacity^2 (0 where the capacity is 0): the dot product of the two
    /// normalized vectors is sum(demand * free / cap^2).
    inv_sq: Vec<ResVec>,
    used: Vec<ResVec>,
    running: Vec<u32>,
    /// Classes, numbered in k-d tree order.
    class_demand: Vec<ResVec>,
    class_leaf: Vec<u32>,
    /// Runnable tasks of each class, lowest id on top, and that lowest id (u32::MAX when none)
    /// kept beside the demands so that a search reads memory in order.
    class_tasks: Vec<BinaryHeap<Reverse<TaskId>>>,
    class_min: Vec<TaskId>,
    nodes: Vec<Node>,
    /// Nodes still to visit in a search, with their bounds.
    stack: Vec<(u32, f64)>,
    /// Per machine, up to `keep` candidates by decreasing key, each key at least the class's
    /// current one (exact when stored; later takes only make it worse), and `floor`, a key no
    /// listed entry falls below and no active class missing from the list beats (None when the
    /// list holds every class that fits).
    keep: usize,
    lists: Vec<Vec<Best>>,
    floor: Vec<Option<Best>>,
    /// Machines with equal capacity vectors share a kind; `donor[kind]` is an idle machine of
    /// that kind whose list other idle machines of the kind may copy, since identical free
    /// vectors have identical candidates.
    kind: Vec<u32>,
    donor: Vec<u32>,
}

impl Packer<'_> {
    #[inline(always)]
    fn fits(&self, m: usize, demand: &ResVec) -> bool {
        let (u, c) = (&self.used[m].0, &self.caps[m].0);
        for i in 0..self.dims {
            if u[i] + demand.0[i] > c[i] * (1.0 + CAPACITY_EPS) + CAPACITY_EPS {
                return false;
            }
        }
        true
    }

    /// The weights that turn a demand into its score on machine `m`: (cap - used) / cap^2 per
    /// resource, i.e. the normalized free share over the capacity. Every score is computed as
    /// sum(demand_i * weight_i) in this order, so equal scores compare equal wherever computed.
    #[inline(always)]
    fn weights(&self, m: usize) -> ResVec {
        let (u, c, w) = (&self.used[m].0, &self.caps[m].0, &self.inv_sq[m].0);
        let mut g = ResVec::ZERO;
        for i in 0..self.dims {
            g.0[i] = (c[i] - u[i]) * w[i];
        }
        g
    }

    #[inline(always)]
    fn score(&self, demand: &ResVec, g: &ResVec) -> f64 {
        let mut s = 0.0;
        for i in 0..self.dims {
            s += demand.0[i] * g.0[i];
        }
        s
    }

    /// No class in subtree `id` scores more than this with weights `g` (clamped at zero;
    /// negative only by rounding).
    #[inline(always)]
    fn bound(&self, id: u32, g: &ResVec) -> f64 {
        let max = &self.nodes[id as usize].max;
        // Slack so that rounding in the bound never cuts off a class whose computed dot ties.
        self.score(max, g) * (1.0 + 1e-9)
    }

    fn lowest(&self, class: u32) -> Option<TaskId> {
        let t = self.class_min[class as usize];
        (t != u32::MAX).then_some(t)
    }

    /// The candidate `class` offers on machine `m`, if its lowest task fits there now.
    fn offer(&self, m: usize, class: u32) -> Option<Best> {
        let demand = &self.class_demand[class as usize];
        let task = self.lowest(class)?;
        self.fits(m, demand).then(|| Best { dot: self.score(demand, &self.weights(m)), task, class })
    }

    /// Renews machine `m`'s candidate list after its free vector changed or the list ran out.
    /// On a mostly idle cluster every idle machine wants the same classes, and a search per
    /// machine each time a shared favourite runs out would dominate the run; copying from an
    /// idle machine of the same kind avoids that.
    fn refresh(&mut self, m: usize) {
        if self.running[m] == 0 {
            let k = self.kind[m] as usize;
            let d = self.donor[k] as usize;
            if d != m && d < self.lists.len() && self.running[d] == 0 {
                self.settle(d);
                if !self.lists[d].is_empty() || self.floor[d].is_none() {
                    let (src, dst) = if d < m {
                        let (a, b) = self.lists.split_at_mut(m);
                        (&a[d], &mut b[0])
                    } else {
                        let (a, b) = self.lists.split_at_mut(d);
                        (&b[0], &mut a[m])
                    };
                    dst.clone_from(src);
                    self.floor[m] = self.floor[d];
                    return;
                }
            }
            self.donor[k] = m as u32;
        }
        self.rescan(m);
    }

    fn rescan(&mut self, m: usize) {
        let mut found = std::mem::take(&mut self.lists[m]);
        found.clear();
        let keep = self.keep;
        let g = self.weights(m);
        let mut g_pos = ResVec::ZERO;
        for i in 0..self.dims {
            g_pos.0[i] = g.0[i].max(0.0);
        }
        let mut stack = std::mem::take(&mut self.stack);
        stack.clear();
        if !self.nodes.is_empty() {
            stack.push((0, f64::INFINITY));
        }
        while let Some((id, ub)) = stack.pop() {
            if found.len() == keep && ub < found[keep - 1].dot {
                continue;
            }
            let node = &self.nodes[id as usize];
            if node.left == u32::MAX {
                for class in node.lo..node.hi {
                    let task = self.class_min[class as usize];
                    if task == u32::MAX {
                        continue;
                    }
                    let demand = &self.class_demand[class as usize];
                    if !self.fits(m, demand) {
                        continue;
                    }
                    let o = Best { dot: self.score(demand, &g), task, class };
                    if found.len() < keep || better(&o, &found[keep - 1]) {
                        insert_sorted(&mut found, o);
                        found.truncate(keep);
                    }
                }
                continue;
            }
            // Children with something runnable that might fit, the more promising searched
            // first so that the other is more often cut off.
            let mut kids = [(node.left, 0.0), (node.right, 0.0)];
            let mut n = 0;
            for k in [node.left, node.right] {
                let child = &self.nodes[k as usize];
                if child.active > 0 && self.fits(m, &child.min) {
                    kids[n] = (k, self.bound(k, &g_pos));
                    n += 1;
                }
            }
            if n == 2 && kids[0].1 < kids[1].1 {
                kids.swap(0, 1);
            }
            for &k in kids[..n].iter().rev() {
                stack.push(k);
            }
        }
        // With a full list, anything dropped or cut off scores at most its last entry.
        self.floor[m] = (found.len() == keep).then(|| found[keep - 1]);
        self.stack = stack;
        self.lists[m] = found;
    }

    /// Drops or demotes stale entries at the head of `m`'s list until the head is exact.
    fn settle(&mut self, m: usize) {
        while let Some(&head) = self.lists[m].first() {
            let Some(task) = self.lowest(head.class) else {
                self.lists[m].remove(0);
                continue;
            };
            if task == head.task {
                return;
            }
            // The class lost its lowest task: same dot, later id.
            self.lists[m].remove(0);
            let e = Best { task, ..head };
            if self.floor[m].is_none_or(|f| better(&e, &f)) {
                insert_sorted(&mut self.lists[m], e);
            }
        }
    }

    fn count(&mut self, class: u32, delta: i32) {
        let mut id = self.class_leaf[class as usize];
        while id != u32::MAX {
            let node = &mut self.nodes[id as usize];
            node.active = node.active.wrapping_add_signed(delta);
            id = node.parent;
        }
    }

    fn make_runnable(&mut self, class: u32, task: TaskId) {
        let c = class as usize;
        let was_min = self.lowest(class);
        self.class_tasks[c].push(Reverse(task));
        self.class_min[c] = self.class_min[c].min(task);
        if was_min.is_none() {
            self.count(class, 1);
        }
        if was_min.is_some_and(|w| w < task) {
            return;
        }
        // The class now offers a better (or a first) candidate: every list whose floor it
        // beats must hold it.
        for m in 0..self.caps.len() {
            let Some(o) = self.offer(m, class) else { continue };
            let list = &mut self.lists[m];
            if let Some(i) = list.iter().position(|e| e.class == class) {
                list.remove(i);
            }
            if self.floor[m].is_some_and(|f| !better(&o, &f)) {
                continue;
            }
            insert_sorted(list, o);
            if list.len() > self.keep {
                self.floor[m] = list.pop();
            }
        }
    }

    fn take(&mut self, class: u32) -> TaskId {
        let heap = &mut self.class_tasks[class as usize];
        let Reverse(t) = heap.pop().expect("the chosen class has a task");
        self.class_min[class as usize] = heap.peek().map_or(u32::MAX, |r| r.0);
        if self.class_min[class as usize] == u32::MAX {
            self.count(class, -1);
        }
        t
    }

    /// The globally best (task, machine) pair that fits now. A machine whose list ran out
    /// competes with its floor and is rescanned only if that bound comes out on top.
    fn pick(&mut self) -> Option<(Best, usize)> {
        loop {
            let mut top: Option<(Best, usize)> = None;
            for m in 0..self.lists.len() {
                self.settle(m);
                let Some(b) = self.lists[m].first().or(self.floor[m].as_ref()) else { continue };
                if top.is_none_or(|(t, _)| better(b, &t)) {
                    top = Some((*b, m));
                }
            }
            let (b, m) = top?;
            if !self.lists[m].is_empty() {
                return Some((b, m));
            }
            self.refresh(m);
        }
    }
}

/// Inserts `e` into a list kept by decreasing key.
fn insert_sorted(list: &mut Vec<Best>, e: Best) {
    let i = list.partition_point(|x| better(x, &e));
    list.insert(i, e);
}

pub fn schedule(dag: &Dag, cluster: &Cluster) -> Schedule {
    simulate(dag, cluster, KEEP)
}

/// The simulation with `keep` candidates per machine (any `keep >= 1` gives the same schedule;
/// tests use small values to exercise the fallbacks).
fn simulate(dag: &Dag, cluster: &Cluster, keep: usize) -> Schedule {
    let n = dag.len();
    let dims = dag.dims();
    let machines = cluster.len();
    let caps = &cluster.machines;
    let inv_sq = caps
        .iter()
        .map(|c| {
            let mut w = ResVec::ZERO;
            for i in 0..dims {
                if c.0[i] > 0.0 {
                    w.0[i] = 1.0 / (c.0[i] * c.0[i]);
                }
            }
            w
        })
        .collect();
    let mut kinds_seen: HashMap<[u64; MAX_RESOURCES], u32> = HashMap::new();
    let kind: Vec<u32> = caps
        .iter()
        .map(|c| {
            let n = kinds_seen.len() as u32;
            *kinds_seen.entry(c.0.map(f64::to_bits)).or_insert(n)
        })
        .collect();
    let kinds = kinds_seen.len();
    let mut scale = [0.0f64; MAX_RESOURCES];
    for i in 0..dims {
        let top = caps.iter().map(|c| c.0[i]).fold(0.0, f64::max);
        if top > 0.0 {
            scale[i] = 1.0 / top;
        }
    }

    // Demand classes, keyed by the exact bits of the demand vector, renumbered in tree order.
    let mut class_of = vec![0u32; n];
    let mut found: Vec<ResVec> = Vec::new();
    let mut index: HashMap<[u64; MAX_RESOURCES], u32> = HashMap::new();
    for (t, task) in dag.tasks.iter().enumerate() {
        let key = task.demand.0.map(|x| (x + 0.0).to_bits());
        class_of[t] = *index.entry(key).or_insert_with(|| {
            found.push(task.demand);
            (found.len() - 1) as u32
        });
    }
    let classes = found.len();
    let (nodes, order) = build_tree(&found, dims, &scale);
    let mut renumber = vec![0u32; classes];
    for (new, &old) in order.iter().enumerate() {
        renumber[old as usize] = new as u32;
    }
    for c in &mut class_of {
        *c = renumber[*c as usize];
    }
    let class_demand: Vec<ResVec> = order.iter().map(|&o| found[o as usize]).collect();
    let mut class_leaf = vec![0u32; classes];
    for (id, node) in nodes.iter().enumerate() {
        if node.left == u32::MAX {
            class_leaf[node.lo as usize..node.hi as usize].fill(id as u32);
        }
    }
    let mut p = Packer {
        dims,
        caps,
        inv_sq,
        used: vec![ResVec::ZERO; machines],
        running: vec![0; machines],
        class_demand,
        class_leaf,
        class_tasks: (0..classes).map(|_| BinaryHeap::new()).collect(),
        class_min: vec![u32::MAX; classes],
        nodes,
        stack: Vec::new(),
        keep,
        lists: vec![Vec::with_capacity(keep + 1); machines],
        floor: vec![None; machines],
        kind,
        donor: vec![u32::MAX; kinds],
    };

    // Readiness per stage, as in the offline plan: an all-to-all parent stage counts once and
    // releases its children when its last task ends; one-to-one parents count per task.
    let mut stage_left: Vec<u32> = dag.stages.iter().map(|s| s.len).collect();
    let mut barriers: Vec<u32> = dag
        .stages
        .iter()
        .map(|s| {
            s.parents.iter().filter(|e| e.kind == EdgeKind::AllToAll && dag.stages[e.stage as usize].len > 0).count()
                as u32
        })
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
        p.refresh(m);
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
            // Its list no longer describes an idle machine of its kind.
            let k = p.kind[m] as usize;
            if p.donor[k] == m as u32 {
                p.donor[k] = u32::MAX;
            }
            heap.push(Running { end, task: t, machine: m as u32 });
            started += 1;
            p.refresh(m);
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
            p.refresh(m);
        }
    }
    assert_eq!(
        started, n,
        "tetris left tasks unscheduled: some runnable task fits no machine (check Cluster::check_fits first)"
    );
    Schedule { placements }
}

#[cfg(test)]
pub(crate) mod tests {
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
            let len =
                if s > 0 && next(3) == 0 { sizes[next(s as u64) as usize] } else { 1 + next(max_tasks as u64) as u32 };
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
                        // Mathematically (d / cap) . ((cap - used) / cap), written as the
                        // implementation evaluates it so that exact ties stay ties.
                        let mut dot = 0.0;
                        for i in 0..dag.dims() {
                            if cap.0[i] > 0.0 {
                                dot += d.0[i] * ((cap.0[i] - used.0[i]) * (1.0 / (cap.0[i] * cap.0[i])));
                            }
                        }
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
            let c = if seed % 3 == 0 { cluster(&dag, 5, &[("cpu", 6.0), ("mem", 9.0)]) } else { mixed_cluster(&dag) };
            let want = naive(&dag, &c);
            for keep in [1, 2, 3, KEEP] {
                let s = simulate(&dag, &c, keep);
                let got: Vec<(u32, f64)> = s.placements.iter().map(|p| (p.machine, p.start)).collect();
                assert_eq!(got, want, "seed {seed}, keep {keep}");
            }
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
