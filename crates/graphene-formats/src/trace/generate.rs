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
            ArrivalProcess::Poisson { mean } => write!(f, "poisson:{}", crate::limits::show(*mean)),
            ArrivalProcess::Fixed { interval } => write!(f, "fixed:{}", crate::limits::show(*interval)),
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

/// Checks the counts and arrival process of a workload of `n` jobs in `queues` queues before
/// anything is drawn or allocated: at least one job (a trace holds one), at most `--limit-jobs`
/// jobs, at least one queue and at most `--limit-jobs` queues (a queue of a trace holds a job),
/// and, for fixed intervals, a last arrival within [`MAX_SECONDS`](crate::limits::MAX_SECONDS)
/// (Poisson arrivals are checked as they are drawn). [`generate`] runs it; `gen-trace` also runs
/// it on its flags before reading any file.
pub fn check_counts(n: usize, arrival: ArrivalProcess, queues: usize) -> Result<()> {
    let limits = crate::limits::current();
    if n == 0 {
        return Err(Error::Usage("--jobs must be at least 1 (a trace holds at least one job)".into()));
    }
    limits.check_jobs(n as u64, "--jobs")?;
    if queues == 0 {
        return Err(Error::Usage("--queues must be at least 1".into()));
    }
    limits.check_jobs(queues as u64, "--queues (each queue of a trace holds a job)")?;
    if let ArrivalProcess::Fixed { interval } = arrival {
        let last = (n - 1) as f64 * interval;
        if last > crate::limits::MAX_SECONDS {
            return Err(late(arrival, n - 1, n, last));
        }
    }
    Ok(())
}

/// Job `i` of `n` would arrive at `at`, after the largest time a trace may hold.
fn late(arrival: ArrivalProcess, i: usize, n: usize, at: f64) -> Error {
    let fix = match arrival {
        ArrivalProcess::Fixed { .. } => "a shorter interval or fewer --jobs",
        _ => "a smaller mean gap or fewer --jobs",
    };
    Error::Usage(format!(
        "--arrival {arrival}: job {} would arrive at {} s, after the largest time a trace may hold ({:e} s); use {fix}",
        job_name(i, n),
        crate::limits::show(at),
        crate::limits::MAX_SECONDS
    ))
}

/// `n` jobs drawn uniformly (with replacement) from `dags`, arriving by `arrival` into queues
/// `q0..q(queues-1)` chosen uniformly at random. Each job's DAG is a copy of the drawn one
/// renamed after the job (the name a trace file gives it back). Fails, before drawing, on what
/// [`check_counts`] refuses and on an empty DAG list, and while drawing when an arrival would
/// pass [`MAX_SECONDS`](crate::limits::MAX_SECONDS) or the jobs' tasks `--limit-tasks`: what it
/// returns is a workload a trace can hold and `replay` reads back.
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
    check_counts(n, arrival, queues)?;
    if sources.is_empty() {
        return Err(Error::Usage("no DAGs to draw jobs from".into()));
    }
    let limits = crate::limits::current();
    let mut pick = rng(seed, STREAM_DAGS);
    let mut gaps = rng(seed, STREAM_ARRIVALS);
    let mut queue = rng(seed, STREAM_QUEUES);
    let mut t = 0.0f64;
    let mut tasks = 0u64;
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
        if at > crate::limits::MAX_SECONDS {
            return Err(late(arrival, i, n, at));
        }
        let at = (at * 1000.0).round() / 1000.0;
        let from = if sources.len() == 1 { sources[0] } else { sources[pick.gen_range(0..sources.len())] };
        let source = &from[pick.gen_range(0..from.len())];
        // The trace's tasks, counted before the job's DAG is copied (as a reader counts them).
        tasks = crate::limits::add(tasks, source.len() as u64);
        limits.check_tasks(tasks, &format!("tasks of the jobs drawn (up to job {})", job_name(i, n)))?;
        let mut dag = source.clone();
        let name = job_name(i, n);
        drawn.push(std::mem::replace(&mut dag.name, name.clone()));
        let q = queue_name(queue.gen_range(0..queues));
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

    /// Counts are checked before anything is drawn: no jobs, more queues than a trace can hold
    /// jobs (the 24 GB `--queues 1000000000` of the audit), and arrivals past the largest time a
    /// trace may hold, whichever process draws them. What is drawn is what `replay` reads back.
    #[test]
    fn counts_and_arrivals_are_refused_before_drawing() {
        let dags = [dag("a", 2)];
        let msg = |n: usize, a: ArrivalProcess, q: usize| generate(&dags, n, a, q, 1).unwrap_err().to_string();
        let p = ArrivalProcess::Poisson { mean: 10.0 };
        assert_eq!(msg(0, p, 1), "--jobs must be at least 1 (a trace holds at least one job)");
        assert_eq!(
            msg(5, p, 1_000_000_000),
            "--queues (each queue of a trace holds a job): 1000000000 exceeds the limit of 1000000 (raise it with --limit-jobs)"
        );
        assert_eq!(msg(1_000_001, p, 1), "--jobs: 1000001 exceeds the limit of 1000000 (raise it with --limit-jobs)");
        assert_eq!(
            msg(3, ArrivalProcess::Fixed { interval: 1e12 }, 1),
            "--arrival fixed:1000000000000: job j0002 would arrive at 2000000000000 s, after the largest time \
             a trace may hold (1e12 s); use a shorter interval or fewer --jobs"
        );
        let poisson = msg(3, ArrivalProcess::Poisson { mean: 1e300 }, 1);
        assert!(poisson.starts_with("--arrival poisson:1e300: job j0001 would arrive at "), "{poisson}");
        assert!(poisson.ends_with("use a smaller mean gap or fewer --jobs"), "{poisson}");
        // At the bound exactly, and a million queues for five jobs (no queue list is built).
        let w = generate(&dags, 3, ArrivalProcess::Fixed { interval: 5e11 }, 1_000_000, 1).unwrap();
        assert_eq!(w.jobs[2].arrival, 1e12);
        assert!(w.jobs.iter().all(|j| j.queue[1..].parse::<usize>().unwrap() < 1_000_000));
        let text = super::super::native_csv::write(&w).unwrap();
        let back = super::super::native_csv::read(&text).unwrap();
        assert_eq!(back.jobs.len(), 3);
        assert_eq!(back.jobs[2].arrival, 1e12);
    }
}
