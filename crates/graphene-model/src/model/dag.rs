//! The job DAG: stages of alike tasks joined by all-to-all or one-to-one edges.
//!
//! Edges are kept between stages, never expanded to task pairs: an all-to-all edge between two
//! stages of a thousand tasks is one record here instead of a million, and every algorithm that
//! walks dependencies does so per stage. Stages are stored in a topological order, and tasks are
//! numbered stage by stage, so `TaskId` order is itself a topological order of the tasks.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use super::resources::{ResVec, MAX_RESOURCES};
use crate::error::{Error, Result};

pub type TaskId = u32;
pub type StageId = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EdgeKind {
    /// A barrier: every task of the child waits for every task of the parent.
    AllToAll,
    /// Task i of the child waits for task i of the parent (both stages have as many tasks).
    OneToOne,
}

impl EdgeKind {
    pub fn as_str(&self) -> &'static str {
        match self {
            EdgeKind::AllToAll => "all-to-all",
            EdgeKind::OneToOne => "one-to-one",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StageEdge {
    pub stage: StageId,
    pub kind: EdgeKind,
}

#[derive(Clone, Debug)]
pub struct Stage {
    pub name: String,
    /// Tasks that share code and behaviour; FragScore is computed per group. For stage-level
    /// formats a group is the stage; for task-level formats (WfCommons) it is the task type.
    pub group: u32,
    pub first: TaskId,
    pub len: u32,
    pub parents: Vec<StageEdge>,
    pub children: Vec<StageEdge>,
}

impl Stage {
    pub fn tasks(&self) -> std::ops::Range<TaskId> {
        self.first..self.first + self.len
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Task {
    pub stage: StageId,
    pub index: u32,
    pub duration: f64,
    pub demand: ResVec,
}

#[derive(Clone, Debug)]
pub struct Dag {
    pub name: String,
    pub resources: Vec<String>,
    pub stages: Vec<Stage>,
    pub tasks: Vec<Task>,
    pub groups: Vec<String>,
    stage_index: HashMap<String, StageId>,
    /// Data each parent task sends to each child task, keyed by (parent stage, child stage);
    /// edges not listed carry none. Kept beside the edges rather than in `StageEdge` so that the
    /// many algorithms blind to transfers see the same small edge records as before.
    edge_data: HashMap<(StageId, StageId), f64>,
}

impl Dag {
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    pub fn dims(&self) -> usize {
        self.resources.len()
    }

    pub fn task_name(&self, t: TaskId) -> String {
        let mut name = String::new();
        self.write_task_name(t, &mut name);
        name
    }

    /// Appends task `t`'s name (`stage[index]`, as [`Dag::task_name`]) to `out`: writers of
    /// one row per task reuse one buffer instead of allocating a name each.
    pub fn write_task_name(&self, t: TaskId, out: &mut String) {
        use std::fmt::Write;
        let task = &self.tasks[t as usize];
        let _ = write!(out, "{}[{}]", self.stages[task.stage as usize].name, task.index);
    }

    pub fn stage_of(&self, t: TaskId) -> &Stage {
        &self.stages[self.tasks[t as usize].stage as usize]
    }

    pub fn stage_by_name(&self, name: &str) -> Option<StageId> {
        self.stage_index.get(name).copied()
    }

    /// Resolves an output task id `stage[index]`.
    pub fn task_by_name(&self, id: &str) -> Option<TaskId> {
        let open = id.rfind('[')?;
        let index: u32 = id.strip_suffix(']')?.get(open + 1..)?.parse().ok()?;
        let stage = &self.stages[self.stage_by_name(&id[..open])? as usize];
        (index < stage.len).then_some(stage.first + index)
    }

    /// Calls `f` for every parent task of `t`.
    pub fn for_each_parent(&self, t: TaskId, mut f: impl FnMut(TaskId)) {
        let task = &self.tasks[t as usize];
        for e in &self.stages[task.stage as usize].parents {
            let p = &self.stages[e.stage as usize];
            match e.kind {
                EdgeKind::AllToAll => p.tasks().for_each(&mut f),
                EdgeKind::OneToOne => f(p.first + task.index),
            }
        }
    }

    /// Calls `f` for every child task of `t`.
    pub fn for_each_child(&self, t: TaskId, mut f: impl FnMut(TaskId)) {
        let task = &self.tasks[t as usize];
        for e in &self.stages[task.stage as usize].children {
            let c = &self.stages[e.stage as usize];
            match e.kind {
                EdgeKind::AllToAll => c.tasks().for_each(&mut f),
                EdgeKind::OneToOne => f(c.first + task.index),
            }
        }
    }

    /// Data one task of stage `parent` sends to each dependent task of stage `child` (0 when
    /// the DAG carries no data on that edge).
    pub fn edge_data(&self, parent: StageId, child: StageId) -> f64 {
        if self.edge_data.is_empty() {
            return 0.0;
        }
        self.edge_data.get(&(parent, child)).copied().unwrap_or(0.0)
    }

    /// True when some edge carries data (transfers can then delay children on other machines).
    pub fn has_edge_data(&self) -> bool {
        self.edge_data.values().any(|&d| d > 0.0)
    }

    pub fn has_edges(&self) -> bool {
        self.stages.iter().any(|s| !s.parents.is_empty())
    }

    /// Formats a demand vector with resource names, for messages.
    pub fn format_demand(&self, v: &ResVec) -> String {
        format_named(&self.resources, v)
    }
}

pub(crate) fn format_named(names: &[String], v: &ResVec) -> String {
    names.iter().enumerate().map(|(i, n)| format!("{}={}", n, v.0[i])).collect::<Vec<_>>().join(",")
}

/// One task as a reader found it.
#[derive(Clone, Debug)]
pub struct TaskSpec {
    pub duration: f64,
    pub demand: ResVec,
}

/// One stage as a reader found it, before names are resolved and the DAG is checked.
#[derive(Clone, Debug)]
pub struct StageSpec {
    pub name: String,
    pub group: Option<String>,
    pub tasks: Vec<TaskSpec>,
    pub parents: Vec<(String, EdgeKind)>,
}

/// Collects stages and checks everything a DAG must satisfy before any algorithm sees it.
#[derive(Default)]
pub struct DagBuilder {
    name: String,
    resources: Vec<String>,
    stages: Vec<StageSpec>,
    /// (parent name, child name, data per task pair)
    data: Vec<(String, String, f64)>,
}

impl DagBuilder {
    pub fn new(name: impl Into<String>, resources: Vec<String>) -> DagBuilder {
        DagBuilder { name: name.into(), resources, stages: Vec::new(), data: Vec::new() }
    }

    /// Puts `data` on the edge from stage `parent` to stage `child` (the edge must be listed
    /// among the child's parents). Each parent task sends this much to each child task it feeds.
    pub fn edge_data(&mut self, parent: impl Into<String>, child: impl Into<String>, data: f64) -> &mut Self {
        self.data.push((parent.into(), child.into(), data));
        self
    }

    pub fn stage(&mut self, spec: StageSpec) -> &mut Self {
        self.stages.push(spec);
        self
    }

    pub fn build(self) -> Result<Dag> {
        let DagBuilder { name, resources, stages, data } = self;
        if resources.is_empty() {
            return Err(Error::field("resources", "the DAG names no resources"));
        }
        if resources.len() > MAX_RESOURCES {
            return Err(Error::field(
                "resources",
                format!("{} resources named; at most {MAX_RESOURCES} are supported", resources.len()),
            ));
        }
        if stages.is_empty() || stages.iter().all(|s| s.tasks.is_empty()) {
            return Err(Error::field("stages", "the DAG has no tasks"));
        }
        let limits = crate::limits::current();
        limits.check_stages(stages.len() as u64, "stages")?;
        let total: u64 = stages.iter().map(|s| s.tasks.len() as u64).sum();
        limits.check_tasks(total, "tasks")?;
        if total >= TaskId::MAX as u64 {
            return Err(Error::too_large("tasks", total, TaskId::MAX as u64 - 1, "task ids are 32-bit"));
        }
        limits.check_edges(stages.iter().map(|s| s.parents.len() as u64).sum(), "parents (edges)")?;
        let mut index: HashMap<String, usize> = HashMap::with_capacity(stages.len());
        for (i, s) in stages.iter().enumerate() {
            if s.name.is_empty() {
                return Err(Error::field(format!("stages[{i}].id"), "a stage id must not be empty"));
            }
            if index.insert(s.name.clone(), i).is_some() {
                return Err(Error::field(format!("stages[{i}].id"), format!("duplicate stage id '{}'", s.name)));
            }
        }
        for (i, s) in stages.iter().enumerate() {
            crate::deadline::poll()?;
            for (j, t) in s.tasks.iter().enumerate() {
                // The field name is formatted only for an error: once per task it was a tenth
                // of reading a million-task DAG.
                let at = || format!("stage '{}' task {j}", s.name);
                if !(t.duration.is_finite() && (0.0..=crate::limits::MAX_SECONDS).contains(&t.duration)) {
                    crate::limits::check_seconds(t.duration, &at(), "duration")?;
                }
                for (r, v) in t.demand.0.iter().enumerate() {
                    if !v.is_finite() || *v < 0.0 {
                        let rname = resources.get(r).map(String::as_str).unwrap_or("?");
                        return Err(Error::field(at(), format!("demand {rname}={v} is not a finite number >= 0")));
                    }
                }
            }
            let _ = i;
        }
        // Resolve parents. `listed_by[p]` is the last stage that listed `p` as a parent, so that a
        // parent listed twice is found in constant time (scanning the parents found so far made
        // a stage with 100,000 parents take seconds).
        let mut parents: Vec<Vec<StageEdge>> = vec![Vec::new(); stages.len()];
        let mut listed_by = vec![usize::MAX; stages.len()];
        for (i, s) in stages.iter().enumerate() {
            crate::deadline::poll()?;
            for (pname, kind) in &s.parents {
                let p = *index.get(pname).ok_or_else(|| {
                    Error::field(format!("stage '{}'.parents", s.name), format!("unknown parent stage '{pname}'"))
                })?;
                if p == i {
                    return Err(Error::Cycle(vec![s.name.clone(), s.name.clone()]));
                }
                if *kind == EdgeKind::OneToOne && stages[p].tasks.len() != s.tasks.len() {
                    return Err(Error::field(
                        format!("stage '{}'.parents", s.name),
                        format!(
                            "one-to-one edge from '{pname}' ({} tasks) needs equal task counts, '{}' has {}",
                            stages[p].tasks.len(),
                            s.name,
                            s.tasks.len()
                        ),
                    ));
                }
                if std::mem::replace(&mut listed_by[p], i) == i {
                    return Err(Error::field(
                        format!("stage '{}'.parents", s.name),
                        format!("parent '{pname}' is listed twice"),
                    ));
                }
                parents[i].push(StageEdge { stage: p as StageId, kind: *kind });
            }
        }
        let order = topological_order(&stages, &parents)?;
        // Renumber stages in topological order.
        let mut new_id = vec![0u32; stages.len()];
        for (new, &old) in order.iter().enumerate() {
            new_id[old] = new as u32;
        }
        let mut groups: Vec<String> = Vec::new();
        let mut group_index: HashMap<String, u32> = HashMap::new();
        let mut out_stages = Vec::with_capacity(stages.len());
        let mut tasks = Vec::with_capacity(stages.iter().map(|s| s.tasks.len()).sum());
        let mut stages = stages;
        for &old in &order {
            let spec = std::mem::replace(
                &mut stages[old],
                StageSpec { name: String::new(), group: None, tasks: Vec::new(), parents: Vec::new() },
            );
            let gname = spec.group.clone().unwrap_or_else(|| spec.name.clone());
            let group = *group_index.entry(gname.clone()).or_insert_with(|| {
                groups.push(gname);
                (groups.len() - 1) as u32
            });
            let sid = out_stages.len() as StageId;
            let first = tasks.len() as TaskId;
            for (i, t) in spec.tasks.iter().enumerate() {
                tasks.push(Task { stage: sid, index: i as u32, duration: t.duration, demand: t.demand });
            }
            let mut ps: Vec<StageEdge> =
                parents[old].iter().map(|e| StageEdge { stage: new_id[e.stage as usize], kind: e.kind }).collect();
            ps.sort_by_key(|e| e.stage);
            out_stages.push(Stage {
                name: spec.name,
                group,
                first,
                len: spec.tasks.len() as u32,
                parents: ps,
                children: Vec::new(),
            });
        }
        for s in 0..out_stages.len() {
            for e in out_stages[s].parents.clone() {
                out_stages[e.stage as usize].children.push(StageEdge { stage: s as StageId, kind: e.kind });
            }
        }
        let stage_index: HashMap<String, StageId> =
            out_stages.iter().enumerate().map(|(i, s)| (s.name.clone(), i as StageId)).collect();
        let mut edge_data = HashMap::with_capacity(data.len());
        for (p, c, d) in data {
            let at = || format!("edge '{p}' -> '{c}'.data");
            if !d.is_finite() || d < 0.0 {
                return Err(Error::field(at(), format!("{d} is not a finite number >= 0")));
            }
            let (Some(&ps), Some(&cs)) = (stage_index.get(&p), stage_index.get(&c)) else {
                return Err(Error::field(at(), "no such edge"));
            };
            // Parents are sorted by stage.
            if out_stages[cs as usize].parents.binary_search_by_key(&ps, |e| e.stage).is_err() {
                return Err(Error::field(at(), "no such edge"));
            }
            if d > 0.0 {
                edge_data.insert((ps, cs), d);
            }
        }
        Ok(Dag { name, resources, stages: out_stages, tasks, groups, stage_index, edge_data })
    }
}

/// Kahn's algorithm, smallest original index first so that the order is stable across runs.
/// On a cycle, names the stages along one cycle.
fn topological_order(stages: &[StageSpec], parents: &[Vec<StageEdge>]) -> Result<Vec<usize>> {
    let n = stages.len();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut indeg = vec![0usize; n];
    for (c, ps) in parents.iter().enumerate() {
        for e in ps {
            children[e.stage as usize].push(c);
            indeg[c] += 1;
        }
    }
    let mut heap: BinaryHeap<Reverse<usize>> = (0..n).filter(|&i| indeg[i] == 0).map(Reverse).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse(s)) = heap.pop() {
        order.push(s);
        for &c in &children[s] {
            indeg[c] -= 1;
            if indeg[c] == 0 {
                heap.push(Reverse(c));
            }
        }
    }
    if order.len() == n {
        return Ok(order);
    }
    // Every stage left has an unfinished parent; walking parents from one must revisit a stage.
    let start = (0..n).find(|&i| indeg[i] > 0).expect("a stage is left");
    let mut seen = vec![usize::MAX; n];
    let mut path = Vec::new();
    let mut cur = start;
    while seen[cur] == usize::MAX {
        seen[cur] = path.len();
        path.push(cur);
        cur = parents[cur]
            .iter()
            .map(|e| e.stage as usize)
            .find(|&p| indeg[p] > 0)
            .expect("a stage on a cycle has a parent on it");
    }
    let mut cycle: Vec<String> = path[seen[cur]..].iter().rev().map(|&i| stages[i].name.clone()).collect();
    cycle.push(cycle[0].clone());
    Err(Error::Cycle(cycle))
}

impl Dag {
    /// The sub-DAG of a contiguous range of stages, with edges leaving the range dropped. Its
    /// task `i` is task `self.stages[range.start].first + i` of this DAG.
    pub fn sub(&self, range: std::ops::Range<usize>) -> Dag {
        let base_stage = range.start as u32;
        let first = self.stages.get(range.start).map_or(0, |s| s.first);
        let remap = |edges: &[StageEdge]| -> Vec<StageEdge> {
            edges
                .iter()
                .filter(|e| range.contains(&(e.stage as usize)))
                .map(|e| StageEdge { stage: e.stage - base_stage, kind: e.kind })
                .collect()
        };
        // Only the groups this part uses, renumbered: copying every group name of the whole DAG
        // into each part made splitting a long chain quadratic.
        let mut group_map: HashMap<u32, u32> = HashMap::new();
        let mut groups: Vec<String> = Vec::new();
        for s in &self.stages[range.clone()] {
            group_map.entry(s.group).or_insert_with(|| {
                groups.push(self.groups[s.group as usize].clone());
                (groups.len() - 1) as u32
            });
        }
        let stages: Vec<Stage> = self.stages[range.clone()]
            .iter()
            .map(|s| Stage {
                name: s.name.clone(),
                group: group_map[&s.group],
                first: s.first - first,
                len: s.len,
                parents: remap(&s.parents),
                children: remap(&s.children),
            })
            .collect();
        let last = stages.last().map_or(first, |s| first + s.first + s.len);
        let tasks = self.tasks[first as usize..last as usize]
            .iter()
            .map(|t| Task { stage: t.stage - base_stage, ..*t })
            .collect();
        let stage_index = stages.iter().enumerate().map(|(i, s)| (s.name.clone(), i as StageId)).collect();
        // Looked up per edge of the part (not by scanning every edge of the whole DAG).
        let mut edge_data = HashMap::new();
        if !self.edge_data.is_empty() {
            for c in range.clone() {
                for e in &self.stages[c].parents {
                    let p = e.stage as usize;
                    if let (true, Some(&d)) = (range.contains(&p), self.edge_data.get(&(p as StageId, c as StageId))) {
                        edge_data.insert((p as StageId - base_stage, c as StageId - base_stage), d);
                    }
                }
            }
        }
        Dag {
            name: self.name.clone(),
            resources: self.resources.clone(),
            stages,
            tasks,
            groups,
            stage_index,
            edge_data,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(name: &str, parents: Vec<(String, EdgeKind)>) -> StageSpec {
        let t = TaskSpec { duration: 1.0, demand: ResVec::from_slice(&[1.0]) };
        StageSpec { name: name.into(), group: None, tasks: vec![t], parents }
    }

    /// 100,000 parents of one stage, each edge carrying data, then the same with one parent
    /// listed again at the end.
    fn many_parents(n: usize, repeat: Option<usize>) -> Result<Dag> {
        let mut b = DagBuilder::new("wide", vec!["cpu".into()]);
        for i in 0..n {
            b.stage(stage(&format!("p{i}"), vec![]));
            b.edge_data(format!("p{i}"), "sink", (i + 1) as f64);
        }
        let mut parents: Vec<(String, EdgeKind)> = (0..n).map(|i| (format!("p{i}"), EdgeKind::AllToAll)).collect();
        parents.extend(repeat.map(|i| (format!("p{i}"), EdgeKind::AllToAll)));
        b.stage(stage("sink", parents));
        b.build()
    }

    #[test]
    fn a_stage_with_many_parents_is_read_and_checked() {
        let n = 100_000;
        let d = many_parents(n, None).unwrap();
        let sink = d.stage_by_name("sink").unwrap();
        assert_eq!(d.stages[sink as usize].parents.len(), n);
        assert_eq!(d.stages.iter().map(|s| s.children.len()).sum::<usize>(), n);
        for i in [0, 1, 54_321, n - 1] {
            assert_eq!(d.edge_data(d.stage_by_name(&format!("p{i}")).unwrap(), sink), (i + 1) as f64);
        }
        let e = many_parents(n, Some(54_321)).unwrap_err().to_string();
        assert_eq!(e, "stage 'sink'.parents: parent 'p54321' is listed twice");
        // Data on an edge that is not there.
        let mut b = DagBuilder::new("d", vec!["cpu".into()]);
        b.stage(stage("a", vec![])).stage(stage("b", vec![])).stage(stage("c", vec![("a".into(), EdgeKind::AllToAll)]));
        b.edge_data("b", "c", 1.0);
        assert_eq!(b.build().unwrap_err().to_string(), "edge 'b' -> 'c'.data: no such edge");
    }
}
