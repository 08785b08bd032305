//! Synthetic workloads from DAG files, as the paper's experiments build them: jobs drawn
//! uniformly from a set of DAGs (e.g. the 22 TPC-H queries), arriving by a Poisson process (or at
//! fixed intervals, or all at once) into randomly chosen queues.
//!
//! # Determinism
//!
//! Everything comes from one seed through ChaCha8, a generator whose output is fixed by its
//! specification (not by the platform or the `rand` version's default generator). The three
//! choices draw from separate streams of that seed: which DAG (stream 1), inter-arrival gaps
//! (stream 2) and queues (stream 3). Changing `--queues` therefore leaves the DAGs and arrival
//! times of a workload as they were, and changing the arrival process leaves its DAGs and queues,
//! so experiments that vary one knob compare like with like.
//!
//! Arrival times are rounded to milliseconds (after summing the exact gaps, so rounding never
//! accumulates): a trace stays readable, and a millisecond is far below any task duration here.

use std::fmt;
use std::str::FromStr;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{Error, Result};
use crate::model::{Dag, Job, Workload};

use super::queue_name;

/// When jobs arrive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ArrivalProcess {
    /// `poisson:MEAN`: the first job at 0, then exponential gaps with this mean (seconds).
    Poisson { mean: f64 },
    /// `fixed:SECONDS`: job i at i x SECONDS.
    Fixed { interval: f64 },
    /// `all-at-once`: every job at 0 (the makespan experiment).
    AllAtOnce,
}

impl FromStr for ArrivalProcess {
    type Err = Error;

    fn from_str(s: &str) -> Result<ArrivalProcess> {
        let s = s.trim();
        let usage =
            || Error::Usage(format!("--arrival '{s}': expected poisson:MEAN_SECONDS, fixed:SECONDS or all-at-once"));
        if s == "all-at-once" {
            return Ok(ArrivalProcess::AllAtOnce);
        }
        let (kind, value) = s.split_once(':').ok_or_else(usage)?;
        let v: f64 = value.trim().parse().map_err(|_| usage())?;
        match kind.trim() {
            "poisson" if v.is_finite() && v > 0.0 => Ok(ArrivalProcess::Poisson { mean: v }),
            "poisson" => Err(Error::Usage(format!("--arrival '{s}': the mean gap must be a finite number > 0"))),
            "fixed" if v.is_finite() && v >= 0.0 => Ok(ArrivalProcess::Fixed { interval: v }),
            "fixed" => Err(Error::Usage(format!("--arrival '{s}': the interval must be a finite number >= 0"))),
            _ => Err(usage()),
        }
    }
}

impl fmt::Display for ArrivalProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArrivalProcess::Poisson { mean } => write!(f, "poisson:{mean}"),
            ArrivalProcess::Fixed { interval } => write!(f, "fixed:{interval}"),
            ArrivalProcess::AllAtOnce => write!(f, "all-at-once"),
        }
    }
}

const STREAM_DAGS: u64 = 1;
const STREAM_ARRIVALS: u64 = 2;
const STREAM_QUEUES: u64 = 3;

fn rng(seed: u64, stream: u64) -> ChaCha8Rng {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    r.set_stream(stream);
    r
}

/// The name of job `i` of `n`: `j0000`, `j0001`, ... (wider when n needs it), so that names
/// sort like arrivals.
pub fn job_name(i: usize, n: usize) -> String {
    let width = n.saturating_sub(1).to_string().len().max(4);
    format!("j{i:0width$}")
}

/// `n` jobs drawn uniformly (with replacement) from `dags`, arriving by `arrival` into queues
/// `q0..q(queues-1)` chosen uniformly at random. Each job's DAG is a copy of the drawn one
/// renamed after the job (the name a trace file gives it back). Fails on an empty DAG list with
/// jobs to draw, or zero queues.
pub fn generate(dags: &[Dag], n: usize, arrival: ArrivalProcess, queues: usize, seed: u64) -> Result<Workload> {
    generate_from(&[dags], n, arrival, queues, seed)
}

/// As [`generate`], drawing each job's DAG in two steps: a source uniformly from `sources` (a
/// DAG file, a trace), then a DAG uniformly within it (`gen-trace --pick file`), so that a file
/// of thousands of DAGs does not drown one of a few. With one source this is exactly
/// [`generate`] (one draw per job, the same stream).
pub fn generate_from(
    sources: &[&[Dag]],
    n: usize,
    arrival: ArrivalProcess,
    queues: usize,
    seed: u64,
) -> Result<Workload> {
    generate_from_named(sources, n, arrival, queues, seed).map(|(w, _)| w)
}

