//! Machines and their capacities.
//!
//! A cluster is described by name (`ClusterSpec`, from a file or flags) and resolved against a
//! DAG's resource list once (`Cluster`), so the hot code indexes capacities by position.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::dag::Dag;
use super::resources::{ResVec, MAX_RESOURCES};
use crate::error::{Error, Result};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MachineGroup {
    #[serde(default = "one")]
    pub count: usize,
    pub capacity: BTreeMap<String, f64>,
}

fn one() -> usize {
    1
}

/// A cluster as written in `cluster.json`: groups of identical machines, and which resources may
/// be overbooked (fungible bandwidths that slow tasks down instead of failing them).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ClusterSpec {
    pub machines: Vec<MachineGroup>,
    #[serde(default = "default_overbook")]
    pub overbook: Vec<String>,
}

pub fn default_overbook() -> Vec<String> {
    vec!["disk".to_string(), "net".to_string()]
}

impl ClusterSpec {
    /// `count` identical machines.
    pub fn uniform(count: usize, capacity: BTreeMap<String, f64>) -> ClusterSpec {
        ClusterSpec { machines: vec![MachineGroup { count, capacity }], overbook: default_overbook() }
    }

    /// The cluster the CLI uses when none is given: 10 machines of 16 cores, 64 GB memory,
    /// 200 MB/s disk and 1250 MB/s (10 Gb/s) network.
    pub fn default_capacity() -> BTreeMap<String, f64> {
        [("cpu", 16.0), ("mem", 64.0), ("disk", 200.0), ("net", 1250.0)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
    }

    pub fn machine_count(&self) -> usize {
        self.machines.iter().map(|g| g.count).sum()
    }

    /// Lays the capacities out in the DAG's resource order. Resources the cluster names but the
    /// DAG does not use are ignored; a resource the DAG uses but the cluster omits has capacity 0.
    pub fn resolve(&self, resources: &[String]) -> Result<Cluster> {
        if self.machine_count() == 0 {
            return Err(Error::field("machines", "the cluster has no machines"));
        }
        let mut machines = Vec::with_capacity(self.machine_count());
        for (gi, g) in self.machines.iter().enumerate() {
            for (name, v) in &g.capacity {
                if !v.is_finite() || *v < 0.0 {
                    return Err(Error::field(
                        format!("machines[{gi}].capacity.{name}"),
                        format!("{v} is not a finite number >= 0"),
                    ));
                }
            }
            let mut cap = ResVec::ZERO;
            for (i, r) in resources.iter().enumerate() {
                cap.0[i] = g.capacity.get(r).copied().unwrap_or(0.0);
            }
            machines.extend(std::iter::repeat_n(cap, g.count));
        }
        let mut overbook = [false; MAX_RESOURCES];
        for (i, r) in resources.iter().enumerate() {
            overbook[i] = self.overbook.iter().any(|o| o == r);
        }
        Ok(Cluster { machines, overbook, resources: resources.to_vec() })
    }
}

#[derive(Clone, Debug)]
pub struct Cluster {
    pub machines: Vec<ResVec>,
    /// Resources that may be overbooked at run time; a validator does not hold them to capacity.
    pub overbook: [bool; MAX_RESOURCES],
    pub resources: Vec<String>,
}

impl Cluster {
    pub fn len(&self) -> usize {
        self.machines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.machines.is_empty()
    }

    pub fn total_capacity(&self) -> ResVec {
        self.machines.iter().fold(ResVec::ZERO, |acc, c| acc.add(c))
    }

    /// The dimensions a validator must hold to capacity.
    pub fn hard_mask(&self) -> [bool; MAX_RESOURCES] {
        let mut m = [false; MAX_RESOURCES];
        for i in 0..self.resources.len() {
            m[i] = !self.overbook[i];
        }
        m
    }

    /// Fails with the first task that fits no machine even when the cluster is idle.
    pub fn check_fits(&self, dag: &Dag) -> Result<()> {
        for (t, task) in dag.tasks.iter().enumerate() {
            if !self.machines.iter().any(|cap| task.demand.fits_in(cap)) {
                let best = self.machines.iter().fold(ResVec::ZERO, |acc, c| {
                    let mut m = acc;
                    for i in 0..MAX_RESOURCES {
                        m.0[i] = m.0[i].max(c.0[i]);
                    }
                    m
                });
                return Err(Error::TaskTooBig {
                    task: dag.task_name(t as u32),
                    demand: dag.format_demand(&task.demand),
                    capacity: format!("largest machine {}", dag.format_demand(&best)),
                });
            }
        }
        Ok(())
    }
}
