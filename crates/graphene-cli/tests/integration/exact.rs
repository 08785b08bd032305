//! `build-schedule --exact`: the branch and bound against optima it did not compute.
//!
//! * On instances of the small-DAG set whose optimum OR-Tools CP-SAT proved
//!   (tests/data/small-dags/optima.json), with a node budget (deterministic, no clock), the
//!   exact search returns that optimum and says it is proven, starting from the constructor
//!   alone so that the search itself must find the optimum where the constructor misses it.
//! * On a hand-made bin-packing block where longest-first list scheduling is a step too long.
//! * Stopped by its node budget or the time limit, it returns a valid schedule, never worse
//!   than the constructor's, with a lower bound at most its makespan and the gap between them.
//! * On random tiny DAGs, against the exhaustive oracle (`oracle.rs`, which shares no code with
//!   the library's search): the same optimum, always proven.
//! * Refusals: another scheduler, `compare`, a DAG over the size limit.

use graphene::model::{Placement, Schedule};
use graphene::validate::validate_schedule;
use graphene::{OfflineConfig, Scheduler};
use proptest::prelude::*;

use crate::gen::{arb_case, config, Sizes};
use crate::oracle::{solve, Problem};
use crate::util::{build_small_json, repo, run, tempdir, write};

fn optima() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(repo("tests/data/small-dags/optima.json")).unwrap()).unwrap()
}

fn machines_of(instance: &str) -> u64 {
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo("tests/data/small-dags/instances.json")).unwrap()).unwrap();
    index["instances"].as_array().unwrap().iter().find(|i| i["instance"] == instance).unwrap()["machines"]
        .as_u64()
        .unwrap()
}

fn build_small(instance: &str, extra: &[&str]) -> serde_json::Value {
    build_small_json(&repo(&format!("tests/data/small-dags/{instance}.json")), machines_of(instance) as usize, extra)
}

#[test]
fn exact_proves_the_cp_sat_optimum_on_small_dag_instances() {
    let optima = optima();
    // Instances where the constructor alone is above the optimum (noshare-00/05/07 are not)
    // and where it is not: the search must find the shorter schedule itself in the first.
    for instance in ["lpt-02", "noshare-00", "noshare-05", "noshare-07", "layered-02", "layered-08", "hidden-06"] {
        let opt = &optima["optima"][instance];
        assert_eq!(opt["proven"], true, "{instance}");
        let want = opt["makespan"].as_f64().unwrap();
        let s = build_small(instance, &["--improve", "0", "--exact", "--exact-nodes", "3000000"]);
        let e = &s["search"]["exact"];
        assert_eq!(e["status"], "optimal", "{instance}: {e}");
        let got = s["makespan"].as_f64().unwrap();
        assert!((got - want).abs() < 1e-6, "{instance}: exact {got}, CP-SAT's proven optimum {want}");
        assert_eq!(e["lower_bound"], e["upper_bound"], "{instance}");
        assert_eq!(e["gap"], 0.0, "{instance}");
        assert!(e["nodes"].as_u64().unwrap() <= 3_000_000);
        assert!(e["from"].as_f64().unwrap() >= got, "{instance}: never worse than the constructor");
    }
}

#[test]
fn the_exact_search_is_deterministic_for_a_node_budget() {
    let a = build_small("layered-00", &["--exact", "--exact-nodes", "20000"]);
    let b = build_small("layered-00", &["--exact", "--exact-nodes", "20000"]);
    assert_eq!(a, b);
    assert_eq!(a["search"]["exact"]["status"], "node-limit");
}

/// Two machines of 10 cpus; five tasks of 6 cpus (no two share a machine) lasting 3, 3, 2, 2, 2.
/// Longest first puts the 3s side by side, then the 2s: 3 + 2 + 2 = 7. The optimum is 6 (3 + 3
/// on one machine, 2 + 2 + 2 on the other), and every machine is busy until then: the
/// volume bound (16 units of one-machine work over 2 machines, rounded up) proves it.
const LPT_BLOCK: &str = r#"{"resources": ["cpu", "mem"], "stages": [
    {"id": "long", "tasks": 2, "duration": 3, "demands": {"cpu": 6, "mem": 1}},
    {"id": "short", "tasks": 3, "duration": 2, "demands": {"cpu": 6, "mem": 1}}]}"#;

