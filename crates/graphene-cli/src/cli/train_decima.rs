//! `graphene train-decima`: trains the `decima` policy on Poisson workloads drawn from DAG files
//! and writes its weights file.

use std::path::PathBuf;

use graphene::online::decima::{self, TrainConfig};
use graphene::trace::{self, ArrivalProcess};
use graphene::{Error, Result};

use super::args::{ClusterArgs, InputArgs};
use super::train_args::{self, Output, Steps, Trainer};

/// train-decima's help texts and defaults for the shared flags.
pub struct Decima;

impl Trainer for Decima {
    const ITERATIONS_HELP: &'static str = "Training iterations (one arrival sequence and one Adam step each)";
    const ROLLOUTS_HELP: &'static str =
        "Rollouts per arrival sequence, 2 to 256 (run in parallel; the baseline averages over them)";
    const ROLLOUTS: &'static str = "4";
    const LR: &'static str = "0.001";
    const ENTROPY: &'static str = "0.05";
    const QUIET_HELP: &'static str = "No progress bar or learning curve on standard error";
    type Arch = decima::model::ArchInfo;
}
use super::gen_trace::Style;

#[derive(clap::Args)]
pub struct Args {
    /// DAG files to draw jobs from (a Decima TPC-H file gives all 22 queries).
    #[arg(long, required = true, num_args = 1.., value_name = "FILES")]
    pub dags: Vec<PathBuf>,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Offered load of the bottleneck resource the Poisson arrival rate is set for (estimated
    /// from 2000 jobs drawn with the seed) [default: 0.8 unless --arrival is given].
    #[arg(long, value_name = "LOAD", conflicts_with = "arrival")]
    pub load: Option<f64>,
    /// Arrivals as poisson:MEAN_SECONDS (gen-trace's syntax), instead of a --load: e.g.
    /// poisson:25 for spark-sched-sim's mean gap. Training needs Poisson arrivals (memoryless,
    /// as the episode ends are).
    #[arg(long, value_name = "PROCESS")]
    pub arrival: Option<String>,
    /// How jobs are drawn. `spark-sched-sim`: as `gen-trace --style spark-sched-sim` draws them
    /// (the same code): each job's TPC-H size uniform over the --dags files, its query uniform
    /// over 1-22, every task one slot (cpu=1) at its stage's mean duration at --executors. For
    /// Decima's own setting: --machines 10 --capacity cpu=1,mem=1,disk=1,net=1 --executors 10
    /// --jobs 50 --arrival poisson:25.
    #[arg(long, value_enum, default_value = "default")]
    pub style: Style,
    /// With --style spark-sched-sim: the TPC-H sizes jobs are drawn from, as gen-trace's
    /// --sizes (e.g. 2g,5g,10g,20g,50g,80g,100g; sizes no file holds are made from the two
    /// largest the files hold), kept in the file as `trained.sizes`. Default: one per file.
    #[arg(long, value_name = "SIZES")]
    pub sizes: Option<String>,
    /// How the policy scales its features: `linear` (value / a TPC-H scale, the bundled model's)
    /// or `log` (log-scaled task counts, durations and work; see `decima::features::Scaling`),
    /// kept in the file as `trained.features` [default: --init's, else linear].
    #[arg(long, value_name = "SCALING", value_parser = ["linear", "log"])]
    pub features: Option<String>,
    /// Where a machine's freed resources go before the agent is asked: `any-job` (committed
    /// stages of every job, arrival order: the bundled model's) or `own-job` (only the stages
    /// of the job that last ran there, as Decima's executors stay with their job), kept in the
    /// file as `trained.freed` [default: --init's, else any-job].
    #[arg(long, value_name = "RULE", value_parser = ["any-job", "own-job"])]
    pub freed: Option<String>,
    /// With --style spark-sched-sim: every training episode and held-out workload runs
    /// wave- and parallelism-dependent task durations, drawn as `replay --waves` draws them
    /// from the sidecar `gen-trace --waves-out` would write for the drawn sequence (made in
    /// memory, no files); kept in the file as the setting's `waves`, so that a replay without
    /// --waves warns [default: off].
    #[arg(long)]
    pub waves: bool,
    /// With --waves: seconds an executor (machine) travels when it moves to another job
    /// (spark-sched-sim's moving_delay, as replay's --moving-delay) [default: 2].
    #[arg(long, value_name = "SECONDS", requires = "waves")]
    pub moving_delay: Option<f64>,
    /// Every training episode and held-out workload keeps each machine on the job of its last
    /// task first, as `replay --sticky` (spark-sched-sim's executors continue their stage
    /// without asking the agent): the agent places only machines whose job has nothing
    /// runnable. Kept in the file as the setting's `sticky`, so a replay without --sticky
    /// warns [default: off].
    #[arg(long)]
    pub sticky: bool,
    #[command(flatten)]
    pub steps: Steps<Decima>,
    /// Mean episode length in seconds at the start, its growth per iteration and its cap.
    #[arg(long, default_value_t = 300.0)]
    pub episode_start: f64,
    #[arg(long, default_value_t = 10.0)]
    pub episode_growth: f64,
    #[arg(long, default_value_t = 1500.0)]
    pub episode_max: f64,
    /// Jobs per episode: each iteration draws this many arrivals and drops those after the
    /// episode's random end, so episodes hold at most N jobs (--max-jobs is the old name; N at
    /// most --limit-jobs).
    #[arg(long = "jobs", visible_alias = "max-jobs", value_name = "N", default_value_t = 200)]
    pub jobs: usize,
    /// Seconds between a machine's heartbeats in training episodes (replay's --heartbeat).
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0)]
    pub heartbeat: f64,
    /// Held-out workloads the greedy policy is scored on (mean JCT), each of this many jobs
    /// (their jobs together at most --limit-jobs).
    #[arg(long, default_value_t = 2)]
    pub eval_traces: usize,
    #[arg(long, default_value_t = 40)]
    pub eval_jobs: usize,
    /// Score the held-out workloads every N iterations (0: never).
    #[arg(long, default_value_t = 10)]
    pub eval_every: usize,
    #[command(flatten)]
    pub output: Output<Decima>,
}

