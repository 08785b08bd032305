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
///
/// Heterogeneous clusters add a `speed` per group (a task's run time there is its duration
/// divided by the speed) and a cluster-wide `bandwidth` (moving `data` between two different
/// machines takes data / bandwidth). Racks and mixed networks override that bandwidth per pair
/// of groups (`pair_bandwidth`); a group of one machine makes it per machine pair. Speeds are
/// kept beside the groups, not inside `MachineGroup`, so code that builds groups by hand keeps
/// compiling unchanged.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(try_from = "RawCluster", into = "RawCluster")]
pub struct ClusterSpec {
    pub machines: Vec<MachineGroup>,
    pub overbook: Vec<String>,
    /// One speed per group in `machines`; empty means every machine has speed 1.
    pub speeds: Vec<f64>,
    /// Data units moved per time unit between two different machines.
    pub bandwidth: f64,
    /// Overrides of `bandwidth` between (or within) groups; group numbers are checked when a
    /// file is read, code that builds a spec must keep them in range.
    pub pair_bandwidth: Vec<GroupLink>,
}

/// The bandwidth between any machine of group `groups[0]` and any other machine of group
/// `groups[1]` (in either direction; the two may be the same group).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GroupLink {
    pub groups: [usize; 2],
    pub bandwidth: f64,
}

/// The file form of a group: `MachineGroup` plus its optional speed.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGroup {
    #[serde(default = "one")]
    count: usize,
    capacity: BTreeMap<String, f64>,
    #[serde(default = "unit", skip_serializing_if = "is_unit")]
    speed: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCluster {
    machines: Vec<RawGroup>,
    /// None: the default (disk and net), which a cluster need not name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    overbook: Option<Vec<String>>,
    #[serde(default = "unit", skip_serializing_if = "is_unit")]
    bandwidth: f64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pair_bandwidth: Vec<GroupLink>,
}

fn unit() -> f64 {
    1.0
}

fn is_unit(v: &f64) -> bool {
    *v == 1.0
}

impl TryFrom<RawCluster> for ClusterSpec {
    type Error = String;

    fn try_from(raw: RawCluster) -> std::result::Result<ClusterSpec, String> {
        for (i, g) in raw.machines.iter().enumerate() {
            if !(g.speed.is_finite() && g.speed > 0.0) {
                return Err(format!("machines[{i}].speed: {} is not a finite number > 0", g.speed));
            }
        }
        if !(raw.bandwidth.is_finite() && raw.bandwidth > 0.0) {
            return Err(format!("bandwidth: {} is not a finite number > 0", raw.bandwidth));
        }
        let named: std::collections::BTreeSet<&str> =
            raw.machines.iter().flat_map(|g| g.capacity.keys().map(String::as_str)).collect();
        // An overbooked resource must be one the machines name or one of the four standard
        // resources (which clusters may leave out and DAGs still use); anything else is a typo.
        for (i, o) in raw.overbook.iter().flatten().enumerate() {
            if !named.contains(o.as_str()) && !["cpu", "mem", "disk", "net"].contains(&o.as_str()) {
                let names: Vec<&str> = named.iter().copied().collect();
                return Err(format!(
                    "overbook[{i}]: '{o}' is not a resource of the cluster (its machines name {}; cpu, mem, disk and net are always known)",
                    names.join(", ")
                ));
            }
        }

        let mut seen = std::collections::BTreeSet::new();
        for (i, l) in raw.pair_bandwidth.iter().enumerate() {
            if let Some(&g) = l.groups.iter().find(|&&g| g >= raw.machines.len()) {
                return Err(format!(
                    "pair_bandwidth[{i}].groups: group {g} does not exist (groups are numbered 0 to {} in the order of `machines`)",
                    raw.machines.len().saturating_sub(1)
                ));
            }
            if !(l.bandwidth.is_finite() && l.bandwidth > 0.0) {
                return Err(format!("pair_bandwidth[{i}].bandwidth: {} is not a finite number > 0", l.bandwidth));
            }
            let key = (l.groups[0].min(l.groups[1]), l.groups[0].max(l.groups[1]));
            if !seen.insert(key) {
                return Err(format!("pair_bandwidth[{i}].groups: the pair {:?} is given twice", l.groups));
            }
        }
        let speeds: Vec<f64> = raw.machines.iter().map(|g| g.speed).collect();
        let uniform = speeds.iter().all(|&s| s == 1.0);
        Ok(ClusterSpec {
            machines: raw.machines.into_iter().map(|g| MachineGroup { count: g.count, capacity: g.capacity }).collect(),
            overbook: raw.overbook.unwrap_or_else(default_overbook),
            speeds: if uniform { Vec::new() } else { speeds },
            bandwidth: raw.bandwidth,
            pair_bandwidth: raw.pair_bandwidth,
        })
    }
}

