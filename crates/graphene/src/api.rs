//! The library's front door for whole requests: build and check a schedule, compute bounds,
//! validate a schedule file, each returning the exact bytes `graphene build-schedule`,
//! `lower-bound --json` and `validate` print. The CLI, the HTTP service and the Python bindings
//! all call these, so the same inputs give the same bytes everywhere.

use std::time::Instant;

use crate::error::{Error, Result};
use crate::lowerbound;
use crate::model::{Cluster, Dag, Network};
use crate::output::ScheduleReport;
use crate::validate::{validate_on, validate_schedule, Entry, Violation};
use crate::{OfflineConfig, Scheduler};

/// A checked schedule and the bytes of its report.
pub struct Scheduled {
    pub report: ScheduleReport,
    /// The schedule file as `build-schedule` writes it.
    pub json: Vec<u8>,
    /// The time the scheduler took (also when the report says 0).
    pub elapsed_ms: f64,
    /// Set when the schedule was planned on the network (speeds, transfers).
    pub network: Option<NetworkFigures>,
}

pub struct NetworkFigures {
    pub speedup: f64,
    pub slr: f64,
    /// Extra runs of duplicated tasks.
    pub copies: usize,
}

/// Refuses a scheduler that plans at speed 1 without transfers on a network where that matters.
pub fn check_network(which: Scheduler, net: &Network, dag: &Dag) -> Result<()> {
    if !which.models_network() && !net.is_trivial_for(dag) {
        return Err(Error::Usage(format!(
            "{} plans at speed 1 without transfers; on machines of different speeds or with edge data use one of graphene, {}",
            which.name(),
            crate::hetero::HeteroAlgo::ALL.map(|h| h.name()).join(", ")
        )));
    }
    Ok(())
}

/// Refuses `--exact` where it cannot run: another scheduler, a DAG too large for the search, a
/// network (speeds, transfers) the branch and bound does not model.
pub fn check_exact(which: Scheduler, cfg: &OfflineConfig, dag: &Dag, plain: bool) -> Result<()> {
    if cfg.exact.is_none() {
        return Ok(());
    }
    if which != Scheduler::Graphene {
        return Err(Error::Usage(format!("--exact is graphene's; {} has no exact search", which.name())));
    }
    let max = crate::offline::EXACT_MAX_TASKS;
    if dag.len() > max {
        return Err(Error::Usage(format!(
            "--exact: {} has {} tasks; the exact search takes at most {max} (it is exponential in the tasks)",
            dag.name,
            dag.len()
        )));
    }
    if !plain {
        return Err(Error::Usage(
            "--exact plans at speed 1 without transfers; it does not run on machines of different speeds or with edge data"
                .into(),
        ));
    }
    Ok(())
}

/// Builds the schedule, checks it with the independent validator and reports it, exactly as
/// `build-schedule` does once its flags are resolved: schedulers that model the network (and
/// every scheduler on a task-graph/network file) plan on `net` and their report adds speedup,
/// SLR and the duplicated runs; the others plan at speed 1. `no_timing` reports `elapsed_ms` 0.
#[allow(clippy::too_many_arguments)]
pub fn schedule(
    dag: &Dag,
    cluster: &Cluster,
    net: &Network,
    network_file: bool,
    which: Scheduler,
    cfg: &OfflineConfig,
    seed: u64,
    no_timing: bool,
) -> Result<Scheduled> {
    // Graphene models the network too, but on a homogeneous input without data it plans exactly
    // as before: keep its plain report there, so existing users' outputs do not change.
    let plain = !network_file && !matches!(which, Scheduler::Hetero(_)) && net.is_trivial_for(dag);
    check_exact(which, cfg, dag, plain)?;
    if !plain {
        check_network(which, net, dag)?;
    }
    let internal = |n: usize, first: &dyn std::fmt::Display| {
        Error::Usage(format!(
            "internal error: {} produced an invalid schedule ({n} violations, first: {first}); please report this with the input",
            which.name()
        ))
    };
    if plain {
        let bounds = lowerbound::compute(dag, cluster);
        let started = Instant::now();
        let built = crate::build(which, dag, cluster, cfg, seed);
        let elapsed_ms = started.elapsed().as_secs_f64() * 1e3;
        let violations = validate_schedule(dag, cluster, &built.schedule);
        if let Some(v) = violations.first() {
            return Err(internal(violations.len(), v));
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
        let json = report.to_json();
        return Ok(Scheduled { report, json, elapsed_ms, network: None });
    }
    let started = Instant::now();
    let built = crate::scheduler::build_on(which, dag, cluster, net, cfg, seed);
    let elapsed_ms = started.elapsed().as_secs_f64() * 1e3;
    let violations = crate::validate::validate_schedule_on(dag, cluster, net, &built.schedule, &built.copies);
    if let Some(v) = violations.first() {
        return Err(internal(violations.len(), v));
    }
    // Speed-1 bounds shrink by the fastest speed (no machine runs anything faster).
    let mut bounds = lowerbound::compute(dag, cluster);
    let top = net.max_speed();
    bounds.critical_path /= top;
    bounds.total_work /= top;
    bounds.stage_aware /= top;
    let report = ScheduleReport::new(
        dag,
        which.name(),
        cluster.len(),
        &built.schedule,
        bounds,
        built.search,
        if no_timing { 0.0 } else { elapsed_ms },
    );
    let metrics = crate::hetero::metrics::Bases::of_dag(dag, net).metrics(report.makespan);
    let mut value = serde_json::to_value(&report).expect("a report always serializes");
    let copies: Vec<serde_json::Value> = built
        .copies
        .iter()
        .map(|p| serde_json::json!({"id": dag.task_name(p.task), "machine": p.machine, "start": p.start, "end": p.end}))
        .collect();
    value["speedup"] = serde_json::json!(metrics.speedup);
    value["slr"] = serde_json::json!(metrics.slr);
    value["copies"] = serde_json::Value::Array(copies);
    let json = pretty(&value);
    let network = Some(NetworkFigures { speedup: metrics.speedup, slr: metrics.slr, copies: built.copies.len() });
    Ok(Scheduled { report, json, elapsed_ms, network })
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

/// `validate`'s verdict: the one-line summary of a valid schedule, or its violations. `net`
/// gives machine speeds and transfer costs, `copies` the duplicated runs a DEFT schedule holds.
pub fn validate_entries(
    dag: &Dag,
    cluster: &Cluster,
    net: &Network,
    entries: &[Entry],
    copies: &[Entry],
    order: &[String],
) -> std::result::Result<String, Vec<Violation>> {
    let mut violations = validate_on(dag, cluster, net, entries, copies);
    violations.extend(crate::validate::check_order(dag, order));
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
