//! The search over candidate troublesome sets for one cut-free part of a DAG.

use rayon::prelude::*;
use serde::Serialize;

use super::candidates::{candidates, CandidateStats};
use super::orders::{place_split, Order};
use super::plan::{Direction, Keys, PlacementKey, Plan};
use super::scores;
use super::OfflineConfig;
use crate::model::{Dag, Placement, ResVec, Schedule, Task, TaskId};

/// What the search chose for one part.
#[derive(Clone, Debug, Serialize)]
pub struct PartReport {
    /// Task range of the part in the whole DAG.
    pub first_task: TaskId,
    pub tasks: usize,
    /// Parts this entry stands for: consecutive parts of one task each (a chain's stages
    /// between cuts) are reported as one entry. Absent when 1.
    #[serde(skip_serializing_if = "is_one")]
    pub runs: usize,
    pub makespan: f64,
    /// True when the part skipped the search (no dependencies inside it).
    pub bypassed: bool,
    pub candidates_explored: usize,
    #[serde(flatten)]
    pub candidate_stats: CandidateStats,
    pub long_threshold: Option<f64>,
    pub frag_threshold: Option<f64>,
    /// When the chosen set came from the pairing family (`--pairing on`): the resource in which
    /// its seed tasks cannot share a machine ("any" for the union over resources).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pairing: Option<String>,
    pub order: Option<Order>,
    /// The placement key of the chosen schedule.
    pub placement_key: Option<PlacementKey>,
    pub trouble_direction: Option<&'static str>,
    /// Sizes of T, S, P, C in the chosen split.
    pub subset_sizes: [usize; 4],
    /// True when the deadline (`--time-limit`, the service's `--timeout`) cut the search short:
    /// the part's schedule is the best of the candidates placed by then.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stopped_early: bool,
    /// Candidate plans (a candidate under one placement key) left out by the work budget
    /// (`--search-work`); absent when none was.
    #[serde(skip_serializing_if = "is_zero")]
    pub skipped_by_budget: usize,
    /// True when the part is so large that placing the empty troublesome set under every key,
    /// S forward and backward, would alone exceed the work budget (`--search-work`): S was then
    /// placed forward only, which halves the floor's cost (parts of over 50,000 tasks with the
    /// default budget and keys). Absent otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub forward_only: bool,
    /// With `--recurse on`: the size of T's own troublesome set when placing T by the
    /// construction won; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inner_trouble: Option<usize>,
    /// Stages with at least one troublesome task, by name.
    pub trouble_stages: Vec<String>,
    /// The chosen troublesome set, by task id in the whole DAG. Kept out of the JSON part
    /// report because the schedule report flags these tasks one by one, where a chart or an
    /// engine reading a task finds it.
    #[serde(skip)]
    pub troublesome: Vec<TaskId>,
}

impl PartReport {
    /// The report of a part before its search: nothing chosen yet, every task in S.
    fn empty(tasks: usize) -> PartReport {
        PartReport {
            first_task: 0,
            tasks,
            runs: 1,
            makespan: 0.0,
            bypassed: false,
            candidates_explored: 0,
            candidate_stats: CandidateStats::default(),
            long_threshold: None,
            frag_threshold: None,
            pairing: None,
            order: None,
            placement_key: None,
            trouble_direction: None,
            subset_sizes: [0, tasks, 0, 0],
            stopped_early: false,
            skipped_by_budget: 0,
            forward_only: false,
            inner_trouble: None,
            trouble_stages: Vec::new(),
            troublesome: Vec::new(),
        }
    }

    /// Whether `next` (the part right after this one) folds into this report: both are runs of
    /// one-task parts. Why: a chain of a million stages has a million such parts, and a report
    /// each made most of its output (about 300 bytes of JSON a part).
    pub(super) fn folds(&self, next: &PartReport) -> bool {
        self.tasks == self.runs && next.tasks == 1 && next.runs == 1 && self.bypassed && next.bypassed
    }

    /// Appends `next` (see [`PartReport::folds`]): the parts run back to back.
    pub(super) fn fold(&mut self, next: &PartReport) {
        self.tasks += 1;
        self.runs += 1;
        self.makespan += next.makespan;
        self.candidates_explored += next.candidates_explored;
        self.subset_sizes[1] += 1;
    }
}

/// A part of one task: it starts at 0 on the first machine it fits, as the greedy would place
/// it, without a resource-time space of every machine (on 1,000 machines that was most of the
/// cost of a 100,000-stage chain). None when it fits no machine. A placement, not a schedule:
/// a chain of a million stages is a million such parts, and a vector each was an allocation each.
pub(super) fn single(task: &Task, caps: &[ResVec]) -> Option<(Placement, PartReport)> {
    let m = caps.iter().position(|c| task.demand.fits_in(c))?;
    let placement = Placement { task: 0, machine: m as u32, start: 0.0, end: task.duration };
    let report = PartReport {
        bypassed: true,
        candidates_explored: 1,
        makespan: placement.end - placement.start,
        ..PartReport::empty(1)
    };
    Some((placement, report))
}

