//! `graphene export`

use std::path::PathBuf;

use graphene::export::{self, ExportFormat, ExportOptions, ScheduleIn};
use graphene::formats::{self, Format, LoadOptions};
use graphene::{Error, Result};

use super::args::YarnUnitArgs;

#[derive(clap::Args)]
pub struct Args {
    /// Schedule file (as build-schedule writes it).
    pub schedule: PathBuf,
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
        units: a.yarn.units(a.time_ms),
        queue: a.queue,
        allocation_request_id: a.allocation_request_id,
    };
    // The scales before any file is read (the library checks them again).
    opts.units.check()?;
    let schedule = ScheduleIn::load(&a.schedule)?;
    let dag = match &a.dag {
        Some(path) => {
            let load = LoadOptions {
                format: a.dag_format,
                query: a.query,
                executors: a.executors,
                demands: a.demands,
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
        Error::Field { .. } => e.in_file(&a.schedule),
        other => other,
    })?;
    let inputs: Vec<&std::path::Path> = std::iter::once(a.schedule.as_path()).chain(a.dag.as_deref()).collect();
    graphene::output::write_or_stdout(a.out.as_deref(), &bytes, &inputs)?;
    Ok(0)
}
