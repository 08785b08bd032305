//! Heterogeneous executors: HEFT and CPOP against the makespans of an independent
//! implementation (`reference/hetero`), DEFT's duplication, the validator's transfer checks.

use std::path::PathBuf;

use graphene::formats::hetero;
use graphene::hetero::{run, HeteroAlgo};
use graphene::model::{Cluster, ClusterSpec, Dag};

fn reference_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/reference/hetero")
}

fn instance(name: &str) -> (Dag, Cluster, ClusterSpec) {
    let (dag, spec) = hetero::load(&reference_dir().join(format!("{name}.json"))).expect("reference instance");
    let cluster = spec.resolve(&dag.resources).expect("cluster");
    (dag, cluster, spec)
}

fn reference() -> serde_json::Value {
    let text = std::fs::read_to_string(reference_dir().join("reference.json")).expect("reference.json");
    serde_json::from_str(&text).expect("reference.json is JSON")
}

#[test]
fn heft_and_cpop_match_the_reference_makespans() {
    let r = reference();
    let all = r["makespans"].as_object().expect("makespans");
    assert_eq!(all.len(), 8);
    let mut failures = Vec::new();
    for (name, want) in all {
        let (dag, cluster, spec) = instance(name);
        assert_eq!(dag.len() as u64, want["tasks"].as_u64().unwrap(), "{name}: task count");
        assert_eq!(cluster.len() as u64, want["nodes"].as_u64().unwrap(), "{name}: node count");
        for algo in [HeteroAlgo::Heft, HeteroAlgo::Cpop] {
            let got = run(algo, &dag, &cluster, &spec.network()).schedule.makespan();
            let w = want[algo.name()].as_f64().unwrap();
            if ((got - w) / w).abs() > 1e-6 {
                failures.push(format!("{name} {}: got {got}, reference {w}", algo.name()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
