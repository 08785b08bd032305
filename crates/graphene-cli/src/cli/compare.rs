//! `graphene compare`

use std::path::PathBuf;

use graphene::compare::{compare_each, summarize, Row};
use graphene::formats;
use graphene::{Result, Scheduler};

use super::args::{cluster_for, parse_scheduler, spec_for_file, ClusterArgs, InputArgs, SearchArgs};

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
    /// Comma-separated schedulers [default: graphene and the baselines; on machines of
    /// different speeds or with edge data, graphene, heft, cpop and the DEFT policies].
    #[arg(long, value_delimiter = ',')]
    pub schedulers: Option<Vec<String>>,
    /// Print rows and summary as JSON.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print rows as CSV.
    #[arg(long)]
    pub csv: bool,
    /// Report elapsed_ms as 0 so that repeated runs are byte-identical.
    #[arg(long)]
    pub no_timing: bool,
    /// No progress bar on standard error.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn run(a: Args) -> Result<i32> {
    let cfg = a.search.config()?;
    graphene::request::refuse_exact(&cfg)?;
    let opts = a.input.load_options();
    let mut dags = Vec::new();
    let mut specs = Vec::new();
    for p in &a.dags {
        let spec = spec_for_file(&a.cluster, &a.input, p)?;
        for dag in formats::load_dags(p, &opts)? {
            cluster_for(&spec, &dag, a.cluster.cluster.as_deref(), p)?;
            dags.push(dag);
            specs.push(spec.clone());
        }
    }
    let networked = dags.iter().zip(&specs).any(|(d, s)| !s.network().is_trivial_for(d));
    let schedulers: Vec<Scheduler> = match &a.schedulers {
        Some(names) => names.iter().map(|n| parse_scheduler(n)).collect::<Result<_>>()?,
        None if networked => std::iter::once(Scheduler::Graphene).chain(Scheduler::hetero()).collect(),
        None => Scheduler::all(),
    };
    // The speedup and SLR columns appear whenever speeds or transfers are in play, so that
    // homogeneous comparisons keep their established columns.
    let extra = networked || schedulers.iter().any(|s| matches!(s, Scheduler::Hetero(_)));
    let text = !a.json && !a.csv;
    if text {
        let tail = if extra { format!(" {:>8} {:>7}", "speedup", "slr") } else { String::new() };
        outln!(
            "{:<32} {:>7} {:<15} {:>14} {:>8} {:>11}{tail}",
            "dag",
            "tasks",
            "scheduler",
            "makespan",
            "ratio",
            "time_ms"
        )?;
    }
    let spec_refs: Vec<&graphene::ClusterSpec> = specs.iter().collect();
    let bar = super::progress::bar(
        (dags.len() * schedulers.len()) as u64,
        "{spinner} compare [{bar:30}] {pos}/{len} schedules, last {msg} ({elapsed})",
        a.quiet,
    );
    let rows = a.search.in_pool(|| {
        compare_each(&dags, &spec_refs, &schedulers, &cfg, a.input.seed, |r: &Row| {
            if let Some(b) = &bar {
                b.inc(1);
                b.set_message(r.dag.clone());
            }
            if text {
                let tail = if extra { format!(" {:>8.3} {:>7.3}", r.speedup, r.slr) } else { String::new() };
                // A closed stdout surfaces at the summary below; rows are best effort.
                let print = || {
                    outln!(
                        "{:<32} {:>7} {:<15} {:>14.3} {:>8.4} {:>11.2}{tail}",
                        r.dag,
                        r.tasks,
                        r.scheduler,
                        r.makespan,
                        r.ratio,
                        if a.no_timing { 0.0 } else { r.elapsed_ms }
                    )
                };
                let _ = match &bar {
                    Some(b) => b.suspend(print),
                    None => print(),
                };
            }
        })
    })??;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let mut rows = rows;
    if a.no_timing {
        rows.iter_mut().for_each(|r| r.elapsed_ms = 0.0);
    }
    let summary = summarize(&rows, &schedulers);
    if a.json {
        let v = serde_json::json!({ "rows": rows, "summary": summary });
        outln!("{}", serde_json::to_string_pretty(&v).expect("serializable"))?;
    } else if a.csv {
        let tail = if extra { ",speedup,slr,copies" } else { "" };
        outln!("dag,tasks,scheduler,makespan,lower_bound,ratio,elapsed_ms{tail}")?;
        for r in &rows {
            let tail = if extra { format!(",{},{},{}", r.speedup, r.slr, r.copies) } else { String::new() };
            outln!(
                "{},{},{},{},{},{},{}{tail}",
                r.dag,
                r.tasks,
                r.scheduler,
                r.makespan,
                r.lower_bound,
                r.ratio,
                r.elapsed_ms
            )?;
        }
    } else {
        outln!("")?;
        let tail = if extra {
            format!(" {:>14} {:>12} {:>9}", "mean_makespan", "mean_speedup", "mean_slr")
        } else {
            String::new()
        };
        outln!(
            "{:<15} {:>6} {:>13} {:>10} {:>11} {:>6}{tail}",
            "scheduler",
            "dags",
            "median_ratio",
            "p90_ratio",
            "mean_ratio",
            "best"
        )?;
        for s in &summary {
            let tail = if extra {
                format!(" {:>14.3} {:>12.3} {:>9.3}", s.mean_makespan, s.mean_speedup, s.mean_slr)
            } else {
                String::new()
            };
            outln!(
                "{:<15} {:>6} {:>13.4} {:>10.4} {:>11.4} {:>6}{tail}",
                s.scheduler,
                s.dags,
                s.median_ratio,
                s.p90_ratio,
                s.mean_ratio,
                s.best_count
            )?;
        }
    }
    Ok(0)
}
