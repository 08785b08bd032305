//! Graphene's offline schedule constructor (BuildSchedule).
//!
//! Finds troublesome tasks (long, or in groups that pack badly), places them first in an empty
//! resource-time space, places the parent / child / sibling subsets around them in the only
//! orders that cannot dead-end, and keeps the most compact schedule over all candidate sets. The
//! start times of that schedule give the precedence order (priScore) the online part consumes.
//!
//! Enhancements over the paper's pseudocode: the DAG is split at cuts and each part searched on
//! its own; dependencies are handled per stage; candidates are searched in parallel; candidate
//! sets that are too large are pruned; parts without internal dependencies bypass the search.

mod candidates;
#[cfg(test)]
mod constructor_tests;
mod cuts;
mod exact;
mod improve;
mod network;
mod orders;
mod plan;
mod scores;
mod search;
mod subsets;

use serde::Serialize;

pub use cuts::parts as cut_parts;
pub use exact::{solve as solve_exact, ExactReport, ExactStatus, DEFAULT_EXACT_NODES, EXACT_MAX_TASKS};
pub use improve::{improve, ImproveReport};
pub use network::build_on_network;
pub use orders::Order;
pub use plan::{Direction, Keys, PlacementKey, Plan};
pub use scores::exec_time;
pub use search::PartReport;
pub use subsets::{reach, split, Part, Split};

use crate::model::{Cluster, Dag, Placement, Schedule, TaskId};

#[derive(Clone, Debug)]
pub struct OfflineConfig {
    /// Step of the LongScore and FragScore threshold grids.
    pub grid_step: f64,
    /// Candidate troublesome sets with more than this fraction of the tasks are pruned.
    pub max_trouble: f64,
    /// Split the DAG at cuts and search each part on its own.
    pub cuts: bool,
    /// Placement keys tried for every candidate (the most compact result wins).
    pub keys: Vec<PlacementKey>,
    /// Add the pairing family of candidate troublesome sets (tasks that cannot share a machine
    /// in some resource) beside the LongScore / FragScore thresholds. Off: the paper's sets.
    pub pairing: bool,
    /// Re-compact every candidate plan forward after its backward passes. Off: the paper's
    /// placement.
    pub compact: bool,
    /// Tasks the constructor may place over all its candidate plans of one part: candidates
    /// (each under each placement key, the empty troublesome set first) are placed while their
    /// count times the part's tasks stays within this, and never fewer than the empty set under
    /// every key. `u64::MAX`: every candidate, the paper's exhaustive search.
    pub search_work: u64,
    /// Place a large troublesome set by the construction itself, one level deep (the paper's
    /// future work; see `orders::inner_bases`). Off: T by the placement key alone.
    pub recurse: bool,
    /// When the search must stop (the service's --timeout, build-schedule --time-limit).
    pub deadline: crate::Deadline,
    /// Task placements the improver may spend after the constructor (0: none).
    pub improve_budget: u64,
    /// Seed of the improver's random moves.
    pub improve_seed: u64,
    /// `--exact`: after the improver, prove the schedule optimal (or improve it) by branch and
    /// bound within this many nodes and the deadline. None: off.
    pub exact: Option<u64>,
}

impl Default for OfflineConfig {
    fn default() -> Self {
        OfflineConfig {
            grid_step: 0.1,
            max_trouble: 0.75,
            cuts: true,
            keys: DEFAULT_KEYS.to_vec(),
            pairing: DEFAULT_PAIRING,
            compact: DEFAULT_COMPACT,
            search_work: DEFAULT_SEARCH_WORK,
            recurse: DEFAULT_RECURSE,
            deadline: crate::Deadline::none(),
            improve_budget: DEFAULT_IMPROVE_BUDGET,
            improve_seed: 0,
            exact: None,
        }
    }
}

/// The placement keys tried by default (`--placement`).
pub const DEFAULT_KEYS: &[PlacementKey] = &[PlacementKey::Longest, PlacementKey::PathLength];
/// `--pairing` by default.
pub const DEFAULT_PAIRING: bool = false;
/// `--compact` by default.
pub const DEFAULT_COMPACT: bool = false;

/// Recursion inside T is off by default: measured in BENCHMARKS.md ("Recursion on the
/// troublesome set").
pub const DEFAULT_RECURSE: bool = false;

/// The constructor's default work budget ([`OfflineConfig::search_work`]): 200,000 task
/// placements. Why: every candidate plan places the whole part (twice, forward and backward,
/// for the part outside T), so the exhaustive search costs candidates x keys x tasks, about 44
/// placements of 100,000 tasks on a random layered DAG (50 s on two cores). Up to 10,000 tasks
/// the search stays exhaustive for the DAGs measured in BENCHMARKS.md (they have at most 20
/// candidate-key pairs); above, it narrows, down to the empty troublesome set under every key
/// from 100,000 tasks on. `--search-work all` restores the exhaustive search.
pub const DEFAULT_SEARCH_WORK: u64 = 200_000;

/// The improver's default budget: `auto`, which [`improve::auto_budget`] sizes to the DAG.
pub const DEFAULT_IMPROVE_BUDGET: u64 = AUTO_IMPROVE;

pub use improve::{auto_budget, AUTO_IMPROVE};

