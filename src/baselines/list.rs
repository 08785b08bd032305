//! Serial list scheduling with a priority per task.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::model::{Cluster, Dag, EdgeKind, Schedule, TaskId};
use crate::offline::{Direction, Plan};

/// Places every task forward, highest `key` first among the ready ones.
pub fn by_key(dag: &Dag, cluster: &Cluster, key: &[f64]) -> Schedule {
    let mut plan = Plan::new(dag, &cluster.machines);
    let all: Vec<TaskId> = (0..dag.len() as TaskId).collect();
    plan.place_by(&all, &vec![true; dag.len()], Direction::Forward, |t| key[t as usize]);
    plan.into_schedule()
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

pub fn bfs(dag: &Dag, cluster: &Cluster) -> Schedule {
    let key: Vec<f64> = bfs_levels(dag).iter().map(|&l| -(l as f64)).collect();
    by_key(dag, cluster, &key)
}

pub fn cp(dag: &Dag, cluster: &Cluster) -> Schedule {
    by_key(dag, cluster, &bottom_levels(dag))
}

pub fn random(dag: &Dag, cluster: &Cluster, seed: u64) -> Schedule {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let key: Vec<f64> = (0..dag.len()).map(|_| rng.gen::<f64>()).collect();
    by_key(dag, cluster, &key)
}
