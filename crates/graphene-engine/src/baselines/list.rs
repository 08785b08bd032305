//! Serial list scheduling with a priority per task.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub use crate::model::paths::{bfs_levels, bottom_levels};
use crate::model::{Cluster, Dag, Schedule, TaskId};
use crate::offline::{Direction, Plan};

/// Places every task forward, highest `key` first among the ready ones.
pub fn by_key(dag: &Dag, cluster: &Cluster, key: &[f64]) -> Schedule {
    let mut plan = Plan::new(dag, &cluster.machines);
    let all: Vec<TaskId> = (0..dag.len() as TaskId).collect();
    plan.place_by(&all, &vec![true; dag.len()], Direction::Forward, |t| key[t as usize]);
    plan.into_schedule()
}

pub fn bfs(dag: &Dag, cluster: &Cluster) -> Schedule {
    let key: Vec<f64> = bfs_levels(dag).iter().map(|&l| -(l as f64)).collect();
    by_key(dag, cluster, &key)
}

pub fn cp(dag: &Dag, cluster: &Cluster) -> Schedule {
    by_key(dag, cluster, &bottom_levels(dag))
}

/// The DAG's own order: the lower task id first (stages in file order, then task index).
pub fn fifo(dag: &Dag, cluster: &Cluster) -> Schedule {
    let key: Vec<f64> = (0..dag.len()).map(|t| -(t as f64)).collect();
    by_key(dag, cluster, &key)
}

pub fn random(dag: &Dag, cluster: &Cluster, seed: u64) -> Schedule {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let key: Vec<f64> = (0..dag.len()).map(|_| rng.gen::<f64>()).collect();
    by_key(dag, cluster, &key)
}
