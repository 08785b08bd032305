//! `graphene build-schedule`

use std::path::PathBuf;
use std::time::Instant;

use graphene::formats;
use graphene::lowerbound;
use graphene::model::Dag;
use graphene::offline::SearchReport;
use graphene::output::{self, ScheduleReport};
use graphene::validate::validate_schedule;
use graphene::{Error, Result};

use super::args::{cluster_for, parse_scheduler, ClusterArgs, InputArgs, SearchArgs};

#[derive(clap::Args)]
pub struct Args {
    /// DAG file (graphene JSON, WfCommons or Decima TPC-H).
    pub dag: PathBuf,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub search: SearchArgs,
    /// graphene, or a baseline: bfs, cp, tetris, random, strippart, coffman-graham.
    #[arg(long, default_value = "graphene")]
    pub scheduler: String,
    /// Write the schedule here (atomically) instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Report elapsed_ms as 0 so that repeated runs are byte-identical.
    #[arg(long)]
    pub no_timing: bool,
    /// No summary on standard error.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn run(a: Args) -> Result<i32> {
    let which = parse_scheduler(&a.scheduler)?;
    let cfg = a.search.config()?;
    let dag = formats::load_dag(&a.dag, &a.input.load_options())?;
    if let Some(code) = run_on_network(&a, which, &cfg, &dag)? {
        return Ok(code);
    }
    let spec = a.cluster.spec()?;
    let cluster = cluster_for(&spec, &dag, a.cluster.cluster.as_deref(), &a.dag)?;
    let bounds = lowerbound::compute(&dag, &cluster);
    let started = Instant::now();
    let built = a.search.in_pool(|| graphene::build(which, &dag, &cluster, &cfg, a.input.seed))?;
    let elapsed_ms = started.elapsed().as_secs_f64() * 1e3;
    let violations = validate_schedule(&dag, &cluster, &built.schedule);
    if let Some(v) = violations.first() {
        return Err(Error::Usage(format!(
            "internal error: {} produced an invalid schedule ({} violations, first: {v}); please report this with the input",
            which.name(),
            violations.len()
        )));
    }
    let report = ScheduleReport::new(
        &dag,
        which.name(),
        cluster.len(),
        &built.schedule,
        bounds,
        built.search,
        if a.no_timing { 0.0 } else { elapsed_ms },
    );
    output::write_or_stdout(a.out.as_deref(), &report.to_json())?;
    if !a.quiet {
        eprint!("{}", summary(&dag, &report, cluster.len(), elapsed_ms));
    }
    Ok(0)
}

fn summary(dag: &Dag, r: &ScheduleReport, machines: usize, elapsed_ms: f64) -> String {
    let lb = &r.lower_bounds;
    let mut s = format!(
        "{} on {}: {} stages, {} tasks, {machines} machines\n",
        r.scheduler,
        dag.name,
        dag.stages.len(),
        dag.len()
    );
    s += &format!("  makespan      {:.3}\n", r.makespan);
    s += &format!(
        "  lower bounds  critical path {:.3} | total work {:.3} | stage-aware {:.3}\n",
        lb.critical_path, lb.total_work, lb.stage_aware
    );
    s += &format!("  ratio         {:.3} x best lower bound\n", r.ratio);
    if let Some(search) = &r.search {
        s += &search_lines(search);
    }
    s += &format!("  time          {elapsed_ms:.1} ms; schedule validated\n");
    s
}

