//! An exhaustive optimum solver for tiny DAGs, independent of graphene's scheduling code.
//!
//! It reads DAG and cluster JSON with its own small reader into task-level data (durations,
//! demand vectors, parent lists, machine capacities; every resource held to capacity, as in
//! graphene's offline space) and runs the serial schedule-generation scheme over every
//! precedence-feasible task order and every machine assignment: each task goes to the earliest
//! start on its machine, at or after its parents' ends, at which its demand fits for its whole
//! duration next to the tasks already placed (checked by brute force).
//!
//! Why that finds an optimum: take an optimal schedule and list its tasks by start time, with
//! its machines. Placing them in that order, each task's earliest start given the tasks before
//! it is no later than its start in the optimum (that start is feasible), and moving it there
//! keeps the whole schedule feasible: on [new start, old start) only earlier-listed tasks run,
//! which the check saw, and afterwards the task occupies a sub-interval of what it occupied
//! before; its children started after its old end. So some order and assignment reproduce a
//! schedule no longer than the optimum. Branch and bound prunes partial schedules whose latest
//! end already reaches the best makespan found, which discards no strictly better schedule.
//!
//! The tests below check the oracle itself (hand-solved cases, and on random DAGs: its schedules
//! pass graphene's independent validator and lie between its own critical path and a serial
//! schedule), then use it: every lower bound is at most the optimum, and no scheduler beats it.

use std::collections::HashMap;

use graphene::validate::{validate, Entry};
use graphene::{lowerbound, Scheduler};
use proptest::prelude::*;
use serde_json::Value;

use crate::gen::{arb_case, config, Sizes};
use crate::util::{geq, makespan_with};

/// Capacity slack for the oracle's own check; all test values are exact, so this only absorbs
/// nothing-sized rounding.
const EPS: f64 = 1e-9;

/// Task-level scheduling problem.
#[derive(Clone, Debug)]
pub struct Problem {
    /// `stage[index]`, as graphene names tasks in its outputs.
    pub names: Vec<String>,
    pub durations: Vec<f64>,
    pub demands: Vec<Vec<f64>>,
    pub parents: Vec<Vec<usize>>,
    pub caps: Vec<Vec<f64>>,
}

#[derive(Clone, Debug)]
pub struct Solution {
    pub makespan: f64,
    /// (machine, start, end) per task.
    pub placements: Vec<(usize, f64, f64)>,
}

fn num(v: &Value, what: &str) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{what}: expected a number, got {v}"))
}

fn demand_of(map: Option<&Value>, resources: &[String]) -> Option<Vec<f64>> {
    let map = map?.as_object().expect("demands is an object");
    let mut v = vec![0.0; resources.len()];
    for (k, x) in map {
        let i = resources.iter().position(|r| r == k).unwrap_or_else(|| panic!("unknown resource {k}"));
        v[i] = num(x, k);
    }
    Some(v)
}

