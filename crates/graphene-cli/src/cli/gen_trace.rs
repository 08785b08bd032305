//! `graphene gen-trace`: a synthetic workload from DAG files, written as a native CSV trace.

use std::path::PathBuf;

use graphene::trace::{self, ArrivalProcess};
use graphene::{Error, Result};

use super::args::{ClusterArgs, InputArgs};

#[derive(clap::Args)]
pub struct Args {
    /// DAG files to draw jobs from (a Decima TPC-H file without --query gives all 22 queries).
    #[arg(long, num_args = 1.., value_name = "FILES", required_unless_present = "trace_dags")]
    pub dags: Vec<PathBuf>,
    /// Workload traces (native or Alibaba CSV) whose jobs are added to the DAGs to draw from,
    /// with their arrivals and queues dropped. With --demands their demands are replaced by the
    /// profile's (Alibaba's cpu and memory units are not the default cluster's); without, kept.
    #[arg(long, num_args = 1.., value_name = "TRACES")]
    pub trace_dags: Vec<PathBuf>,
    /// How a job's DAG is drawn: `dag` uniformly over all DAGs read, or `file` a file (of
    /// --dags and --trace-dags) uniformly, then a DAG within it.
    #[arg(long, value_name = "HOW", default_value = "dag", value_parser = ["dag", "file"])]
    pub pick: String,
    /// Draw only DAGs with at least this many stages (e.g. 3 for deep multi-stage jobs).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub min_stages: usize,
    /// Number of jobs: at least 1, at most --limit-jobs; their tasks together at most --limit-tasks.
    #[arg(long, value_name = "N")]
    pub jobs: usize,
    /// Arrival process: poisson:MEAN_SECONDS (exponential gaps), fixed:SECONDS or all-at-once.
    /// Every arrival must be at most 1e12 s (as replay reads them).
    #[arg(long, value_name = "PROCESS", default_value = "poisson:10")]
    pub arrival: String,
    /// Number of queues q0..q(K-1), at most --limit-jobs; each job joins one uniformly at random.
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub queues: usize,
    /// Rescale the arrival gaps so that the busiest resource of the cluster (--cluster or
    /// --machines/--capacity) is offered this load over the arrival window (e.g. 0.8).
    #[arg(long, value_name = "LOAD")]
    pub load: Option<f64>,
    /// Multiply every task's duration by this factor (before --load calibrates the arrivals).
    #[arg(long, value_name = "K", default_value_t = 1.0)]
    pub duration_scale: f64,
    /// Raise every task shorter than this many seconds (after --duration-scale) to it: tasks
    /// long against a real scheduler's heartbeat (the SLS fidelity run, BENCHMARKS.md).
    #[arg(long, value_name = "SECONDS", default_value_t = 0.0)]
    pub min_duration: f64,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Workload style. `spark-sched-sim`: the Decima environment's job mix as spark-sched-sim
    /// draws it, from Decima TPC-H files (--dags, one per input size): each job's size uniform
    /// over the files and its query uniform over 1-22, every task one executor slot (cpu=1,
    /// nothing else) running its stage's mean measured task duration at --executors. Its
    /// setting: --jobs 50 --arrival poisson:25 --executors 10, replayed with --machines 10
    /// --capacity cpu=1,mem=1,disk=1,net=1 (README, "spark-sched-sim's workload").
    #[arg(long, value_enum, default_value = "default")]
    pub style: Style,
    /// With --style spark-sched-sim: the TPC-H sizes jobs are drawn from (uniformly, in this
    /// order), e.g. 2g,5g,10g,20g,50g,80g,100g for spark-sched-sim's full mix. A size no --dags
    /// file holds is made from the two largest sizes the files hold (one line per stage through
    /// their task counts and work; `trace::spark_sched_sim`, README "spark-sched-sim's
    /// workload"); files of sizes not listed only serve that. Default: one size per file.
    #[arg(long, value_name = "SIZES")]
    pub sizes: Option<String>,
    /// With --style spark-sched-sim: also write the sample lists of every job's stages (Decima's
    /// first_wave / rest_wave / fresh_durations per executor count; made sizes scaled from the
    /// largest file) to FILE, for `replay --waves FILE`.
    #[arg(long, value_name = "FILE")]
    pub waves_out: Option<PathBuf>,
    /// Write the trace here (atomically) instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// No summary on standard error.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Style {
    /// Jobs drawn as --pick says, demands from --demands, durations as the files measure them.
    Default,
    /// spark-sched-sim's TPC-H mix (see --style).
    SparkSchedSim,
}