fn search_lines(search: &SearchReport) -> String {
    let mut s = format!(
        "  search        {} part(s) between cuts, {} candidate troublesome sets explored\n",
        search.parts.len(),
        search.candidates_explored
    );
    let shown = 6;
    for (i, p) in search.parts.iter().enumerate().take(shown) {
        let what = if p.bypassed {
            "no internal dependencies: greedy packing".to_string()
        } else if p.subset_sizes[0] == 0 {
            format!(
                "{} candidates ({} duplicate, {} pruned); best: no troublesome set (plain greedy)",
                p.candidates_explored, p.candidate_stats.duplicates, p.candidate_stats.pruned
            )
        } else {
            let th = match (p.long_threshold, p.frag_threshold) {
                (Some(l), Some(f)) => format!("LongScore >= {l:.2} or FragScore <= {f:.2}"),
                (Some(l), None) => format!("LongScore >= {l:.2}"),
                (None, Some(f)) => format!("FragScore <= {f:.2}"),
                (None, None) => String::new(),
            };
            let mut stages = p.trouble_stages.iter().take(4).cloned().collect::<Vec<_>>().join(", ");
            if p.trouble_stages.len() > 4 {
                stages += &format!(" (+{} more)", p.trouble_stages.len() - 4);
            }
            format!(
                "{} candidates ({} duplicate, {} pruned); T = {} tasks [{}] from {th}; order {}, T {}; |S|={} |P|={} |C|={}",
                p.candidates_explored,
                p.candidate_stats.duplicates,
                p.candidate_stats.pruned,
                p.subset_sizes[0],
                stages,
                p.order.map_or("-", |o| o.as_str()),
                p.trouble_direction.unwrap_or("-"),
                p.subset_sizes[1],
                p.subset_sizes[2],
                p.subset_sizes[3]
            )
        };
        s += &format!("  part {:<3}      {} tasks, makespan {:.3}: {what}\n", i + 1, p.tasks, p.makespan);
    }
    if search.parts.len() > shown {
        s += &format!("  ...           {} more parts\n", search.parts.len() - shown);
    }
    s
}

/// Machines of different speeds, or data on edges, or a scheduler built for them: plan on the
/// network, validate transfers and duplicated runs, and add speedup, SLR and the duplicates
/// (`copies`) to the report. None when the plain path applies.
fn run_on_network(a: &Args, which: graphene::Scheduler, cfg: &graphene::OfflineConfig, dag: &Dag) -> Result<Option<i32>> {
    let network_file = formats::is_network_file(&a.dag, a.input.format)?;
    let spec = super::args::spec_for_file(&a.cluster, &a.input, &a.dag)?;
    let net = spec.network();
    if !network_file && !which.models_network() && net.is_trivial_for(dag) {
        return Ok(None);
    }
    if !which.models_network() && !net.is_trivial_for(dag) {
        return Err(graphene::Error::Usage(format!(
            "{} plans at speed 1 without transfers; on machines of different speeds or with edge data use one of graphene, {}",
            which.name(),
            graphene::hetero::HeteroAlgo::ALL.map(|h| h.name()).join(", ")
        )));
    }
    let cluster = cluster_for(&spec, dag, a.cluster.cluster.as_deref(), &a.dag)?;
    let started = std::time::Instant::now();
    let built = a.search.in_pool(|| graphene::scheduler::build_on(which, dag, &cluster, &net, cfg, a.input.seed))?;
    let elapsed_ms = started.elapsed().as_secs_f64() * 1e3;
    let violations =
        graphene::validate::validate_schedule_on(dag, &cluster, &net, &built.schedule, &built.copies);
    if let Some(v) = violations.first() {
        return Err(graphene::Error::Usage(format!(
            "internal error: {} produced an invalid schedule ({} violations, first: {v}); please report this with the input",
            which.name(),
            violations.len()
        )));
    }
    // Speed-1 bounds shrink by the fastest speed (no machine runs anything faster).
    let mut bounds = graphene::lowerbound::compute(dag, &cluster);
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
        if a.no_timing { 0.0 } else { elapsed_ms },
    );
    let metrics = graphene::hetero::metrics::Bases::of_dag(dag, &net).metrics(report.makespan);
    let mut value = serde_json::to_value(&report).expect("a report always serializes");
    let copies: Vec<serde_json::Value> = built
        .copies
        .iter()
        .map(|p| serde_json::json!({"id": dag.task_name(p.task), "machine": p.machine, "start": p.start, "end": p.end}))
        .collect();
    value["speedup"] = serde_json::json!(metrics.speedup);
    value["slr"] = serde_json::json!(metrics.slr);
    value["copies"] = serde_json::Value::Array(copies);
    let mut bytes = serde_json::to_vec_pretty(&value).expect("a report always serializes");
    bytes.push(b'\n');
    output::write_or_stdout(a.out.as_deref(), &bytes)?;
    if !a.quiet {
        let mut s = summary(dag, &report, cluster.len(), elapsed_ms);
        s += &format!(
            "  network       speeds {:.3}-{:.3}, bandwidth {}; speedup {:.3}, SLR {:.3}; {} duplicated run(s)\n",
            net.speeds.iter().copied().fold(f64::INFINITY, f64::min),
            top,
            net.bandwidth,
            metrics.speedup,
            metrics.slr,
            built.copies.len()
        );
        eprint!("{s}");
    }
    Ok(Some(0))
}
