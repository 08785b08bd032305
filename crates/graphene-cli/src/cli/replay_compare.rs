//! `graphene replay-compare`

use serde::Serialize;

use graphene::metrics::{self, gap_percentiles, jct_gaps};
use graphene::online;
use graphene::{Error, Result};

use super::replay::Common;
use graphene::request::ReplaySetup;

#[derive(clap::Args)]
pub struct Args {
    /// Comma-separated online schedulers [default: all]: graphene, cs, fifo, tetris, cp, drf,
    /// random, slearn, graphene+cs, graphene+tetris, heft, decima, graphene-plan (options after
    /// colons, as replay's --scheduler).
    #[arg(long, value_delimiter = ',')]
    pub schedulers: Option<Vec<String>>,
    /// Scheduler the per-job JCT gaps are measured against.
    #[arg(long, default_value = "cs")]
    pub baseline: String,
    #[command(flatten)]
    pub common: Common,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Row {
    scheduler: String,
    jct: metrics::Stats,
    makespan: f64,
    /// (jct_base - jct) / jct_base per job at the 10/25/50/75/90th percentiles.
    gap_vs_baseline: [f64; 5],
    jain_10s: f64,
    jain_60s: f64,
    jain_240s: f64,
    /// Mean utilization of each resource over the replay (cluster resource order).
    mean_utilization: Vec<f64>,
    /// Median per-job gap of this scheduler against each scheduler (same order as the rows).
    median_gap_vs: Vec<f64>,
}

pub fn run(a: Args) -> Result<i32> {
    let setup = a.common.setup()?;
    let ReplaySetup { workload, cluster, shares, settings, cfg, .. } = &setup;
    let mut names: Vec<String> = match &a.schedulers {
        Some(n) => n.clone(),
        None => online::NAMES.iter().map(|s| s.to_string()).collect(),
    };
    if !names.contains(&a.baseline) {
        names.insert(0, a.baseline.clone());
    }
    if names.iter().any(|n| n == "decima") {
        a.common.warn_decima(&setup)?;
    }
    let mut results = Vec::with_capacity(names.len());
    for name in &names {
        let mut policy = online::by_name(name, settings)?;
        let r = super::replay::run_sim(workload, cluster, policy.as_mut(), cfg, a.common.quiet)?;
        graphene::request::check_replay(&setup, &r, name)?;
        results.push(r);
    }
    let base_i = names.iter().position(|n| n == &a.baseline).ok_or_else(|| Error::Usage("baseline".into()))?;
    let rows: Vec<Row> = names
        .iter()
        .zip(&results)
        .map(|(name, r)| {
            let s = metrics::summarize(workload, cluster, r, shares, 10);
            Row {
                scheduler: name.clone(),
                jct: s.jct,
                makespan: s.makespan,
                gap_vs_baseline: gap_percentiles(&jct_gaps(&results[base_i], r)),
                jain_10s: s.fairness[0].jain_mean,
                jain_60s: s.fairness[1].jain_mean,
                jain_240s: s.fairness[2].jain_mean,
                mean_utilization: s.mean_utilization,
                median_gap_vs: results.iter().map(|b| gap_percentiles(&jct_gaps(b, r))[2]).collect(),
            }
        })
        .collect();
    if a.json {
        let v = serde_json::json!({
            "baseline": a.baseline,
            "jobs": workload.jobs.len(),
            "resources": cluster.resources,
            "rows": rows,
        });
        outln!("{}", serde_json::to_string_pretty(&v).expect("serializable"))?;
        return Ok(0);
    }
    outln!(
        "{:<16} {:>9} {:>9} {:>9} {:>10} | gap vs {:<8} {:>6} {:>6} {:>6} {:>6} {:>6} | Jain 10/60/240 s",
        "scheduler",
        "mean_jct",
        "median",
        "p90",
        "makespan",
        a.baseline,
        "p10",
        "p25",
        "p50",
        "p75",
        "p90"
    )?;
    for r in &rows {
        let g = r.gap_vs_baseline;
        outln!(
            "{:<16} {:>9.2} {:>9.2} {:>9.2} {:>10.2} | {:>15} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} | {:.3} / {:.3} / {:.3}",
            r.scheduler,
            r.jct.mean,
            r.jct.median,
            r.jct.p90,
            r.makespan,
            "",
            g[0],
            g[1],
            g[2],
            g[3],
            g[4],
            r.jain_10s,
            r.jain_60s,
            r.jain_240s
        )?;
    }
    outln!()?;
    let width = names.iter().map(|n| n.len()).max().unwrap_or(0).max(8);
    let head: Vec<String> = names.iter().map(|n| format!("{n:>width$}")).collect();
    outln!("{:<16} {}   (median per-job gap of the row vs the column)", "median gap", head.join(" "))?;
    for r in &rows {
        let cells: Vec<String> = r
            .median_gap_vs
            .iter()
            .zip(&names)
            .map(|(g, n)| if *n == r.scheduler { format!("{:>width$}", "-") } else { format!("{g:>width$.3}") })
            .collect();
        outln!("{:<16} {}", r.scheduler, cells.join(" "))?;
    }
    let util: Vec<String> = rows
        .iter()
        .map(|r| {
            let u: Vec<String> = r.mean_utilization.iter().map(|u| format!("{:.0}%", 100.0 * u)).collect();
            format!("{} {}", r.scheduler, u.join("/"))
        })
        .collect();
    outln!("\nmean utilization ({}): {}", cluster.resources.join("/"), util.join(", "))?;
    Ok(0)
}
