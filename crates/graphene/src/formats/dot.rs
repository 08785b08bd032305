//! Task graphs in Graphviz DOT, with the attributes dslab-dag reads (and WorkflowSim-style
//! runtimes).
//!
//! ```dot
//! digraph montage {
//!   node [cores="1"]
//!   a [label="mProject_1", size="2.5e10"]        // 2.5e10 flops: 25 s at 1 Gflop/s
//!   b [label="mAdd", runtime="4", cores="2", memory="512"]
//!   a -> b [size="3e6"]                         // 3e6 bytes from a to b
//! }
//! ```
//!
//! * A node is a task. Its duration is `runtime` (seconds) when given, else `size` / 10^9 (dslab's
//!   `size` counts flops; 10^9 is one second on a 1 Gflop/s core; `--speeds` scales machines).
//!   A node with neither is an error. It is grouped (for FragScore) by its `label` with a numeric
//!   suffix removed, else by its name.
//! * `cores` (1 when absent) is its `cpu`; `memory` (MB, dslab's unit) / 1000 its `mem` in GB.
//! * An edge `a -> b` (or a chain `a -> b -> c`, or `a -> {b c}`) is a dependency; its `size`
//!   (bytes) / 10^6 is the data it carries, in MB, for `--bandwidth`.
//! * `node [...]` and `edge [...]` defaults apply to what follows them, in their subgraph, as in
//!   Graphviz; subgraphs are flattened. An undirected `graph` is an error (no direction, no
//!   dependency); so is an edge to itself and any attribute that is not a number >= 0.
//!
//! The grammar is read by [`super::dot_syntax`]; its errors carry the line and column.

use std::collections::HashMap;

use super::dot_syntax::{self, AttrList, Stmt, Vertex};
use super::task_graph::{demand, number, TaskGraph, TaskNode};
use super::wfcommons::task_type;
use crate::error::{Error, Result};
use crate::model::Dag;

/// True when the text starts (after comments) with `digraph`, `graph` or `strict`.
pub fn looks_like(text: &str) -> bool {
    let mut t = text.trim_start();
    loop {
        if let Some(rest) = t.strip_prefix("//").or_else(|| t.strip_prefix('#')) {
            t = rest.split_once('\n').map_or("", |x| x.1).trim_start();
        } else if let Some(rest) = t.strip_prefix("/*") {
            t = rest.split_once("*/").map_or("", |x| x.1).trim_start();
        } else {
            break;
        }
    }
    let word: String = t.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
    matches!(word.to_ascii_lowercase().as_str(), "digraph" | "graph" | "strict")
}

type Attrs = HashMap<String, String>;

fn merge(into: &mut Attrs, attrs: &AttrList) {
    for (k, v) in attrs {
        into.insert(k.clone(), v.clone());
    }
}

/// Nodes (in order of first appearance, with their attributes) and edges, with Graphviz's
/// scoping of `node`/`edge` defaults: they apply to what follows, within their subgraph.
#[derive(Default)]
struct Collect {
    order: Vec<String>,
    nodes: HashMap<String, Attrs>,
    edges: Vec<(String, String, Attrs)>,
}

impl Collect {
    fn touch(&mut self, name: &str, defaults: &Attrs) {
        if !self.nodes.contains_key(name) {
            self.order.push(name.to_string());
            self.nodes.insert(name.to_string(), defaults.clone());
        }
    }

    /// Walks statements; returns every node they mention (what a subgraph stands for in an edge).
    fn stmts(&mut self, stmts: &[Stmt], mut nd: Attrs, mut ed: Attrs) -> Vec<String> {
        let mut mentioned = Vec::new();
        for s in stmts {
            match s {
                Stmt::NodeDefaults(a) => merge(&mut nd, a),
                Stmt::EdgeDefaults(a) => merge(&mut ed, a),
                Stmt::GraphAttrs => {}
                Stmt::Node(name, attrs) => {
                    self.touch(name, &nd);
                    merge(self.nodes.get_mut(name).expect("touched"), attrs);
                    mentioned.push(name.clone());
                }
                Stmt::Edge(vs, attrs) => {
                    let groups: Vec<Vec<String>> = vs
                        .iter()
                        .map(|v| match v {
                            Vertex::Node(n) => {
                                self.touch(n, &nd);
                                vec![n.clone()]
                            }
                            Vertex::Sub(inner) => self.stmts(inner, nd.clone(), ed.clone()),
                        })
                        .collect();
                    let mut a = ed.clone();
                    merge(&mut a, attrs);
                    for w in groups.windows(2) {
                        for x in &w[0] {
                            for y in &w[1] {
                                self.edges.push((x.clone(), y.clone(), a.clone()));
                            }
                        }
                    }
                    mentioned.extend(groups.into_iter().flatten());
                }
                Stmt::Sub(inner) => mentioned.extend(self.stmts(inner, nd.clone(), ed.clone())),
            }
        }
        mentioned
    }
}

