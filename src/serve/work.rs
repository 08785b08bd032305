//! What each endpoint computes, as plain functions shared with the CLI so that `graphene serve`
//! and `graphene build-schedule` / `lower-bound` / `validate` produce the same bytes.

use std::time::Instant;

use crate::error::{Error, Result};
use crate::lowerbound;
use crate::model::{Cluster, Dag};
use crate::output::ScheduleReport;
use crate::validate::{validate, validate_schedule, Entry, Violation};
use crate::{OfflineConfig, Scheduler};

/// A checked schedule report and the time the scheduler took (also when the report says 0).
pub struct Scheduled {
    pub report: ScheduleReport,
    pub elapsed_ms: f64,
}

/// Builds the schedule, checks it with the independent validator and reports it, exactly as
/// `build-schedule` does once its flags are resolved. `no_timing` reports `elapsed_ms` as 0.
pub fn schedule(
    dag: &Dag,
    cluster: &Cluster,
    which: Scheduler,
    cfg: &OfflineConfig,
    seed: u64,
    no_timing: bool,
) -> Result<Scheduled> {
    let bounds = lowerbound::compute(dag, cluster);
    let started = Instant::now();
    let built = crate::build(which, dag, cluster, cfg, seed);
    let elapsed_ms = started.elapsed().as_secs_f64() * 1e3;
    let violations = validate_schedule(dag, cluster, &built.schedule);
    if let Some(v) = violations.first() {
        return Err(Error::Usage(format!(
            "internal error: {} produced an invalid schedule ({} violations, first: {v}); please report this with the input",
            which.name(),
            violations.len()
        )));
    }
    let report = ScheduleReport::new(
        dag,
        which.name(),
        cluster.len(),
        &built.schedule,
        bounds,
        built.search,
        if no_timing { 0.0 } else { elapsed_ms },
    );
    Ok(Scheduled { report, elapsed_ms })
}

/// `lower-bound --json`.
pub fn lower_bound_json(dag: &Dag, cluster: &Cluster) -> serde_json::Value {
    let lb = lowerbound::compute(dag, cluster);
    serde_json::json!({
        "dag": dag.name,
        "tasks": dag.len(),
        "machines": cluster.len(),
        "lower_bounds": lb,
        "best": lb.best(),
    })
}

/// `validate`'s verdict: the one-line summary of a valid schedule, or its violations.
pub fn validate_entries(dag: &Dag, cluster: &Cluster, entries: &[Entry]) -> std::result::Result<String, Vec<Violation>> {
    let violations = validate(dag, cluster, entries);
    if !violations.is_empty() {
        return Err(violations);
    }
    let makespan = entries.iter().map(|t| t.end).fold(0.0, f64::max);
    Ok(format!("valid: {} tasks of {} on {} machines, makespan {makespan}", entries.len(), dag.name, cluster.len()))
}

/// Pretty JSON and a newline, as the CLI prints it.
pub fn pretty(v: &serde_json::Value) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(v).expect("serializable");
    out.push(b'\n');
    out
}
