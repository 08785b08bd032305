//! How well `slearn` learns: replays a native CSV trace under SLearn on N default machines and
//! compares each sampled stage's learned mean (its pilots' observed runtime) with the mean
//! observed runtime of all the stage's tasks in the same replay, and with the trace's nominal
//! mean duration. Only stages of at least `THIN_LIMIT` tasks count: narrower ones run every task
//! as a pilot, so their "estimate" is the stage itself.
//!
//! Error = |learned - actual| / actual, the measure of the SLearn paper's Fig. 3.
//!
//! `cargo run --release --example slearn_accuracy -- TRACE [--machines N] [--seed S] [--misestimate LO:HI]`

use graphene::model::ClusterSpec;
use graphene::online::SLearn;
use graphene::sim::{run, SimConfig};
use graphene::trace::{load, TraceOptions};

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn main() -> Result<(), String> {
    let mut it = std::env::args().skip(1);
    let mut trace = None;
    let (mut machines, mut seed, mut misestimate) = (10usize, 0u64, None);
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--machines" => machines = value()?.parse().map_err(|e| format!("--machines: {e}"))?,
            "--seed" => seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--misestimate" => {
                let v = value()?;
                let (lo, hi) = v.split_once(':').ok_or("--misestimate takes LO:HI")?;
                let lo: f64 = lo.parse().map_err(|e| format!("--misestimate: {e}"))?;
                let hi: f64 = hi.parse().map_err(|e| format!("--misestimate: {e}"))?;
                if !(lo > -1.0 && lo <= hi && hi.is_finite()) {
                    return Err("--misestimate needs -1 < LO <= HI".into());
                }
                misestimate = Some((lo, hi));
            }
            _ if trace.is_none() && !a.starts_with("--") => trace = Some(a),
            _ => return Err(format!("unexpected argument {a}")),
        }
    }
    let trace = trace.ok_or("usage: slearn_accuracy TRACE [--machines N] [--seed S] [--misestimate LO:HI]")?;
    let (w, _) = load(trace.as_ref(), &TraceOptions::default()).map_err(|e| e.to_string())?;
    let first = w.jobs.first().ok_or("the trace holds no jobs")?;
    let cluster = ClusterSpec::uniform(machines, ClusterSpec::default_capacity())
        .resolve(&first.dag.resources)
        .map_err(|e| e.to_string())?;
    let mut policy = SLearn::new(seed);
    let r = run(&w, &cluster, &mut policy, &SimConfig { misestimate, seed, ..SimConfig::default() })
        .map_err(|e| e.to_string())?;
    // Observed runtime sums per (job, stage).
    let mut sum: Vec<Vec<(f64, u32)>> = w.jobs.iter().map(|j| vec![(0.0, 0); j.dag.stages.len()]).collect();
    for x in &r.runs {
        let s = w.jobs[x.job as usize].dag.tasks[x.task as usize].stage as usize;
        let e = &mut sum[x.job as usize][s];
        e.0 += x.end - x.start;
        e.1 += 1;
    }
    let (mut vs_observed, mut vs_nominal) = (Vec::new(), Vec::new());
    for e in policy.estimates() {
        let dag = &w.jobs[e.job as usize].dag;
        let stage = &dag.stages[e.stage as usize];
        if stage.len < graphene::online::THIN_LIMIT {
            continue;
        }
        let (s, n) = sum[e.job as usize][e.stage as usize];
        let observed = s / n as f64;
        let nominal = stage.tasks().map(|t| dag.tasks[t as usize].duration).sum::<f64>() / stage.len as f64;
        if observed > 0.0 {
            vs_observed.push((e.mean - observed).abs() / observed);
        }
        if nominal > 0.0 {
            vs_nominal.push((e.mean - nominal).abs() / nominal);
        }
    }
    for v in [&mut vs_observed, &mut vs_nominal] {
        v.sort_by(f64::total_cmp);
    }
    let mean_jct = r.jobs.iter().map(|j| j.jct()).sum::<f64>() / r.jobs.len() as f64;
    println!(
        "{} jobs, {} sampled stages of >= 3 tasks, mean JCT {mean_jct:.2} s\n\
         error vs the stage's observed mean runtime: p50 {:.1}% p90 {:.1}%\n\
         error vs the stage's nominal mean duration: p50 {:.1}% p90 {:.1}%",
        w.jobs.len(),
        vs_observed.len(),
        100.0 * percentile(&vs_observed, 0.5),
        100.0 * percentile(&vs_observed, 0.9),
        100.0 * percentile(&vs_nominal, 0.5),
        100.0 * percentile(&vs_nominal, 0.9),
    );
    Ok(())
}
