//! One entry point for every offline scheduler: Graphene and the baselines.

use serde::Serialize;

use crate::baselines::{self, Baseline};
use crate::hetero::{self, HeteroAlgo};
use crate::model::{Cluster, Dag, Network, Placement, Schedule};
use crate::offline::{self, OfflineConfig, SearchReport};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Scheduler {
    Graphene,
    Baseline(Baseline),
    /// The list schedulers for machines of different speeds with data transfers.
    Hetero(HeteroAlgo),
}

impl Scheduler {
    pub fn all() -> Vec<Scheduler> {
        std::iter::once(Scheduler::Graphene).chain(Baseline::ALL.iter().map(|&b| Scheduler::Baseline(b))).collect()
    }

    /// HEFT, CPOP and the DEFT policies: not in `all()`, which is what `compare` runs by
    /// default on homogeneous clusters.
    pub fn hetero() -> Vec<Scheduler> {
        HeteroAlgo::ALL.iter().map(|&h| Scheduler::Hetero(h)).collect()
    }

    /// Every scheduler that can be named.
    pub fn known() -> Vec<Scheduler> {
        let mut v = Scheduler::all();
        v.extend(Baseline::EXTRA.iter().map(|&b| Scheduler::Baseline(b)));
        v.extend(Scheduler::hetero());
        v
    }

    pub fn name(&self) -> &'static str {
        match self {
            Scheduler::Graphene => "graphene",
            Scheduler::Baseline(b) => b.name(),
            Scheduler::Hetero(h) => h.name(),
        }
    }

    pub fn parse(name: &str) -> Option<Scheduler> {
        Scheduler::known().into_iter().find(|s| s.name() == name)
    }

    pub fn known_names() -> Vec<&'static str> {
        Scheduler::known().iter().map(|s| s.name()).collect()
    }

    /// Whether the scheduler plans with machine speeds and transfer times.
    pub fn models_network(&self) -> bool {
        matches!(self, Scheduler::Hetero(_) | Scheduler::Graphene)
    }

    pub fn names() -> Vec<&'static str> {
        Scheduler::all().iter().map(|s| s.name()).collect()
    }
}

pub struct Built {
    pub schedule: Schedule,
    /// Graphene's search report (None for baselines).
    pub search: Option<SearchReport>,
    /// Extra runs of tasks duplicated to save transfers (DEFT only).
    pub copies: Vec<Placement>,
}

pub fn build(which: Scheduler, dag: &Dag, cluster: &Cluster, cfg: &OfflineConfig, seed: u64) -> Built {
    build_on(which, dag, cluster, &Network::uniform(cluster.len()), cfg, seed)
}

/// `build` on machines of the given speeds and bandwidth. Schedulers that do not model them
/// (`models_network` false) plan at speed 1 without transfers; callers should use them only on
/// a uniform network.
pub fn build_on(
    which: Scheduler,
    dag: &Dag,
    cluster: &Cluster,
    net: &Network,
    cfg: &OfflineConfig,
    seed: u64,
) -> Built {
    match which {
        Scheduler::Graphene => {
            let r = offline::build_on_network(dag, cluster, net, cfg);
            Built { schedule: r.schedule, search: Some(r.search), copies: Vec::new() }
        }
        Scheduler::Baseline(b) => {
            Built { schedule: baselines::run(b, dag, cluster, seed), search: None, copies: Vec::new() }
        }
        Scheduler::Hetero(h) => {
            let s = hetero::run(h, dag, cluster, net);
            Built { schedule: s.schedule, search: None, copies: s.copies }
        }
    }
}
