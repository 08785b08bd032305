//! Running several offline schedulers on the same DAGs and summarising how close each gets to
//! the lower bound.

use std::time::Instant;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::lowerbound;
use crate::model::{ClusterSpec, Dag};
use crate::offline::OfflineConfig;
use crate::scheduler::{build, Scheduler};
use crate::validate::validate_schedule;

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
}

/// Schedules every DAG with every scheduler, validating each schedule. `on_row` sees rows as
/// they are made (for progress output).
pub fn compare(
    dags: &[Dag],
    spec: &ClusterSpec,
    schedulers: &[Scheduler],
    cfg: &OfflineConfig,
    seed: u64,
    mut on_row: impl FnMut(&Row),
) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for (dag_index, dag) in dags.iter().enumerate() {
        let cluster = spec.resolve(&dag.resources)?;
        cluster.check_fits(dag)?;
        let lb = lowerbound::compute(dag, &cluster).best();
        for &s in schedulers {
            let started = Instant::now();
            let built = build(s, dag, &cluster, cfg, seed);
            let elapsed_ms = started.elapsed().as_secs_f64() * 1e3;
            if let Some(v) = validate_schedule(dag, &cluster, &built.schedule).first() {
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
            };
            on_row(&row);
            rows.push(row);
        }
    }
    Ok(rows)
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

pub fn summarize(rows: &[Row], schedulers: &[Scheduler]) -> Vec<SchedulerSummary> {
    schedulers
        .iter()
        .map(|s| {
            let mine: Vec<&Row> = rows.iter().filter(|r| r.scheduler == s.name()).collect();
            let ratios: Vec<f64> = mine.iter().map(|r| r.ratio).collect();
            let best_count = mine
                .iter()
                .filter(|r| {
                    rows.iter()
                        .filter(|o| o.dag_index == r.dag_index)
                        .all(|o| r.makespan <= o.makespan * (1.0 + 1e-9))
                })
                .count();
            SchedulerSummary {
                scheduler: s.name().to_string(),
                dags: mine.len(),
                median_ratio: quantile(&ratios, 0.5),
                p90_ratio: quantile(&ratios, 0.9),
                mean_ratio: ratios.iter().sum::<f64>() / ratios.len().max(1) as f64,
                best_count,
            }
        })
        .collect()
}
