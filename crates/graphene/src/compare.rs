//! Running several offline schedulers on the same DAGs and summarising how close each gets to
//! the lower bound.

use std::time::Instant;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::hetero::metrics::Bases;
use crate::lowerbound;
pub use crate::metrics::quantile;
use crate::model::{ClusterSpec, Dag};
use crate::offline::OfflineConfig;
use crate::scheduler::{build_on, Scheduler};
use crate::validate::validate_schedule_on;

#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Position of the DAG among those compared (names need not be unique: WfCommons files of
    /// one recipe share their workflow name).
    pub dag_index: usize,
    pub dag: String,
    pub tasks: usize,
    pub scheduler: String,
    pub makespan: f64,
    pub lower_bound: f64,
    /// makespan / best lower bound
    pub ratio: f64,
    pub elapsed_ms: f64,
    /// (total work / fastest speed) / makespan, as LACHESIS defines it.
    pub speedup: f64,
    /// makespan / (critical path at the fastest speed).
    pub slr: f64,
    /// Runs of tasks duplicated to save transfers.
    pub copies: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct SchedulerSummary {
    pub scheduler: String,
    pub dags: usize,
    pub median_ratio: f64,
    pub p90_ratio: f64,
    pub mean_ratio: f64,
    /// DAGs on which this scheduler's makespan is the smallest (ties count for all).
    pub best_count: usize,
    pub mean_makespan: f64,
    pub mean_speedup: f64,
    pub mean_slr: f64,
}

/// Schedules every DAG with every scheduler, validating each schedule. `on_row` sees rows as
/// they are made (for progress output).
pub fn compare(
    dags: &[Dag],
    spec: &ClusterSpec,
    schedulers: &[Scheduler],
    cfg: &OfflineConfig,
    seed: u64,
    on_row: impl FnMut(&Row),
) -> Result<Vec<Row>> {
    let specs: Vec<&ClusterSpec> = dags.iter().map(|_| spec).collect();
    compare_each(dags, &specs, schedulers, cfg, seed, on_row)
}

/// `compare` with a cluster per DAG (task-graph/network files bring their own), on machines of
/// different speeds with transfers where the cluster says so. Schedulers that plan at speed 1
/// without transfers are refused on such clusters rather than given schedules they cannot keep.
pub fn compare_each(
    dags: &[Dag],
    specs: &[&ClusterSpec],
    schedulers: &[Scheduler],
    cfg: &OfflineConfig,
    seed: u64,
    mut on_row: impl FnMut(&Row),
) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for (dag_index, (dag, spec)) in dags.iter().zip(specs).enumerate() {
        let cluster = spec.resolve(&dag.resources)?;
        cluster.check_fits(dag)?;
        let net = spec.network();
        let trivial = net.is_trivial_for(dag);
        if let Some(s) = schedulers.iter().find(|s| !trivial && !s.models_network()) {
            return Err(Error::Usage(format!(
                "{} plans at speed 1 without transfers and cannot run on the heterogeneous cluster of {}",
                s.name(),
                dag.name
            )));
        }
        // Speed-1 bounds shrink by the fastest speed (no machine runs anything faster).
        let lb = lowerbound::compute(dag, &cluster).best() / net.max_speed();
        let bases = Bases::of_dag(dag, &net);
        for &s in schedulers {
            let started = Instant::now();
            let built = build_on(s, dag, &cluster, &net, cfg, seed);
            let elapsed_ms = started.elapsed().as_secs_f64() * 1e3;
            if let Some(v) = validate_schedule_on(dag, &cluster, &net, &built.schedule, &built.copies).first() {
                return Err(Error::Usage(format!(
                    "internal error: {} produced an invalid schedule for {}: {v}",
                    s.name(),
                    dag.name
                )));
            }
            let makespan = built.schedule.makespan();
            let row = Row {
                dag_index,
                dag: dag.name.clone(),
                tasks: dag.len(),
                scheduler: s.name().to_string(),
                makespan,
                lower_bound: lb,
                ratio: if lb > 0.0 { makespan / lb } else { 1.0 },
                elapsed_ms,
                speedup: bases.metrics(makespan).speedup,
                slr: bases.metrics(makespan).slr,
                copies: built.copies.len(),
            };
            on_row(&row);
            rows.push(row);
        }
    }
    Ok(rows)
}

pub fn summarize(rows: &[Row], schedulers: &[Scheduler]) -> Vec<SchedulerSummary> {
    schedulers
        .iter()
        .map(|s| {
            let mine: Vec<&Row> = rows.iter().filter(|r| r.scheduler == s.name()).collect();
            let ratios: Vec<f64> = mine.iter().map(|r| r.ratio).collect();
            let best_count = mine
                .iter()
                .filter(|r| {
                    rows.iter().filter(|o| o.dag_index == r.dag_index).all(|o| r.makespan <= o.makespan * (1.0 + 1e-9))
                })
                .count();
            SchedulerSummary {
                scheduler: s.name().to_string(),
                dags: mine.len(),
                median_ratio: quantile(&ratios, 0.5),
                p90_ratio: quantile(&ratios, 0.9),
                mean_ratio: ratios.iter().sum::<f64>() / ratios.len().max(1) as f64,
                best_count,
                mean_makespan: mine.iter().map(|r| r.makespan).sum::<f64>() / mine.len().max(1) as f64,
                mean_speedup: mine.iter().map(|r| r.speedup).sum::<f64>() / mine.len().max(1) as f64,
                mean_slr: mine.iter().map(|r| r.slr).sum::<f64>() / mine.len().max(1) as f64,
            }
        })
        .collect()
}
