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
use std::rc::Rc;

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

/// The node attributes the reader uses. Values are shared (`Rc`), and attributes it does not
/// use are dropped, so that copying a scope's defaults into a node, or into a subgraph, costs the
/// same whatever the file spells out: a 2 MB `node [...]` list before 5,000 nodes is kept once,
/// not 5,000 times.
#[derive(Clone, Default)]
struct NodeAttrs {
    runtime: Option<Rc<str>>,
    size: Option<Rc<str>>,
    cores: Option<Rc<str>>,
    memory: Option<Rc<str>>,
    label: Option<Rc<str>>,
}

impl NodeAttrs {
    fn merge(&mut self, attrs: &AttrList) {
        for (k, v) in attrs {
            let slot = match k.as_str() {
                "runtime" => &mut self.runtime,
                "size" => &mut self.size,
                "cores" => &mut self.cores,
                "memory" => &mut self.memory,
                "label" => &mut self.label,
                _ => continue,
            };
            *slot = Some(Rc::from(v.as_str()));
        }
    }
}

/// The edge attribute the reader uses: `size`.
fn merge_edge(size: &mut Option<Rc<str>>, attrs: &AttrList) {
    for (k, v) in attrs {
        if k == "size" {
            *size = Some(Rc::from(v.as_str()));
        }
    }
}

/// Nodes (in order of first appearance, with their attributes) and edges, with Graphviz's
/// scoping of `node`/`edge` defaults: they apply to what follows, within their subgraph. Nodes
/// are numbered in order of appearance; an edge is two node numbers and the number of its
/// statement's attributes.
#[derive(Default)]
struct Collect {
    names: Vec<String>,
    index: HashMap<String, u32>,
    nodes: Vec<NodeAttrs>,
    edges: Vec<(u32, u32, u32)>,
    /// The `size` of each edge statement's edges.
    edge_sizes: Vec<Option<Rc<str>>>,
    applied: Applied,
}

/// Bytes of the attribute values applied so far, a value counted at every node and edge
/// statement it applies to, against `--limit-input`: what the reader reads per node and edge
/// statement is bounded as a file of that size would be, however often a default repeats one
/// value (a 2 MB `node [...]` list before 5,000 nodes is 10 GB applied).
#[derive(Default)]
struct Applied(u64);

impl Applied {
    fn add(&mut self, bytes: usize, at: impl std::fmt::Display) -> Result<()> {
        self.0 = self.0.saturating_add(bytes as u64);
        crate::limits::current()
            .check_input_bytes(self.0, &format!("{at}: attribute values (bytes applied so far, defaults included)"))
    }
}

impl Collect {
    /// The node's number, adding it with the scope's defaults if it is new.
    fn touch(&mut self, name: &str, defaults: &NodeAttrs) -> Result<u32> {
        if let Some(&i) = self.index.get(name) {
            return Ok(i);
        }
        crate::limits::current().check_tasks(self.names.len() as u64 + 1, "nodes")?;
        let i = self.names.len() as u32;
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), i);
        self.nodes.push(defaults.clone());
        Ok(i)
    }

    /// Walks statements; returns every node they mention (what a subgraph stands for in an edge).
    fn stmts(&mut self, stmts: &[Stmt], mut nd: NodeAttrs, mut ed: Option<Rc<str>>) -> Result<Vec<u32>> {
        let mut mentioned = Vec::new();
        for s in stmts {
            match s {
                Stmt::NodeDefaults(a) => nd.merge(a),
                Stmt::EdgeDefaults(a) => merge_edge(&mut ed, a),
                Stmt::GraphAttrs => {}
                Stmt::Node(name, attrs) => {
                    let i = self.touch(name, &nd)?;
                    self.nodes[i as usize].merge(attrs);
                    mentioned.push(i);
                }
                Stmt::Edge(vs, attrs, line) => {
                    let mut groups: Vec<Vec<u32>> = Vec::with_capacity(vs.len());
                    for v in vs {
                        groups.push(match v {
                            Vertex::Node(n) => vec![self.touch(n, &nd)?],
                            Vertex::Sub(inner) => self.stmts(inner, nd.clone(), ed.clone())?,
                        });
                    }
                    // `{a0 ... a5999} -> {b0 ... b5999}` is 36 million edges in 70 KB: count them
                    // against the limit before making any.
                    let count = groups
                        .windows(2)
                        .fold(self.edges.len() as u64, |n, w| n.saturating_add(w[0].len() as u64 * w[1].len() as u64));
                    crate::limits::current().check_edges(count, &format!("line {line}: edges (edges so far)"))?;
                    let mut size = ed.clone();
                    merge_edge(&mut size, attrs);
                    self.applied.add(size.as_deref().map_or(0, str::len), format_args!("line {line}"))?;
                    let k = self.edge_sizes.len() as u32;
                    self.edge_sizes.push(size);
                    self.edges.reserve((count - self.edges.len() as u64) as usize);
                    for w in groups.windows(2) {
                        for &x in &w[0] {
                            self.edges.extend(w[1].iter().map(|&y| (x, y, k)));
                        }
                    }
                    mentioned.extend(groups.into_iter().flatten());
                }
                Stmt::Sub(inner) => mentioned.extend(self.stmts(inner, nd.clone(), ed.clone())?),
            }
        }
        Ok(mentioned)
    }
}

