//! `graphene replay`

use std::collections::BTreeMap;
use std::path::PathBuf;

use graphene::fairness::FairnessMode;
use graphene::metrics;
use graphene::model::{ClusterSpec, Workload};
use graphene::online::{self, Charge, Eta, GrapheneOnline, OnlineSettings};
use graphene::output::OutDir;
use graphene::sim::{self, Misestimated, SimConfig};
use graphene::trace::{self, TraceFormat, TraceOptions};
use graphene::{Error, Result};

use super::args::ClusterArgs;

/// Options every replay command shares.
#[derive(clap::Args)]
pub struct Common {
    /// Workload trace: native CSV (see README) or Alibaba v2018 batch tasks.
    pub trace: PathBuf,
    /// Trace format (detected from the content when absent).
    #[arg(long, value_enum)]
    pub trace_format: Option<TraceFormat>,
    /// Spread the jobs round-robin over K queues q0..q(K-1), replacing the trace's queues.
    #[arg(long, value_name = "K")]
    pub spread_queues: Option<usize>,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// graphene: bounded unfairness; a queue owed more than KAPPA x cluster capacity is served
    /// first [default: 0.1; "none" turns the bound off].
    #[arg(long, value_name = "K")]
    pub kappa: Option<String>,
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
    /// graphene: what a launch charges the deficit counters: `time` (unit x estimated duration /
    /// 60 s, so kappa bounds resource-time) or `task` (the unit alone, per launch, as the paper).
    #[arg(long, value_enum, default_value = "time")]
    pub charge: ChargeArg,
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
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// decima: weights file (from `graphene train-decima`) [default: the bundled
    /// models/decima-tpch.json].
    #[arg(long, value_name = "FILE")]
    pub decima_model: Option<PathBuf>,
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
    #[command(flatten)]
    pub common: Common,
    /// Online scheduler (see README): graphene, cs, fifo, tetris, cp, drf, random, slearn,
    /// graphene+cs, graphene+tetris, heft, decima.
    #[arg(long, default_value = "cs")]
    pub scheduler: String,
    /// Directory for jobs.csv, schedule.csv and summary.json.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ChargeArg {
    Time,
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

fn parse_misestimate(s: &str) -> Result<(f64, f64)> {
    let bad = || Error::Usage(format!("--misestimate '{s}' is not LOW:HIGH with -1 < LOW <= HIGH"));
    let (a, b) = s.split_once(':').ok_or_else(bad)?;
    let lo: f64 = a.trim().parse().map_err(|_| bad())?;
    let hi: f64 = b.trim().parse().map_err(|_| bad())?;
    if !(lo > -1.0 && lo <= hi && hi.is_finite()) {
        return Err(bad());
    }
    Ok((lo, hi))
}

/// Entitled share per queue, in `workload.queues()` order.
fn shares(spec: Option<&str>, workload: &Workload) -> Result<Vec<f64>> {
    let queues = workload.queues();
    let Some(spec) = spec else {
        return Ok(vec![1.0 / queues.len().max(1) as f64; queues.len()]);
    };
    let given: BTreeMap<String, f64> = graphene::formats::cluster::parse_capacity(spec)
        .map_err(|_| Error::Usage(format!("--queues '{spec}' is not NAME=SHARE,...")))?;
    for name in given.keys() {
        if !queues.contains(name) {
            return Err(Error::Usage(format!(
                "--queues names '{name}', but the trace's queues are {}",
                queues.join(", ")
            )));
        }
    }
    let out: Vec<f64> = queues
        .iter()
        .map(|q| given.get(q).copied().ok_or_else(|| Error::Usage(format!("--queues gives no share for queue '{q}'"))))
        .collect::<Result<_>>()?;
    let sum: f64 = out.iter().sum();
    if sum <= 0.0 {
        return Err(Error::Usage("--queues shares must not all be 0".into()));
    }
    Ok(out.iter().map(|s| s / sum).collect())
}

fn graphene_config(a: &Common, shares: &[f64]) -> Result<GrapheneOnline> {
    let mut cfg = GrapheneOnline { shares: shares.to_vec(), ..GrapheneOnline::default() };
    cfg.kappa = match a.kappa.as_deref() {
        None => cfg.kappa,
        Some("none") => None,
        Some(k) => match k.parse::<f64>() {
            Ok(v) if (0.0..1.0).contains(&v) => Some(v),
            _ => return Err(Error::Usage(format!("--kappa '{k}' must be a number in [0, 1) or none"))),
        },
    };
    cfg.eta = match a.eta.as_str() {
        "auto" => Eta::Auto,
        e => match e.parse::<f64>() {
            Ok(v) if v >= 0.0 && v.is_finite() => Eta::Fixed(v),
            _ => return Err(Error::Usage(format!("--eta '{e}' must be a number >= 0 or auto"))),
        },
    };
    if let Some(rp) = a.rp {
        if !(0.0..=1.0).contains(&rp) {
            return Err(Error::Usage(format!("--rp {rp} must be in [0, 1]")));
        }
        cfg.rp = rp;
    }
    if let Some(x) = a.overbook_limit {
        if !(x.is_finite() && x >= 1.0) {
            return Err(Error::Usage(format!("--overbook-limit {x} must be a finite number >= 1")));
        }
        cfg.overbook = x;
    }
    cfg.charge = match a.charge {
        ChargeArg::Time => Charge::Time,
        ChargeArg::Task => Charge::Task,
    };
    cfg.fairness = match a.fairness {
        Fairness::Slot => FairnessMode::Slot,
        Fairness::Drf => FairnessMode::Drf,
    };
    Ok(cfg)
}

/// A loaded trace, its cluster and everything a replay needs besides the scheduler.
pub struct Setup {
    pub workload: graphene::model::Workload,
    pub cluster: graphene::model::Cluster,
    pub shares: Vec<f64>,
    pub settings: OnlineSettings,
    pub cfg: SimConfig,
}

impl Common {
    pub fn setup(&self) -> Result<Setup> {
        let a = self;
        let format = match a.trace_format {
            Some(f) => f,
            None => trace::detect(&graphene::formats::read_text(&a.trace)?).map_err(|e| e.in_file(&a.trace))?,
        };
        let (workload, skipped) =
            trace::load(&a.trace, &TraceOptions { format: Some(format), queues: a.spread_queues })?;
        if !skipped.is_empty() {
            eprintln!("{}: {skipped}", a.trace.display());
        }
        if workload.jobs.is_empty() {
            return Err(Error::Usage(format!("{}: the trace holds no jobs", a.trace.display())));
        }
        let resources = workload.jobs[0].dag.resources.clone();
        let spec = if format == TraceFormat::Alibaba && a.cluster.cluster.is_none() && a.cluster.capacity.is_none() {
            // Alibaba's machines: 96 cores and 100 memory units each.
            let cap =
                [("cpu".to_string(), trace::alibaba::MACHINE_CPU), ("mem".to_string(), trace::alibaba::MACHINE_MEM)]
                    .into_iter()
                    .collect();
            let n = a.cluster.machines.unwrap_or(4000);
            graphene::limits::current().check_machines(n as u64, "--machines")?;
            let mut s = ClusterSpec::uniform(n, cap);
            if a.cluster.no_overbook {
                s.overbook.clear();
            }
            a.cluster.apply_network(&mut s)?;
            s
        } else {
            a.cluster.spec()?
        };
        let cluster = spec.resolve(&resources).map_err(|e| match &a.cluster.cluster {
            Some(p) => e.in_file(p),
            None => e,
        })?;
        let shares = shares(a.queues.as_deref(), &workload)?;
        let settings = OnlineSettings {
            shares: shares.clone(),
            graphene: graphene_config(a, &shares)?,
            seed: a.seed,
            decima_model: a.decima_model.clone(),
        };
        let cfg = SimConfig {
            heartbeat: a.heartbeat,
            misestimate: a.misestimate.as_deref().map(parse_misestimate).transpose()?,
            misestimate_what: match a.misestimate_what {
                MisestimatedArg::Durations => Misestimated::Durations,
                MisestimatedArg::Demands => Misestimated::Demands,
                MisestimatedArg::Both => Misestimated::Both,
            },
            seed: a.seed,
            speeds: if spec.speeds.iter().all(|&s| s == 1.0) { Vec::new() } else { spec.network().speeds },
            deadline: match a.time_limit {
                None => graphene::Deadline::none(),
                Some(s) if s.is_finite() && (0.0..=1e9).contains(&s) => {
                    graphene::Deadline::after(std::time::Duration::from_secs_f64(s))
                }
                Some(s) => return Err(Error::Usage(format!("--time-limit {s}: expected seconds in [0, 1e9]"))),
            },
        };
        Ok(Setup { workload, cluster, shares, settings, cfg })
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
    use std::io::IsTerminal;
    if quiet || !std::io::stderr().is_terminal() {
        return sim::run(workload, cluster, policy, cfg);
    }
    let bar = indicatif::ProgressBar::new(workload.jobs.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} {prefix} [{bar:30}] {pos}/{len} jobs, simulated {msg} ({elapsed})",
        )
        .expect("a valid template")
        .progress_chars("=> "),
    );
    bar.set_prefix(policy.name());
    let result = sim::run_with_progress(workload, cluster, policy, cfg, &mut |now, done| {
        bar.set_position(done as u64);
        bar.set_message(format!("{now:.0} s"));
    });
    bar.finish_and_clear();
    result
}