impl Problem {
    /// Reads graphene's native DAG format and a cluster file (the subset the tests write:
    /// task counts or lists, stage-level defaults, bare or `{stage, kind}` parents).
    pub fn from_json(dag: &Value, cluster: &Value) -> Problem {
        let resources: Vec<String> = match dag.get("resources") {
            Some(r) => r.as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect(),
            None => ["cpu", "mem", "disk", "net"].iter().map(|s| s.to_string()).collect(),
        };
        let stages = dag["stages"].as_array().expect("stages");
        // Pass 1: tasks of every stage.
        let mut first: HashMap<String, (usize, usize)> = HashMap::new();
        let mut p = Problem { names: vec![], durations: vec![], demands: vec![], parents: vec![], caps: vec![] };
        for s in stages {
            let id = s["id"].as_str().unwrap().to_string();
            let stage_dur = s.get("duration").map(|d| num(d, "duration"));
            let stage_dem = demand_of(s.get("demands"), &resources);
            let tasks: Vec<(f64, Vec<f64>)> = match &s["tasks"] {
                Value::Number(n) => {
                    let n = n.as_u64().unwrap() as usize;
                    vec![(stage_dur.unwrap(), stage_dem.clone().unwrap_or(vec![0.0; resources.len()])); n]
                }
                Value::Array(list) => list
                    .iter()
                    .map(|t| {
                        let d = t.get("duration").map(|d| num(d, "duration")).or(stage_dur).unwrap();
                        let dem = demand_of(t.get("demands"), &resources)
                            .or_else(|| stage_dem.clone())
                            .unwrap_or(vec![0.0; resources.len()]);
                        (d, dem)
                    })
                    .collect(),
                other => panic!("tasks: {other}"),
            };
            first.insert(id.clone(), (p.durations.len(), tasks.len()));
            for (i, (d, dem)) in tasks.into_iter().enumerate() {
                p.names.push(format!("{id}[{i}]"));
                p.durations.push(d);
                p.demands.push(dem);
                p.parents.push(vec![]);
            }
        }
        // Pass 2: expand stage edges to task edges.
        for s in stages {
            let (c0, cn) = first[s["id"].as_str().unwrap()];
            for e in s.get("parents").and_then(Value::as_array).into_iter().flatten() {
                let (name, one_to_one) = match e {
                    Value::String(n) => (n.as_str(), false),
                    Value::Object(o) => {
                        (o["stage"].as_str().unwrap(), o.get("kind").and_then(Value::as_str) == Some("one-to-one"))
                    }
                    other => panic!("parent: {other}"),
                };
                let (p0, pn) = first[name];
                for i in 0..cn {
                    if one_to_one {
                        assert_eq!(pn, cn, "one-to-one needs equal counts");
                        p.parents[c0 + i].push(p0 + i);
                    } else {
                        p.parents[c0 + i].extend(p0..p0 + pn);
                    }
                }
            }
        }
        for g in cluster["machines"].as_array().expect("machines") {
            let count = g.get("count").map_or(1, |c| c.as_u64().unwrap() as usize);
            let cap: Vec<f64> = resources.iter().map(|r| g["capacity"].get(r).map_or(0.0, |x| num(x, r))).collect();
            p.caps.extend(std::iter::repeat_n(cap, count));
        }
        p
    }

    fn fits_alone(&self, t: usize, m: usize) -> bool {
        self.demands[t].iter().zip(&self.caps[m]).all(|(d, c)| *d <= c + EPS)
    }

    /// Longest chain of durations, from the oracle's own parent lists.
    pub fn critical_path(&self) -> f64 {
        let n = self.durations.len();
        let mut finish: Vec<Option<f64>> = vec![None; n];
        // Parents may come in any index order; iterate until every finish is known.
        while finish.iter().any(Option::is_none) {
            for t in 0..n {
                if finish[t].is_none() && self.parents[t].iter().all(|&q| finish[q].is_some()) {
                    let ready = self.parents[t].iter().map(|&q| finish[q].unwrap()).fold(0.0, f64::max);
                    finish[t] = Some(ready + self.durations[t]);
                }
            }
        }
        finish.into_iter().map(Option::unwrap).fold(0.0, f64::max)
    }
}

struct Search<'a> {
    p: &'a Problem,
    machine: Vec<usize>,
    start: Vec<f64>,
    end: Vec<f64>,
    placed: Vec<bool>,
    best: f64,
    best_placements: Vec<(usize, f64, f64)>,
}

impl Search<'_> {
    /// True when task `t` fits on machine `m` over [s, s + duration) next to every placed task.
    /// Usage on a machine only rises at starts, so it suffices to check at `s` and at every
    /// placed start inside the interval.
    fn fits_at(&self, t: usize, m: usize, s: f64) -> bool {
        let e = s + self.p.durations[t];
        let on_m = |u: usize| self.placed[u] && self.machine[u] == m && self.end[u] > self.start[u];
        let n = self.p.durations.len();
        let mut points = vec![s];
        points.extend((0..n).filter(|&u| on_m(u) && self.start[u] > s && self.start[u] < e).map(|u| self.start[u]));
        for &x in &points {
            for r in 0..self.p.caps[m].len() {
                let used: f64 = (0..n)
                    .filter(|&u| on_m(u) && self.start[u] <= x && x < self.end[u])
                    .map(|u| self.p.demands[u][r])
                    .sum();
                if used + self.p.demands[t][r] > self.p.caps[m][r] + EPS {
                    return false;
                }
            }
        }
        true
    }

    /// Earliest feasible start of `t` on `m` at or after `release`: it is `release` or the end
    /// of a task already on `m` (usage only falls at ends).
    fn earliest(&self, t: usize, m: usize, release: f64) -> f64 {
        if self.p.durations[t] == 0.0 {
            return release;
        }
        let n = self.p.durations.len();
        let mut cands = vec![release];
        cands.extend(
            (0..n).filter(|&u| self.placed[u] && self.machine[u] == m && self.end[u] > release).map(|u| self.end[u]),
        );
        cands.sort_by(f64::total_cmp);
        cands
            .into_iter()
            .find(|&s| self.fits_at(t, m, s))
            .expect("after every placed task ends the machine is empty, and the task fits it alone")
    }

    fn dfs(&mut self, count: usize, latest: f64) {
        if latest >= self.best {
            return;
        }
        let n = self.p.durations.len();
        if count == n {
            self.best = latest;
            self.best_placements = (0..n).map(|t| (self.machine[t], self.start[t], self.end[t])).collect();
            return;
        }
        for t in 0..n {
            if self.placed[t] || self.p.parents[t].iter().any(|&q| !self.placed[q]) {
                continue;
            }
            let release = self.p.parents[t].iter().map(|&q| self.end[q]).fold(0.0, f64::max);
            for m in 0..self.p.caps.len() {
                if !self.p.fits_alone(t, m) {
                    continue;
                }
                let s = self.earliest(t, m, release);
                self.machine[t] = m;
                self.start[t] = s;
                self.end[t] = s + self.p.durations[t];
                self.placed[t] = true;
                self.dfs(count + 1, latest.max(self.end[t]));
                self.placed[t] = false;
            }
        }
    }
}

