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

/// `validate` on a whole schedule file: [`validate_entries`] on its tasks, copies and order, and
/// every figure it states checked against them ([`check_stated`]).
pub fn validate_file(
    dag: &Dag,
    cluster: &Cluster,
    net: &Network,
    file: &crate::formats::schedule_file::ScheduleFile,
) -> std::result::Result<String, Vec<Violation>> {
    let stated = check_stated(dag, cluster, net, file);
    match validate_entries(dag, cluster, net, &file.tasks, &file.copies, &file.order) {
        Ok(summary) if stated.is_empty() => Ok(summary),
        Ok(_) => Err(stated),
        Err(mut v) => {
            v.extend(stated);
            Err(v)
        }
    }
}

/// Relative slack for stated figures (a hand-edited file may round them).
const STATED_EPS: f64 = 1e-6;

/// The figures a schedule file states besides its tasks, each checked when present: `makespan`
/// (the tasks' last end), `machines` (the cluster's), `resources` (the DAG's), `lower_bounds`
/// (recomputed from the DAG and cluster, at the fastest speed), `ratio` (makespan over the best
/// bound), `speedup` and `slr` (LACHESIS's, from the DAG and speeds) and every task's
/// `priority` (1 - its rank in `order` / (tasks - 1)). A violation per contradicted figure.
pub fn check_stated(
    dag: &Dag,
    cluster: &Cluster,
    net: &Network,
    file: &crate::formats::schedule_file::ScheduleFile,
) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut check = |field: &str, stated: Option<f64>, actual: f64, source: &str| {
        let Some(stated) = stated else { return };
        let close = (stated - actual).abs() <= STATED_EPS * actual.abs().max(1.0);
        if !close {
            out.push(Violation::Stated {
                field: field.to_string(),
                stated: crate::limits::show(stated),
                actual: crate::limits::show(actual),
                source: source.to_string(),
            });
        }
    };
    let makespan = file.tasks.iter().map(|t| t.end).filter(|e| e.is_finite()).fold(0.0, f64::max);
    check("makespan", file.makespan, makespan, "its tasks end at");
    check("machines", file.machines, cluster.len() as f64, "the cluster has");
    let needs_bounds = file.lower_bounds.is_some() || file.ratio.is_some();
    if needs_bounds {
        let mut bounds = lowerbound::compute(dag, cluster);
        let top = net.max_speed();
        if top > 0.0 && top != 1.0 {
            bounds.critical_path /= top;
            bounds.total_work /= top;
            bounds.stage_aware /= top;
        }
        if let Some(b) = &file.lower_bounds {
            let source = "the DAG and the cluster give";
            check("lower_bounds.critical_path", b.critical_path, bounds.critical_path, source);
            check("lower_bounds.total_work", b.total_work, bounds.total_work, source);
            check("lower_bounds.stage_aware", b.stage_aware, bounds.stage_aware, source);
        }
        let best = bounds.best();
        let ratio = if best > 0.0 { makespan / best } else { 1.0 };
        check("ratio", file.ratio, ratio, "its tasks' makespan over the best lower bound is");
    }
    if file.speedup.is_some() || file.slr.is_some() {
        let m = crate::hetero::metrics::Bases::of_dag(dag, net).metrics(makespan);
        check("speedup", file.speedup, m.speedup, "the total work at the fastest speed over the makespan is");
        check("slr", file.slr, m.slr, "the makespan over the critical path at the fastest speed is");
    }
    if !file.order.is_empty() {
        let n = file.order.len();
        let rank: std::collections::HashMap<&str, usize> =
            file.order.iter().enumerate().map(|(k, id)| (id.as_str(), k)).collect();
        for t in &file.tasks {
            if let (Some(p), Some(&k)) = (t.priority, rank.get(t.id.as_str())) {
                let expected = if n > 1 { 1.0 - k as f64 / (n - 1) as f64 } else { 1.0 };
                check(&format!("task '{}' priority", t.id), Some(p), expected, "its rank in order gives");
            }
        }
    }
    if let Some(r) = &file.resources {
        if *r != dag.resources {
            out.push(Violation::Stated {
                field: "resources".into(),
                stated: r.join(", "),
                actual: dag.resources.join(", "),
                source: "the DAG has".into(),
            });
        }
    }
    out
}