fn build_block(dir: &std::path::Path, extra: &[&str]) -> serde_json::Value {
    build_small_json(&write(dir, "lpt-block.json", LPT_BLOCK), 2, extra)
}

#[test]
fn exact_beats_longest_first_on_a_bin_packing_block() {
    let dir = tempdir();
    let greedy = build_block(dir.path(), &["--placement", "longest", "--improve", "0"]);
    assert_eq!(greedy["makespan"], 7.0);
    let exact = build_block(dir.path(), &["--placement", "longest", "--improve", "0", "--exact"]);
    assert_eq!(exact["makespan"], 6.0);
    let e = &exact["search"]["exact"];
    assert_eq!(e["status"], "optimal");
    assert_eq!(e["from"], 7.0);
    assert_eq!(e["lower_bound"], 6.0);
}

#[test]
fn a_stopped_search_returns_a_valid_schedule_and_the_gap() {
    // lpt-05: CP-SAT did not prove it within 30 s; 2,000 nodes prove nothing either.
    for flags in [&["--exact", "--exact-nodes", "2000"][..], &["--exact", "--time-limit", "0"][..]] {
        let s = build_small("lpt-05", flags);
        let e = &s["search"]["exact"];
        let want = if flags.contains(&"--time-limit") { "time-limit" } else { "node-limit" };
        assert_eq!(e["status"], want, "{e}");
        let (lb, ub) = (e["lower_bound"].as_f64().unwrap(), e["upper_bound"].as_f64().unwrap());
        assert_eq!(ub, s["makespan"].as_f64().unwrap());
        assert!(lb <= ub && lb > 0.0, "{e}");
        assert!(ub <= e["from"].as_f64().unwrap());
        let gap = e["gap"].as_f64().unwrap();
        assert!((gap - (ub - lb) / ub).abs() < 1e-12 && gap > 0.0, "{e}");
        // The report's best lower bound never exceeds the proven one's schedule either.
        assert!(s["lower_bounds"]["stage_aware"].as_f64().unwrap() <= ub);
    }
}

