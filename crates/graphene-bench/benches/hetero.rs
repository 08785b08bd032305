//! Heterogeneous batch benchmark (LACHESIS section V, batch mode) and the HEFT speed figure.
//!
//! `cargo bench -p graphene-bench --bench hetero -- batch [--jobs 1,2,5] [--workloads K] [--ccr X] [--racks R --rack-bandwidth B] [--seed S] [--no-graphene] [--stage-rankup] [--lachesis-model FILE] [--schedulers a,b]`
//! `cargo bench -p graphene-bench --bench hetero -- heft-speed [--tasks N] [--machines M]`
//!
//! Batch mode: for each job count n, K workloads of n TPC-H queries (query and input size
//! 2g/5g/10g/20g drawn with the seed) are submitted at once onto 50 executors whose speeds are
//! drawn from 2.1-3.6 GHz; each executor runs one task at a time (tasks demand cpu = 1 of 1).
//! Edge data follows `hetero::batch::with_transfer_rule` (ccr x the parent stage's mean work per
//! task pair, bandwidth 1). Every schedule is checked by the validator before it is counted.
//! `lachesis` runs with the bundled model; each workload's makespans are printed on a `# w` line
//! with LACHESIS's gap to the best heuristic (HEFT, CPOP and the DEFT policies) on it, and the
//! distribution of those gaps at the end. `--no-graphene` leaves out the slow speed-1 search.
//! `--lachesis-model FILE` runs `lachesis` with that weights file instead of the bundled one.
//! `--schedulers a,b` runs only those (the workloads drawn are the same, so a model can be
//! scored alone and joined with another run's heuristics on the `# w` lines).
//! `--stage-rankup` adds a last column, `rankup-stage`: RankUp-DEFT coarsened to LACHESIS's
//! stage decisions (`hetero::lachesis::rank_rule`; the stage with the highest-rank ready task,
//! all its ready tasks placed), which shows what that granularity alone costs; it is not one of
//! the heuristics LACHESIS is compared with.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use graphene::formats::{self, LoadOptions};
use graphene::hetero::lachesis::{self, Decision, Model};
use graphene::hetero::{self, batch, metrics::Bases, HeteroAlgo, Instance};
use graphene::model::{
    ClusterSpec, Dag, DagBuilder, EdgeKind, GroupLink, Placement, ResVec, Schedule, StageSpec, TaskSpec,
};
use graphene::scheduler::{build_on, Scheduler};
use graphene::validate::validate_schedule_on;
use graphene::OfflineConfig;

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse().ok().unwrap_or_else(|| panic!("bad value for {name}")))
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    match args.first().map(String::as_str) {
        Some("batch") => batch_mode(&args),
        Some("heft-speed") => heft_speed(&args),
        // `cargo bench` with no arguments runs every bench target: keep that quick.
        _ => eprintln!("usage: cargo bench -p graphene-bench --bench hetero -- batch|heft-speed [options]"),
    }
}

fn tpch() -> Vec<Dag> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/decima-tpch/json");
    let opts = LoadOptions { demands: Some("none".into()), ..LoadOptions::default() };
    ["2g", "5g", "10g", "20g"]
        .iter()
        .flat_map(|s| formats::load_dags(&dir.join(format!("tpch-{s}.json")), &opts).expect("TPC-H file"))
        .collect()
}

