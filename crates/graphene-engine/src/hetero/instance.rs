//! The task-level view the list schedulers work on: every task with its work, every task-to-task
//! edge with its data, and every machine's speed.
//!
//! Stage edges are expanded to task pairs once here (compressed rows), because HEFT-style
//! schedulers look at every parent of every task on every machine and want that to be a slice.

use crate::model::{Cluster, Dag, Network, ResVec, MAX_RESOURCES};

pub struct Instance {
    /// Work of each task (its duration at speed 1).
    pub work: Vec<f64>,
    parent_start: Vec<usize>,
    parent_edges: Vec<(u32, f64)>,
    child_start: Vec<usize>,
    child_edges: Vec<(u32, f64)>,
    net: Network,
    /// `Network::mean_inverse_bandwidth`, asked for once per edge by the ranks.
    mean_inverse_bandwidth: f64,
    /// `fits[t * machines + m]` when some task does not fit every machine; None when all do.
    fits: Option<Vec<bool>>,
    /// Each task's demand and each machine's capacity: a machine runs at once as many tasks as
    /// fit.
    demand: Vec<ResVec>,
    caps: Vec<ResVec>,
    /// Resources past the last one some machine has are not stored in the machines' usage.
    width: usize,
}

impl Instance {
    pub fn new(dag: &Dag, cluster: &Cluster, net: &Network) -> Instance {
        let n = dag.len();
        let mut parent_start = Vec::with_capacity(n + 1);
        let mut parent_edges = Vec::new();
        let mut child_count = vec![0usize; n];
        for t in 0..n as u32 {
            parent_start.push(parent_edges.len());
            let cs = dag.tasks[t as usize].stage;
            dag.for_each_parent(t, |p| {
                let d = dag.edge_data(dag.tasks[p as usize].stage, cs);
                parent_edges.push((p, d));
                child_count[p as usize] += 1;
            });
        }
        parent_start.push(parent_edges.len());
        let mut child_start = Vec::with_capacity(n + 1);
        let mut acc = 0;
        for &c in &child_count {
            child_start.push(acc);
            acc += c;
        }
        child_start.push(acc);
        let mut fill = child_start.clone();
        let mut child_edges = vec![(0u32, 0.0f64); acc];
        for t in 0..n {
            for &(p, d) in &parent_edges[parent_start[t]..parent_start[t + 1]] {
                child_edges[fill[p as usize]] = (t as u32, d);
                fill[p as usize] += 1;
            }
        }
        let m = cluster.len();
        let all_fit = dag.tasks.iter().all(|task| cluster.machines.iter().all(|c| task.demand.fits_in(c)));
        let fits = (!all_fit).then(|| {
            dag.tasks.iter().flat_map(|task| cluster.machines.iter().map(move |c| task.demand.fits_in(c))).collect()
        });
        debug_assert_eq!(net.speeds.len(), m);
        Instance {
            work: dag.tasks.iter().map(|t| t.duration).collect(),
            parent_start,
            parent_edges,
            child_start,
            child_edges,
            net: net.clone(),
            mean_inverse_bandwidth: net.mean_inverse_bandwidth(),
            fits,
            demand: dag.tasks.iter().map(|t| t.demand).collect(),
            caps: cluster.machines.clone(),
            width: cluster
                .machines
                .iter()
                .filter_map(|c| (0..MAX_RESOURCES).rev().find(|&k| c.0[k] != 0.0))
                .max()
                .map_or(1, |k| k + 1),
        }
    }

    pub fn len(&self) -> usize {
        self.work.len()
    }

    pub fn is_empty(&self) -> bool {
        self.work.is_empty()
    }

    pub fn machines(&self) -> usize {
        self.net.speeds.len()
    }

    /// Speed of each machine.
    pub fn speeds(&self) -> &[f64] {
        &self.net.speeds
    }

    /// (parent, data) of every edge into `t`.
    pub fn parents(&self, t: u32) -> &[(u32, f64)] {
        &self.parent_edges[self.parent_start[t as usize]..self.parent_start[t as usize + 1]]
    }

    /// (child, data) of every edge out of `t`.
    pub fn children(&self, t: u32) -> &[(u32, f64)] {
        &self.child_edges[self.child_start[t as usize]..self.child_start[t as usize + 1]]
    }

    pub fn edges(&self) -> usize {
        self.parent_edges.len()
    }

    pub fn run_time(&self, t: u32, m: u32) -> f64 {
        self.work[t as usize] / self.speeds()[m as usize]
    }

    /// Whether task `t` may run on machine `m` at all (its demand fits the idle machine).
    pub fn fits(&self, t: u32, m: u32) -> bool {
        match &self.fits {
            None => true,
            Some(f) => f[t as usize * self.machines() + m as usize],
        }
    }

    pub fn demand(&self, t: u32) -> &ResVec {
        &self.demand[t as usize]
    }

    pub fn capacity(&self, m: u32) -> &ResVec {
        &self.caps[m as usize]
    }

    /// How many resources a machine's usage stores (those up to the last one some machine has).
    pub fn width(&self) -> usize {
        self.width
    }

    pub fn transfer(&self, data: f64, a: u32, b: u32) -> f64 {
        self.net.transfer(data, a, b)
    }

    /// The mean over all unordered machine pairs, each machine paired with itself included, of
    /// the time to move `data`: with n machines and one bandwidth, data / bandwidth x
    /// (n - 1) / (n + 1).
    pub fn mean_transfer(&self, data: f64) -> f64 {
        data * self.mean_inverse_bandwidth
    }

    /// Mean over machines of the task's run time.
    pub fn mean_run_time(&self, t: u32) -> f64 {
        let inv: f64 = self.speeds().iter().map(|s| 1.0 / s).sum::<f64>();
        self.work[t as usize] * inv / self.machines() as f64
    }

    pub fn mean_speed(&self) -> f64 {
        self.speeds().iter().sum::<f64>() / self.machines() as f64
    }
}
