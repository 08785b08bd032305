//! One entry point for every offline scheduler: Graphene and the baselines.

use serde::Serialize;

use crate::baselines::{self, Baseline};
use crate::model::{Cluster, Dag, Schedule};
use crate::offline::{self, OfflineConfig, SearchReport};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Scheduler {
    Graphene,
    Baseline(Baseline),
}

impl Scheduler {
    pub fn all() -> Vec<Scheduler> {
        std::iter::once(Scheduler::Graphene).chain(Baseline::ALL.iter().map(|&b| Scheduler::Baseline(b))).collect()
    }

    pub fn name(&self) -> &'static str {
        match self {
            Scheduler::Graphene => "graphene",
            Scheduler::Baseline(b) => b.name(),
        }
    }

    pub fn parse(name: &str) -> Option<Scheduler> {
        Scheduler::all().into_iter().find(|s| s.name() == name)
    }

    pub fn names() -> Vec<&'static str> {
        Scheduler::all().iter().map(|s| s.name()).collect()
    }
}

pub struct Built {
    pub schedule: Schedule,
    /// Graphene's search report (None for baselines).
    pub search: Option<SearchReport>,
}

pub fn build(which: Scheduler, dag: &Dag, cluster: &Cluster, cfg: &OfflineConfig, seed: u64) -> Built {
    match which {
        Scheduler::Graphene => {
            let r = offline::build_schedule(dag, cluster, cfg);
            Built { schedule: r.schedule, search: Some(r.search) }
        }
        Scheduler::Baseline(b) => Built { schedule: baselines::run(b, dag, cluster, seed), search: None },
    }
}
