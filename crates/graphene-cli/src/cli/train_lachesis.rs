//! `graphene train-lachesis`: trains LACHESIS's selection policy on batches of jobs drawn from
//! DAG files, submitted at once onto heterogeneous executors, and writes its weights file.

use std::path::PathBuf;

use graphene::formats::{self, LoadOptions};
use graphene::hetero::batch;
use graphene::hetero::lachesis::train::{self, Batch, TrainConfig};
use graphene::hetero::lachesis::Decision;
use graphene::learn::mix;
use graphene::{Error, Result};

use super::train_args::{self, Output, Steps, Trainer};

/// train-lachesis's help texts and defaults for the shared flags.
pub struct Lachesis;

impl Trainer for Lachesis {
    const ITERATIONS_HELP: &'static str = "Training iterations (one batch and one Adam step each)";
    const ROLLOUTS_HELP: &'static str =
        "Rollouts per batch, 2 to 256 (run in parallel; the baseline averages over them)";
    const ROLLOUTS: &'static str = "8";
    const LR: &'static str = "0.003";
    const ENTROPY: &'static str = "0.01";
    const QUIET_HELP: &'static str = "No learning curve on standard error";
    type Arch = graphene::hetero::lachesis::model::ArchInfo;
}

#[derive(clap::Args)]
pub struct Args {
    /// DAG files to draw jobs from (a Decima TPC-H file gives all 22 queries).
    #[arg(long, required = true, num_args = 1.., value_name = "FILES")]
    pub dags: Vec<PathBuf>,
    /// TPC-H: executor count whose measured task durations are used.
    #[arg(long, value_name = "E", default_value_t = 20)]
    pub executors: u32,
    /// Executors of the setting; their speeds are drawn from LACHESIS's 2.1-3.6 GHz table with
    /// --speed-seed (as `cargo bench -p graphene-bench --bench hetero -- batch` does with its --seed); at most
    /// --limit-machines.
    #[arg(long, default_value_t = 50)]
    pub machines: usize,
    #[arg(long, default_value_t = 1)]
    pub speed_seed: u64,
    /// Bandwidth between any two executors.
    #[arg(long, default_value_t = 1.0)]
    pub bandwidth: f64,
    /// Jobs per training batch: uniform in [--jobs-min, --jobs-max] (at most --limit-jobs, their
    /// tasks at most --limit-tasks).
    #[arg(long, default_value_t = 1)]
    pub jobs_min: usize,
    #[arg(long, default_value_t = 10)]
    pub jobs_max: usize,
    /// Communication-to-computation ratios (one drawn per batch; see BENCHMARKS.md's transfer rule).
    #[arg(long, value_delimiter = ',', default_value = "0.5,5")]
    pub ccr: Vec<f64>,
    /// What one decision places: every ready task of the chosen stage ("stage", the bundled
    /// model's mode), or only the one of them DEFT's rank order places first ("task": finer,
    /// as RankUp-DEFT interleaves, at one network evaluation per task with a choice). Recorded
    /// in the file as trained.setting.decision when "task"; `lachesis` then decides per task.
    #[arg(long, default_value = "stage", value_name = "stage|task")]
    pub decision: String,
    #[command(flatten)]
    pub steps: Steps<Lachesis>,
    /// Held-out batches the greedy policy is scored on (mean makespan / RankUp-DEFT's), with
    /// job counts cycling through --eval-jobs (their jobs together at most --limit-jobs).
    #[arg(long, default_value_t = 6)]
    pub eval_batches: usize,
    #[arg(long, value_delimiter = ',', default_value = "2,5,10")]
    pub eval_jobs: Vec<usize>,
    /// Score the held-out batches every N iterations (0: never; then the last weights are kept).
    #[arg(long, default_value_t = 10)]
    pub eval_every: usize,
    /// Seed for every random choice (batches, rollouts, initial weights, held-out batches).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[command(flatten)]
    pub output: Output<Lachesis>,
}

