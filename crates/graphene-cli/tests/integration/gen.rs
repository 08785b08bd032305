//! Random stage DAGs and clusters for property tests.
//!
//! A case is kept in the test's own representation and rendered to graphene's JSON formats, so
//! the same case feeds the library (through its real parser), the CLI (a failing case prints
//! both files, ready to reproduce with `graphene build-schedule dag.json --cluster cluster.json`)
//! and the oracle (through the oracle's own reader, never through graphene's model).
//!
//! Values are small integers, halves and quarters so that every sum is exact in binary floating
//! point: an optimum or a capacity check then never hinges on rounding.

use std::fmt;

use graphene::model::{Cluster, Dag};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use serde_json::{json, Value};

pub const RESOURCE_NAMES: [&str; 4] = ["cpu", "mem", "disk", "net"];

/// Deterministic proptest settings: a fixed seed (the same cases on every run and machine) and no
/// regression files written into the checkout. For a deeper search by hand, without editing the
/// tests, `GRAPHENE_PROPTEST_CASES=N` and `GRAPHENE_PROPTEST_SEED=S` override the count and seed.
pub fn config(cases: u32) -> Config {
    let env =
        |k: &str| std::env::var(k).ok().map(|v| v.parse::<u64>().unwrap_or_else(|_| panic!("{k}={v} is not a number")));
    Config {
        cases: env("GRAPHENE_PROPTEST_CASES").map_or(cases, |n| n as u32),
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(env("GRAPHENE_PROPTEST_SEED").unwrap_or(0x6772_6170_6865_6e65)),
        max_shrink_iters: 1000,
        ..Config::default()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    AllToAll,
    OneToOne,
}

#[derive(Clone, Debug)]
pub struct GenTask {
    pub duration: f64,
    /// One value per resource of the case.
    pub demand: Vec<f64>,
}

#[derive(Clone, Debug)]
pub struct GenStage {
    pub name: String,
    pub tasks: Vec<GenTask>,
    /// Parent stage indices (always smaller than this stage's index) and edge kinds.
    pub parents: Vec<(usize, Kind)>,
}

#[derive(Clone)]
pub struct Case {
    pub resources: Vec<String>,
    /// In generation order, which is topological: parents come first.
    pub stages: Vec<GenStage>,
    /// List the stages in reverse in the DAG file, so parents are named before they are defined
    /// (the reader must not depend on file order).
    pub reversed: bool,
    /// Capacity vector per machine (one value per resource).
    pub machines: Vec<Vec<f64>>,
    /// Whether disk and net may be overbooked (the CLI default) or every resource is hard.
    pub overbook: bool,
}

/// Bounds on the generated sizes.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    pub max_stages: usize,
    pub max_tasks: usize,
    pub max_machines: usize,
    /// Stages past this many tasks in total are dropped (edges only point backwards, so dropping
    /// a suffix of stages leaves a well-formed DAG).
    pub max_total: usize,
    pub allow_overbook: bool,
}

impl Sizes {
    /// The property-test sizes: 1-8 stages of 1-5 tasks on 1-4 machines.
    pub const PROPERTY: Sizes =
        Sizes { max_stages: 8, max_tasks: 5, max_machines: 4, max_total: 40, allow_overbook: true };
    /// Small enough for the exhaustive oracle: at most 6 tasks on 1-2 machines, every resource
    /// held to capacity (the oracle, like graphene's offline space, never overbooks).
    pub const ORACLE: Sizes =
        Sizes { max_stages: 5, max_tasks: 3, max_machines: 2, max_total: 6, allow_overbook: false };
}

impl Case {
    pub fn task_count(&self) -> usize {
        self.stages.iter().map(|s| s.tasks.len()).sum()
    }

    fn named(&self, v: &[f64]) -> serde_json::Map<String, Value> {
        self.resources.iter().zip(v).map(|(r, x)| (r.clone(), json!(x))).collect()
    }

    /// The DAG in graphene's native format. Stages whose tasks are all alike use the task-count
    /// form, the others the task-list form, so both reader paths are exercised.
    pub fn dag_value(&self) -> Value {
        let mut stages: Vec<Value> = self
            .stages
            .iter()
            .map(|s| {
                let parents: Vec<Value> = s
                    .parents
                    .iter()
                    .map(|&(p, k)| {
                        let name = &self.stages[p].name;
                        match k {
                            Kind::AllToAll => json!(name),
                            Kind::OneToOne => json!({"stage": name, "kind": "one-to-one"}),
                        }
                    })
                    .collect();
                let t0 = &s.tasks[0];
                let alike = s.tasks.iter().all(|t| t.duration == t0.duration && t.demand == t0.demand);
                if alike {
                    json!({"id": s.name, "tasks": s.tasks.len(), "duration": t0.duration,
                           "demands": self.named(&t0.demand), "parents": parents})
                } else {
                    let tasks: Vec<Value> = s
                        .tasks
                        .iter()
                        .map(|t| json!({"duration": t.duration, "demands": self.named(&t.demand)}))
                        .collect();
                    json!({"id": s.name, "tasks": tasks, "parents": parents})
                }
            })
            .collect();
        if self.reversed {
            stages.reverse();
        }
        json!({"name": "generated", "resources": self.resources, "stages": stages})
    }