/// Pretty JSON and a newline, as the CLI prints it.
pub fn pretty(v: &serde_json::Value) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(v).expect("serializable");
    out.push(b'\n');
    out
}

/// One file of a Tez export directory: the order for one DAG shape.
pub struct TezShapeExport {
    /// `graphene-tez-signature/1` of the shape: the file is `<signature>.json`.
    pub signature: String,
    /// The name of the shape's latest run.
    pub dag: String,
    /// Tez DAG ids of the runs the durations came from, oldest first.
    pub runs: Vec<String>,
    pub makespan: f64,
    /// The export (graphene-tez/2, with `signature`).
    pub bytes: Vec<u8>,
}

/// Turns a Tez history into one export per DAG shape (signature): the shape's DAG made from its
/// runs ([`crate::formats::tez::merge_runs`]: the latest run's tasks, each vertex's tasks lasting
/// the median of its task durations over all runs), demands replaced by `demands` when given,
/// scheduled by `which` on the cluster `cluster_for` gives for it, checked by the independent
/// validator, and exported in `opts` (which must be the tez format) with the signature. Shapes
/// come out in signature order.
#[allow(clippy::too_many_arguments)]
pub fn tez_history_exports(
    history: crate::formats::tez::TezHistory,
    demands: Option<&str>,
    cluster_for: &dyn Fn(&Dag) -> Result<Cluster>,
    net: &Network,
    which: Scheduler,
    cfg: &OfflineConfig,
    seed: u64,
    opts: &crate::export::ExportOptions,
) -> Result<Vec<TezShapeExport>> {
    use crate::formats::tez;
    if opts.format != crate::export::ExportFormat::Tez {
        return Err(Error::Usage(
            "an export directory from a Tez history is in the tez format only (--format tez)".into(),
        ));
    }
    let profile = demands.map(crate::formats::profile::Profile::by_name).transpose()?;
    let runs = history.pick(None)?;
    let mut shapes: std::collections::BTreeMap<String, Vec<&tez::TezRun>> = std::collections::BTreeMap::new();
    for r in &runs {
        let sig = r.signature.clone().ok_or_else(|| {
            Error::Usage(format!(
                "{} line {}: DAG {} ('{}') has no {}: a vertex name holds a tab or a newline",
                r.file.display(),
                r.line,
                r.id,
                r.dag.name,
                tez::SIGNATURE_SCHEME
            ))
        })?;
        shapes.entry(sig).or_default().push(r);
    }
    let mut out = Vec::with_capacity(shapes.len());
    for (signature, mut group) in shapes {
        // Oldest first, so that the last is the latest run (Tez numbers DAGs in time order).
        group.sort_by_cached_key(|r| tez_id_key(&r.id));
        let mut dag = tez::merge_runs(&group)?;
        if let Some(p) = &profile {
            dag = p.apply(&dag, seed);
        }
        let cluster = cluster_for(&dag)?;
        let s = schedule(&dag, &cluster, net, false, which, cfg, seed, true)?;
        let text = String::from_utf8(s.json).expect("a report is UTF-8");
        let sched = crate::export::ScheduleIn::parse(&text)?;
        let mut o = opts.clone();
        o.signature = Some(signature.clone());
        let bytes = crate::export::export(&sched, Some(&dag), &o)?;
        out.push(TezShapeExport {
            signature,
            dag: dag.name.clone(),
            runs: group.iter().map(|r| r.id.clone()).collect(),
            makespan: s.report.makespan,
            bytes,
        });
    }
    Ok(out)
}

