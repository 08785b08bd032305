//! `graphene build-schedule`

use std::path::PathBuf;

use graphene::api as work;
use graphene::formats;
use graphene::model::Dag;
use graphene::offline::SearchReport;
use graphene::output::{self, ScheduleReport};
use graphene::Result;

use super::args::{cluster_for, parse_scheduler, spec_for_file, ClusterArgs, DagPickArgs, InputArgs, SearchArgs};

#[derive(clap::Args)]
pub struct Args {
    /// DAG file (graphene JSON, WfCommons or Decima TPC-H).
    pub dag: PathBuf,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub pick: DagPickArgs,
    #[command(flatten)]
    pub search: SearchArgs,
    /// graphene, or a baseline: bfs, cp, tetris, random, strippart, coffman-graham, fifo; on machines
    /// of different speeds: heft, cpop, fifo-deft, sjf-deft, hrrn-deft, rankup-deft, lachesis (the bundled
    /// model, see `graphene train-lachesis`).
    #[arg(long, default_value = "graphene")]
    pub scheduler: String,
    /// Write the schedule here (atomically) instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Report elapsed_ms as 0 so that repeated runs are byte-identical.
    #[arg(long)]
    pub no_timing: bool,
    /// No summary on standard error.
    #[arg(long, short)]
    pub quiet: bool,
    /// Stop the search after this many seconds and return the best valid schedule found by
    /// then (the output's search report says "stopped_early": true).
    #[arg(long, value_name = "SECONDS")]
    pub time_limit: Option<f64>,
}

pub fn run(a: Args) -> Result<i32> {
    let which = parse_scheduler(&a.scheduler)?;
    let mut cfg = a.search.config()?;
    if let Some(s) = a.time_limit {
        if !(s.is_finite() && (0.0..=1e9).contains(&s)) {
            return Err(graphene::Error::Usage(format!("--time-limit {s}: expected seconds in [0, 1e9]")));
        }
        cfg.deadline = graphene::Deadline::after(std::time::Duration::from_secs_f64(s));
    }
    let inputs: Vec<&std::path::Path> = std::iter::once(a.dag.as_path()).chain(a.cluster.cluster.as_deref()).collect();
    if let Some(out) = &a.out {
        // Refuse a bad --out before the search, not after it.
        output::target(out, &inputs)?;
    }
    let dag = formats::load_dag(&a.dag, &a.input.load_options_picking(&a.pick))?;
    let network_file = formats::is_network_file(&a.dag, a.input.format)?;
    let spec = spec_for_file(&a.cluster, &a.input, &a.dag)?;
    let net = spec.network();
    work::check_network(which, &net, &dag)?;
    let cluster = cluster_for(&spec, &dag, a.cluster.cluster.as_deref(), &a.dag)?;
    let s = a
        .search
        .in_pool(|| work::schedule(&dag, &cluster, &net, network_file, which, &cfg, a.input.seed, a.no_timing))??;
    output::write_or_stdout(a.out.as_deref(), &s.json, &inputs)?;
    if !a.quiet {
        let mut text = summary(&dag, &s.report, cluster.len(), s.elapsed_ms);
        if let Some(n) = &s.network {
            text += &format!(
                "  network       speeds {:.3}-{:.3}, bandwidth {}{}; speedup {:.3}, SLR {:.3}; {} duplicated run(s)\n",
                net.speeds.iter().copied().fold(f64::INFINITY, f64::min),
                net.max_speed(),
                net.bandwidth,
                if net.has_pair_bandwidth() { " (other values between some groups)" } else { "" },
                n.speedup,
                n.slr,
                n.copies
            );
        }
        if s.report.search.as_ref().is_some_and(|r| r.stopped_early) {
            text += "  stopped early at --time-limit: the best schedule found by then (valid)\n";
        }
        eprint!("{text}");
    }
    Ok(0)
}