impl From<ClusterSpec> for RawCluster {
    fn from(c: ClusterSpec) -> RawCluster {
        let speeds = c.group_speeds();
        RawCluster {
            machines: c
                .machines
                .into_iter()
                .zip(speeds)
                .map(|(g, speed)| RawGroup { count: g.count, capacity: g.capacity, speed })
                .collect(),
            overbook: (c.overbook != default_overbook()).then_some(c.overbook),
            bandwidth: c.bandwidth,
            pair_bandwidth: c.pair_bandwidth,
        }
    }
}

/// What heterogeneous schedulers need beyond capacities: each machine's speed and the cost of
/// moving data between machines. `Network::uniform` (speed 1, transfers free) is the model every
/// homogeneous algorithm assumes.
#[derive(Clone, Debug, PartialEq)]
pub struct Network {
    /// One per machine, in `Cluster::machines` order.
    pub speeds: Vec<f64>,
    /// Between two different machines, unless `pairs` says otherwise.
    pub bandwidth: f64,
    pairs: Option<PairTable>,
}

/// Per-group-pair bandwidths laid out for lookup in the schedulers' inner loops.
#[derive(Clone, Debug, PartialEq)]
struct PairTable {
    /// Group of each machine.
    group_of: Vec<u32>,
    groups: usize,
    /// `groups x groups`, symmetric, `bandwidth` where no override was given.
    bandwidth: Vec<f64>,
}

impl Network {
    pub fn uniform(machines: usize) -> Network {
        Network { speeds: vec![1.0; machines], bandwidth: f64::INFINITY, pairs: None }
    }

    /// Whether some pair of machines has its own bandwidth.
    pub fn has_pair_bandwidth(&self) -> bool {
        self.pairs.is_some()
    }

    /// Data per time unit between machines `a` and `b` (infinite on the same machine).
    pub fn bandwidth_between(&self, a: u32, b: u32) -> f64 {
        if a == b {
            return f64::INFINITY;
        }
        match &self.pairs {
            None => self.bandwidth,
            Some(p) => p.bandwidth[p.group_of[a as usize] as usize * p.groups + p.group_of[b as usize] as usize],
        }
    }

    /// Mean of 1 / bandwidth over all unordered machine pairs, each machine paired with itself
    /// included (those moves are free): HEFT's "average communication cost" per data unit, in
    /// the convention the reference implementation uses. Uniform: (n - 1) / ((n + 1) bandwidth).
    pub fn mean_inverse_bandwidth(&self) -> f64 {
        let n = self.speeds.len() as f64;
        if n == 0.0 {
            return 0.0;
        }
        let pairs = n * (n + 1.0) / 2.0;
        let distinct = match &self.pairs {
            None => n * (n - 1.0) / 2.0 / self.bandwidth,
            Some(p) => {
                let mut count = vec![0.0f64; p.groups];
                for &g in &p.group_of {
                    count[g as usize] += 1.0;
                }
                let mut sum = 0.0;
                for g in 0..p.groups {
                    sum += count[g] * (count[g] - 1.0) / 2.0 / p.bandwidth[g * p.groups + g];
                    for h in g + 1..p.groups {
                        sum += count[g] * count[h] / p.bandwidth[g * p.groups + h];
                    }
                }
                sum
            }
        };
        distinct / pairs
    }

