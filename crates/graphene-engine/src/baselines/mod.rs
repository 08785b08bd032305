//! The offline baselines the paper compares against, each a list scheduler over the same
//! resource-time space as Graphene.
//!
//! * `bfs`, `cp`, `random`: serial list scheduling. Repeatedly the ready task (all parents
//!   placed) with the best priority goes to the earliest slot after its parents on any machine
//!   (holes left earlier may be filled). Priorities: breadth-first position (depth from the
//!   sources, then id); critical-path length from the task to the end of the DAG; a seeded
//!   random number.
//! * `tetris`, `strippart`, `coffman-graham`: see their modules.
//! * `fifo` (named on request, not in `compare`'s default set): ready tasks in the DAG's own
//!   order, stage by stage in file order, then by task index. On a Spark event log, whose stages
//!   are read in stage-id order, this is the order Spark's FIFO scheduler offers a job's tasks
//!   (task sets by stage id, tasks by partition index).

mod coffman_graham;
mod list;
mod strippart;
pub(crate) mod tetris;

pub use list::{bfs_levels, bottom_levels};

use crate::model::{Cluster, Dag, Schedule};

crate::named_enum! {
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum Baseline {
        Bfs = "bfs",
        Cp = "cp",
        Tetris = "tetris",
        Random = "random",
        Strippart = "strippart",
        CoffmanGraham = "coffman-graham",
        Fifo = "fifo",
    }
}

impl Baseline {
    pub const ALL: [Baseline; 6] =
        [Baseline::Bfs, Baseline::Cp, Baseline::Tetris, Baseline::Random, Baseline::Strippart, Baseline::CoffmanGraham];
    /// Baselines that run only when named.
    pub const EXTRA: [Baseline; 1] = [Baseline::Fifo];

    pub fn name(&self) -> &'static str {
        match self {
            Baseline::Bfs => "bfs",
            Baseline::Cp => "cp",
            Baseline::Tetris => "tetris",
            Baseline::Random => "random",
            Baseline::Strippart => "strippart",
            Baseline::CoffmanGraham => "coffman-graham",
            Baseline::Fifo => "fifo",
        }
    }
}

/// Runs one baseline. `seed` only matters to `random`.
pub fn run(which: Baseline, dag: &Dag, cluster: &Cluster, seed: u64) -> Schedule {
    match which {
        Baseline::Bfs => list::bfs(dag, cluster),
        Baseline::Cp => list::cp(dag, cluster),
        Baseline::Random => list::random(dag, cluster, seed),
        Baseline::Tetris => tetris::schedule(dag, cluster),
        Baseline::Strippart => strippart::schedule(dag, cluster),
        Baseline::CoffmanGraham => coffman_graham::schedule(dag, cluster),
        Baseline::Fifo => list::fifo(dag, cluster),
    }
}
