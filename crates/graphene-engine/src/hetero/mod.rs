//! Heterogeneous executors: the list-scheduling family of LACHESIS (Luo et al.) and its
//! baselines. Machines differ in speed (a task runs for work / speed) and data moving between
//! two different machines takes data / bandwidth. A machine runs at once as many tasks as fit its
//! capacity in every resource (dslab-dag's HEFT schedules each core): a 16-core machine holds
//! sixteen one-core tasks, an executor of one `cpu` slot (the reference instances, LACHESIS's
//! setting) one task at a time.
//!
//! * [`heft`] and [`cpop`] as in Topcuoglu et al., with the averaging and tie rules of the
//!   reference implementation the tests compare against.
//! * [`deft`]: LACHESIS's executor allocation with one-parent duplication, driven by the
//!   selection policies of [`select`] (FIFO, SJF, HRRN, highest upward rank).
//! * [`lachesis`]: LACHESIS itself: a graph neural network trained by policy gradient picks the
//!   next stage to place, DEFT places its ready tasks (`lachesis`, with the bundled model).
//! * [`metrics`]: speedup and SLR as LACHESIS defines them.
//!
//! TDCA (He et al. 2019) is not implemented: its four phases (cluster initialisation,
//! duplication, merging, insertion) rest on details that neither LACHESIS nor our notes give,
//! and a guessed version would be a different algorithm under the same name.

pub mod batch;
pub mod cpop;
pub mod deft;
pub mod heft;
pub mod instance;
pub mod lachesis;
pub mod metrics;
pub mod plan;
pub mod rank;
pub mod select;
pub mod timeline;

use serde::Serialize;

pub use instance::Instance;
pub use metrics::Metrics;
pub use select::Policy;

use crate::model::{Cluster, Dag, Network, Placement, Schedule};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum HeteroAlgo {
    Heft,
    Cpop,
    Deft(Policy),
    /// LACHESIS's learned selection with DEFT, using the bundled model.
    Lachesis,
}

impl HeteroAlgo {
    pub const ALL: [HeteroAlgo; 7] = [
        HeteroAlgo::Heft,
        HeteroAlgo::Cpop,
        HeteroAlgo::Deft(Policy::Fifo),
        HeteroAlgo::Deft(Policy::Sjf),
        HeteroAlgo::Deft(Policy::Hrrn),
        HeteroAlgo::Deft(Policy::RankUp),
        HeteroAlgo::Lachesis,
    ];

    pub fn name(&self) -> &'static str {
        match self {
            HeteroAlgo::Heft => "heft",
            HeteroAlgo::Cpop => "cpop",
            HeteroAlgo::Deft(Policy::Fifo) => "fifo-deft",
            HeteroAlgo::Deft(Policy::Sjf) => "sjf-deft",
            HeteroAlgo::Deft(Policy::Hrrn) => "hrrn-deft",
            HeteroAlgo::Deft(Policy::RankUp) => "rankup-deft",
            HeteroAlgo::Lachesis => "lachesis",
        }
    }
}

/// A schedule in which some tasks may also run as duplicates (extra copies that feed children
/// on their machine without a transfer).
pub struct HeteroSchedule {
    pub schedule: Schedule,
    pub copies: Vec<Placement>,
}

/// Runs `algo` on `dag`; a machine of `cluster` runs at once the tasks whose demands fit its
/// capacity together, a task only on machines its demand fits.
/// `lachesis` uses the bundled model ([`lachesis::Model::bundled`]); [`run_with`] takes another.
pub fn run(algo: HeteroAlgo, dag: &Dag, cluster: &Cluster, net: &Network) -> HeteroSchedule {
    run_with(algo, dag, cluster, net, None)
}

/// As [`run`], with `model` for `lachesis` (the bundled one when None).
pub fn run_with(
    algo: HeteroAlgo,
    dag: &Dag,
    cluster: &Cluster,
    net: &Network,
    model: Option<&lachesis::Model>,
) -> HeteroSchedule {
    let inst = Instance::new(dag, cluster, net);
    let plan = match algo {
        HeteroAlgo::Heft => heft::heft(&inst),
        HeteroAlgo::Cpop => cpop::cpop(&inst),
        HeteroAlgo::Deft(p) => select::schedule(&inst, p),
        HeteroAlgo::Lachesis => match model {
            Some(m) => lachesis::schedule(dag, &inst, m),
            None => lachesis::schedule(
                dag,
                &inst,
                lachesis::Model::bundled().expect("the bundled LACHESIS model parses (a unit test checks it)"),
            ),
        },
    };
    let (schedule, copies) = plan.finish();
    HeteroSchedule { schedule, copies }
}