    pub fn is_uniform_speed(&self) -> bool {
        self.speeds.iter().all(|&s| s == 1.0)
    }

    /// Whether this network changes nothing for `dag`: speed 1 everywhere and no transfer cost.
    pub fn is_trivial_for(&self, dag: &Dag) -> bool {
        self.is_uniform_speed() && ((self.bandwidth.is_infinite() && self.pairs.is_none()) || !dag.has_edge_data())
    }

    pub fn max_speed(&self) -> f64 {
        self.speeds.iter().copied().fold(0.0, f64::max)
    }

    /// Time to move `data` from machine `a` to machine `b`.
    pub fn transfer(&self, data: f64, a: u32, b: u32) -> f64 {
        if a == b || data == 0.0 {
            0.0
        } else {
            data / self.bandwidth_between(a, b)
        }
    }
}

pub fn default_overbook() -> Vec<String> {
    vec!["disk".to_string(), "net".to_string()]
}

impl ClusterSpec {
    /// `count` identical machines.
    pub fn uniform(count: usize, capacity: BTreeMap<String, f64>) -> ClusterSpec {
        ClusterSpec {
            machines: vec![MachineGroup { count, capacity }],
            overbook: default_overbook(),
            speeds: Vec::new(),
            bandwidth: 1.0,
            pair_bandwidth: Vec::new(),
        }
    }

    /// The speed of each group (1 when none were given).
    pub fn group_speeds(&self) -> Vec<f64> {
        if self.speeds.len() == self.machines.len() {
            self.speeds.clone()
        } else {
            vec![1.0; self.machines.len()]
        }
    }

    /// Speeds per machine and the bandwidth, in the machine order `resolve` lays out.
    pub fn network(&self) -> Network {
        debug_assert!(self.check_size().is_ok(), "network() on a cluster over the machine limit");
        let speeds =
            self.machines.iter().zip(self.group_speeds()).flat_map(|(g, s)| std::iter::repeat_n(s, g.count)).collect();
        let pairs = (!self.pair_bandwidth.is_empty()).then(|| {
            let groups = self.machines.len();
            let mut bandwidth = vec![self.bandwidth; groups * groups];
            for l in &self.pair_bandwidth {
                let [g, h] = l.groups;
                bandwidth[g * groups + h] = l.bandwidth;
                bandwidth[h * groups + g] = l.bandwidth;
            }
            let group_of =
                self.machines.iter().enumerate().flat_map(|(gi, g)| std::iter::repeat_n(gi as u32, g.count)).collect();
            PairTable { group_of, groups, bandwidth }
        });
        Network { speeds, bandwidth: self.bandwidth, pairs }
    }

    /// Splits every group into single machines (so each can take its own speed), keeping each
    /// machine's capacity, speed and bandwidths to the others.
    pub fn split_into_machines(&mut self) {
        let speeds = self.group_speeds();
        let mut first = Vec::with_capacity(self.machines.len());
        let mut machines = Vec::with_capacity(self.machine_count());
        let mut machine_speeds = Vec::with_capacity(self.machine_count());
        for (g, s) in self.machines.iter().zip(speeds) {
            first.push(machines.len());
            machines.extend(std::iter::repeat_n(MachineGroup { count: 1, ..g.clone() }, g.count));
            machine_speeds.extend(std::iter::repeat_n(s, g.count));
        }
        let range = |g: usize| first[g]..first[g] + self.machines[g].count;
        let mut links = Vec::new();
        for l in &self.pair_bandwidth {
            let [g, h] = l.groups;
            for a in range(g) {
                for b in range(h) {
                    if g != h || a <= b {
                        links.push(GroupLink { groups: [a, b], bandwidth: l.bandwidth });
                    }
                }
            }
        }
        self.machines = machines;
        self.speeds = machine_speeds;
        self.pair_bandwidth = links;
    }