pub fn parse(text: &str, name: &str) -> Result<Dag> {
    let dot_syntax::DotGraph { directed, name: graph_name, stmts } = dot_syntax::parse(text)?;
    if !directed {
        return Err(Error::field("graph", "an undirected graph has no dependencies; write `digraph` and `->`"));
    }
    let mut c = Collect::default();
    c.stmts(&stmts, NodeAttrs::default(), None)?;
    drop(stmts);
    let mut applied = std::mem::take(&mut c.applied);
    let mut g = TaskGraph::default();
    for (i, a) in c.nodes.iter().enumerate() {
        crate::deadline::poll()?;
        let n = &c.names[i];
        let at = format!("node {n}");
        let values = [&a.runtime, &a.size, &a.cores, &a.memory, &a.label];
        applied.add(values.iter().filter_map(|v| v.as_deref()).map(str::len).sum(), &at)?;
        let duration = match (&a.runtime, &a.size) {
            (Some(r), _) => number(r, &at, "runtime")?,
            (None, Some(s)) => number(s, &at, "size")? / 1e9,
            (None, None) => {
                return Err(Error::field(at, "no runtime (seconds) or size (flops) attribute"));
            }
        };
        let cores = a.cores.as_deref().map(|v| number(v, &at, "cores")).transpose()?.unwrap_or(1.0);
        let memory = a.memory.as_deref().map(|v| number(v, &at, "memory")).transpose()?.unwrap_or(0.0);
        g.add(TaskNode {
            name: n.clone(),
            group: task_type(a.label.as_deref().unwrap_or(n)).to_string(),
            duration,
            demand: demand(cores, memory / 1000.0, 0.0),
            at,
        })?;
    }
    // Each statement's size is read once (at its first edge, which an error names).
    crate::deadline::poll()?;
    let mut data: Vec<Option<f64>> = vec![None; c.edge_sizes.len()];
    for &(x, y, k) in &c.edges {
        let at = || format!("edge {} -> {}", c.names[x as usize], c.names[y as usize]);
        let d = match (data[k as usize], &c.edge_sizes[k as usize]) {
            (Some(d), _) => d,
            (None, None) => 0.0,
            (None, Some(v)) => {
                let d = number(v, &at(), "size")? / 1e6;
                data[k as usize] = Some(d);
                d
            }
        };
        g.edge_at(x as usize, y as usize, d, at)?;
    }
    g.build(graph_name.as_deref().filter(|n| !n.is_empty()).unwrap_or(name))
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

    #[test]
    fn edge_operators_must_match_the_graph() {
        let e = parse("digraph {\n a [runtime=1]\n b [runtime=1]\n a -> b -- c\n}", "x").unwrap_err().to_string();
        assert_eq!(e, "line 4, column 9: '--' is an undirected edge; a digraph's edges are written '->'");
        let e = parse("graph { a -> b }", "x").unwrap_err().to_string();
        assert_eq!(e, "line 1, column 11: '->' is a directed edge; an undirected graph's edges are written '--'");
    }

    #[test]
    fn an_edge_statement_is_counted_against_the_limit_before_its_edges_are_made() {
        // 8,000 x 8,000 = 64 million edges (100 KB) against the default limit of 50 million.
        let names = |p: &str| (0..8000).map(|i| format!("{p}{i}")).collect::<Vec<_>>().join(" ");
        let text = format!("digraph {{\n node [runtime=1]\n {{{}}} -> {{{}}}\n}}", names("a"), names("b"));
        let e = parse(&text, "x").unwrap_err().to_string();
        assert_eq!(
            e,
            "line 3: edges (edges so far): 64000000 exceeds the limit of 50000000 (raise it with --limit-tasks)"
        );
        // A chain of products counts every step: 3 x 3 + 3 x 2.
        let d = parse("digraph { node [runtime=1]; {a b c} -> {d e f} -> {g h} }", "x").unwrap();
        assert_eq!(d.stages.iter().map(|s| s.parents.len()).sum::<usize>(), 15);
    }

    #[test]
    fn defaults_are_shared_not_copied_into_every_node() {
        let text = format!(
            "digraph {{ node [cores=2, label=\"L{}\", pad=\"{}\"]; {} }}",
            "x".repeat(1000),
            "y".repeat(1000),
            (0..50).map(|i| format!("n{i} [runtime=1]; node [memory=5]")).collect::<String>()
        );
        let stmts = dot_syntax::parse(&text).unwrap().stmts;
        let mut c = Collect::default();
        c.stmts(&stmts, NodeAttrs::default(), None).unwrap();
        // One label for the 50 nodes (counted here with this handle to it); unused attributes
        // are dropped.
        let label = c.nodes[0].label.clone().unwrap();
        assert_eq!(Rc::strong_count(&label), 50 + 1);
        assert!(c.nodes.iter().all(|n| n.label.as_ref().is_some_and(|l| Rc::ptr_eq(l, &label))));
        let d = parse(&text, "x").unwrap();
        assert_eq!(d.len(), 50);
        assert!(d.tasks.iter().all(|t| t.demand.0[0] == 2.0));
        // `memory` applies from the second node on.
        assert_eq!((d.tasks[0].demand.0[1], d.tasks[49].demand.0[1]), (0.0, 0.005));
    }
}