pub fn run(a: Args) -> Result<i32> {
    a.steps.check()?;
    let decision = Decision::parse(&a.decision).map_err(|e| Error::Usage(format!("--decision: {e}")))?;
    if !(a.bandwidth.is_finite() && a.bandwidth > 0.0) {
        return Err(Error::Usage(format!("--bandwidth {} must be a finite number > 0", a.bandwidth)));
    }
    let seed = a.seed;
    let cfg = TrainConfig {
        iterations: a.steps.iterations,
        rollouts: a.steps.rollouts,
        seed,
        lr: a.steps.lr,
        entropy: a.steps.entropy,
        jobs_min: a.jobs_min,
        jobs_max: a.jobs_max,
        ccr: a.ccr.clone(),
        decision,
    };
    // Every count before any file is read: the setting, the batches, the held-out batches.
    train::check(&cfg)?;
    train::check_held_out(a.eval_batches, &a.eval_jobs, a.jobs_max)?;
    let speeds = batch::lachesis_speeds(a.machines, a.speed_seed)?;
    // Tasks run one at a time per executor: no demands, as in the batch benchmark.
    let opts = LoadOptions { executors: a.executors, demands: Some("none".into()), ..LoadOptions::default() };
    let mut dags = Vec::new();
    for p in &a.dags {
        dags.extend(formats::load_dags(p, &opts)?);
    }
    let spec = train::executors(&speeds, a.bandwidth);
    let net = spec.network();
    // Held-out batches: seeds no training iteration uses (those hash the seed with 2i, 2i + 1
    // and 2^43 + i).
    let held_out: Vec<(usize, f64, u64)> = (0..a.eval_batches)
        .map(|i| {
            let jobs = if a.eval_jobs.is_empty() { a.jobs_max } else { a.eval_jobs[i % a.eval_jobs.len()] };
            let ccr = a.ccr.get((i / a.eval_jobs.len().max(1)) % a.ccr.len().max(1)).copied().unwrap_or(0.5);
            (jobs, ccr, mix(seed, (1 << 41) + i as u64))
        })
        .collect();
    let eval: Vec<Batch> = held_out
        .iter()
        .map(|&(jobs, ccr, s)| Batch::new(train::draw_batch(&dags, jobs, ccr, s)?, &spec, &net))
        .collect::<Result<_>>()?;
    let init = a.output.initial(seed)?;
    let quiet = a.output.quiet;
    let no_timing = a.output.no_timing;
    let started = std::time::Instant::now();
    let bar = super::progress::bar(
        a.steps.iterations as u64,
        "{spinner} train-lachesis [{bar:30}] {pos}/{len} iterations ({elapsed})",
        quiet,
    );
    let trained = train::train(&dags, &spec, &net, &cfg, &init, None, &eval, a.eval_every, &mut |s| {
        if quiet {
            return;
        }
        if let Some(b) = &bar {
            b.set_position(s.iteration as u64);
        }
        let t = if no_timing { String::new() } else { format!(" ({:.0} s)", started.elapsed().as_secs_f64()) };
        let line = match s.eval_ratio {
            Some(r) if s.iteration == 0 => format!("iteration     0: held-out greedy / rankup-deft {r:.4}{t}"),
            Some(r) => format!(
                "iteration {:>5}: {:>2} jobs ccr {:<3} sampled / rankup-deft {:.4}, entropy {:.3}; held-out greedy / rankup-deft {r:.4}{t}",
                s.iteration, s.jobs, s.ccr, s.sample_ratio, s.entropy
            ),
            None => return,
        };
        match &bar {
            Some(b) => b.println(line),
            None => eprintln!("{line}"),
        }
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let scores = trained.stats.iter().filter_map(|s| s.eval_ratio.map(|r| (s.iteration, r)));
    let (curve, chosen) = train_args::scores_json(scores, trained.best_at, "held_out_ratio");
    let dag_names = train_args::dag_names(&a.dags);
    let mut model = trained.best;
    let mut setting = serde_json::json!({
        "dags": dag_names,
        "tpch_executors": a.executors,
        "machines": a.machines,
        "speed_seed": a.speed_seed,
        "speeds": speeds,
        "bandwidth": a.bandwidth,
        "transfer_rule": "ccr x parent stage mean work per task pair",
    });
    // Only the non-default decision is written, so the stage recipe keeps its bytes.
    if decision != Decision::Stage {
        setting["decision"] = decision.name().into();
    }
    model.trained = serde_json::json!({
        "setting": setting,
        "config": cfg,
        "held_out": held_out.iter().map(|&(j, c, s)| serde_json::json!({"jobs": j, "ccr": c, "seed": s})).collect::<Vec<_>>(),
        "learning_curve": curve,
        "chosen": chosen,
    });
    a.output.write(&model, &a.dags)?;
    if !a.output.quiet {
        let kept = train_args::kept(trained.best_at, |r| format!("held-out greedy / rankup-deft {r:.4}"));
        eprintln!(
            "train-lachesis: {} iterations x {} rollouts{}, {kept}, wrote {}",
            a.steps.iterations,
            a.steps.rollouts,
            a.output.took(started),
            a.output.out.display()
        );
    }
    Ok(0)
}