pub fn run(a: Args) -> Result<i32> {
    // Flags first: a bad flag should not wait for large DAG files to load.
    let arrival: ArrivalProcess = a.arrival.parse()?;
    let sizes = a.sizes.as_deref().map(trace::spark_sched_sim::parse_sizes).transpose()?;
    if sizes.is_some() && a.style != Style::SparkSchedSim {
        return Err(Error::Usage("--sizes goes with --style spark-sched-sim (TPC-H input sizes)".into()));
    }
    // Counts and arrival times before any file is read (the library checks them again).
    trace::generate::check_counts(a.jobs, arrival, a.queues)?;
    if a.waves_out.is_some() && (a.style != Style::SparkSchedSim || a.duration_scale != 1.0 || a.min_duration != 0.0) {
        return Err(Error::Usage(
            "--waves-out goes with --style spark-sched-sim and unscaled durations (no --duration-scale, --min-duration)"
                .into(),
        ));
    }
    if let Some(waves) = &a.waves_out {
        let out = a.out.as_deref().unwrap_or(std::path::Path::new("-"));
        graphene::output::distinct_outputs(&[("--out", out), ("--waves-out", waves)])?;
    }
    // The stretch's own checks, on an empty workload: refused before any file is read.
    trace::stretch_durations(&mut graphene::model::Workload { jobs: Vec::new() }, a.duration_scale, a.min_duration)?;
    if a.style == Style::SparkSchedSim {
        return spark_sched_sim(&a, arrival, sizes.as_deref());
    }
    // One group of DAGs per file, for --pick file.
    let mut per_file = Vec::new();
    for p in &a.dags {
        per_file.push(super::args::load_job_dags(std::slice::from_ref(p), &a.input)?);
    }
    for p in &a.trace_dags {
        per_file.push(graphene::trace::job_dags(p, a.input.demands.as_deref(), a.input.seed)?);
    }
    let read: usize = per_file.iter().map(Vec::len).sum();
    for dags in &mut per_file {
        dags.retain(|d| d.stages.len() >= a.min_stages);
    }
    let dags: Vec<graphene::model::Dag> = per_file.iter().flatten().cloned().collect();
    if dags.is_empty() {
        return Err(Error::Usage(format!(
            "none of the {read} DAGs read has at least {} stages (--min-stages)",
            a.min_stages
        )));
    }
    let cluster = super::args::trace_cluster(&a.cluster)?;
    let mut workload = if a.pick == "file" {
        let sources: Vec<&[graphene::model::Dag]> = per_file.iter().map(Vec::as_slice).collect();
        trace::generate_from(&sources, a.jobs, arrival, a.queues, a.input.seed)?
    } else {
        trace::generate(&dags, a.jobs, arrival, a.queues, a.input.seed)?
    };
    if a.duration_scale != 1.0 || a.min_duration != 0.0 {
        trace::stretch_durations(&mut workload, a.duration_scale, a.min_duration)?;
    }
    let scale = match a.load {
        Some(target) => Some(trace::load::calibrate(&mut workload, &cluster, target)?),
        None => None,
    };
    let text = trace::native_csv::write(&workload)?;
    let inputs: Vec<&std::path::Path> =
        a.dags.iter().chain(&a.trace_dags).map(|p| p.as_path()).chain(a.cluster.cluster.as_deref()).collect();
    graphene::output::write_or_stdout(a.out.as_deref(), text.as_bytes(), &inputs)?;
    if !a.quiet {
        summary(&a, &workload, arrival, &cluster, scale, dags.len());
    }
    Ok(0)
}