/// Refuses a realized schedule that breaks a dependency or a capacity: that would be a bug in
/// the simulator or a policy, and no figure should be computed from it.
pub fn check(
    workload: &graphene::model::Workload,
    cluster: &graphene::model::Cluster,
    result: &sim::SimResult,
    speeds: &[f64],
    scheduler: &str,
) -> Result<()> {
    let violations = graphene::validate::validate_replay_on(workload, cluster, speeds, result);
    match violations.first() {
        None => Ok(()),
        Some(v) => Err(Error::Usage(format!(
            "internal error: the replay under {scheduler} broke {} rule(s), first: {v}; please report this with the trace",
            violations.len()
        ))),
    }
}

pub fn run(args: Args) -> Result<i32> {
    let a = &args.common;
    // The folder is prepared (and a bad --out refused) before the replay, not after it.
    let inputs: Vec<&std::path::Path> =
        std::iter::once(a.trace.as_path()).chain(a.cluster.cluster.as_deref()).collect();
    let mut out = OutDir::create(&args.out, &inputs)?;
    let Setup { workload, cluster, shares, settings, cfg } = a.setup()?;
    let mut policy = online::by_name(&args.scheduler, &settings)?;
    let result = run_sim(&workload, &cluster, policy.as_mut(), &cfg, a.quiet)?;
    check(&workload, &cluster, &result, &cfg.speeds, &policy.name())?;
    let mut summary = metrics::summarize(&workload, &cluster, &result, &shares, 100);
    if a.no_timing {
        summary.decision_us = metrics::Stats::of(&[]);
    }
    out.write("jobs.csv", &graphene::output::replay::jobs_csv(&result)?)?;
    out.write("schedule.csv", &graphene::output::replay::schedule_csv(&workload, &result)?)?;
    let mut json = serde_json::to_vec_pretty(&serde_json::json!({
        "trace": a.trace.display().to_string(),
        "scheduler": policy.name(),
        "machines": cluster.len(),
        "seed": a.seed,
        "summary": summary,
    }))
    .expect("serializable");
    json.push(b'\n');
    out.write("summary.json", &json)?;
    out.commit()?;
    if !a.quiet {
        eprintln!(
            "{} on {}: {} jobs, {} tasks, {} machines\n  JCT mean {:.2} median {:.2} p90 {:.2} p99 {:.2} s; makespan {:.2} s\n  Jain (10/60/240 s) {:.3} / {:.3} / {:.3}; decision {:.1} us mean, {:.1} us p99\n  wrote {}/jobs.csv, schedule.csv, summary.json",
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
            summary.decision_us.mean,
            summary.decision_us.p99,
            args.out.display()
        );
    }
    Ok(0)
}