fn summary(dag: &Dag, r: &ScheduleReport, machines: usize, elapsed_ms: f64) -> String {
    let lb = &r.lower_bounds;
    let mut s = format!(
        "{} on {}: {} stages, {} tasks, {machines} machines\n",
        r.scheduler,
        dag.name,
        dag.stages.len(),
        dag.len()
    );
    s += &format!("  makespan      {:.3}\n", r.makespan);
    s += &format!(
        "  lower bounds  critical path {:.3} | total work {:.3} | stage-aware {:.3}\n",
        lb.critical_path, lb.total_work, lb.stage_aware
    );
    s += &format!("  ratio         {:.3} x best lower bound\n", r.ratio);
    if let Some(search) = &r.search {
        s += &search_lines(search);
    }
    s += &format!("  time          {elapsed_ms:.1} ms; schedule validated\n");
    s
}

fn search_lines(search: &SearchReport) -> String {
    let mut s = format!(
        "  search        {} part(s) between cuts, {} candidate troublesome sets explored\n",
        search.parts.len(),
        search.candidates_explored
    );
    let shown = 6;
    for (i, p) in search.parts.iter().enumerate().take(shown) {
        let what = if p.bypassed {
            "no internal dependencies: greedy packing".to_string()
        } else if p.subset_sizes[0] == 0 {
            format!(
                "{} candidates ({} duplicate, {} pruned); best: no troublesome set (plain greedy)",
                p.candidates_explored, p.candidate_stats.duplicates, p.candidate_stats.pruned
            )
        } else {
            let th = match (p.long_threshold, p.frag_threshold) {
                (Some(l), Some(f)) => format!("LongScore >= {l:.2} or FragScore <= {f:.2}"),
                (Some(l), None) => format!("LongScore >= {l:.2}"),
                (None, Some(f)) => format!("FragScore <= {f:.2}"),
                (None, None) => String::new(),
            };
            let mut stages = p.trouble_stages.iter().take(4).cloned().collect::<Vec<_>>().join(", ");
            if p.trouble_stages.len() > 4 {
                stages += &format!(" (+{} more)", p.trouble_stages.len() - 4);
            }
            format!(
                "{} candidates ({} duplicate, {} pruned); T = {} tasks [{}] from {th}; order {}, T {}; |S|={} |P|={} |C|={}",
                p.candidates_explored,
                p.candidate_stats.duplicates,
                p.candidate_stats.pruned,
                p.subset_sizes[0],
                stages,
                p.order.map_or("-", |o| o.as_str()),
                p.trouble_direction.unwrap_or("-"),
                p.subset_sizes[1],
                p.subset_sizes[2],
                p.subset_sizes[3]
            )
        };
        s += &format!("  part {:<3}      {} tasks, makespan {:.3}: {what}\n", i + 1, p.tasks, p.makespan);
    }
    if search.parts.len() > shown {
        s += &format!("  ...           {} more parts\n", search.parts.len() - shown);
    }
    if let Some(imp) = &search.improve {
        let result = if imp.to < imp.from {
            format!("makespan {:.3} -> {:.3}", imp.from, imp.to)
        } else {
            "no shorter schedule found".to_string()
        };
        let stop = if imp.at_bound { ", stopped at the lower bound" } else { "" };
        s += &format!(
            "  improve       {result} ({} list decodes, {} of {} task placements, seed {}{stop})\n",
            imp.decodes, imp.work, imp.budget, imp.seed
        );
    }
    if let Some(e) = &search.exact {
        use graphene::offline::ExactStatus;
        let what = match e.status {
            ExactStatus::Optimal => format!("makespan {:.3} proven optimal", e.upper_bound),
            stopped => format!(
                "makespan {:.3} not proven optimal: {}; lower bound {:.3}, gap {:.1}%",
                e.upper_bound,
                if stopped == ExactStatus::TimeLimit { "time limit reached" } else { "node budget spent" },
                e.lower_bound,
                e.gap * 100.0
            ),
        };
        s += &format!(
            "  exact         {what} (from {:.3}; {} of {} nodes, {} round(s))\n",
            e.from, e.nodes, e.node_budget, e.rounds
        );
    }
    s
}
