//! Figures computed from a replay: job completion times, utilization, fairness, decision time.

use serde::Serialize;

use crate::model::{Cluster, ResVec, Workload, MAX_RESOURCES};
use crate::sim::SimResult;

#[derive(Clone, Debug, Serialize)]
pub struct Stats {
    pub mean: f64,
    pub median: f64,
    pub p90: f64,
    pub p99: f64,
}

impl Stats {
    pub fn of(values: &[f64]) -> Stats {
        let mean = if values.is_empty() { f64::NAN } else { values.iter().sum::<f64>() / values.len() as f64 };
        Stats { mean, median: quantile(values, 0.5), p90: quantile(values, 0.9), p99: quantile(values, 0.99) }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct UtilizationPoint {
    /// Start of the interval, seconds.
    pub t: f64,
    /// Mean fraction of cluster capacity in use over the interval, per resource.
    pub used: Vec<f64>,
    /// Mean number of running tasks over the interval.
    pub running: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Fairness {
    /// The window used: the one asked for, or wider when a replay is so long that its queues
    /// would need more than [`MAX_FAIRNESS_CELLS`] (queue, window) cells.
    pub window_s: f64,
    /// Mean over windows in which at least two queues had jobs in the system.
    pub jain_mean: f64,
    pub jain_min: f64,
    pub windows: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub jobs: usize,
    pub tasks: usize,
    pub jct: Stats,
    pub makespan: f64,
    pub resources: Vec<String>,
    pub mean_utilization: Vec<f64>,
    pub utilization: Vec<UtilizationPoint>,
    pub fairness: Vec<Fairness>,
    /// Microseconds per heartbeat that had runnable work.
    pub decision_us: Stats,
    pub heartbeats: usize,
}

/// Adds `w` x `value` to the bins of width `step` that `[a, b)` overlaps.
fn spread(bins: &mut [f64], step: f64, a: f64, b: f64, value: f64) {
    if b <= a {
        return;
    }
    let first = (a / step).floor() as usize;
    let last = ((b / step).ceil() as usize).min(bins.len());
    for (i, bin) in bins.iter_mut().enumerate().take(last).skip(first) {
        let lo = (i as f64 * step).max(a);
        let hi = ((i + 1) as f64 * step).min(b);
        if hi > lo {
            *bin += value * (hi - lo);
        }
    }
}

/// Jain's index of `x`: (sum x)^2 / (n sum x^2), 1 when all are equal.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    if s2 == 0.0 {
        1.0
    } else {
        s * s / (x.len() as f64 * s2)
    }
}

/// Summarises a replay. `shares` are the queues' entitled shares (in `workload.queues()`
/// order); `points` is how many utilization intervals to report.
pub fn summarize(workload: &Workload, cluster: &Cluster, result: &SimResult, shares: &[f64], points: usize) -> Summary {
    let jcts: Vec<f64> = result.jobs.iter().map(|j| j.jct()).collect();
    let makespan = result.makespan;
    let dims = cluster.resources.len();
    let total = cluster.total_capacity();
    let points = points.max(1);
    let step = (makespan / points as f64).max(1e-9);
    let mut used: Vec<Vec<f64>> = vec![vec![0.0; points]; dims];
    let mut running = vec![0.0; points];
    let mut fair = FairnessBins::new(workload, result, &[10.0, 60.0, 240.0]);
    // One pass over the runs for every figure: each run's demand is a load from its job's DAG,
    // which a replay of millions of tasks from many jobs rarely finds in a cache. (Every bin
    // still adds its runs in run order, so the sums are those of one pass per figure.)
    for run in &result.runs {
        let d = &workload.jobs[run.job as usize].dag.tasks[run.task as usize].demand;
        for r in 0..dims {
            if total.0[r] > 0.0 {
                spread(&mut used[r], step, run.start, run.end, d.0[r] / total.0[r]);
            }
        }
        spread(&mut running, step, run.start, run.end, 1.0);
        fair.add_run(run, d, &total, dims);
    }
    let utilization = (0..points)
        .map(|i| UtilizationPoint {
            t: i as f64 * step,
            used: (0..dims).map(|r| used[r][i] / step).collect(),
            running: running[i] / step,
        })
        .collect();
    let mean_utilization =
        (0..dims).map(|r| if makespan > 0.0 { used[r].iter().sum::<f64>() / makespan } else { 0.0 }).collect();
    let fairness = fair.finish(shares);
    Summary {
        jobs: result.jobs.len(),
        tasks: workload.tasks(),
        jct: Stats::of(&jcts),
        makespan,
        resources: cluster.resources.clone(),
        mean_utilization,
        utilization,
        fairness,
        decision_us: Stats::of(&result.decision_us.iter().map(|&x| x as f64).collect::<Vec<_>>()),
        heartbeats: result.heartbeats,
    }
}

/// Most (queue, window) cells the fairness index keeps for one window size (two numbers each):
/// 16 MB, a week of 10 s windows for 16 queues (the summary's three sizes are filled at once).
/// A replay whose realized makespan would need more (a task of 10^12 s made 10^11 ten-second
/// windows, an 800 GB allocation) is measured over wider windows.
pub const MAX_FAIRNESS_CELLS: f64 = 1e6;

/// Jain's index over windows of each queue's dominant-resource usage divided by its entitled
/// share, counting only windows in which two or more queues had jobs in the system (otherwise
/// one queue may rightly use everything): per queue and window, the usage and the presence of
/// jobs, filled run by run ([`FairnessBins::add_run`]) for several window sizes at once.
struct FairnessBins {
    /// Each job's queue, as an index into the workload's queues.
    qidx: Vec<usize>,
    sizes: Vec<WindowBins>,
}

/// One window size's bins.
struct WindowBins {
    /// Seconds.
    window: f64,
    /// Per queue and window: dominant-share seconds used, and job-seconds present.
    usage: Vec<Vec<f64>>,
    present: Vec<Vec<f64>>,
}

impl FairnessBins {
    fn new(workload: &Workload, result: &SimResult, windows: &[f64]) -> FairnessBins {
        let queues = workload.queues();
        let nq = queues.len();
        let qidx: Vec<usize> =
            workload.jobs.iter().map(|j| queues.iter().position(|q| q == &j.queue).unwrap_or(0)).collect();
        let sizes = windows
            .iter()
            .map(|&w| {
                let window = w.max(result.makespan * nq.max(1) as f64 / MAX_FAIRNESS_CELLS);
                let n = (result.makespan / window).ceil().max(1.0) as usize;
                let mut present = vec![vec![0.0; n]; nq];
                for (j, out) in result.jobs.iter().enumerate() {
                    spread(&mut present[qidx[j]], window, out.arrival, out.finish, 1.0);
                }
                WindowBins { window, usage: vec![vec![0.0; n]; nq], present }
            })
            .collect();
        FairnessBins { qidx, sizes }
    }