    /// One group per machine with the given speeds, all of `capacity`.
    pub fn with_speeds(speeds: &[f64], capacity: BTreeMap<String, f64>, bandwidth: f64) -> ClusterSpec {
        ClusterSpec {
            machines: speeds.iter().map(|_| MachineGroup { count: 1, capacity: capacity.clone() }).collect(),
            overbook: default_overbook(),
            speeds: speeds.to_vec(),
            bandwidth,
            pair_bandwidth: Vec::new(),
        }
    }

    /// The cluster the CLI uses when none is given: 10 machines of 16 cores, 64 GB memory,
    /// 200 MB/s disk and 1250 MB/s (10 Gb/s) network.
    pub fn default_capacity() -> BTreeMap<String, f64> {
        [("cpu", 16.0), ("mem", 64.0), ("disk", 200.0), ("net", 1250.0)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
    }

    /// Machines over all groups (saturating: counts near 2^64 are over any limit, not wrapped).
    pub fn machine_count(&self) -> usize {
        self.machines.iter().fold(0usize, |n, g| n.saturating_add(g.count))
    }

    /// Fails when the cluster has more machines than `--max-machines`, naming the group whose
    /// count crosses the limit. Called before anything is laid out per machine.
    pub fn check_size(&self) -> Result<()> {
        let limits = crate::limits::current();
        let mut n = 0u64;
        for (gi, g) in self.machines.iter().enumerate() {
            n = crate::limits::add(n, g.count as u64);
            limits.check_machines(n, &format!("machines[{gi}].count"))?;
        }
        Ok(())
    }

    /// Lays the capacities out in the DAG's resource order. Resources the cluster names but the
    /// DAG does not use are ignored; a resource the DAG uses but the cluster omits has capacity 0.
    pub fn resolve(&self, resources: &[String]) -> Result<Cluster> {
        if self.machine_count() == 0 {
            return Err(Error::field("machines", "the cluster has no machines"));
        }
        self.check_size()?;
        // A resource only the cluster names, while one the DAG uses is missing from it, is
        // almost always a misspelling ("mme" for "mem"); say so instead of running with 0.
        let named: std::collections::BTreeSet<&str> =
            self.machines.iter().flat_map(|g| g.capacity.keys().map(String::as_str)).collect();
        let unknown: Vec<&str> = named.iter().copied().filter(|n| !resources.iter().any(|r| r == n)).collect();
        let missing: Vec<&str> = resources.iter().map(String::as_str).filter(|r| !named.contains(r)).collect();
        if !unknown.is_empty() && !missing.is_empty() {
            return Err(Error::field(
                "machines.capacity",
                format!(
                    "names {} that the DAG does not use, and gives no capacity for {} that it does (a misspelling?)",
                    unknown.join(", "),
                    missing.join(", ")
                ),
            ));
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
    ///
    /// Linear in tasks plus machines for real clusters: machines of a group (alike, side by
    /// side) are tried once, tasks alike to the previous one are not tried again, and the kind
    /// that held the previous task is tried first. (Trying every machine for every task cost a
    /// million-task DAG on 100,000 machines minutes when only the last machine fits.)
    pub fn check_fits(&self, dag: &Dag) -> Result<()> {
        let mut kinds: Vec<ResVec> = Vec::new();
        for cap in &self.machines {
            if kinds.last() != Some(cap) {
                kinds.push(*cap);
            }
        }
        let mut last: Option<(ResVec, usize)> = None;
        for (t, task) in dag.tasks.iter().enumerate() {
            if last.is_some_and(|(d, _)| d == task.demand) {
                continue;
            }
            let fits = last
                .map(|(_, k)| k)
                .filter(|&k| task.demand.fits_in(&kinds[k]))
                .or_else(|| kinds.iter().position(|cap| task.demand.fits_in(cap)));
            if let Some(k) = fits {
                last = Some((task.demand, k));
            } else {
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