pub fn search_part(dag: &Dag, caps: &[ResVec], cfg: &OfflineConfig) -> (Schedule, PartReport) {
    let mut report = PartReport::empty(dag.len());
    if let Some((placement, report)) = (dag.len() == 1).then(|| single(&dag.tasks[0], caps)).flatten() {
        return (Schedule { placements: vec![placement] }, report);
    }
    if !dag.has_edges() || dag.len() <= 1 {
        // Independent tasks: a troublesome set changes nothing but the packing order, which the
        // longest-first greedy already chooses.
        let mut plan = Plan::new(dag, caps);
        let all: Vec<TaskId> = (0..dag.len() as TaskId).collect();
        plan.place(&all, &vec![true; dag.len()], Direction::Forward, &Keys::new(dag, PlacementKey::Longest));
        report.bypassed = true;
        report.candidates_explored = 1;
        let schedule = plan.into_schedule();
        report.makespan = schedule.makespan();
        return (schedule, report);
    }
    let sc = scores::compute(dag, caps);
    let keys: Vec<Keys> = cfg.keys.iter().map(|&k| Keys::new(dag, k)).collect();
    // The work budget, counted in whole candidate plans so that the result depends on the input
    // and the budget only, never on the machine; candidates it could never place are not made.
    let allowed = (cfg.search_work / dag.len().max(1) as u64).max(keys.len() as u64);
    let most = usize::try_from(allowed.div_ceil(keys.len().max(1) as u64)).unwrap_or(usize::MAX);
    let (cands, stats, stopped) =
        candidates(dag, &sc, caps, cfg.grid_step, cfg.max_trouble, cfg.pairing, most, &cfg.deadline);
    report.candidate_stats = stats;
    let mut jobs: Vec<(usize, usize)> = (0..cands.len()).flat_map(|c| (0..keys.len()).map(move |k| (c, k))).collect();
    if (jobs.len() as u64) > allowed {
        report.skipped_by_budget = jobs.len() - allowed as usize;
        jobs.truncate(allowed as usize);
    }
    // The floor places S (all of the part) both ways under every key: 2 x keys x tasks.
    report.forward_only = (2 * keys.len() as u64).saturating_mul(dag.len() as u64) > cfg.search_work;
    let forward_only = report.forward_only;
    // Candidate 0 (the empty set: plain greedy) is always placed, so that a search stopped at
    // its deadline still returns a valid schedule; the others only while time is left.
    let results: Vec<_> = jobs
        .par_iter()
        .map(|&(c, k)| {
            (c == 0 || !cfg.deadline.expired())
                .then(|| place_split(dag, caps, &cands[c].split, &keys[k], cfg.compact, cfg.recurse, forward_only))
        })
        .collect();
    report.stopped_early = stopped || results.iter().any(Option::is_none);
    report.candidates_explored = {
        let mut placed: Vec<usize> = jobs.iter().zip(&results).filter(|(_, r)| r.is_some()).map(|(j, _)| j.0).collect();
        placed.dedup();
        placed.len()
    };
    // Most compact wins; ties go to the earlier job so that the result is deterministic.
    let (best_i, _) = results
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.as_ref().map(|r| (i, r)))
        .min_by(|a, b| a.1.plan.makespan().total_cmp(&b.1.plan.makespan()).then(a.0.cmp(&b.0)))
        .expect("the empty troublesome set is always a candidate");
    let best = results.into_iter().nth(best_i).flatten().expect("index of a placed job");
    let (ci, ki) = jobs[best_i];
    let c = &cands[ci];
    report.placement_key = Some(keys[ki].key);
    report.long_threshold = c.long;
    report.frag_threshold = c.frag;
    report.pairing = c.pairing.map(|r| dag.resources.get(r).cloned().unwrap_or_else(|| "any".into()));
    report.order = Some(best.order);
    report.inner_trouble = best.inner_trouble;
    report.trouble_direction = (!c.split.t.is_empty()).then(|| best.t_direction.as_str());
    report.subset_sizes = [c.split.t.len(), c.split.s.len(), c.split.p.len(), c.split.c.len()];
    let mut stages: Vec<u32> = c.split.t.iter().map(|&t| dag.tasks[t as usize].stage).collect();
    stages.dedup();
    report.trouble_stages = stages.iter().map(|&s| dag.stages[s as usize].name.clone()).collect();
    report.troublesome = c.split.t.clone();
    let schedule = best.plan.into_schedule();
    report.makespan = schedule.makespan();
    (schedule, report)
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

pub(super) fn is_zero(n: &usize) -> bool {
    *n == 0
}
