//! `graphene export`

use std::path::{Path, PathBuf};

use graphene::export::{self, ExportFormat, ExportOptions, ScheduleIn};
use graphene::formats::{self, Format, LoadOptions};
use graphene::{Error, Result};

use super::args::{parse_scheduler, ClusterArgs, SearchArgs, YarnUnitArgs};

#[derive(clap::Args)]
pub struct Args {
    /// Schedule file (as build-schedule writes it); not with --from-history.
    #[arg(required_unless_present = "from_history", conflicts_with = "from_history")]
    pub schedule: Option<PathBuf>,
    /// Tez history (a history.txt.* file or the tez.simple.history.logging.dir directory):
    /// write one tez export per DAG shape into --out-dir as <signature>.json, each from a
    /// schedule built for the shape's runs (the median task duration of each vertex over the
    /// runs; the latest run's parallelism).
    #[arg(long, value_name = "HISTORY", requires = "out_dir", conflicts_with_all = ["dag", "out"])]
    pub from_history: Option<PathBuf>,
    /// With --from-history: the export directory (created if missing; files replaced atomically).
    #[arg(long, value_name = "DIR", requires = "from_history")]
    pub out_dir: Option<PathBuf>,
    /// With --from-history: the scheduler that builds each schedule (as for build-schedule).
    #[arg(long, default_value = "graphene", requires = "from_history")]
    pub scheduler: String,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub search: SearchArgs,
    /// tez: vertex and task priorities; yarn: container requests; sls: an SLS job trace;
    /// csv: task,stage,priority,start,end,machine.
    #[arg(long, value_parser = super::args::choice::<ExportFormat>())]
    pub format: ExportFormat,
    /// Fold the priorities into at most N distinct values (ties only within a band). For tez
    /// and yarn a band is also cut where the container size changes (needs --dag), unless
    /// --allocation-request-id.
    #[arg(long, value_name = "N")]
    pub levels: Option<u32>,
    /// The YARN version has allocationRequestId (YARN-4889, Hadoop 2.9+/3.x): --levels bands
    /// may hold several container sizes (the tez export records it).
    #[arg(long)]
    pub allocation_request_id: bool,
    /// The DAG the schedule is for (needed by yarn and sls for demands and durations; checked
    /// against the schedule when given).
    #[arg(long, value_name = "FILE")]
    pub dag: Option<PathBuf>,
    /// Format of the --dag file (detected when absent).
    #[arg(long, value_parser = super::args::choice::<Format>(), value_name = "FORMAT")]
    pub dag_format: Option<Format>,
    /// TPC-H query of the --dag file; same meaning as for build-schedule.
    #[arg(long, value_name = "N")]
    pub query: Option<u32>,
    /// TPC-H executor count; same as for build-schedule.
    #[arg(long, value_name = "E", default_value_t = 20)]
    pub executors: u32,
    /// Demand profile (none, mixed, cpu-mem, uniform, single); give the same as for build-schedule.
    #[arg(long, value_name = "PROFILE")]
    pub demands: Option<String>,
    /// Seed of the demand profile; give the same as for build-schedule.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[command(flatten)]
    pub yarn: YarnUnitArgs,
    /// Milliseconds per unit of schedule time. Durations, memory and vcores must come out within
    /// what YARN holds (a Java long of ms and MB, an int of vcores); beyond is refused.
    #[arg(long, value_name = "MS", default_value_t = 1000.0)]
    pub time_ms: f64,
    /// SLS queue the job is submitted to.
    #[arg(long, default_value = "default")]
    pub queue: String,
    /// Write here (atomically) instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

pub fn run(a: Args) -> Result<i32> {
    let opts = ExportOptions {
        format: a.format,
        levels: a.levels,
        units: a.yarn.clone().units(a.time_ms),
        queue: a.queue.clone(),
        allocation_request_id: a.allocation_request_id,
        signature: None,
    };
    // The scales before any file is read (the library checks them again).
    opts.units.check()?;
    if let (Some(history), Some(dir)) = (&a.from_history, &a.out_dir) {
        return from_history(&a, history, dir, &opts);
    }
    let schedule_path = a.schedule.clone().expect("clap requires a schedule without --from-history");
    let schedule = ScheduleIn::load(&schedule_path)?;
    let dag = match &a.dag {
        Some(path) => {
            let load = LoadOptions {
                format: a.dag_format,
                query: a.query,
                executors: a.executors,
                demands: a.demands.clone(),
                seed: a.seed,
                job: None,
                dag: None,
            };
            Some(formats::load_dag(path, &load)?)
        }
        None => None,
    };
    // Field errors (a bad order, a task the DAG lacks) are the schedule file's.
    let bytes = export::export(&schedule, dag.as_ref(), &opts).map_err(|e| match e {
        Error::Field { .. } => e.in_file(&schedule_path),
        other => other,
    })?;
    let inputs: Vec<&std::path::Path> = std::iter::once(schedule_path.as_path()).chain(a.dag.as_deref()).collect();
    graphene::output::write_or_stdout(a.out.as_deref(), &bytes, &inputs)?;
    Ok(0)
}

/// `--from-history`: one `<signature>.json` per DAG shape of the history.
fn from_history(a: &Args, history: &Path, dir: &Path, opts: &ExportOptions) -> Result<i32> {
    if a.format != ExportFormat::Tez {
        return Err(Error::Usage("--from-history writes tez exports: use --format tez".into()));
    }
    let which = parse_scheduler(&a.scheduler)?;
    let cfg = a.search.config()?;
    if let Some(p) = &a.demands {
        graphene::formats::profile::Profile::by_name(p)?;
    }
    let spec = a.cluster.spec()?;
    let net = spec.network();
    let h = formats::tez::read(history)?;
    if h.report.says_more_than_dags_read() {
        eprintln!("{}: {}", history.display(), h.report);
    }
    let cluster_file = a.cluster.cluster.as_deref();
    let cluster_for = |dag: &graphene::Dag| super::args::cluster_for(&spec, dag, cluster_file, history);
    let shapes = a.search.in_pool(|| {
        graphene::api::tez_history_exports(h, a.demands.as_deref(), &cluster_for, &net, which, &cfg, a.seed, opts)
    })??;
    std::fs::create_dir_all(dir).map_err(|e| Error::Io(e).in_file(dir))?;
    for s in &shapes {
        let path = dir.join(format!("{}.json", s.signature));
        graphene::output::write_or_stdout(Some(&path), &s.bytes, &[history])?;
        let how = if s.runs.len() == 1 {
            "1 run".to_string()
        } else {
            format!("{} runs, median task duration per vertex", s.runs.len())
        };
        eprintln!("{}: {} ({how}), makespan {:.3}", path.display(), s.dag, s.makespan);
    }
    eprintln!("{} DAG shapes written to {}", shapes.len(), dir.display());
    Ok(0)
}
