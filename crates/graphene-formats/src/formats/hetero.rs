//! The task-graph/network JSON of the heterogeneous reference instances
//! (`reference/hetero/*.json`, see its README):
//!
//! ```json
//! {"tasks": [{"id": "t0", "cost": 2.2}], "edges": [{"src": "t0", "dst": "t4", "data": 18.8}],
//!  "nodes": [{"id": "m0", "speed": 1.3}], "links": 5.0}
//! ```
//!
//! Each task becomes a one-task stage named by its id whose duration is its cost (the work at
//! speed 1) and which demands `cpu` = 1; each node becomes a machine of one `cpu` slot (one task
//! at a time) with its speed; `links` is the bandwidth between two different nodes.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::model::{ClusterSpec, Dag, DagBuilder, EdgeKind, ResVec, StageSpec, TaskSpec};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    tasks: Vec<TaskFile>,
    #[serde(default)]
    edges: Vec<EdgeFile>,
    nodes: Vec<NodeFile>,
    links: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskFile {
    id: String,
    cost: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EdgeFile {
    src: String,
    dst: String,
    #[serde(default)]
    data: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeFile {
    #[allow(dead_code)]
    id: String,
    #[serde(default = "one")]
    speed: f64,
}

fn one() -> f64 {
    1.0
}

/// The DAG and the cluster a task-graph/network file describes.
pub fn parse(text: &str, name: &str) -> Result<(Dag, ClusterSpec)> {
    let f: File = serde_json::from_str(text).map_err(|e| Error::from_json(&e))?;
    if f.nodes.is_empty() {
        return Err(Error::field("nodes", "the network has no nodes"));
    }
    for (i, n) in f.nodes.iter().enumerate() {
        if !(n.speed.is_finite() && n.speed > 0.0) {
            return Err(Error::field(format!("nodes[{i}].speed"), format!("{} is not a finite number > 0", n.speed)));
        }
    }
    if !(f.links.is_finite() && f.links > 0.0) {
        return Err(Error::field("links", format!("{} is not a finite number > 0", f.links)));
    }
    let index: HashMap<&str, usize> = f.tasks.iter().enumerate().map(|(i, t)| (t.id.as_str(), i)).collect();
    let mut parents: Vec<Vec<(String, EdgeKind)>> = vec![Vec::new(); f.tasks.len()];
    for (i, e) in f.edges.iter().enumerate() {
        crate::deadline::poll()?;
        let known = |id: &str, field: &str| {
            index
                .get(id)
                .copied()
                .ok_or_else(|| Error::field(format!("edges[{i}].{field}"), format!("unknown task '{id}'")))
        };
        known(&e.src, "src")?;
        let dst = known(&e.dst, "dst")?;
        if !(e.data.is_finite() && e.data >= 0.0) {
            return Err(Error::field(format!("edges[{i}].data"), format!("{} is not a finite number >= 0", e.data)));
        }
        parents[dst].push((e.src.clone(), EdgeKind::AllToAll));
    }
    let mut demand = ResVec::ZERO;
    demand.0[0] = 1.0;
    let mut b = DagBuilder::new(name, vec!["cpu".to_string()]);
    for (t, ps) in f.tasks.iter().zip(parents) {
        crate::deadline::poll()?;
        b.stage(StageSpec {
            name: t.id.clone(),
            group: None,
            tasks: vec![TaskSpec { duration: t.cost, demand }],
            parents: ps,
        });
    }
    for e in &f.edges {
        b.edge_data(e.src.clone(), e.dst.clone(), e.data);
    }
    let dag = b.build()?;
    let speeds: Vec<f64> = f.nodes.iter().map(|n| n.speed).collect();
    let capacity: BTreeMap<String, f64> = [("cpu".to_string(), 1.0)].into_iter().collect();
    let mut spec = ClusterSpec::with_speeds(&speeds, capacity, f.links);
    spec.overbook.clear();
    Ok((dag, spec))
}

/// Reads a task-graph/network file; errors name the file.
pub fn load(path: &std::path::Path) -> Result<(Dag, ClusterSpec)> {
    let text = super::read_text(path)?;
    parse(&text, &super::stem(path)).map_err(|e| e.in_file(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tasks_edges_nodes_and_links() {
        let text = r#"{"tasks": [{"id": "a", "cost": 2}, {"id": "b", "cost": 3}],
            "edges": [{"src": "a", "dst": "b", "data": 10}],
            "nodes": [{"id": "m0", "speed": 2}, {"id": "m1", "speed": 1}], "links": 5}"#;
        let (dag, spec) = parse(text, "x").unwrap();
        assert_eq!(dag.len(), 2);
        let (a, b) = (dag.stage_by_name("a").unwrap(), dag.stage_by_name("b").unwrap());
        assert_eq!(dag.edge_data(a, b), 10.0);
        assert_eq!(spec.network().speeds, vec![2.0, 1.0]);
        assert_eq!(spec.bandwidth, 5.0);
    }

    #[test]
    fn names_the_bad_field() {
        let bad = r#"{"tasks": [{"id": "a", "cost": 1}], "edges": [{"src": "a", "dst": "z", "data": 1}],
            "nodes": [{"id": "m0", "speed": 1}], "links": 1}"#;
        assert!(parse(bad, "x").unwrap_err().to_string().contains("edges[0].dst"));
        let bad = r#"{"tasks": [{"id": "a", "cost": 1}], "nodes": [{"id": "m0", "speed": 0}], "links": 1}"#;
        assert!(parse(bad, "x").unwrap_err().to_string().contains("nodes[0].speed"));
    }
}