fn batch_mode(args: &[String]) {
    let jobs: Vec<usize> = arg(args, "--jobs", "1,2,5,10,15,20".to_string())
        .split(',')
        .map(|v| v.parse().expect("--jobs takes numbers"))
        .collect();
    let workloads: usize = arg(args, "--workloads", 5);
    let ccr: f64 = arg(args, "--ccr", 0.5);
    let seed: u64 = arg(args, "--seed", 1);
    let machines: usize = arg(args, "--machines", 50);
    let all = tpch();
    let speeds = batch::lachesis_speeds(machines, seed).expect("machines within the limit");
    let capacity: BTreeMap<String, f64> = [("cpu".to_string(), 1.0)].into_iter().collect();
    let mut spec = ClusterSpec::with_speeds(&speeds, capacity, 1.0);
    spec.overbook.clear();
    // Racks: consecutive blocks of executors (one group each, as speeds differ) that move data
    // among themselves at `--rack-bandwidth`; the cluster-wide bandwidth 1 stays between racks.
    let racks: usize = arg(args, "--racks", 1);
    let rack_bw: f64 = arg(args, "--rack-bandwidth", 1.0);
    if racks > 1 {
        let per = machines.div_ceil(racks);
        for a in 0..machines {
            for b in a..machines.min((a / per + 1) * per) {
                spec.pair_bandwidth.push(GroupLink { groups: [a, b], bandwidth: rack_bw });
            }
        }
    }
    let net = spec.network();
    let with_graphene = !args.iter().any(|a| a == "--no-graphene");
    let schedulers: Vec<Scheduler> =
        std::iter::once(Scheduler::Graphene).filter(|_| with_graphene).chain(Scheduler::hetero()).collect();
    let keep: Option<Vec<String>> = args
        .iter()
        .position(|a| a == "--schedulers")
        .map(|i| args.get(i + 1).expect("--schedulers takes names").split(',').map(str::to_string).collect());
    if let Some(k) = &keep {
        let known: Vec<&str> = schedulers.iter().map(|s| s.name()).collect();
        if let Some(bad) = k.iter().find(|n| !known.contains(&n.as_str())) {
            panic!("--schedulers: unknown {bad:?}; known: {}", known.join(","));
        }
    }
    let schedulers: Vec<Scheduler> =
        schedulers.into_iter().filter(|s| keep.as_ref().is_none_or(|k| k.iter().any(|n| n == s.name()))).collect();
    let lachesis = schedulers.iter().position(|s| s.name() == "lachesis");
    let model: Option<Model> = args.iter().position(|a| a == "--lachesis-model").map(|i| {
        let path = args.get(i + 1).expect("--lachesis-model takes a file");
        Model::load(Path::new(path)).unwrap_or_else(|e| panic!("--lachesis-model: {e}"))
    });
    let stage_rankup = args.iter().any(|a| a == "--stage-rankup");
    let names: Vec<&str> = schedulers.iter().map(|s| s.name()).chain(stage_rankup.then_some("rankup-stage")).collect();
    let mut gaps: Vec<f64> = Vec::new();
    let cfg = OfflineConfig::default();
    println!(
        "# batch: {machines} executors, speeds {:?}, ccr {ccr}, racks {racks} (bandwidth {rack_bw} inside, 1 between), seed {seed}, {workloads} workloads per job count",
        speeds
    );
    print!("{:>4} {:>7}", "jobs", "tasks");
    for s in &names {
        print!(" {s:>12}");
    }
    println!("   (mean makespan; speedup / SLR below)");
    if let Some(m) = &model {
        println!("# lachesis model: {}", args[args.iter().position(|a| a == "--lachesis-model").unwrap() + 1]);
        println!("# its decision: {}", Decision::of(&m.trained).expect("checked when loaded").name());
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut totals: BTreeMap<&str, (f64, f64, f64, f64)> = BTreeMap::new();
    for &n in &jobs {
        let mut sums = vec![(0.0, 0.0, 0.0, 0.0); names.len()];
        let mut tasks = 0;
        for _ in 0..workloads {
            let picked: Vec<&Dag> = (0..n).map(|_| &all[rng.gen_range(0..all.len())]).collect();
            let dag = batch::with_transfer_rule(&batch::union("batch", &picked).expect("union"), ccr).expect("rule");
            tasks += dag.len();
            let cluster = spec.resolve(&dag.resources).expect("cluster");
            let bases = Bases::of_dag(&dag, &net);
            let mut row = Vec::with_capacity(names.len());
            let mut count = |i: usize, name: &str, secs: f64, schedule: &Schedule, copies: &[Placement]| {
                let v = validate_schedule_on(&dag, &cluster, &net, schedule, copies);
                assert!(v.is_empty(), "{name} gave an invalid schedule: {}", v[0]);
                let m = bases.metrics(schedule.makespan());
                row.push(m.makespan);
                sums[i].0 += m.makespan;
                sums[i].1 += m.speedup;
                sums[i].2 += m.slr;
                sums[i].3 += secs;
            };
            for (i, &s) in schedulers.iter().enumerate() {
                let started = Instant::now();
                let b = match (&model, s) {
                    (Some(m), Scheduler::Hetero(HeteroAlgo::Lachesis)) => {
                        let h = hetero::run_with(HeteroAlgo::Lachesis, &dag, &cluster, &net, Some(m));
                        graphene::scheduler::Built { schedule: h.schedule, search: None, copies: h.copies }
                    }
                    _ => build_on(s, &dag, &cluster, &net, &cfg, seed),
                };
                let secs = started.elapsed().as_secs_f64();
                count(i, s.name(), secs, &b.schedule, &b.copies);
            }
            if stage_rankup {
                let started = Instant::now();
                let inst = Instance::new(&dag, &cluster, &net);
                let (schedule, copies) = lachesis::rank_rule(&dag, &inst, Decision::Stage).finish();
                let secs = started.elapsed().as_secs_f64();
                count(schedulers.len(), "rankup-stage", secs, &schedule, &copies);
            }
            // Per workload: every makespan, and LACHESIS against the best heuristic.
            // A lower bound on any schedule: all work spread over the total speed, or the longest
            // path at the fastest speed without transfers.
            let top = speeds.iter().copied().fold(0.0, f64::max);
            let lb = (bases.sequential * top / speeds.iter().sum::<f64>()).max(bases.critical_path);
            let mut line = format!("# w jobs {n} tasks {} lb={lb:.3}", dag.len());
            for (s, m) in names.iter().zip(&row) {
                line += &format!(" {s}={m:.3}");
            }
            let heuristics = schedulers.iter().any(|s| matches!(s, Scheduler::Hetero(h) if *h != HeteroAlgo::Lachesis));
            if let Some(l) = lachesis.filter(|_| heuristics) {
                let best = schedulers
                    .iter()
                    .zip(&row)
                    .filter(|(s, _)| matches!(s, Scheduler::Hetero(h) if *h != HeteroAlgo::Lachesis))
                    .map(|(_, &m)| m)
                    .fold(f64::INFINITY, f64::min);
                let gap = 100.0 * (row[l] - best) / best;
                gaps.push(gap);
                line += &format!(
                    " lachesis_vs_best_heuristic={gap:+.2}% best_heuristic_vs_lb={:+.2}%",
                    100.0 * (best - lb) / lb
                );
            }
            println!("{line}");
        }
        let k = workloads as f64;
        print!("{n:>4} {:>7}", tasks / workloads);
        for s in &sums {
            print!(" {:>12.2}", s.0 / k);
        }
        println!();
        print!("{:>12}", "");
        for s in &sums {
            print!(" {:>5.2}/{:<6.3}", s.1 / k, s.2 / k);
        }
        println!();
        for (s, v) in names.iter().zip(&sums) {
            let t = totals.entry(s).or_default();
            t.0 += v.0 / k;
            t.1 += v.1 / k;
            t.2 += v.2 / k;
            t.3 += v.3 / k;
        }
    }
    if !gaps.is_empty() {
        let mut g = gaps.clone();
        g.sort_by(f64::total_cmp);
        let q = |f: f64| g[((g.len() - 1) as f64 * f).round() as usize];
        println!(
            "\nlachesis vs the best heuristic per workload (%, negative = shorter): min {:+.2} p25 {:+.2} median {:+.2} p75 {:+.2} max {:+.2}; better on {} of {}, mean {:+.2}",
            q(0.0),
            q(0.25),
            q(0.5),
            q(0.75),
            q(1.0),
            g.iter().filter(|&&x| x < -1e-9).count(),
            g.len(),
            g.iter().sum::<f64>() / g.len() as f64
        );
    }
    let c = jobs.len() as f64;
    println!(
        "\n{:<12} {:>14} {:>12} {:>9} {:>12}",
        "scheduler", "mean_makespan", "mean_speedup", "mean_slr", "mean_time_s"
    );
    for s in &names {
        let t = totals[s];
        println!("{s:<12} {:>14.2} {:>12.3} {:>9.3} {:>12.3}", t.0 / c, t.1 / c, t.2 / c, t.3 / c);
    }
}

/// A random layered DAG like the reference instances: `tasks` tasks in layers of about
/// sqrt(tasks), each task with one to three parents in the layer above, work 1-10, data 0-20.
fn layered(tasks: usize, seed: u64) -> Dag {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let width = (tasks as f64).sqrt().ceil() as usize;
    let mut b = DagBuilder::new(format!("layered-{tasks}"), vec!["cpu".into()]);
    let mut demand = ResVec::ZERO;
    demand.0[0] = 1.0;
    let mut data = Vec::new();
    for t in 0..tasks {
        let layer = t / width;
        let mut parents = Vec::new();
        if layer > 0 {
            let above = (layer - 1) * width..layer * width;
            for _ in 0..rng.gen_range(1..=3) {
                let p = rng.gen_range(above.clone());
                if !parents.contains(&p) {
                    parents.push(p);
                }
            }
        }
        for &p in &parents {
            data.push((p, t, rng.gen_range(0.0..20.0)));
        }
        b.stage(StageSpec {
            name: format!("t{t}"),
            group: None,
            tasks: vec![TaskSpec { duration: rng.gen_range(1.0..10.0), demand }],
            parents: parents.iter().map(|p| (format!("t{p}"), EdgeKind::AllToAll)).collect(),
        });
    }
    for (p, c, d) in data {
        b.edge_data(format!("t{p}"), format!("t{c}"), d);
    }
    b.build().expect("a layered DAG is valid")
}

fn heft_speed(args: &[String]) {
    let tasks: usize = arg(args, "--tasks", 5000);
    let machines: usize = arg(args, "--machines", 50);
    let dag = layered(tasks, 3);
    let speeds = batch::lachesis_speeds(machines, 3).expect("machines within the limit");
    let capacity: BTreeMap<String, f64> = [("cpu".to_string(), 1.0)].into_iter().collect();
    let spec = ClusterSpec::with_speeds(&speeds, capacity, 5.0);
    let cluster = spec.resolve(&dag.resources).expect("cluster");
    let net = spec.network();
    let mut best = f64::INFINITY;
    let mut makespan = 0.0;
    for _ in 0..5 {
        let started = Instant::now();
        let s = hetero::run(HeteroAlgo::Heft, &dag, &cluster, &net);
        best = best.min(started.elapsed().as_secs_f64());
        makespan = s.schedule.makespan();
    }
    let edges: usize = dag.stages.iter().map(|s| s.parents.len()).sum();
    println!(
        "heft: {tasks} tasks, {edges} edges, {machines} executors: best of 5 {:.3} s, makespan {makespan:.3}",
        best
    );
}