pub fn run(a: Args) -> Result<i32> {
    a.steps.check()?;
    // Flags first: a bad flag should not wait for large DAG files to load.
    let arrival = match &a.arrival {
        None => None,
        Some(text) => match text.parse::<ArrivalProcess>()? {
            ArrivalProcess::Poisson { mean } => Some(mean),
            other => {
                return Err(Error::Usage(format!(
                    "--arrival '{other}': train-decima trains on Poisson arrivals (poisson:MEAN_SECONDS)"
                )))
            }
        },
    };
    if a.cluster.speeds.is_some() || a.cluster.bandwidth.is_some() {
        return Err(Error::Usage(
            "--speeds and --bandwidth: train-decima trains on machines of speed 1 (decima has no notion of speed)"
                .into(),
        ));
    }
    let sss = a.style == Style::SparkSchedSim;
    let sizes = a.sizes.as_deref().map(trace::spark_sched_sim::parse_sizes).transpose()?;
    if sizes.is_some() && !sss {
        return Err(Error::Usage("--sizes goes with --style spark-sched-sim (TPC-H input sizes)".into()));
    }
    if a.waves && !sss {
        return Err(Error::Usage(
            "--waves goes with --style spark-sched-sim (Decima's TPC-H wave samples; see gen-trace --waves-out)".into(),
        ));
    }
    if let Some(d) = a.moving_delay {
        graphene::limits::check_seconds(d, "--moving-delay", "moving delay")?;
    }
    if sss {
        super::gen_trace::refuse_with_sss(&a.input, &[])?;
    }
    // Counts before any file is read (the library checks them again).
    graphene::limits::current().check_jobs(a.jobs as u64, "--jobs (jobs per episode)")?;
    decima::train::check_held_out(a.eval_traces, a.eval_jobs)?;
    // One list of DAGs per file under --style spark-sched-sim (a size, then a query), else one
    // list of all (a DAG uniformly, as before).
    let per_file = if sss {
        graphene::trace::spark_sched_sim::sources_sized(&a.dags, sizes.as_deref(), a.input.executors)?
    } else {
        vec![super::args::load_job_dags(&a.dags, &a.input)?]
    };
    let sources: Vec<&[graphene::model::Dag]> = per_file.iter().map(Vec::as_slice).collect();
    let dags: Vec<graphene::model::Dag> = per_file.iter().flatten().cloned().collect();
    let cluster = super::args::trace_cluster(&a.cluster)?;
    for d in &dags {
        cluster.check_fits(d)?;
    }
    let seed = a.input.seed;
    // The same sample either way: the load a mean gap gives, or the mean gap a load needs.
    let sample_seed = decima::train::mix(seed, 1 << 40);
    let (mean_gap, load) = match arrival {
        Some(mean) => (mean, decima::train::load_for_mean_gap(&dags, &cluster, mean, 2000, sample_seed)?),
        None => {
            let load = a.load.unwrap_or(0.8);
            (decima::train::mean_gap_for_load(&dags, &cluster, load, 2000, sample_seed)?, load)
        }
    };
    let cfg = TrainConfig {
        iterations: a.steps.iterations,
        rollouts: a.steps.rollouts,
        seed,
        lr: a.steps.lr,
        entropy: a.steps.entropy,
        episode_start: a.episode_start,
        episode_growth: a.episode_growth,
        episode_max: a.episode_max,
        mean_gap,
        max_jobs: a.jobs,
        heartbeat: a.heartbeat,
        sticky: a.sticky,
    };
    let waves = if a.waves {
        let library = trace::spark_sched_sim::WaveLibrary::load(&a.dags, sizes.as_deref(), a.input.executors)?;
        let mut w = decima::TrainWaves::new(library);
        if let Some(d) = a.moving_delay {
            w.moving_delay = d;
        }
        Some(w)
    } else {
        None
    };
    // Held-out sequences: seeds no training iteration uses (those hash the seed with 2i, 2i+1).
    let held_out_seeds: Vec<u64> = (0..a.eval_traces).map(|i| decima::train::mix(seed, (1 << 41) + i as u64)).collect();
    let eval = decima::train::held_out(&sources, a.eval_jobs, mean_gap, &held_out_seeds, waves.as_ref())?;
    let mut init = a.output.initial(seed)?;
    let has_init = a.output.init.is_some();
    let scaling = option_or_init(
        "--features",
        a.features.as_deref(),
        has_init,
        init.scaling()?,
        decima::features::Scaling::parse,
        "other feature scaling",
    )?;
    init.set_scaling(scaling);
    let freed = option_or_init(
        "--freed",
        a.freed.as_deref(),
        has_init,
        init.freed()?,
        decima::policy::Freed::parse,
        "the other rule",
    )?;
    init.set_freed(freed);
    let bar = super::progress::bar(
        a.steps.iterations as u64,
        "{spinner} train-decima [{bar:30}] {pos}/{len} iterations {msg} ({elapsed})",
        a.output.quiet,
    );
    let quiet = a.output.quiet;
    let started = std::time::Instant::now();
    let trained = decima::train_with(&sources, waves.as_ref(), &cluster, &cfg, &init, &eval, a.eval_every, &mut |s| {
        if let Some(b) = &bar {
            b.set_position(s.iteration as u64);
            b.set_message(format!("episode {:.0} s, {:.2} jobs in system", s.episode, s.jobs_in_system));
        }
        if let (Some(j), false) = (s.eval_jct, quiet) {
            let line = format!("iteration {:>5}: held-out mean JCT {j:.2} s", s.iteration);
            match &bar {
                Some(b) => b.println(line),
                None => eprintln!("{line}"),
            }
        }
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let scores = trained.stats.iter().filter_map(|s| s.eval_jct.map(|j| (s.iteration, j)));
    let (curve, chosen) = train_args::scores_json(scores, trained.best_at, "mean_jct");
    let dag_names = train_args::dag_names(&a.dags);
    // The written weights are the best-scoring ones on the held-out workloads (model selection);
    // the file says which iteration they come from.
    let mut model = trained.best;
    let sources = dag_names
        .iter()
        .map(|file| decima::setting::DagSource {
            file: file.clone(),
            format: a.input.format.map(|f| f.to_string()),
            query: a.input.query,
        })
        .collect();
    let demands =
        if sss { "spark-sched-sim".into() } else { a.input.demands.clone().unwrap_or_else(|| "default".into()) };
    let setting =
        decima::train::setting(&cluster, &cfg, Some(load), sources, a.input.executors, &demands, seed, waves.as_ref());
    model.trained = serde_json::json!({
        "dags": dag_names,
        "machines": cluster.len(),
        "load": load,
        "demands": demands,
        "config": cfg,
        "held_out": {"traces": a.eval_traces, "jobs": a.eval_jobs, "seeds": held_out_seeds},
        "learning_curve": curve,
        "chosen": chosen,
    });
    if sss {
        model.trained["style"] = "spark-sched-sim".into();
        if let Some(sizes) = &sizes {
            model.trained["sizes"] = sizes.iter().map(|s| format!("{s}g")).collect::<Vec<_>>().into();
        }
        if let Some(w) = &waves {
            model.trained["waves"] = serde_json::json!({"moving_delay": w.moving_delay});
        }
    }
    model.set_scaling(scaling);
    model.set_freed(freed);
    model.set_setting(&setting);
    a.output.write(&model, &a.dags)?;
    if !a.output.quiet {
        let kept = train_args::kept(trained.best_at, |jct| format!("held-out mean JCT {jct:.2} s"));
        eprintln!(
            "train-decima: {} iterations x {} rollouts{} (mean gap {:.2} s, offered load {:.3}{}), {kept}, wrote {}",
            a.steps.iterations,
            a.steps.rollouts,
            a.output.took(started),
            mean_gap,
            load,
            if waves.is_some() { ", wave durations" } else { "" },
            a.output.out.display()
        );
    }
    Ok(0)
}

/// A model option (`--features`, `--freed`): the flag's value, else what the starting weights
/// record; a flag that contradicts `--init`'s weights is refused, since they were trained with
/// the other choice.
fn option_or_init<T: PartialEq>(
    flag: &str,
    given: Option<&str>,
    has_init: bool,
    from_init: T,
    parse: impl Fn(&str) -> Option<T>,
    other: &str,
) -> Result<T> {
    let Some(name) = given else { return Ok(from_init) };
    let value = parse(name).expect("clap checked the name");
    if has_init && value != from_init {
        return Err(Error::Usage(format!("{flag} {name}: the --init weights were trained with {other}")));
    }
    Ok(value)
}
