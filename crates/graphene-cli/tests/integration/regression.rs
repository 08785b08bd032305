//! Exact makespans on cases small enough to work out by hand. A change in any of these numbers
//! is a behaviour change that has to be explained, not absorbed.
//!
//! Each case also states its critical-path and total-work bounds (hand-computed) and, where
//! graphene is expected to be optimal, the oracle confirms that the expected value is the
//! optimum.

use graphene::lowerbound;
use graphene::model::{Cluster, Dag};

use crate::oracle::{solve, Problem};
use crate::util::{load_cluster, load_dag, makespan_of, repo, scheduler, tempdir, write};

struct Expected {
    name: &'static str,
    dag: Source,
    cluster: Source,
    critical_path: f64,
    total_work: f64,
    /// Exact makespans by scheduler name.
    makespans: &'static [(&'static str, f64)],
    /// The optimum, checked with the oracle.
    optimum: f64,
}

enum Source {
    Trace(&'static str),
    Inline(&'static str),
}

impl Source {
    fn text(&self) -> String {
        match self {
            Source::Trace(p) => std::fs::read_to_string(repo(p)).unwrap(),
            Source::Inline(t) => t.to_string(),
        }
    }
}

const CASES: &[Expected] = &[
    // Paper's motivating example. CP (bottom levels s1 101, L1 100, s2 99, L2 98, s3 97, L3 96):
    // s1 [0,1), L1 [1,101), then s2 cannot share the machine with L1 (9 + 4 > 12): [101,102),
    // L2 [102,200), s3 [200,201), L3 [201,297). Graphene runs s1..s3 first, then L1..L3 side
    // by side: 3 + 100.
    Expected {
        name: "motivating",
        dag: Source::Trace("traces/motivating.json"),
        cluster: Source::Trace("traces/motivating-cluster.json"),
        critical_path: 101.0,
        // cpu work: 3 x 9 x 1 + 4 x (100 + 98 + 96) = 1203, over 12 cores.
        total_work: 100.25,
        makespans: &[("graphene", 103.0), ("cp", 297.0)],
        optimum: 103.0,
    },
    // The same trap with two branches on one 10-core machine. CP (bottom levels s1 11, L1 10,
    // s2 9, L2 8): s1 [0,1), L1 [1,11), s2 needs the whole machine: [11,12), L2 [12,20).
    // Optimum: s1, s2, then L1 and L2 side by side: 2 + 10 = 12 (a long task cannot overlap a
    // full-width short one, so both short tasks lie outside L1's 10 units).
    Expected {
        name: "two-branches",
        dag: Source::Inline(
            r#"{"name": "two-branches", "resources": ["cpu"], "stages": [
                {"id": "s1", "tasks": 1, "duration": 1, "demands": {"cpu": 10}},
                {"id": "s2", "tasks": 1, "duration": 1, "demands": {"cpu": 10}},
                {"id": "L1", "tasks": 1, "duration": 10, "demands": {"cpu": 5}, "parents": ["s1"]},
                {"id": "L2", "tasks": 1, "duration": 8, "demands": {"cpu": 5}, "parents": ["s2"]}]}"#,
        ),
        cluster: Source::Inline(r#"{"machines": [{"count": 1, "capacity": {"cpu": 10}}], "overbook": []}"#),
        critical_path: 11.0,
        // (10 + 10 + 5 x 10 + 5 x 8) / 10
        total_work: 11.0,
        makespans: &[("graphene", 12.0), ("cp", 20.0)],
        optimum: 12.0,
    },
    // One-to-one edges on unequal machines: x[i] -> y[i] one-to-one, then a barrier to z, which
    // needs 4 cores and fits only machine 0. Both x tasks fit side by side on machine 0, so both
    // schedulers reach the critical path 2 + 1.5 + 1 = 4.5.
    Expected {
        name: "one-to-one-heterogeneous",
        dag: Source::Inline(
            r#"{"name": "hetero", "resources": ["cpu"], "stages": [
                {"id": "x", "tasks": 2, "duration": 2, "demands": {"cpu": 2}},
                {"id": "y", "tasks": 2, "duration": 1.5, "demands": {"cpu": 2}, "parents": [{"stage": "x", "kind": "one-to-one"}]},
                {"id": "z", "tasks": 1, "duration": 1, "demands": {"cpu": 4}, "parents": ["y"]}]}"#,
        ),
        cluster: Source::Inline(
            r#"{"machines": [{"count": 1, "capacity": {"cpu": 4}}, {"count": 1, "capacity": {"cpu": 2}}], "overbook": []}"#,
        ),
        critical_path: 4.5,
        // (2 x 2 x 2 + 2 x 1.5 x 2 + 1 x 4) / 6 cores
        total_work: 3.0,
        makespans: &[("graphene", 4.5), ("cp", 4.5)],
        optimum: 4.5,
    },
];

fn load(case: &Expected) -> (Dag, Cluster, Problem) {
    let dir = tempdir();
    let dag_path = write(dir.path(), &format!("{}.json", case.name), &case.dag.text());
    let cluster_path = write(dir.path(), "cluster.json", &case.cluster.text());
    let dag = load_dag(&dag_path);
    let cluster = load_cluster(&cluster_path, &dag);
    let problem = Problem::from_json(
        &serde_json::from_str(&case.dag.text()).unwrap(),
        &serde_json::from_str(&case.cluster.text()).unwrap(),
    );
    (dag, cluster, problem)
}

#[test]
fn exact_makespans_of_hand_computed_cases() {
    let mut failures = Vec::new();
    for case in CASES {
        let (dag, cluster, _) = load(case);
        for &(name, want) in case.makespans {
            let got = makespan_of(scheduler(name), &dag, &cluster);
            if got != want {
                failures.push(format!("{}: {name} makespan {got}, expected {want}", case.name));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn exact_classic_bounds_of_hand_computed_cases() {
    for case in CASES {
        let (dag, cluster, _) = load(case);
        let lb = lowerbound::compute(&dag, &cluster);
        assert_eq!(lb.critical_path, case.critical_path, "{}: critical path", case.name);
        assert_eq!(lb.total_work, case.total_work, "{}: total work", case.name);
        assert!(
            lb.stage_aware <= case.optimum,
            "{}: stage-aware bound {} above the optimum",
            case.name,
            lb.stage_aware
        );
    }
}

#[test]
fn hand_computed_optima_agree_with_the_oracle() {
    for case in CASES {
        let (_, _, problem) = load(case);
        assert_eq!(solve(&problem).makespan, case.optimum, "{}", case.name);
    }
}