/// `--style spark-sched-sim`: the flags that choose DAGs or demands another way are refused
/// rather than silently ignored.
fn spark_sched_sim(a: &Args, arrival: ArrivalProcess, sizes: Option<&[u32]>) -> Result<i32> {
    refuse_with_sss(&a.input, &[("--trace-dags", !a.trace_dags.is_empty()), ("--min-stages", a.min_stages != 1)])?;
    let cluster = super::args::trace_cluster(&a.cluster)?;
    let per_file = trace::spark_sched_sim::sources_sized(&a.dags, sizes, a.input.executors)?;
    let sources: Vec<&[graphene::model::Dag]> = per_file.iter().map(Vec::as_slice).collect();
    let (mut workload, drawn) =
        trace::generate::generate_from_named(&sources, a.jobs, arrival, a.queues, a.input.seed)?;
    trace::stretch_durations(&mut workload, a.duration_scale, a.min_duration)?;
    let waves = match &a.waves_out {
        Some(_) => {
            let names: Vec<String> = workload.jobs.iter().map(|j| j.name.clone()).collect();
            let sidecar = trace::spark_sched_sim::waves_sidecar(&a.dags, sizes, a.input.executors, &names, &drawn)?;
            Some(serde_json::to_string(&sidecar).map_err(|e| Error::Usage(format!("--waves-out: {e}")))?)
        }
        None => None,
    };
    let scale = match a.load {
        Some(target) => Some(trace::load::calibrate(&mut workload, &cluster, target)?),
        None => None,
    };
    let text = trace::native_csv::write(&workload)?;
    let inputs: Vec<&std::path::Path> =
        a.dags.iter().map(|p| p.as_path()).chain(a.cluster.cluster.as_deref()).collect();
    graphene::output::write_or_stdout(a.out.as_deref(), text.as_bytes(), &inputs)?;
    if let (Some(path), Some(json)) = (&a.waves_out, &waves) {
        graphene::output::write_output(path, json.as_bytes(), &inputs)?;
    }
    if !a.quiet {
        summary(a, &workload, arrival, &cluster, scale, per_file.iter().map(Vec::len).sum());
    }
    Ok(0)
}

/// `--style spark-sched-sim` (here and in `train-decima`) reads every query of each TPC-H file
/// at one slot per task: the input flags that choose DAGs or demands another way, and the
/// command's own `extra` ones that are set, are refused rather than silently ignored.
pub fn refuse_with_sss(input: &InputArgs, extra: &[(&str, bool)]) -> Result<()> {
    let conflicts = [
        ("--demands", input.demands.is_some()),
        ("--query", input.query.is_some()),
        ("--job", input.job.is_some()),
        ("--format", input.format.is_some()),
    ];
    if let Some((flag, _)) = extra.iter().chain(&conflicts).find(|c| c.1) {
        return Err(Error::Usage(format!(
            "{flag} does not go with --style spark-sched-sim (it draws every query of each TPC-H file, one slot per task)"
        )));
    }
    Ok(())
}

/// The summary on stderr: what was drawn, and the load it offers `cluster`.
fn summary(
    a: &Args,
    workload: &graphene::model::Workload,
    arrival: ArrivalProcess,
    cluster: &graphene::model::Cluster,
    scale: Option<f64>,
    drawn_from: usize,
) {
    let last = workload.jobs.last().map_or(0.0, |j| j.arrival);
    eprintln!(
        "gen-trace: {} jobs ({} tasks) drawn from {} DAGs, {arrival}, last arrival {last:.3} s, {} queue(s), seed {}",
        workload.jobs.len(),
        workload.tasks(),
        drawn_from,
        a.queues,
        a.input.seed
    );
    let loads = trace::load::offered_load(workload, cluster);
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
    if trace::load::span(workload) > 0.0 {
        eprintln!("gen-trace: offered load on {} machines: {}{scaled}", cluster.len(), shown.join(", "));
    }
}
