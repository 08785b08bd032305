//! The paper's motivating example (traces/motivating.json on traces/motivating-cluster.json):
//! three short tasks that need 9 of the machine's 12 cores, each the parent of a long task that
//! needs 4. A long task cannot run beside a short one, so the good schedule runs the three short
//! tasks first and the three long ones together; schedulers that chase the critical path start a
//! long task early and then each short task waits for a long one to end.
//!
//! The optimum comes from the exhaustive oracle (6 tasks, 1 machine), not from a constant.

use graphene::lowerbound;
use graphene::model::{Cluster, Dag};
use graphene::validate::validate;

use crate::oracle::{entries, solve, Problem};
use crate::util::{geq, load_cluster, load_dag, makespan_of, repo, scheduler};

fn dag_and_cluster() -> (Dag, Cluster) {
    let dag = load_dag(&repo("traces/motivating.json"));
    let cluster = load_cluster(&repo("traces/motivating-cluster.json"), &dag);
    (dag, cluster)
}

/// The oracle's optimum, read from the trace files by the oracle's own reader.
fn optimum() -> f64 {
    let read = |p: &str| serde_json::from_str(&std::fs::read_to_string(repo(p)).unwrap()).unwrap();
    let p = Problem::from_json(&read("traces/motivating.json"), &read("traces/motivating-cluster.json"));
    assert_eq!(p.durations.len(), 6);
    assert_eq!(p.caps.len(), 1);
    let sol = solve(&p);
    // The oracle's schedule must itself be valid for its optimum to mean anything.
    let (dag, cluster) = dag_and_cluster();
    let v = validate(&dag, &cluster, &entries(&p, &sol));
    assert!(v.is_empty(), "oracle schedule invalid: {v:?}");
    sol.makespan
}

#[test]
fn oracle_optimum_is_the_short_tasks_then_the_long_ones_together() {
    // By hand: no long task can overlap a short one (4 + 9 > 12 cores), so the three unit-long
    // short tasks take 3 time units outside the 100-long L1: at least 103, and 103 is reached.
    assert_eq!(optimum(), 103.0);
}

#[test]
fn lower_bounds_are_sound_on_the_motivating_example() {
    let (dag, cluster) = dag_and_cluster();
    let lb = lowerbound::compute(&dag, &cluster);
    assert!(geq(optimum(), lb.best()), "{lb:?}");
}

#[test]
fn graphene_is_within_five_percent_of_the_optimum() {
    let opt = optimum();
    let (dag, cluster) = dag_and_cluster();
    let ms = makespan_of(scheduler("graphene"), &dag, &cluster);
    assert!(geq(ms, opt), "graphene {ms} beats the optimum {opt}: the oracle or the validator is wrong");
    assert!(ms <= 1.05 * opt, "graphene {ms} is more than 5% above the optimum {opt}");
}

#[test]
fn critical_path_and_tetris_are_at_least_one_and_a_half_times_the_optimum() {
    let opt = optimum();
    let (dag, cluster) = dag_and_cluster();
    for name in ["cp", "tetris"] {
        let ms = makespan_of(scheduler(name), &dag, &cluster);
        assert!(ms >= 1.5 * opt, "{name} makespan {ms} is below 1.5 x the optimum {opt}; the example should defeat it");
    }
}
