//! `graphene compare`

use std::path::PathBuf;

use graphene::compare::{compare, summarize, Row};
use graphene::formats;
use graphene::{Result, Scheduler};

use super::args::{cluster_for, parse_scheduler, ClusterArgs, InputArgs, SearchArgs};

#[derive(clap::Args)]
pub struct Args {
    /// DAG files (a Decima TPC-H file without --query contributes all 22 queries).
    #[arg(required = true)]
    pub dags: Vec<PathBuf>,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub search: SearchArgs,
    /// Comma-separated schedulers [default: all].
    #[arg(long, value_delimiter = ',')]
    pub schedulers: Option<Vec<String>>,
    /// Print rows and summary as JSON.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print rows as CSV.
    #[arg(long)]
    pub csv: bool,
}

pub fn run(a: Args) -> Result<i32> {
    let schedulers: Vec<Scheduler> = match &a.schedulers {
        Some(names) => names.iter().map(|n| parse_scheduler(n)).collect::<Result<_>>()?,
        None => Scheduler::all(),
    };
    let cfg = a.search.config()?;
    let opts = a.input.load_options();
    let spec = a.cluster.spec()?;
    let mut dags = Vec::new();
    for p in &a.dags {
        for dag in formats::load_dags(p, &opts)? {
            cluster_for(&spec, &dag, a.cluster.cluster.as_deref(), p)?;
            dags.push(dag);
        }
    }
    let text = !a.json && !a.csv;
    if text {
        outln!("{:<32} {:>7} {:<15} {:>14} {:>8} {:>11}", "dag", "tasks", "scheduler", "makespan", "ratio", "time_ms")?;
    }
    let rows = a.search.in_pool(|| {
        compare(&dags, &spec, &schedulers, &cfg, a.input.seed, |r: &Row| {
            if text {
                // A closed stdout surfaces at the summary below; rows are best effort.
                let _ = outln!(
                    "{:<32} {:>7} {:<15} {:>14.3} {:>8.4} {:>11.2}",
                    r.dag, r.tasks, r.scheduler, r.makespan, r.ratio, r.elapsed_ms
                );
            }
        })
    })??;
    let summary = summarize(&rows, &schedulers);
    if a.json {
        let v = serde_json::json!({ "rows": rows, "summary": summary });
        outln!("{}", serde_json::to_string_pretty(&v).expect("serializable"))?;
    } else if a.csv {
        outln!("dag,tasks,scheduler,makespan,lower_bound,ratio,elapsed_ms")?;
        for r in &rows {
            outln!(
                "{},{},{},{},{},{},{}",
                r.dag, r.tasks, r.scheduler, r.makespan, r.lower_bound, r.ratio, r.elapsed_ms
            )?;
        }
    } else {
        outln!("")?;
        outln!("{:<15} {:>6} {:>13} {:>10} {:>11} {:>6}", "scheduler", "dags", "median_ratio", "p90_ratio", "mean_ratio", "best")?;
        for s in &summary {
            outln!(
                "{:<15} {:>6} {:>13.4} {:>10.4} {:>11.4} {:>6}",
                s.scheduler, s.dags, s.median_ratio, s.p90_ratio, s.mean_ratio, s.best_count
            )?;
        }
    }
    Ok(0)
}
