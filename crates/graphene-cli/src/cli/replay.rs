//! `graphene replay`

use std::path::PathBuf;

use graphene::online;
use graphene::output::OutDir;
use graphene::request::{ReplayOptions, ReplaySetup, Source};
use graphene::sim::{self, SimConfig};
use graphene::trace::TraceFormat;
use graphene::Result;

use super::args::ClusterArgs;

/// Options every replay command shares.
#[derive(clap::Args)]
pub struct Common {
    /// Workload trace: native CSV (see README) or Alibaba v2018 batch tasks.
    pub trace: PathBuf,
    /// Trace format (detected from the content when absent).
    #[arg(long, value_parser = super::args::choice::<TraceFormat>())]
    pub trace_format: Option<TraceFormat>,
    /// Spread the jobs round-robin over K queues q0..q(K-1), replacing the trace's queues
    /// (K at most --limit-jobs).
    #[arg(long, value_name = "K")]
    pub spread_queues: Option<usize>,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Machines heartbeat only every --heartbeat seconds, not also when a task on them ends (as
    /// YARN's node managers, which report a finished container at their next heartbeat).
    #[arg(long)]
    pub periodic_heartbeats: bool,
    /// Any scheduler: a machine first serves the job of its last task while that job has
    /// runnable work (the same stage first), and only then the scheduler's choice. Spark keeps
    /// an executor with its application; with --waves a machine that moves pays the moving
    /// delay and a fresh first task, so this is the heuristic baseline Decima must also beat.
    #[arg(long)]
    pub sticky: bool,
    /// Every task holds its machine, and keeps its children waiting, this many seconds past
    /// its duration: YARN's container life beyond the task (heartbeats between allocation,
    /// launch, completion and the AM learning of it).
    #[arg(long, value_name = "SECONDS", default_value_t = 0.0)]
    pub container_overhead: f64,
    /// Queue shares, e.g. q0=0.5,q1=0.5 [default: equal shares of the trace's queues].
    #[arg(long, value_name = "Q=SHARE,...")]
    pub queues: Option<String>,
    /// Seconds between periodic heartbeats of each machine.
    #[arg(long, default_value_t = 1.0)]
    pub heartbeat: f64,
    /// Give up (exit 1, no outputs written) when a replay runs longer than this many seconds
    /// of wall time.
    #[arg(long, value_name = "SECONDS")]
    pub time_limit: Option<f64>,
    /// Schedulers see durations and demands off by a factor 1 + U(LOW, HIGH) per stage.
    #[arg(long, value_name = "LOW:HIGH")]
    pub misestimate: Option<String>,
    /// Which estimates --misestimate falsifies (the draws are the same in every mode).
    #[arg(long, value_enum, default_value = "both", requires = "misestimate")]
    pub misestimate_what: MisestimatedArg,
    /// graphene: bounded unfairness; a queue owed more than KAPPA x cluster capacity is served
    /// first [default: 0.1; "none" turns the bound off].
    #[arg(long, value_name = "K")]
    pub kappa: Option<String>,
    /// graphene: `paper` follows the paper's online rules exactly (raw priScores across jobs,
    /// deficits charged per launch, every queue contending), to measure what each of the
    /// defaults' changes buys; `default` is this project's rules (README).
    #[arg(long, value_name = "RULES", default_value = "default", value_parser = ["default", "paper"])]
    pub online_rules: String,
    /// graphene: the shortest-remaining-work term in the paper's units (`work`: duration x
    /// demand left, times eta) or as the job's rank by work left among the candidates (`rank`,
    /// scaled to [0, 1], times eta x the mean packing score; see BENCHMARKS' online robustness).
    #[arg(long, value_name = "TERM", default_value = "work", value_parser = ["work", "rank"])]
    pub srpt_term: String,
    /// graphene: model graphene's scheduler in YARN's ResourceManager
    /// (integrations/yarn-scheduler) for fidelity against it: a job's remaining work sums its
    /// runnable tasks' sizes (no durations), a task's priScore is 1 / (1 + p) with p its YARN
    /// priority (its rank in graphene's order, as export-trace writes it), and memory (resource
    /// `mem`) is the only resource refused: the others are overbooked freely and the overload
    /// slows no task, as in SLS. The graphene scheduler only.
    #[arg(long)]
    pub graphene_rm: bool,
    /// graphene: weight of shortest-remaining-work against packing x priority, or "auto".
    #[arg(long, value_name = "E|auto", default_value = "auto")]
    pub eta: String,
    /// graphene: remote penalty multiplying the packing score of tasks that would read remote
    /// data.
    #[arg(long, value_name = "R")]
    pub rp: Option<f64>,
    /// graphene: overbookable resources (disk, net) may be allocated up to this multiple of a
    /// machine's capacity [default: 1.2]; 1 never overbooks.
    #[arg(long, value_name = "X")]
    pub overbook_limit: Option<f64>,
    /// graphene: fairness unit for the deficit counters.
    #[arg(long, value_enum, default_value = "drf")]
    pub fairness: Fairness,
    /// graphene (and tetris's gate): what a launch charges the deficit counters: `time` (unit x
    /// estimated duration / 60 s, so kappa bounds resource-time), `time-bounded` (the same, but
    /// no launch charges more than kappa x C, the look-ahead rule's proof condition), `accrue`
    /// (a launch charges the first 60 s of its estimate, the rest accrues per second the task
    /// actually runs) or `task` (the unit alone, per launch, as the paper).
    #[arg(long, value_enum, default_value = "time")]
    pub charge: ChargeArg,
    /// tetris: the same deficit-counter bound as graphene's --kappa (same --fairness and
    /// --charge), to compare the two at equal fairness [default: none, Tetris's baseline].
    #[arg(long, value_name = "K")]
    pub tetris_kappa: Option<String>,
    /// tetris: overbookable resources (disk, net) may be allocated up to this multiple of a
    /// machine's capacity, as graphene's --overbook-limit [default: 1, never: Tetris's paper].
    #[arg(long, value_name = "X")]
    pub tetris_overbook_limit: Option<f64>,
    /// tetris: scale its shortest-remaining-work term by the candidates' mean remaining work
    /// (`mean`: the Tetris paper's eps with m = 1, the default) or by their largest (`max`: a
    /// weaker SRPT when job sizes are heavy-tailed)
    #[arg(long, value_name = "HOW", default_value = "mean", value_parser = ["max", "mean"])]
    pub tetris_srpt_scale: String,
    /// cs: how a queue's use is measured: `containers` (running containers), `memory` (YARN's
    /// DefaultResourceCalculator) or `dominant` (DominantResourceCalculator).
    #[arg(long, value_name = "HOW", default_value = "containers", value_parser = ["containers", "memory", "dominant"])]
    pub cs_accounting: String,
    /// cs: YARN's user-limit-factor, one user per queue: a queue holds at most F x its share
    /// (YARN's default is 1) [default: none, queues elastic to the whole cluster].
    #[arg(long, value_name = "F")]
    pub cs_user_limit_factor: Option<f64>,
    /// cs, cp, graphene+cs: every job first holds an application-master container of this
    /// demand, granted in queue and FIFO order like a task and held until the job ends, as YARN
    /// runs every application's master (e.g. cpu=1,mem=0.001) [default: none].
    #[arg(long, value_name = "R=X,...")]
    pub cs_am: Option<String>,
    /// cs, cp, graphene+cs: at most N containers per machine heartbeat, as YARN's
    /// per-node-heartbeat.maximum-offswitch-assignments (default 1 in YARN) [default: as many
    /// as fit].
    #[arg(long, value_name = "N")]
    pub cs_assignments_per_heartbeat: Option<usize>,
    /// cs, cp, graphene+cs: strict FIFO as YARN: a queue's first job with work asks for its
    /// best task only, and a machine it does not fit is reserved for it (nothing else runs
    /// there until it fits) [default: off, the next job's fitting task runs instead].
    #[arg(long)]
    pub cs_reservations: bool,
    /// cs: a job's runnable stages in Tez's natural order (by distance from the roots, the
    /// order `export-trace --order natural` gives the SLS AM) [default: off, by stage index]
    #[arg(long)]
    pub cs_tez_order: bool,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// decima: weights file (from `graphene train-decima`) [default: the bundled model whose
    /// recorded setting is closest to the run].
    #[arg(long, value_name = "FILE")]
    pub decima_model: Option<PathBuf>,
    /// Tasks run wave- and parallelism-dependent durations drawn from this sidecar (from
    /// `gen-trace --style spark-sched-sim --waves-out`), by spark-sched-sim's rules (README,
    /// "Wave-dependent durations"); schedulers still see the trace's durations [default: off].
    #[arg(long, value_name = "FILE")]
    pub waves: Option<PathBuf>,
    /// With --waves: seconds an executor (machine) travels when it moves to another job
    /// (spark-sched-sim's moving_delay) [default: 2].
    #[arg(long, value_name = "SECONDS", requires = "waves")]
    pub moving_delay: Option<f64>,
    /// No summary on standard error.
    #[arg(long, short)]
    pub quiet: bool,
    /// Leave wall-clock decision times out of summary.json so that repeated runs are
    /// byte-identical.
    #[arg(long)]
    pub no_timing: bool,
}

#[derive(clap::Args)]
pub struct Args {
    /// Online scheduler (see README): graphene, cs, fifo, tetris, cp, drf, random, slearn,
    /// graphene+cs, graphene+tetris, heft, decima, graphene-plan (a plan across jobs; options
    /// after colons: graphene-plan:every=S:budget=N:objective=srpt|span|fifo:hold=S|none).
    #[arg(long, default_value = "cs")]
    pub scheduler: String,
    #[command(flatten)]
    pub common: Common,
    /// Directory for jobs.csv, schedule.csv and summary.json.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
    /// Table format: csv (jobs.csv, schedule.csv) or parquet (jobs.parquet, schedule.parquet
    /// and utilization.parquet, the same columns typed); summary.json either way.
    #[arg(long, value_enum, default_value = "csv")]
    pub format: TableFormat,
    /// Also write the replay as Chrome trace-event JSON (Perfetto, chrome://tracing) to FILE.
    #[arg(long, value_name = "FILE")]
    pub trace_out: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TableFormat {
    Csv,
    Parquet,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ChargeArg {
    Time,
    TimeBounded,
    Accrue,
    Task,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum MisestimatedArg {
    Durations,
    Demands,
    Both,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Fairness {
    Slot,
    Drf,
}

impl Common {
    /// The flags as the library's [`ReplayOptions`], which checks and resolves them (one set of
    /// rules for the CLI and the Python package).
    pub fn options(&self) -> ReplayOptions {
        ReplayOptions {
            trace_format: self.trace_format,
            spread_queues: self.spread_queues,
            cluster: self.cluster.options(),
            kappa: self.kappa.clone(),
            tetris_kappa: self.tetris_kappa.clone(),
            tetris_overbook_limit: self.tetris_overbook_limit,
            tetris_srpt_scale: self.tetris_srpt_scale.clone(),
            cs_accounting: self.cs_accounting.clone(),
            cs_user_limit_factor: self.cs_user_limit_factor,
            cs_am: self.cs_am.clone(),
            cs_per_heartbeat: self.cs_assignments_per_heartbeat,
            cs_reservations: self.cs_reservations,
            cs_tez_order: self.cs_tez_order,
            periodic_heartbeats: self.periodic_heartbeats,
            sticky: self.sticky,
            container_overhead: self.container_overhead,
            online_rules: self.online_rules.clone(),
            srpt_term: self.srpt_term.clone(),
            graphene_rm: self.graphene_rm,
            eta: self.eta.clone(),
            rp: self.rp,
            overbook_limit: self.overbook_limit,
            fairness: match self.fairness {
                Fairness::Slot => "slot",
                Fairness::Drf => "drf",
            }
            .into(),
            charge: match self.charge {
                ChargeArg::Time => "time",
                ChargeArg::TimeBounded => "time-bounded",
                ChargeArg::Accrue => "accrue",
                ChargeArg::Task => "task",
            }
            .into(),
            queues: self.queues.clone(),
            heartbeat: self.heartbeat,
            misestimate: self.misestimate.clone(),
            misestimate_what: match self.misestimate_what {
                MisestimatedArg::Durations => "durations",
                MisestimatedArg::Demands => "demands",
                MisestimatedArg::Both => "both",
            }
            .into(),
            seed: self.seed,
            decima_model: self.decima_model.clone(),
            waves: self.waves.clone(),
            moving_delay: self.moving_delay,
            no_timing: self.no_timing,
            time_limit: self.time_limit,
        }
    }

    /// Loads the trace and resolves everything a replay needs besides the scheduler (the
    /// library also binds `--waves` to the trace), telling the user on stderr what an Alibaba
    /// reader skipped.
    pub fn setup(&self) -> Result<ReplaySetup> {
        let setup = self.options().setup(&Source::Path(self.trace.clone()))?;
        if !setup.skipped.is_empty() {
            eprintln!("{}: {}", self.trace.display(), setup.skipped);
        }
        Ok(setup)
    }

    /// Prints, on stderr, the one warning for a `decima` run whose model was trained for
    /// another setting (even with --quiet: it is a warning, not a summary). Never fails the run
    /// by itself.
    pub fn warn_decima(&self, setup: &ReplaySetup) -> Result<()> {
        if let Some(w) = graphene::request::decima_warning(setup)? {
            eprintln!("{w}");
        }
        Ok(())
    }
}

/// Runs the simulator, with a progress bar of jobs done and simulated time when standard error
/// is a terminal and `quiet` is off.
pub fn run_sim(
    workload: &graphene::model::Workload,
    cluster: &graphene::model::Cluster,
    policy: &mut dyn graphene::online::Policy,
    cfg: &SimConfig,
    quiet: bool,
) -> Result<sim::SimResult> {
    let template = "{spinner} {prefix} [{bar:30}] {pos}/{len} jobs, simulated {msg} ({elapsed})";
    let Some(bar) = super::progress::bar(workload.jobs.len() as u64, template, quiet) else {
        return sim::run(workload, cluster, policy, cfg);
    };
    bar.set_prefix(policy.name());
    let result = sim::run_with_progress(workload, cluster, policy, cfg, &mut |now, done| {
        bar.set_position(done as u64);
        bar.set_message(format!("{now:.0} s"));
    });
    bar.finish_and_clear();
    result
}

/// The files a replay writes into its --out folder.
fn output_files(format: TableFormat) -> &'static [&'static str] {
    match format {
        TableFormat::Csv => &["jobs.csv", "schedule.csv", "summary.json"],
        TableFormat::Parquet => &["jobs.parquet", "schedule.parquet", "utilization.parquet", "summary.json"],
    }
}

pub fn run(args: Args) -> Result<i32> {
    let a = &args.common;
    // The folder is prepared (and a bad --out refused) before the replay, not after it.
    let inputs: Vec<&std::path::Path> =
        std::iter::once(a.trace.as_path()).chain(a.cluster.cluster.as_deref()).collect();
    let mut out = OutDir::create(&args.out, &inputs)?;
    if let Some(t) = &args.trace_out {
        graphene::output::target(t, &inputs)?;
        // The trace must not land on one of the folder's files (written first, then replaced).
        let files: Vec<std::path::PathBuf> = output_files(args.format).iter().map(|f| args.out.join(f)).collect();
        let mut outputs: Vec<(&str, &std::path::Path)> = files.iter().map(|f| ("--out", f.as_path())).collect();
        outputs.push(("--trace-out", t.as_path()));
        graphene::output::distinct_outputs(&outputs)?;
    }
    // Wall time of each phase, for the summary on standard error: what a replay costs apart
    // from reading its trace and writing its outputs.
    let started = std::time::Instant::now();
    let setup = a.setup()?;
    let mut policy = online::by_name(&args.scheduler, &setup.settings)?;
    if args.scheduler == "decima" {
        a.warn_decima(&setup)?;
    }
    let read_s = started.elapsed().as_secs_f64();
    let result = run_sim(&setup.workload, &setup.cluster, policy.as_mut(), &setup.cfg, a.quiet)?;
    let replay_s = started.elapsed().as_secs_f64() - read_s;
    let cluster = &setup.cluster;
    let rendered =
        graphene::request::replay_output(&setup, &a.trace.display().to_string(), &a.options(), policy.name(), result)?;
    let summary = &rendered.summary;
    match args.format {
        TableFormat::Csv => {
            out.write("jobs.csv", rendered.jobs_csv.as_bytes())?;
            out.write("schedule.csv", rendered.schedule_csv.as_bytes())?;
        }
        TableFormat::Parquet => {
            use graphene::output::table;
            out.write("jobs.parquet", &table::jobs(&rendered.result)?)?;
            out.write("schedule.parquet", &table::schedule(&setup.workload, &rendered.result)?)?;
            out.write("utilization.parquet", &table::utilization(summary)?)?;
        }
    }
    let written = output_files(args.format).join(", ");
    out.write("summary.json", &rendered.summary_json)?;
    out.commit()?;
    if let Some(t) = &args.trace_out {
        let trace = graphene::output::replay::chrome_trace(
            &a.trace.display().to_string(),
            &setup.workload,
            cluster.len(),
            &rendered.result,
        );
        graphene::output::write_output(t, &trace, &inputs)?;
    }
    if !a.quiet {
        let write_s = started.elapsed().as_secs_f64() - read_s - replay_s;
        eprintln!(
            "{} on {}: {} jobs, {} tasks, {} machines\n  JCT mean {:.2} median {:.2} p90 {:.2} p99 {:.2} s; makespan {:.2} s\n  Jain (10/60/240 s) {:.3} / {:.3} / {:.3}; {}\n  wall time: read {read_s:.3} s, replay {replay_s:.3} s, outputs {write_s:.3} s\n  wrote {}/{}",
            policy.name(),
            a.trace.display(),
            summary.jobs,
            summary.tasks,
            cluster.len(),
            summary.jct.mean,
            summary.jct.median,
            summary.jct.p90,
            summary.jct.p99,
            summary.makespan,
            summary.fairness[0].jain_mean,
            summary.fairness[1].jain_mean,
            summary.fairness[2].jain_mean,
            if summary.decision_us.mean.is_nan() {
                "decisions not timed".to_string()
            } else {
                format!("decision {:.1} us mean, {:.1} us p99", summary.decision_us.mean, summary.decision_us.p99)
            },
            args.out.display(),
            written
        );
    }
    Ok(0)
}
