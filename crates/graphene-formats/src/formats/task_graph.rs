//! Task-level graphs (STG, DAX, DOT) into graphene's stage-level model.
//!
//! These formats describe single tasks and edges between them. Each task becomes a stage of one
//! task and each edge an all-to-all edge between two such stages, as for WfCommons; what makes
//! tasks alike for FragScore is their group (the program or label). Readers collect tasks and
//! edges here, which checks what every such format must satisfy (unique names, edges between
//! known tasks) and names the place in the file (`at`) of the offending entry.

use std::collections::HashMap;

use super::native::default_resources;
use crate::error::{Error, Result};
use crate::model::{Dag, DagBuilder, EdgeKind, ResVec, StageSpec, TaskSpec};

pub struct TaskNode {
    pub name: String,
    pub group: String,
    pub duration: f64,
    pub demand: ResVec,
    /// Where the task was read, for messages ("line 4", "job ID00001").
    pub at: String,
}

#[derive(Default)]
pub struct TaskGraph {
    nodes: Vec<TaskNode>,
    index: HashMap<String, usize>,
    /// Per child: (parent, data the parent sends it), in the order declared.
    parents: Vec<Vec<(usize, f64)>>,
    /// (parent, child) -> position in `parents[child]`, so repeated edges merge in O(1).
    edges: HashMap<(usize, usize), usize>,
}

impl TaskGraph {
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    pub fn add(&mut self, node: TaskNode) -> Result<usize> {
        crate::limits::current().check_tasks(self.nodes.len() as u64 + 1, "tasks")?;
        if let Some(&j) = self.index.get(&node.name) {
            return Err(Error::field(
                node.at.clone(),
                format!("duplicate task '{}' (first at {})", node.name, self.nodes[j].at),
            ));
        }
        self.index.insert(node.name.clone(), self.nodes.len());
        self.nodes.push(node);
        self.parents.push(Vec::new());
        Ok(self.nodes.len() - 1)
    }

    /// An edge from task `p` to task `c` (indices, as [`TaskGraph::add`] returns them) carrying
    /// `data`; a repeated edge adds its data to the first. `at`, the place for a message, is
    /// formatted only for an error.
    pub fn edge_at(&mut self, p: usize, c: usize, data: f64, at: impl FnOnce() -> String) -> Result<()> {
        if p == c {
            return Err(Error::field(at(), format!("task '{}' depends on itself", self.nodes[p].name)));
        }
        if !(data.is_finite() && data >= 0.0) {
            return Err(Error::field(at(), format!("data {data} is not a finite number >= 0")));
        }
        match self.edges.get(&(p, c)) {
            Some(&k) => self.parents[c][k].1 += data,
            None => {
                crate::limits::current().check_edges(self.edges.len() as u64 + 1, "edges")?;
                self.edges.insert((p, c), self.parents[c].len());
                self.parents[c].push((p, data));
            }
        }
        Ok(())
    }

    pub fn build(self, name: &str) -> Result<Dag> {
        if self.nodes.is_empty() {
            return Err(Error::field("(tasks)", "the graph has no tasks"));
        }
        let mut b = DagBuilder::new(name, default_resources());
        for (i, n) in self.nodes.iter().enumerate() {
            crate::deadline::poll()?;
            for &(p, data) in &self.parents[i] {
                if data > 0.0 {
                    b.edge_data(self.nodes[p].name.clone(), n.name.clone(), data);
                }
            }
            b.stage(StageSpec {
                name: n.name.clone(),
                group: Some(n.group.clone()),
                tasks: vec![TaskSpec { duration: n.duration, demand: n.demand }],
                parents: self.parents[i]
                    .iter()
                    .map(|&(p, _)| (self.nodes[p].name.clone(), EdgeKind::AllToAll))
                    .collect(),
            });
        }
        b.build()
    }
}

/// A demand vector of `cpu` cores and `mem` GB (disk `disk` MB/s; net 0).
pub fn demand(cpu: f64, mem: f64, disk: f64) -> ResVec {
    ResVec::from_slice(&[cpu, mem, disk, 0.0])
}

/// A non-negative finite number from an attribute, or an error naming it.
pub fn number(value: &str, at: &str, what: &str) -> Result<f64> {
    number_at(value, || at.to_string(), what)
}

/// [`number`] with the place formatted only for an error.
pub fn number_at(value: &str, at: impl FnOnce() -> String, what: &str) -> Result<f64> {
    match value.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        Ok(_) => Err(Error::field(format!("{}: {what}", at()), format!("{value} is not a finite number >= 0"))),
        Err(_) => Err(Error::field(format!("{}: {what}", at()), format!("'{value}' is not a number"))),
    }
}
