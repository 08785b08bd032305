//! Path lengths through a DAG, computed per stage in one pass each.

use super::dag::{Dag, EdgeKind};

/// Each stage's distance from the roots in stage edges (the longest chain of parent stages):
/// Tez's vertex order (`DAGSchedulerNaturalOrder`). Stages are stored parents first.
pub fn stage_depths(dag: &Dag) -> Vec<u32> {
    let mut depth = vec![0u32; dag.stages.len()];
    for (s, stage) in dag.stages.iter().enumerate() {
        depth[s] = stage.parents.iter().map(|e| depth[e.stage as usize] + 1).max().unwrap_or(0);
    }
    depth
}

/// Depth of each task in edges from the sources (its breadth-first level).
pub fn bfs_levels(dag: &Dag) -> Vec<u32> {
    let mut level = vec![0u32; dag.len()];
    let mut stage_level = vec![0u32; dag.stages.len()];
    for (s, stage) in dag.stages.iter().enumerate() {
        let mut deepest = 0;
        for t in stage.tasks() {
            let task = &dag.tasks[t as usize];
            let l = stage
                .parents
                .iter()
                .map(|e| match e.kind {
                    EdgeKind::AllToAll => stage_level[e.stage as usize] + 1,
                    EdgeKind::OneToOne => level[(dag.stages[e.stage as usize].first + task.index) as usize] + 1,
                })
                .max()
                .unwrap_or(0);
            level[t as usize] = l;
            deepest = deepest.max(l);
        }
        stage_level[s] = deepest;
    }
    level
}

/// Length of the longest chain of durations from each task (included) to the end of the DAG.
pub fn bottom_levels(dag: &Dag) -> Vec<f64> {
    let mut bl = vec![0.0f64; dag.len()];
    let mut stage_bl = vec![0.0f64; dag.stages.len()];
    for (s, stage) in dag.stages.iter().enumerate().rev() {
        let mut best: f64 = 0.0;
        for t in stage.tasks() {
            let task = &dag.tasks[t as usize];
            let after = stage
                .children
                .iter()
                .map(|e| match e.kind {
                    EdgeKind::AllToAll => stage_bl[e.stage as usize],
                    EdgeKind::OneToOne => bl[(dag.stages[e.stage as usize].first + task.index) as usize],
                })
                .fold(0.0, f64::max);
            bl[t as usize] = task.duration + after;
            best = best.max(bl[t as usize]);
        }
        stage_bl[s] = best;
    }
    bl
}

/// Length of the longest chain of durations from the start of the DAG to the end of each task
/// (the task included): the mirror image of [`bottom_levels`].
pub fn top_levels(dag: &Dag) -> Vec<f64> {
    let mut tl = vec![0.0f64; dag.len()];
    let mut stage_tl = vec![0.0f64; dag.stages.len()];
    for (s, stage) in dag.stages.iter().enumerate() {
        let mut best: f64 = 0.0;
        for t in stage.tasks() {
            let task = &dag.tasks[t as usize];
            let before = stage
                .parents
                .iter()
                .map(|e| match e.kind {
                    EdgeKind::AllToAll => stage_tl[e.stage as usize],
                    EdgeKind::OneToOne => tl[(dag.stages[e.stage as usize].first + task.index) as usize],
                })
                .fold(0.0, f64::max);
            tl[t as usize] = before + task.duration;
            best = best.max(tl[t as usize]);
        }
        stage_tl[s] = best;
    }
    tl
}
