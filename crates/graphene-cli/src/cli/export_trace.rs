//! `graphene export-trace`: a whole workload trace for another engine's simulator (today SLS).

use std::path::PathBuf;

use graphene::export::sls::{TraceExportOptions, TraceOrder};
use graphene::trace::TraceFormat;
use graphene::Result;

use super::args::{ClusterArgs, YarnUnitArgs};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TraceExportFormat {
    /// A YARN SLS trace for graphene's SLS AM (integrations/yarn-sls): sls-jobs.json, its Rumen
    /// stand-ins rumen-jobs.json (what stock SLS 3.4.2 can load) and manifest.json.
    Sls,
}

#[derive(clap::Args)]
pub struct Args {
    /// Workload trace (native CSV, or Alibaba v2018).
    pub trace: PathBuf,
    /// Format of the trace file (detected when absent).
    #[arg(long, value_parser = super::args::choice::<TraceFormat>())]
    pub trace_format: Option<TraceFormat>,
    #[arg(long, value_enum)]
    pub format: TraceExportFormat,
    /// Task order within each job: graphene (priScore), natural (Tez: distance from the roots),
    /// cp (critical path).
    #[arg(long, value_parser = super::args::choice::<TraceOrder>())]
    pub order: TraceOrder,
    /// The scheduler's queues, e.g. q0,q1: a job in any other queue is an error [default: the
    /// trace's queues].
    #[arg(long, value_name = "Q,...", value_delimiter = ',')]
    pub queues: Option<Vec<String>>,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub yarn: YarnUnitArgs,
    /// Milliseconds of SLS time per trace second (SLS runs in real time: 100 plays 10x faster).
    #[arg(long, value_name = "MS", default_value_t = 1000.0)]
    pub time_ms: f64,
    /// Output folder (written atomically): sls-jobs.json, rumen-jobs.json, manifest.json.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

pub fn run(a: Args) -> Result<i32> {
    let opts = TraceExportOptions { order: a.order, units: a.yarn.units(a.time_ms), queues: a.queues };
    // The library does the work (the Python package and the CLI share one path).
    let (out, skipped) = graphene::request::export_trace(
        &graphene::request::Source::Path(a.trace.clone()),
        a.trace_format,
        &a.cluster.options(),
        &opts,
    )?;
    if !skipped.is_empty() {
        eprintln!("export-trace: {skipped}");
    }
    let out = match a.format {
        TraceExportFormat::Sls => out,
    };
    let inputs: Vec<&std::path::Path> =
        std::iter::once(a.trace.as_path()).chain(a.cluster.cluster.as_deref()).collect();
    let mut dir = graphene::output::OutDir::create(&a.out, &inputs)?;
    dir.write("sls-jobs.json", &out.trace)?;
    dir.write("rumen-jobs.json", &out.rumen)?;
    dir.write("manifest.json", &out.manifest)?;
    dir.commit()?;
    eprintln!(
        "export-trace: {} jobs, {} tasks, order {} -> {}",
        out.jobs,
        out.tasks,
        a.order.name(),
        a.out.join("sls-jobs.json").display()
    );
    Ok(0)
}
