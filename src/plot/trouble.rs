//! Which tasks of a schedule report were troublesome.
//!
//! A schedule report keeps, per part between cuts, the LongScore / FragScore thresholds of the
//! chosen troublesome set and its size, but not its members. Given the DAG and the cluster the
//! set follows from the thresholds (the seed tasks and everything on a path between two of
//! them), so the chart recomputes it and refuses to mark anything when the recomputed size
//! differs from the reported one: a DAG or cluster other than the one the schedule was built
//! for must not produce plausible-looking marks.

use crate::model::{Cluster, Dag, ResVec, TaskId};
use crate::offline::{exec_time, split, twork};

/// The part of a schedule report the troublesome set is recomputed from.
#[derive(Clone, Debug, serde::Deserialize)]
pub struct PartIn {
    pub first_task: u32,
    pub tasks: usize,
    #[serde(default)]
    pub long_threshold: Option<f64>,
    #[serde(default)]
    pub frag_threshold: Option<f64>,
    /// Sizes of T, S, P, C.
    #[serde(default)]
    pub subset_sizes: [usize; 4],
}

/// Per task of `dag`, whether it was troublesome. Err names the first part whose recomputed
/// set does not have the reported size.
pub fn troublesome(dag: &Dag, cluster: &Cluster, parts: &[PartIn]) -> Result<Vec<bool>, String> {
    let mut marks = vec![false; dag.len()];
    for (i, part) in parts.iter().enumerate() {
        if part.subset_sizes[0] == 0 {
            continue;
        }
        let lo = part.first_task;
        let hi = lo as usize + part.tasks;
        let stages: Vec<usize> = (0..dag.stages.len())
            .filter(|&s| dag.stages[s].first >= lo && (dag.stages[s].first as usize) < hi)
            .collect();
        let (Some(&a), Some(&b)) = (stages.first(), stages.last()) else {
            return Err(format!("part {} (tasks {lo}..{hi}) holds no stage of the DAG", i + 1));
        };
        let sub = dag.sub(a..b + 1);
        if sub.len() != part.tasks {
            return Err(format!("part {} has {} tasks in the report but {} in the DAG", i + 1, part.tasks, sub.len()));
        }
        let seed = seed_tasks(&sub, &cluster.machines, part.long_threshold, part.frag_threshold);
        let t = split(&sub, &seed).t;
        if t.len() != part.subset_sizes[0] {
            return Err(format!(
                "part {}: the thresholds select {} troublesome tasks on this DAG and cluster, the report says {}",
                i + 1,
                t.len(),
                part.subset_sizes[0]
            ));
        }
        for x in t {
            marks[(x + lo) as usize] = true;
        }
    }
    Ok(marks)
}

/// Tasks with LongScore >= `long` or FragScore <= `frag` (the offline search's definitions).
fn seed_tasks(dag: &Dag, caps: &[ResVec], long: Option<f64>, frag: Option<f64>) -> Vec<bool> {
    let max_dur = dag.tasks.iter().map(|t| t.duration).fold(0.0, f64::max);
    let total = caps.iter().fold(ResVec::ZERO, |a, c| a.add(c));
    let mut members: Vec<Vec<TaskId>> = vec![Vec::new(); dag.groups.len()];
    for (i, t) in dag.tasks.iter().enumerate() {
        members[dag.stages[t.stage as usize].group as usize].push(i as TaskId);
    }
    let group_frag: Vec<f64> = members
        .iter()
        .map(|ts| {
            let w = twork(dag, ts.iter().copied(), &total);
            let e = if w > 0.0 { exec_time(dag, ts, caps) } else { 0.0 };
            if w > 0.0 && e > 0.0 {
                (w / e).min(1.0)
            } else {
                1.0
            }
        })
        .collect();
    dag.tasks
        .iter()
        .map(|t| {
            let ls = if max_dur > 0.0 { t.duration / max_dur } else { 0.0 };
            let fs = group_frag[dag.stages[t.stage as usize].group as usize];
            long.is_some_and(|l| ls >= l) || frag.is_some_and(|f| fs <= f)
        })
        .collect()
}