/// The optimal makespan and one optimal schedule. Exponential: meant for <= 6 tasks.
pub fn solve(p: &Problem) -> Solution {
    let n = p.durations.len();
    assert!(n <= 8, "the oracle is exhaustive; {n} tasks is too many");
    for t in 0..n {
        assert!((0..p.caps.len()).any(|m| p.fits_alone(t, m)), "task {} fits no machine", p.names[t]);
    }
    let mut s = Search {
        p,
        machine: vec![0; n],
        start: vec![0.0; n],
        end: vec![0.0; n],
        placed: vec![false; n],
        best: f64::INFINITY,
        best_placements: vec![],
    };
    s.dfs(0, 0.0);
    Solution { makespan: s.best, placements: s.best_placements }
}

/// The oracle's schedule in the validator's terms.
pub fn entries(p: &Problem, sol: &Solution) -> Vec<Entry> {
    sol.placements
        .iter()
        .enumerate()
        .map(|(t, &(m, s, e))| Entry { id: p.names[t].clone(), machine: m as i64, start: s, end: e, priority: None })
        .collect()
}

fn problem(dag: &str, cluster: &str) -> Problem {
    Problem::from_json(&serde_json::from_str(dag).unwrap(), &serde_json::from_str(cluster).unwrap())
}

const ONE_CPU4: &str = r#"{"machines": [{"capacity": {"cpu": 4}}], "overbook": []}"#;

#[test]
fn oracle_serialises_tasks_that_each_need_the_whole_machine() {
    let p = problem(
        r#"{"resources": ["cpu"], "stages": [{"id": "a", "tasks": [{"duration": 3}, {"duration": 2}, {"duration": 1.5}],
            "demands": {"cpu": 4}}]}"#,
        ONE_CPU4,
    );
    assert_eq!(solve(&p).makespan, 6.5);
}

#[test]
fn oracle_packs_tasks_side_by_side_when_they_fit() {
    // Two 2-cpu tasks share the machine, the 3-cpu task cannot share it with either: 3 + 5.
    let p = problem(
        r#"{"resources": ["cpu"], "stages": [
            {"id": "a", "tasks": 2, "duration": 3, "demands": {"cpu": 2}},
            {"id": "b", "tasks": 1, "duration": 5, "demands": {"cpu": 3}}]}"#,
        ONE_CPU4,
    );
    assert_eq!(solve(&p).makespan, 8.0);
}

#[test]
fn oracle_uses_both_machines_and_respects_which_tasks_fit_where() {
    // The 4-cpu task w (2 long) fits only machine 0 and fills it. Below makespan 5, machine 0
    // has under 3 free time units, too few for a 3-long task, so all three would run one after
    // another on machine 1 (9). At 5: w then two tasks side by side on machine 0, one on
    // machine 1.
    let dag = r#"{"resources": ["cpu"], "stages": [
        {"id": "w", "tasks": 1, "duration": 2, "demands": {"cpu": 4}},
        {"id": "s", "tasks": 3, "duration": 3, "demands": {"cpu": 2}}]}"#;
    let cluster = r#"{"machines": [{"capacity": {"cpu": 4}}, {"capacity": {"cpu": 2}}], "overbook": []}"#;
    assert_eq!(solve(&problem(dag, cluster)).makespan, 5.0);
}

