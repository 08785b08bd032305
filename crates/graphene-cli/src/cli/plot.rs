//! `graphene plot gantt|usage|cdf`

use std::path::{Path, PathBuf};

use graphene::formats;
use graphene::output::write_output;
use graphene::plot::{self, CdfChart, Context, GanttOptions, JobsIn, Lanes, Metric, ReplaySummary, ScheduleIn};
use graphene::{Error, Result};

use super::args::{cluster_for, ClusterArgs, InputArgs};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub chart: Chart,
}

#[derive(clap::Subcommand)]
pub enum Chart {
    /// Gantt chart of a schedule report (build-schedule --out): lanes per machine, bars by stage,
    /// troublesome tasks outlined, lower bounds as vertical lines.
    Gantt(GanttArgs),
    /// Cluster utilization per resource and running tasks over time of one replay directory.
    Usage(UsageArgs),
    /// CDF of the per-job JCT gap of replays against a baseline replay, or (--metric ratio) of
    /// makespan / lower bound per scheduler from `compare --csv` files.
    Cdf(CdfArgs),
}

#[derive(clap::Args)]
pub struct Common {
    /// Provenance line under the chart [default: this plot command].
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
    /// The SVG file to write (atomically).
    #[arg(long, short, value_name = "FILE")]
    pub out: PathBuf,
    /// No summary on standard error.
    #[arg(long, short)]
    pub quiet: bool,
}

impl Common {
    fn note(&self) -> String {
        self.note.clone().unwrap_or_else(|| format!("made by: graphene {}", super::command_line()))
    }
}

#[derive(clap::Args)]
pub struct GanttArgs {
    /// Schedule report (JSON) written by build-schedule.
    pub schedule: PathBuf,
    /// The DAG the schedule was built for: needed for --by resource, checks task names.
    #[arg(long, value_name = "FILE")]
    pub dag: Option<PathBuf>,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub input: InputArgs,
    /// What a lane shows: a machine's tasks, or a machine's use of one resource.
    #[arg(long, value_parser = super::args::choice::<Lanes>(), default_value = "machine")]
    pub by: Lanes,
    /// With more machines than this, consecutive machines share a lane.
    #[arg(long, value_name = "N", default_value_t = 40)]
    pub max_lanes: usize,
    #[command(flatten)]
    pub common: Common,
}

#[derive(clap::Args)]
pub struct UsageArgs {
    /// Replay output directory (replay --out) holding summary.json.
    pub results: PathBuf,
    #[command(flatten)]
    pub common: Common,
}

#[derive(clap::Args)]
pub struct CdfArgs {
    /// Replay output directories (jobs.csv, or jobs.parquet of `replay --format parquet`), or
    /// compare --csv files with --metric ratio.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Replay directory of the baseline scheduler (for --metric jct and slowdown).
    #[arg(long, value_name = "DIR")]
    pub baseline: Option<PathBuf>,
    #[arg(long, value_parser = super::args::choice::<Metric>(), default_value = "jct")]
    pub metric: Metric,
    /// Legend names of the lines, in order [default: the scheduler of each input].
    #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
    pub labels: Option<Vec<String>>,
    /// Chart title [default: from the metric and the baseline].
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
    #[command(flatten)]
    pub common: Common,
}

pub fn run(a: Args) -> Result<i32> {
    match a.chart {
        Chart::Gantt(g) => gantt(g),
        Chart::Usage(u) => usage(u),
        Chart::Cdf(c) => cdf(c),
    }
}

fn finish(common: &Common, svg: &str, what: String, inputs: &[&std::path::Path]) -> Result<i32> {
    write_output(&common.out, svg.as_bytes(), inputs)?;
    if !common.quiet {
        eprintln!("wrote {}: {what}", common.out.display());
    }
    Ok(0)
}