#[test]
fn the_summary_says_whether_optimality_was_proven() {
    let dir = tempdir();
    let dag = write(dir.path(), "lpt-block.json", LPT_BLOCK);
    let out = dir.path().join("s.json");
    let args = |extra: &[&str]| {
        let mut a = vec![
            "build-schedule".to_string(),
            dag.display().to_string(),
            "--machines".into(),
            "2".into(),
            "--capacity".into(),
            "cpu=10,mem=10".into(),
            "--out".into(),
            out.display().to_string(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let r = run(&args(&["--exact"])).ok();
    assert!(r.stderr.contains("exact         makespan 6.000 proven optimal"), "{}", r.stderr);
    let lpt05 = repo("tests/data/small-dags/lpt-05.json");
    let r = run(&[
        "build-schedule",
        &lpt05.display().to_string(),
        "--machines",
        "2",
        "--capacity",
        "cpu=10,mem=10",
        "--exact",
        "--exact-nodes",
        "1000",
        "--out",
        &out.display().to_string(),
    ])
    .ok();
    assert!(r.stderr.contains("not proven optimal: node budget spent"), "{}", r.stderr);
    assert!(r.stderr.contains("gap"), "{}", r.stderr);
}

#[test]
fn exact_is_refused_where_it_cannot_run() {
    let dir = tempdir();
    let dag = write(dir.path(), "lpt-block.json", LPT_BLOCK);
    let d = dag.display().to_string();
    let r = run(&["build-schedule", &d, "--scheduler", "bfs", "--exact"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("--exact is graphene's"), "{}", r.stderr);
    let r = run(&["compare", &d, "--exact"]);
    assert!(r.stderr.contains("--exact is a build-schedule option"), "{}", r.stderr);
    let big = write(
        dir.path(),
        "big.json",
        r#"{"resources": ["cpu"], "stages": [{"id": "a", "tasks": 201, "duration": 1, "demands": {"cpu": 1}}]}"#,
    );
    let r = run(&["build-schedule", &big.display().to_string(), "--exact"]);
    assert!(r.stderr.contains("201 tasks; the exact search takes at most 200"), "{}", r.stderr);
    let r = run(&["build-schedule", &d, "--exact", "--exact-nodes", "0"]);
    assert!(r.stderr.contains("--exact-nodes must be at least 1"), "{}", r.stderr);
}

proptest! {
    #![proptest_config(config(96))]

    /// On tiny random DAGs (<= 6 tasks, 1-2 machines, f64 durations, one-to-one and all-to-all
    /// edges, zero-length tasks), the exact search proves exactly the oracle's optimum, from the
    /// constructor alone, and its schedule passes the validator.
    #[test]
    fn exact_matches_the_exhaustive_oracle(case in arb_case(Sizes::ORACLE)) {
        check_against_oracle(case)?;
    }
}

proptest! {
    #![proptest_config(config(48))]

    /// The same on up to 8 tasks and 3 machines, where machine symmetry and the memory of
    /// searched states come into play (fewer cases: the oracle is exhaustive).
    #[test]
    fn exact_matches_the_exhaustive_oracle_on_eight_tasks(case in arb_case(EIGHT)) {
        check_against_oracle(case)?;
    }
}

const EIGHT: Sizes = Sizes { max_stages: 6, max_tasks: 3, max_machines: 3, max_total: 8, allow_overbook: false };

fn check_against_oracle(case: crate::gen::Case) -> Result<(), TestCaseError> {
    {
        let p = Problem::from_json(&case.dag_value(), &case.cluster_value());
        let opt = solve(&p).makespan;
        let dag = case.dag();
        let cluster = case.cluster(&dag);
        let cfg = OfflineConfig { improve_budget: 0, exact: Some(1_000_000), ..OfflineConfig::default() };
        let built = graphene::build(Scheduler::Graphene, &dag, &cluster, &cfg, 0);
        let violations = validate_schedule(&dag, &cluster, &built.schedule);
        prop_assert!(violations.is_empty(), "invalid: {violations:?}");
        let report = built.search.unwrap().exact.unwrap();
        prop_assert_eq!(report.status, graphene::offline::ExactStatus::Optimal, "{:?}", report);
        let ms = built.schedule.makespan();
        prop_assert!((ms - opt).abs() <= 1e-9 * opt.max(1.0), "exact {ms}, oracle {opt}");
        prop_assert!((report.lower_bound - ms).abs() <= 1e-9 * opt.max(1.0));

        // From a serial schedule (one task at a time), so that the search, not the
        // constructor, must find the optimum.
        let mut at = 0.0;
        let serial = Schedule {
            placements: dag
                .tasks
                .iter()
                .enumerate()
                .map(|(t, task)| {
                    let machine = cluster.machines.iter().position(|c| task.demand.fits_in(c)).unwrap() as u32;
                    let p = Placement { task: t as u32, machine, start: at, end: at + task.duration };
                    at += task.duration;
                    p
                })
                .collect(),
        };
        let (s, r) = graphene::offline::solve_exact(&dag, &cluster, serial, 1_000_000, &graphene::Deadline::none());
        prop_assert!(validate_schedule(&dag, &cluster, &s).is_empty());
        prop_assert_eq!(r.status, graphene::offline::ExactStatus::Optimal, "{:?}", r);
        prop_assert!(
            (s.makespan() - opt).abs() <= 1e-9 * opt.max(1.0),
            "exact {} from serial, oracle {opt}",
            s.makespan()
        );
    }
    Ok(())
}