#[test]
fn oracle_follows_one_to_one_and_all_to_all_edges_and_zero_durations() {
    // a[i] -> b[i] one-to-one, then a zero-length barrier z, then c: critical path 2 + 5 + 0 + 1;
    // the 1-cpu tasks never conflict on 4 cpus, so the optimum is the critical path.
    let dag = r#"{"resources": ["cpu"], "stages": [
        {"id": "a", "tasks": [{"duration": 2}, {"duration": 4}], "demands": {"cpu": 1}},
        {"id": "b", "tasks": [{"duration": 5}, {"duration": 1}], "demands": {"cpu": 1}, "parents": [{"stage": "a", "kind": "one-to-one"}]},
        {"id": "z", "tasks": 1, "duration": 0, "demands": {"cpu": 4}, "parents": ["b"]},
        {"id": "c", "tasks": 1, "duration": 1, "demands": {"cpu": 1}, "parents": ["z"]}]}"#;
    let p = problem(dag, ONE_CPU4);
    assert_eq!(p.critical_path(), 8.0);
    assert_eq!(solve(&p).makespan, 8.0);
}

#[test]
fn oracle_finds_the_order_that_hides_long_tasks_behind_short_wide_ones() {
    // Two short full-width parents, each with a long half-width child: run both parents first,
    // then both children side by side: 1 + 1 + 10 = 12 (any other order serialises a child).
    let dag = r#"{"resources": ["cpu"], "stages": [
        {"id": "s1", "tasks": 1, "duration": 1, "demands": {"cpu": 4}},
        {"id": "s2", "tasks": 1, "duration": 1, "demands": {"cpu": 4}},
        {"id": "l1", "tasks": 1, "duration": 10, "demands": {"cpu": 2}, "parents": ["s1"]},
        {"id": "l2", "tasks": 1, "duration": 8, "demands": {"cpu": 2}, "parents": ["s2"]}]}"#;
    assert_eq!(solve(&problem(dag, ONE_CPU4)).makespan, 12.0);
}

proptest! {
    #![proptest_config(config(128))]

    /// The oracle's own schedule is valid by graphene's independent validator, ends where the
    /// oracle says, and lies between the oracle's critical path and a fully serial schedule.
    #[test]
    fn oracle_schedules_are_valid_and_plausible(case in arb_case(Sizes::ORACLE)) {
        let p = Problem::from_json(&case.dag_value(), &case.cluster_value());
        prop_assert!(case.task_count() <= 6 && p.caps.len() <= 2, "the oracle's sizes");
        let sol = solve(&p);
        let dag = case.dag();
        prop_assert_eq!(dag.len(), case.task_count());
        prop_assert_eq!(p.durations.len(), case.task_count());
        let cluster = case.cluster(&dag);
        let violations = validate(&dag, &cluster, &entries(&p, &sol));
        prop_assert!(violations.is_empty(), "oracle schedule invalid: {violations:?}");
        let end = sol.placements.iter().map(|x| x.2).fold(0.0, f64::max);
        prop_assert_eq!(end, sol.makespan);
        prop_assert!(sol.makespan >= p.critical_path());
        prop_assert!(sol.makespan <= p.durations.iter().sum::<f64>());
    }

    /// Every lower bound is at most the true optimum, and no scheduler beats the optimum.
    #[test]
    fn bounds_below_and_schedulers_above_the_optimum(case in arb_case(Sizes::ORACLE)) {
        let p = Problem::from_json(&case.dag_value(), &case.cluster_value());
        let opt = solve(&p).makespan;
        let dag = case.dag();
        let cluster = case.cluster(&dag);
        let lb = lowerbound::compute(&dag, &cluster);
        for (name, v) in [("critical_path", lb.critical_path), ("total_work", lb.total_work), ("stage_aware", lb.stage_aware)] {
            prop_assert!(geq(opt, v), "{name} bound {v} exceeds the optimum {opt}");
        }
        // The improver's budget: 50,000 placements, at least 8,000 list decodes of these at most
        // 6 tasks (720 orders); the default (500,000) would only repeat them.
        let cfg = graphene::OfflineConfig { improve_budget: 50_000, ..graphene::OfflineConfig::default() };
        for s in Scheduler::all() {
            let ms = makespan_with(s, &dag, &cluster, &cfg);
            prop_assert!(geq(ms, opt), "{} makespan {ms} beats the optimum {opt}", s.name());
        }
    }
}