#[derive(Clone, Debug, Serialize)]
pub struct SearchReport {
    pub parts: Vec<PartReport>,
    pub candidates_explored: usize,
    /// True when some part's search was cut short by the deadline (the schedule is the best
    /// found by then, always valid). Absent from the JSON otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stopped_early: bool,
    /// The improver's work and result, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub improve: Option<ImproveReport>,
    /// What the exact search proved, when it ran (`--exact`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exact: Option<ExactReport>,
}

pub struct OfflineResult {
    pub schedule: Schedule,
    pub search: SearchReport,
}

/// Builds Graphene's offline schedule for `dag` on `cluster`. Deterministic: parallel search
/// results are reduced in candidate order.
pub fn build_schedule(dag: &Dag, cluster: &Cluster, cfg: &OfflineConfig) -> OfflineResult {
    let ranges = if cfg.cuts { cut_parts(dag) } else { vec![0..dag.stages.len()] };
    let mut placements: Vec<Placement> = Vec::with_capacity(dag.len());
    let mut parts: Vec<PartReport> = Vec::new();
    let mut offset = 0.0;
    for range in ranges {
        let first = dag.stages[range.start].first;
        let mut report = if let Some((p, report)) = single_task(dag, &range, &cluster.machines) {
            placements.push(Placement { task: first, machine: p.machine, start: offset, end: p.end + offset });
            offset += p.end - p.start;
            report
        } else {
            let whole = range.start == 0 && range.end == dag.stages.len();
            let sub_owned;
            let sub = if whole {
                dag
            } else {
                sub_owned = dag.sub(range.clone());
                &sub_owned
            };
            let (schedule, report) = search::search_part(sub, &cluster.machines, cfg);
            let span = schedule.makespan();
            placements.extend(schedule.placements.iter().map(|p| Placement {
                task: p.task + first,
                machine: p.machine,
                start: p.start + offset,
                end: p.end + offset,
            }));
            offset += span;
            report
        };
        report.first_task = first;
        report.troublesome.iter_mut().for_each(|t| *t += first);
        match parts.last_mut() {
            Some(last) if last.folds(&report) => last.fold(&report),
            _ => parts.push(report),
        }
    }
    let candidates_explored = parts.iter().map(|p| p.candidates_explored).sum();
    let stopped_early = parts.iter().any(|p| p.stopped_early);
    let mut schedule = Schedule { placements };
    let mut improved = None;
    if cfg.improve_budget > 0 && !cfg.deadline.expired() {
        let (s, r) = improve::improve(dag, cluster, schedule, cfg.improve_budget, cfg.improve_seed, &cfg.deadline);
        schedule = s;
        improved = Some(r);
    }
    let mut exact = None;
    if let Some(budget) = cfg.exact {
        let (s, r) = exact::solve(dag, cluster, schedule, budget, &cfg.deadline);
        schedule = s;
        exact = Some(r);
    }
    OfflineResult {
        schedule,
        search: SearchReport { parts, candidates_explored, stopped_early, improve: improved, exact },
    }
}

/// A part of one stage of one task, placed by [`search::single`] without building its sub-DAG: a
/// chain of a million stages is a million such parts. None for any other part, or a task that
/// fits no machine (the search reports that).
fn single_task(
    dag: &Dag,
    range: &std::ops::Range<usize>,
    caps: &[crate::model::ResVec],
) -> Option<(Placement, PartReport)> {
    let stage = &dag.stages[range.start];
    if range.len() != 1 || stage.len != 1 {
        return None;
    }
    search::single(&dag.tasks[stage.first as usize], caps)
}

/// priScore of every task: 1 for the task that starts first in `schedule`, falling linearly to
/// 0 for the last (ties in start time broken by end time, then task id).
pub fn priorities(schedule: &Schedule) -> (Vec<TaskId>, Vec<f64>) {
    let order = schedule.order_by_start();
    let n = order.len();
    let mut pri = vec![0.0; n];
    for (rank, &t) in order.iter().enumerate() {
        pri[t as usize] = if n > 1 { 1.0 - rank as f64 / (n - 1) as f64 } else { 1.0 };
    }
    (order, pri)
}

#[cfg(test)]
mod deadline_tests {
    use super::*;
    use crate::model::ClusterSpec;

    /// A cancelled deadline stops the search at once: only the plain greedy candidate is
    /// placed in each part, the schedule is complete and valid, and the report says so.
    #[test]
    fn a_cancelled_search_returns_the_greedy_floor() {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../traces/example.json")).unwrap();
        let dag = crate::formats::native::parse(&text, "example").unwrap();
        let cluster = ClusterSpec::uniform(10, ClusterSpec::default_capacity()).resolve(&dag.resources).unwrap();
        let mut deadline = crate::Deadline::none();
        deadline.cancel_flag().store(true, std::sync::atomic::Ordering::Relaxed);
        let cut = build_schedule(&dag, &cluster, &OfflineConfig { deadline, ..OfflineConfig::default() });
        assert!(cut.search.stopped_early);
        assert!(cut.search.parts.iter().filter(|p| !p.bypassed).all(|p| p.candidates_explored == 1));
        assert!(crate::validate::validate_schedule(&dag, &cluster, &cut.schedule).is_empty());
        let full = build_schedule(&dag, &cluster, &OfflineConfig::default());
        assert!(!full.search.stopped_early);
        assert!(full.search.candidates_explored > cut.search.candidates_explored);
        assert!(full.schedule.makespan() <= cut.schedule.makespan() + 1e-9);
    }
}