/// `dag_<cluster timestamp>_<application>_<n>` as numbers, for time order.
fn tez_id_key(id: &str) -> Vec<u64> {
    id.trim_start_matches("dag_").split('_').map(|p| p.parse().unwrap_or(u64::MAX)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::schedule_file;
    use crate::model::ClusterSpec;

    fn example() -> (Dag, Cluster) {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../traces/example.json")).unwrap();
        let dag = crate::formats::native::parse(&text, "example").unwrap();
        let cluster = ClusterSpec::uniform(10, ClusterSpec::default_capacity()).resolve(&dag.resources).unwrap();
        (dag, cluster)
    }

    /// A report's own figures pass; each one edited to contradict its tasks, the DAG or the
    /// cluster is a violation naming the field, the stated and the actual value.
    #[test]
    fn stated_figures_must_agree_with_the_tasks() {
        let (dag, cluster) = example();
        let net = Network::uniform(cluster.len());
        let built =
            schedule(&dag, &cluster, &net, false, Scheduler::Graphene, &OfflineConfig::default(), 0, true).unwrap();
        let text = String::from_utf8(built.json).unwrap();
        let file = schedule_file::parse(&text).unwrap();
        assert!(validate_file(&dag, &cluster, &net, &file).is_ok());
        let edit = |f: &dyn Fn(&mut serde_json::Value)| {
            let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
            f(&mut v);
            let file = schedule_file::parse(&v.to_string()).unwrap();
            validate_file(&dag, &cluster, &net, &file).unwrap_err().iter().map(|v| v.to_string()).collect::<Vec<_>>()
        };
        assert_eq!(edit(&|v| v["makespan"] = 1.0.into()), ["makespan is 1 in the file, but its tasks end at 50.5"]);
        // Within the slack a hand-edited file may round to.
        let rounded = edit(&|v| {
            v["makespan"] = 50.50000001.into();
            v["machines"] = 3.into();
        });
        assert_eq!(rounded, ["machines is 3 in the file, but the cluster has 10"]);
        assert_eq!(
            edit(&|v| v["lower_bounds"]["stage_aware"] = 1.0.into()),
            ["lower_bounds.stage_aware is 1 in the file, but the DAG and the cluster give 50.5"]
        );
        assert_eq!(
            edit(&|v| v["ratio"] = 0.5.into()),
            ["ratio is 0.5 in the file, but its tasks' makespan over the best lower bound is 1"]
        );
        assert_eq!(
            edit(&|v| v["tasks"][3]["priority"] = 0.0.into()),
            [format!(
                "task '{}' priority is 0 in the file, but its rank in order gives {}",
                v_id(&text, 3),
                v_pri(&text, 3)
            )]
        );
        assert_eq!(
            edit(&|v| v["resources"] = serde_json::json!(["cpu"])),
            ["resources is cpu in the file, but the DAG has cpu, mem, disk, net"]
        );
        // A network report's speedup and SLR.
        let speeds = ClusterSpec::with_speeds(&[1.0, 2.0, 4.0], ClusterSpec::default_capacity(), 1.0);
        let c3 = speeds.resolve(&dag.resources).unwrap();
        let net3 = speeds.network();
        let h =
            schedule(&dag, &c3, &net3, false, Scheduler::parse("heft").unwrap(), &OfflineConfig::default(), 0, true)
                .unwrap();
        let htext = String::from_utf8(h.json).unwrap();
        assert!(validate_file(&dag, &c3, &net3, &schedule_file::parse(&htext).unwrap()).is_ok());
        let mut v: serde_json::Value = serde_json::from_str(&htext).unwrap();
        v["speedup"] = 100.0.into();
        v["slr"] = 0.0.into();
        let bad = validate_file(&dag, &c3, &net3, &schedule_file::parse(&v.to_string()).unwrap()).unwrap_err();
        assert_eq!(bad.len(), 2, "{bad:?}");
        assert!(bad[0].to_string().starts_with("speedup is 100 in the file, but the total work"), "{}", bad[0]);
        assert!(bad[1].to_string().starts_with("slr is 0 in the file, but the makespan"), "{}", bad[1]);
    }

    fn v_pri(text: &str, i: usize) -> f64 {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        let p = v["tasks"][i]["priority"].as_f64().unwrap();
        assert!(p > 0.5, "the edit changes it");
        p
    }

    fn v_id(text: &str, i: usize) -> String {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        v["tasks"][i]["id"].as_str().unwrap().to_string()
    }
}
