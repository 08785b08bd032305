//! `graphene train-decima`: trains the `decima` policy on Poisson workloads drawn from DAG files
//! and writes its weights file.

use std::path::PathBuf;

use graphene::online::decima::{self, train, Model, TrainConfig};
use graphene::trace::{self, ArrivalProcess};
use graphene::{Error, Result};

use super::args::{ClusterArgs, InputArgs};

#[derive(clap::Args)]
pub struct Args {
    /// DAG files to draw jobs from (a Decima TPC-H file gives all 22 queries).
    #[arg(long, required = true, num_args = 1.., value_name = "FILES")]
    pub dags: Vec<PathBuf>,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Offered load of the bottleneck resource the arrival rate is set for.
    #[arg(long, default_value_t = 0.8)]
    pub load: f64,
    /// Training iterations (one arrival sequence and one Adam step each).
    #[arg(long, default_value_t = 100)]
    pub iterations: usize,
    /// Rollouts per arrival sequence (run in parallel; the baseline averages over them).
    #[arg(long, default_value_t = 4)]
    pub rollouts: usize,
    /// Adam's step size.
    #[arg(long, default_value_t = 1e-3)]
    pub lr: f64,
    /// Initial entropy weight (decays linearly to 0).
    #[arg(long, default_value_t = 0.05)]
    pub entropy: f64,
    /// Mean episode length in seconds at the start, its growth per iteration and its cap.
    #[arg(long, default_value_t = 300.0)]
    pub episode_start: f64,
    #[arg(long, default_value_t = 10.0)]
    pub episode_growth: f64,
    #[arg(long, default_value_t = 1500.0)]
    pub episode_max: f64,
    /// At most this many jobs per episode.
    #[arg(long, default_value_t = 200)]
    pub max_jobs: usize,
    /// Held-out workloads the greedy policy is scored on (mean JCT), each of this many jobs.
    #[arg(long, default_value_t = 2)]
    pub eval_traces: usize,
    #[arg(long, default_value_t = 40)]
    pub eval_jobs: usize,
    /// Score the held-out workloads every N iterations (0: never).
    #[arg(long, default_value_t = 10)]
    pub eval_every: usize,
    /// Start from these weights instead of random ones.
    #[arg(long, value_name = "FILE")]
    pub init: Option<PathBuf>,
    /// Weights file to write (atomically).
    #[arg(long, short, value_name = "FILE")]
    pub out: PathBuf,
    /// No progress bar or learning curve on standard error.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn run(a: Args) -> Result<i32> {
    use std::io::IsTerminal;
    if a.iterations == 0 {
        return Err(Error::Usage("--iterations must be at least 1".into()));
    }
    let dags = super::args::load_job_dags(&a.dags, &a.input)?;
    let cluster = super::args::trace_cluster(&a.cluster)?;
    for d in &dags {
        cluster.check_fits(d)?;
    }
    let seed = a.input.seed;
    let mean_gap = decima::train::mean_gap_for_load(&dags, &cluster, a.load, 2000, decima::train::mix(seed, 1 << 40))?;
    let cfg = TrainConfig {
        iterations: a.iterations,
        rollouts: a.rollouts,
        seed,
        lr: a.lr,
        entropy: a.entropy,
        episode_start: a.episode_start,
        episode_growth: a.episode_growth,
        episode_max: a.episode_max,
        mean_gap,
        max_jobs: a.max_jobs,
        heartbeat: 1.0,
    };
    // Held-out sequences: seeds no training iteration uses (those hash the seed with 2i, 2i+1).
    let held_out_seeds: Vec<u64> = (0..a.eval_traces).map(|i| decima::train::mix(seed, (1 << 41) + i as u64)).collect();
    let eval: Vec<_> = held_out_seeds
        .iter()
        .map(|&s| trace::generate(&dags, a.eval_jobs, ArrivalProcess::Poisson { mean: mean_gap }, 1, s))
        .collect::<Result<_>>()?;
    let init = match &a.init {
        Some(p) => Model::load(p)?,
        None => Model::init(decima::train::mix(seed, 1 << 42)),
    };
    let show = !a.quiet && std::io::stderr().is_terminal();
    let bar = if show {
        let b = indicatif::ProgressBar::new(a.iterations as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} train-decima [{bar:30}] {pos}/{len} iterations {msg} ({elapsed})",
            )
            .expect("a valid template")
            .progress_chars("=> "),
        );
        Some(b)
    } else {
        None
    };
    let quiet = a.quiet;
    let started = std::time::Instant::now();
    let trained = train(&dags, &cluster, &cfg, &init, &eval, a.eval_every, &mut |s| {
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
    let stats = &trained.stats;
    let curve: Vec<_> = stats
        .iter()
        .filter_map(|s| s.eval_jct.map(|j| serde_json::json!({"iteration": s.iteration, "mean_jct": j})))
        .collect();
    let dag_names: Vec<String> =
        a.dags.iter().map(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default()).collect();
    // The written weights are the best-scoring ones on the held-out workloads (model selection);
    // the file says which iteration they come from.
    let mut model = trained.best;
    let chosen = trained.best_at.map(|(it, jct)| serde_json::json!({"iteration": it, "mean_jct": jct}));
    model.trained = serde_json::json!({
        "dags": dag_names,
        "machines": cluster.len(),
        "load": a.load,
        "demands": a.input.demands.clone().unwrap_or_else(|| "default".into()),
        "config": cfg,
        "held_out": {"traces": a.eval_traces, "jobs": a.eval_jobs, "seeds": held_out_seeds},
        "learning_curve": curve,
        "chosen": chosen,
    });
    let inputs: Vec<&std::path::Path> = a.dags.iter().map(|p| p.as_path()).collect();
    graphene::output::write_output(&a.out, model.to_json().as_bytes(), &inputs)?;
    if !a.quiet {
        let kept = match trained.best_at {
            Some((it, jct)) => format!("kept iteration {it} (held-out mean JCT {jct:.2} s)"),
            None => "kept the last iteration (nothing scored)".into(),
        };
        eprintln!(
            "train-decima: {} iterations x {} rollouts in {:.1} s (mean gap {:.2} s for load {}), {kept}, wrote {}",
            a.iterations,
            a.rollouts,
            started.elapsed().as_secs_f64(),
            mean_gap,
            a.load,
            a.out.display()
        );
    }
    Ok(0)
}