    /// The cluster file; consecutive identical machines share one group (exercising `count`).
    pub fn cluster_value(&self) -> Value {
        let mut groups: Vec<(usize, &Vec<f64>)> = Vec::new();
        for m in &self.machines {
            match groups.last_mut() {
                Some((n, cap)) if *cap == m => *n += 1,
                _ => groups.push((1, m)),
            }
        }
        let machines: Vec<Value> =
            groups.iter().map(|(n, cap)| json!({"count": n, "capacity": self.named(cap)})).collect();
        let overbook: Vec<&str> = if self.overbook { vec!["disk", "net"] } else { vec![] };
        json!({"machines": machines, "overbook": overbook})
    }

    pub fn dag_json(&self) -> String {
        serde_json::to_string_pretty(&self.dag_value()).unwrap()
    }

    pub fn cluster_json(&self) -> String {
        serde_json::to_string_pretty(&self.cluster_value()).unwrap()
    }

    /// The DAG as graphene reads it.
    pub fn dag(&self) -> Dag {
        graphene::formats::native::parse(&self.dag_json(), "generated")
            .unwrap_or_else(|e| panic!("a generated DAG must parse: {e}\n{self:?}"))
    }

    /// The cluster as graphene resolves it for `dag`.
    pub fn cluster(&self, dag: &Dag) -> Cluster {
        let spec = graphene::formats::cluster::parse(&self.cluster_json()).expect("a generated cluster parses");
        let cluster = spec.resolve(&dag.resources).expect("a generated cluster resolves");
        cluster.check_fits(dag).unwrap_or_else(|e| panic!("every generated task fits some machine: {e}\n{self:?}"));
        cluster
    }
}

/// Printed by proptest for a failing case: the two files, ready to save and run.
impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\n--- dag.json ---\n{}\n--- cluster.json ---\n{}\n", self.dag_json(), self.cluster_json())
    }
}

/// Durations: 0 (a barrier-only task) now and then, otherwise a multiple of 0.5 up to 10.
fn duration() -> impl Strategy<Value = f64> {
    prop_oneof![1 => Just(0.0), 6 => (1u32..=20).prop_map(|h| h as f64 / 2.0)]
}

/// One stage before sizes and edges are resolved: its own task count, whether to copy the
/// previous stage's count instead (so that one-to-one edges are common), up to `max_tasks`
/// tasks as (duration, machine the demand is drawn against, quarter of that machine's capacity
/// per resource), and one edge code per possible earlier stage.
type RawStage = (usize, bool, Vec<(f64, usize, Vec<u32>)>, Vec<u8>);

pub fn arb_case(sz: Sizes) -> impl Strategy<Value = Case> {
    (2usize..=4, 1..=sz.max_machines)
        .prop_flat_map(move |(nres, nmach)| {
            // Capacities: mostly 1-16, sometimes 0 (a machine without that resource), so
            // machines differ and some tasks fit only some machines.
            let cap = prop_oneof![1 => Just(0u32), 7 => 1u32..=16];
            let machines = vec(vec(cap, nres), nmach);
            let task = (duration(), 0..nmach, vec(0u32..=4, nres));
            let stage = (1..=sz.max_tasks, any::<bool>(), vec(task, sz.max_tasks), vec(0u8..8, sz.max_stages));
            let stages = vec(stage, 1..=sz.max_stages);
            let overbook = if sz.allow_overbook { any::<bool>().boxed() } else { Just(false).boxed() };
            (Just(nres), machines, stages, any::<bool>(), overbook)
        })
        .prop_map(move |(nres, machines, raw, reversed, overbook)| {
            build_case(sz, nres, machines, raw, reversed, overbook)
        })
}

fn build_case(sz: Sizes, nres: usize, caps: Vec<Vec<u32>>, raw: Vec<RawStage>, reversed: bool, overbook: bool) -> Case {
    let machines: Vec<Vec<f64>> = caps.iter().map(|m| m.iter().map(|&c| c as f64).collect()).collect();
    let mut stages: Vec<GenStage> = Vec::new();
    let mut total = 0;
    for (i, (own_count, copy_prev, tasks, edges)) in raw.into_iter().enumerate() {
        let count = match stages.last() {
            Some(prev) if copy_prev => prev.tasks.len(),
            _ => own_count,
        };
        if total + count > sz.max_total {
            break;
        }
        total += count;
        // Each task's demand is a quarter-multiple of one machine's capacity, so it fits that
        // machine (whatever the others can hold).
        let tasks: Vec<GenTask> = tasks
            .into_iter()
            .take(count)
            .map(|(duration, m, q)| GenTask {
                duration,
                demand: (0..nres).map(|r| machines[m][r] * q[r] as f64 / 4.0).collect(),
            })
            .collect();
        // Edge codes: 0-4 none, 5 all-to-all, 6 one-to-one when the counts match (else
        // all-to-all), 7 one-to-one when they match (else none).
        let mut parents = Vec::new();
        for (j, prev) in stages.iter().enumerate() {
            let same = prev.tasks.len() == count;
            match edges[j] {
                5 => parents.push((j, Kind::AllToAll)),
                6 => parents.push((j, if same { Kind::OneToOne } else { Kind::AllToAll })),
                7 if same => parents.push((j, Kind::OneToOne)),
                _ => {}
            }
        }
        stages.push(GenStage { name: format!("s{i}"), tasks, parents });
    }
    Case {
        resources: RESOURCE_NAMES[..nres].iter().map(|s| s.to_string()).collect(),
        stages,
        reversed,
        machines,
        overbook,
    }
}
