//! LACHESIS's normalised metrics (eqs. 13-14): speedup against running everything in sequence
//! on the fastest machine, and SLR against the critical path at the fastest speed.

use serde::Serialize;

use super::instance::Instance;
use super::rank;
use crate::model::{Cluster, Dag, Network};

#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct Metrics {
    pub makespan: f64,
    /// Total work / fastest speed, divided by the makespan.
    pub speedup: f64,
    /// Makespan divided by the longest path at the fastest speed, transfers ignored.
    pub slr: f64,
}

/// The two denominators, which depend only on the DAG and the machines.
#[derive(Clone, Copy, Debug)]
pub struct Bases {
    pub sequential: f64,
    pub critical_path: f64,
}

impl Bases {
    pub fn of(dag: &Dag, cluster: &Cluster, net: &Network) -> Bases {
        Bases::of_instance(&Instance::new(dag, cluster, net))
    }

    /// The same from the stage DAG, without expanding edges to task pairs: the fastest-speed
    /// critical path is the speed-1 one scaled, since transfers do not count.
    pub fn of_dag(dag: &Dag, net: &Network) -> Bases {
        let top = net.max_speed();
        let work: f64 = dag.tasks.iter().map(|t| t.duration).sum();
        let cp = crate::model::paths::bottom_levels(dag).into_iter().fold(0.0, f64::max);
        Bases { sequential: work / top, critical_path: cp / top }
    }

    pub fn of_instance(inst: &Instance) -> Bases {
        let top = inst.speeds().iter().copied().fold(0.0, f64::max);
        Bases { sequential: inst.work.iter().sum::<f64>() / top, critical_path: rank::fastest_critical_path(inst) }
    }

    pub fn metrics(&self, makespan: f64) -> Metrics {
        let ratio = |num: f64, den: f64| if den > 0.0 { num / den } else { 1.0 };
        Metrics { makespan, speedup: ratio(self.sequential, makespan), slr: ratio(makespan, self.critical_path) }
    }
}