    /// Adds `run`, of demand `d`, to its queue's usage: its dominant share of `total`.
    fn add_run(&mut self, run: &crate::sim::TaskRun, d: &ResVec, total: &ResVec, dims: usize) {
        let mut dom: f64 = 0.0;
        for r in 0..dims.min(MAX_RESOURCES) {
            if total.0[r] > 0.0 {
                dom = dom.max(d.0[r] / total.0[r]);
            }
        }
        let q = self.qidx[run.job as usize];
        for b in &mut self.sizes {
            spread(&mut b.usage[q], b.window, run.start, run.end, dom);
        }
    }

    /// The index per window size, `shares` being the queues' entitled shares.
    fn finish(self, shares: &[f64]) -> Vec<Fairness> {
        self.sizes.iter().map(|b| jain_over_windows(b, shares)).collect()
    }
}

/// Jain's index over the windows of `bins` in which two or more queues had jobs.
fn jain_over_windows(bins: &WindowBins, shares: &[f64]) -> Fairness {
    let WindowBins { window, usage, present } = bins;
    let nq = usage.len();
    let n = usage.first().map_or(0, Vec::len);
    let mut sum = 0.0;
    let mut min: f64 = 1.0;
    let mut count = 0;
    // The present queues' usage over share, one buffer for every window (up to a million).
    let mut x: Vec<f64> = Vec::with_capacity(nq);
    for w in 0..n {
        x.clear();
        x.extend(
            (0..nq)
                .filter(|&q| present[q][w] > 0.0)
                .map(|q| usage[q][w] / shares.get(q).copied().unwrap_or(1.0).max(1e-12)),
        );
        if x.len() < 2 {
            continue;
        }
        let j = jain(&x);
        sum += j;
        min = min.min(j);
        count += 1;
    }
    Fairness {
        window_s: *window,
        jain_mean: if count > 0 { sum / count as f64 } else { 1.0 },
        jain_min: if count > 0 { min } else { 1.0 },
        windows: count,
    }
}

/// Per-job normalized JCT gap of `other` against `base`: (jct_base - jct) / jct_base, so that
/// positive means `other` finished the job sooner. Jobs pair up by position (both replays of
/// the same workload); jobs whose base JCT is 0 are left out.
pub fn jct_gaps(base: &SimResult, other: &SimResult) -> Vec<f64> {
    base.jobs
        .iter()
        .zip(&other.jobs)
        .filter(|(b, _)| b.jct() > 0.0)
        .map(|(b, o)| (b.jct() - o.jct()) / b.jct())
        .collect()
}

/// The 10th, 25th, 50th, 75th and 90th percentiles of `values`.
pub fn gap_percentiles(values: &[f64]) -> [f64; 5] {
    [0.10, 0.25, 0.50, 0.75, 0.90].map(|q| quantile(values, q))
}

/// The value at quantile `q` (nearest rank) of `values`.
pub fn quantile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index_is_one_for_equal_shares_and_one_over_n_for_a_monopoly() {
        assert_eq!(jain(&[2.0, 2.0, 2.0]), 1.0);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
    }

    #[test]
    fn spread_splits_an_interval_across_bins() {
        let mut bins = vec![0.0; 3];
        spread(&mut bins, 10.0, 5.0, 25.0, 2.0);
        assert_eq!(bins, vec![10.0, 20.0, 10.0]);
    }
}