pub fn parse(text: &str, name: &str) -> Result<Dag> {
    let graph = dot_syntax::parse(text)?;
    if !graph.directed {
        return Err(Error::field("graph", "an undirected graph has no dependencies; write `digraph` and `->`"));
    }
    let mut c = Collect::default();
    c.stmts(&graph.stmts, Attrs::new(), Attrs::new());
    let mut g = TaskGraph::default();
    for n in &c.order {
        crate::deadline::poll()?;
        let a = &c.nodes[n];
        let at = format!("node {n}");
        let duration = match (a.get("runtime"), a.get("size")) {
            (Some(r), _) => number(r, &at, "runtime")?,
            (None, Some(s)) => number(s, &at, "size")? / 1e9,
            (None, None) => {
                return Err(Error::field(at, "no runtime (seconds) or size (flops) attribute"));
            }
        };
        let cores = a.get("cores").map(|v| number(v, &at, "cores")).transpose()?.unwrap_or(1.0);
        let memory = a.get("memory").map(|v| number(v, &at, "memory")).transpose()?.unwrap_or(0.0);
        g.add(TaskNode {
            name: n.clone(),
            group: task_type(a.get("label").unwrap_or(n)).to_string(),
            duration,
            demand: demand(cores, memory / 1000.0, 0.0),
            at,
        })?;
    }
    for (a, b, attrs) in &c.edges {
        crate::deadline::poll()?;
        let at = format!("edge {a} -> {b}");
        let data = attrs.get("size").map(|v| number(v, &at, "size")).transpose()?.unwrap_or(0.0) / 1e6;
        g.edge(a, b, data, &at)?;
    }
    g.build(graph.name.as_deref().filter(|n| !n.is_empty()).unwrap_or(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOT: &str = r#"// a comment
digraph "tiny" {
  node [cores="1"]
  a [label="mProject_00000001", size="2.5e10"]
  b [label="mAdd", runtime="4", cores="2", memory="512"]
  subgraph s { node [cores="3"]; c [runtime="1"] }
  a -> b [size="3e6"]
  b -> { c d }
  d [size="1e9"]
}"#;

    #[test]
    fn nodes_edges_defaults_and_subgraphs() {
        assert!(looks_like(DOT));
        let d = parse(DOT, "x").unwrap();
        assert_eq!(d.name, "tiny");
        assert_eq!(d.len(), 4);
        let s = |n: &str| d.stage_by_name(n).unwrap();
        let t = |n: &str| d.tasks[d.stages[s(n) as usize].first as usize];
        assert_eq!(t("a").duration, 25.0);
        assert_eq!((t("b").duration, t("b").demand.0[0], t("b").demand.0[1]), (4.0, 2.0, 0.512));
        assert_eq!(t("c").demand.0[0], 3.0); // the subgraph's default
        assert_eq!(t("d").demand.0[0], 1.0); // the outer default, not the subgraph's
        assert_eq!(d.edge_data(s("a"), s("b")), 3.0);
        assert_eq!(d.stages[s("c") as usize].parents.len(), 1);
        assert_eq!(d.stages[s("d") as usize].parents.len(), 1);
        assert_eq!(d.groups[d.stages[s("a") as usize].group as usize], "mProject");
    }

    #[test]
    fn errors() {
        let e = parse("digraph { a [runtime=1]; b; a -> b }", "x").unwrap_err().to_string();
        assert!(e.contains("node b") && e.contains("no runtime"), "{e}");
        let e = parse("graph { a -- b }", "x").unwrap_err().to_string();
        assert!(e.contains("undirected"), "{e}");
        let e = parse("digraph { a [runtime=1] a -> a }", "x").unwrap_err().to_string();
        assert!(e.contains("depends on itself"), "{e}");
        let e = parse("digraph { a [runtime=\"x\"] }", "x").unwrap_err().to_string();
        assert!(e.contains("runtime") && e.contains("'x'"), "{e}");
        let e = parse("digraph { a [runtime=1] -> }", "x").unwrap_err().to_string();
        assert!(e.contains("line 1, column 25") && e.contains("expected a statement"), "{e}");
        let deep = format!("digraph {{ {} }}", "subgraph { ".repeat(100) + &"}".repeat(100));
        assert!(parse(&deep, "x").unwrap_err().to_string().contains("nest deeper"));
        let e = parse("digraph { a [runtime=1]; b [runtime=1]; a -> b; b -> a }", "x").unwrap_err().to_string();
        assert!(e.contains("cycle"), "{e}");
    }
}