/// [`generate_from`], also giving the name each job's DAG had before it was renamed after the
/// job (the same draws).
pub fn generate_from_named(
    sources: &[&[Dag]],
    n: usize,
    arrival: ArrivalProcess,
    queues: usize,
    seed: u64,
) -> Result<(Workload, Vec<String>)> {
    let sources: Vec<&[Dag]> = sources.iter().copied().filter(|s| !s.is_empty()).collect();
    crate::limits::current().check_jobs(n as u64, "--jobs")?;
    if queues == 0 {
        return Err(Error::Usage("--queues must be at least 1".into()));
    }
    if sources.is_empty() && n > 0 {
        return Err(Error::Usage("no DAGs to draw jobs from".into()));
    }
    let mut pick = rng(seed, STREAM_DAGS);
    let mut gaps = rng(seed, STREAM_ARRIVALS);
    let mut queue = rng(seed, STREAM_QUEUES);
    let queue_names: Vec<String> = (0..queues).map(queue_name).collect();
    let mut t = 0.0f64;
    let mut jobs = Vec::with_capacity(n);
    let mut drawn = Vec::with_capacity(n);
    for i in 0..n {
        let at = match arrival {
            ArrivalProcess::AllAtOnce => 0.0,
            ArrivalProcess::Fixed { interval } => i as f64 * interval,
            ArrivalProcess::Poisson { mean } => {
                if i > 0 {
                    // Inverse transform of U in [0, 1): 1 - U is in (0, 1], so the log is finite.
                    let u: f64 = gaps.gen();
                    t += -mean * (1.0 - u).ln();
                }
                t
            }
        };
        let at = (at * 1000.0).round() / 1000.0;
        let from = if sources.len() == 1 { sources[0] } else { sources[pick.gen_range(0..sources.len())] };
        let mut dag = from[pick.gen_range(0..from.len())].clone();
        let name = job_name(i, n);
        drawn.push(std::mem::replace(&mut dag.name, name.clone()));
        let q = queue_names[queue.gen_range(0..queues)].clone();
        jobs.push(Job { name, arrival: at, queue: q, dag });
    }
    Ok((Workload { jobs }, drawn))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DagBuilder, ResVec, StageSpec, TaskSpec};

    fn dag(name: &str, tasks: usize) -> Dag {
        let mut b = DagBuilder::new(name, super::super::resources());
        b.stage(StageSpec {
            name: "s".into(),
            group: None,
            tasks: vec![TaskSpec { duration: 1.0, demand: ResVec::from_slice(&[1.0]) }; tasks],
            parents: vec![],
        });
        b.build().unwrap()
    }

    #[test]
    fn arrival_flags_parse() {
        assert_eq!("poisson:2.5".parse::<ArrivalProcess>().unwrap(), ArrivalProcess::Poisson { mean: 2.5 });
        assert_eq!("fixed:0".parse::<ArrivalProcess>().unwrap(), ArrivalProcess::Fixed { interval: 0.0 });
        assert_eq!("all-at-once".parse::<ArrivalProcess>().unwrap(), ArrivalProcess::AllAtOnce);
        for bad in ["poisson:0", "poisson:-1", "poisson:x", "fixed:-1", "uniform:3", "poisson"] {
            assert!(bad.parse::<ArrivalProcess>().is_err(), "{bad}");
        }
    }

    #[test]
    fn streams_are_independent_and_deterministic() {
        let dags = [dag("a", 1), dag("b", 2), dag("c", 3)];
        let p = ArrivalProcess::Poisson { mean: 10.0 };
        let w1 = generate(&dags, 200, p, 2, 7).unwrap();
        let w2 = generate(&dags, 200, p, 5, 7).unwrap();
        let w3 = generate(&dags, 200, ArrivalProcess::AllAtOnce, 2, 7).unwrap();
        for ((a, b), c) in w1.jobs.iter().zip(&w2.jobs).zip(&w3.jobs) {
            assert_eq!(a.arrival, b.arrival);
            assert_eq!(a.dag.len(), b.dag.len());
            assert_eq!(a.dag.len(), c.dag.len());
            assert_eq!(a.queue, c.queue);
        }
        assert!(w1.jobs.windows(2).all(|w| w[0].arrival <= w[1].arrival));
        assert_eq!(w1.jobs[0].arrival, 0.0);
        let mean_gap = w1.jobs.last().unwrap().arrival / 199.0;
        assert!((5.0..20.0).contains(&mean_gap), "{mean_gap}");
        assert_eq!(w1.queues().len(), 2);
        assert_eq!(job_name(3, 10), "j0003");
        assert_eq!(job_name(3, 100_001), "j000003");
    }
}