fn gantt(a: GanttArgs) -> Result<i32> {
    if a.max_lanes == 0 {
        return Err(Error::Usage("--max-lanes must be at least 1".into()));
    }
    let schedule = ScheduleIn::load(&a.schedule)?;
    let opts = GanttOptions { by: a.by, max_lanes: a.max_lanes, note: a.common.note() };
    let loaded = match &a.dag {
        Some(path) => {
            let dag = formats::load_dag(path, &a.input.load_options())?;
            let mut cluster_args = a.cluster.clone();
            if cluster_args.cluster.is_none() && cluster_args.machines.is_none() {
                cluster_args.machines = schedule.machines;
            }
            let cluster = cluster_for(&cluster_args.spec()?, &dag, a.cluster.cluster.as_deref(), path)?;
            Some((dag, cluster))
        }
        None if a.by == Lanes::Resource => {
            return Err(Error::Usage("--by resource needs --dag (the tasks' demands)".into()));
        }
        None => None,
    };
    let ctx = loaded.as_ref().map(|(dag, cluster)| Context { dag, cluster });
    let chart = plot::gantt(&schedule, ctx.as_ref(), &opts).map_err(|e| in_file_unless_usage(e, &a.schedule))?;
    for w in &chart.warnings {
        eprintln!("warning: {w}");
    }
    let inputs: Vec<&std::path::Path> = std::iter::once(a.schedule.as_path()).chain(a.dag.as_deref()).collect();
    finish(
        &a.common,
        &chart.svg,
        format!("{} lanes, {} troublesome tasks marked", chart.lanes, chart.troublesome),
        &inputs,
    )
}

/// Field errors about the schedule's tasks name the schedule file; flag errors stand alone.
fn in_file_unless_usage(e: Error, file: &Path) -> Error {
    match e {
        Error::Usage(_) => e,
        other => other.in_file(file),
    }
}

fn usage(a: UsageArgs) -> Result<i32> {
    let summary = ReplaySummary::load(&a.results)?;
    let svg = plot::usage(&summary, &a.common.note())?;
    finish(
        &a.common,
        &svg,
        format!("{} resources over {} intervals", summary.summary.resources.len(), summary.summary.utilization.len()),
        &[&a.results.join("summary.json")],
    )
}

fn cdf(a: CdfArgs) -> Result<i32> {
    let (mut series, title, x_desc, reference, unit) = match a.metric {
        Metric::Ratio => {
            if a.baseline.is_some() {
                return Err(Error::Usage("--metric ratio takes compare --csv files and no --baseline".into()));
            }
            let mut series = Vec::new();
            for p in &a.inputs {
                series.extend(plot::load_compare(p)?);
            }
            let title = "Makespan / best lower bound per DAG".to_string();
            (series, title, "makespan / best lower bound".to_string(), 1.0, "x")
        }
        Metric::Gain => {
            if a.baseline.is_some() {
                return Err(Error::Usage("--metric gain takes CSV files (series,gain) and no --baseline".into()));
            }
            let mut series = Vec::new();
            for p in &a.inputs {
                series.extend(plot::load_series(p, "series", "gain")?);
            }
            let title = "Per-workload median JCT gain".to_string();
            (series, title, "median per-job JCT gain [%] (positive = faster)".to_string(), 0.0, "%")
        }
        Metric::Jct | Metric::Slowdown => {
            let Some(base_dir) = &a.baseline else {
                return Err(Error::Usage(format!(
                    "--metric {} needs --baseline DIR (the baseline scheduler's replay)",
                    if a.metric == Metric::Jct { "jct" } else { "slowdown" }
                )));
            };
            let base = JobsIn::load(base_dir)?;
            let mut series = Vec::new();
            for dir in &a.inputs {
                let run = JobsIn::load(dir)?;
                let values = plot::against(&base, &run, a.metric)?;
                series.push((run.label, values));
            }
            if a.metric == Metric::Jct {
                let title = format!("Per-job JCT reduction against {}", base.label);
                (series, title, format!("JCT reduction vs {} [%] (positive = faster)", base.label), 0.0, "%")
            } else {
                let title = format!("Per-job slowdown against {}", base.label);
                (series, title, format!("JCT / JCT under {}", base.label), 1.0, "x")
            }
        }
    };
    if let Some(labels) = &a.labels {
        if labels.len() != series.len() {
            return Err(Error::Usage(format!("--labels gives {} names for {} lines", labels.len(), series.len())));
        }
        for (s, l) in series.iter_mut().zip(labels) {
            s.0 = l.clone();
        }
    }
    let title = a.title.clone().unwrap_or(title);
    let note = a.common.note();
    let chart = CdfChart { title: &title, x_desc: &x_desc, reference, unit, note: &note };
    let svg = plot::cdf(&series, &chart)?;
    let mut inputs: Vec<std::path::PathBuf> = Vec::new();
    for p in a.inputs.iter().chain(&a.baseline) {
        inputs.push(p.clone());
        inputs.push(p.join("jobs.csv"));
        inputs.push(p.join("jobs.parquet"));
    }
    let inputs: Vec<&std::path::Path> = inputs.iter().map(|p| p.as_path()).collect();
    finish(&a.common, &svg, format!("{} lines", series.len()), &inputs)
}
