//! `graphene gen-trace`: a synthetic workload from DAG files, written as a native CSV trace.

use std::path::PathBuf;

use graphene::trace::{self, ArrivalProcess};
use graphene::{Error, Result};

use super::args::{ClusterArgs, InputArgs};

#[derive(clap::Args)]
pub struct Args {
    /// DAG files to draw jobs from (a Decima TPC-H file without --query gives all 22 queries).
    #[arg(long, required = true, num_args = 1.., value_name = "FILES")]
    pub dags: Vec<PathBuf>,
    /// Number of jobs.
    #[arg(long, value_name = "N")]
    pub jobs: usize,
    /// Arrival process: poisson:MEAN_SECONDS (exponential gaps), fixed:SECONDS or all-at-once.
    #[arg(long, value_name = "PROCESS", default_value = "poisson:10")]
    pub arrival: String,
    /// Number of queues q0..q(K-1); each job joins one uniformly at random.
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub queues: usize,
    /// Rescale the arrival gaps so that the busiest resource of the cluster (--cluster or
    /// --machines/--capacity) is offered this load over the arrival window (e.g. 0.8).
    #[arg(long, value_name = "LOAD")]
    pub load: Option<f64>,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Write the trace here (atomically) instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// No summary on standard error.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn run(a: Args) -> Result<i32> {
    // Flags first: a bad flag should not wait for large DAG files to load.
    let arrival: ArrivalProcess = a.arrival.parse()?;
    if a.queues == 0 {
        return Err(Error::Usage("--queues must be at least 1".into()));
    }
    let dags = super::args::load_job_dags(&a.dags, &a.input)?;
    let cluster = super::args::trace_cluster(&a.cluster)?;
    let mut workload = trace::generate(&dags, a.jobs, arrival, a.queues, a.input.seed)?;
    let scale = match a.load {
        Some(target) => Some(trace::load::calibrate(&mut workload, &cluster, target)?),
        None => None,
    };
    let text = trace::native_csv::write(&workload)?;
    let inputs: Vec<&std::path::Path> =
        a.dags.iter().map(|p| p.as_path()).chain(a.cluster.cluster.as_deref()).collect();
    graphene::output::write_or_stdout(a.out.as_deref(), text.as_bytes(), &inputs)?;
    if !a.quiet {
        let last = workload.jobs.last().map_or(0.0, |j| j.arrival);
        eprintln!(
            "gen-trace: {} jobs ({} tasks) drawn from {} DAGs, {arrival}, last arrival {last:.3} s, {} queue(s), seed {}",
            workload.jobs.len(),
            workload.tasks(),
            dags.len(),
            a.queues,
            a.input.seed
        );
        let loads = trace::load::offered_load(&workload, &cluster);
        let shown: Vec<String> =
            cluster.resources.iter().zip(&loads).map(|(r, l)| format!("{r} {:.1}%", 100.0 * l)).collect();
        let scaled = match (scale, arrival) {
            (Some(f), ArrivalProcess::Poisson { mean }) => {
                format!(" (arrivals scaled x{f:.4}: poisson:{:.4})", mean * f)
            }
            (Some(f), ArrivalProcess::Fixed { interval }) => {
                format!(" (arrivals scaled x{f:.4}: fixed:{:.4})", interval * f)
            }
            _ => String::new(),
        };
        if trace::load::span(&workload) > 0.0 {
            eprintln!("gen-trace: offered load on {} machines: {}{scaled}", cluster.len(), shown.join(", "));
        }
    }
    Ok(0)
}
