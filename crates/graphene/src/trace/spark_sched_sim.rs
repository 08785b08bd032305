//! spark-sched-sim's workload (`gen-trace --style spark-sched-sim`): the job mix of the Decima
//! environment as `ArchieGertsman/spark-sched-sim` sets it up, so that a model trained or a
//! scheduler measured there can be compared here on the same terms.
//!
//! * Each job's TPC-H input size is drawn uniformly from the files given (one file per size),
//!   then its query uniformly from the file's 22, as spark-sched-sim draws size and query.
//!   This is [`generate_from`] with one source per file (`gen-trace --pick file`).
//! * Every task is one executor slot: `cpu` = 1 and nothing else, so a cluster of
//!   `--machines E --capacity cpu=1,mem=1,disk=1,net=1` is E executors.
//! * Every task of a stage runs the stage's mean measured task duration at `executors`
//!   executors (the sample list the TPC-H reader's key rule picks, averaged; see
//!   `formats::tpch`), so a trace row is one stage with one duration.
//!
//! What differs from spark-sched-sim itself, and why: its simulator draws each task's duration
//! at run time from the wave and executor count of the moment (and adds moving delays); a
//! trace here fixes durations when it is written, so that every scheduler replays the same
//! work. The store holds the 2g/5g/10g/20g files, not the 50g/80g/100g ones spark-sched-sim
//! also draws from.

use std::path::PathBuf;

use super::generate::{generate_from, ArrivalProcess};
use crate::error::{Error, Result};
use crate::formats::{self, tpch, Format};
use crate::model::{Dag, Workload};

/// The DAGs of every query of each Decima TPC-H file in `paths` (one list per file), tasks at
/// one slot and their stage's mean duration at `executors`. A file that is not Decima TPC-H is
/// refused, naming it.
pub fn sources(paths: &[PathBuf], executors: u32) -> Result<Vec<Vec<Dag>>> {
    if paths.is_empty() {
        return Err(Error::Usage("--style spark-sched-sim needs Decima TPC-H files (--dags)".into()));
    }
    paths
        .iter()
        .map(|p| {
            let text = formats::read_text(p)?;
            let parsed = match formats::detect(&text) {
                Ok(Format::Tpch) => {
                    tpch::parse_with(&text, &formats::stem(p), None, executors, tpch::Durations::StageMean)
                }
                Ok(other) => Err(Error::Usage(format!(
                    "--style spark-sched-sim draws from Decima TPC-H files (a \"queries\" list), not {other:?} files"
                ))),
                Err(e) => Err(e),
            };
            parsed.map_err(|e| e.in_file(p))
        })
        .collect()
}

/// `n` jobs of spark-sched-sim's mix (see the module doc) from the TPC-H files `paths`,
/// arriving by `arrival` into `queues` queues, every draw from `seed` (as [`generate_from`]).
pub fn generate(
    paths: &[PathBuf],
    n: usize,
    arrival: ArrivalProcess,
    queues: usize,
    executors: u32,
    seed: u64,
) -> Result<Workload> {
    let per_file = sources(paths, executors)?;
    let sources: Vec<&[Dag]> = per_file.iter().map(Vec::as_slice).collect();
    generate_from(&sources, n, arrival, queues, seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q6() -> PathBuf {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/tpch-2g-q6.json"))
    }

    #[test]
    fn tasks_are_one_slot_at_their_stage_mean() {
        let w = generate(&[q6()], 20, ArrivalProcess::Poisson { mean: 25.0 }, 1, 10, 3).unwrap();
        assert_eq!(w.jobs.len(), 20);
        for j in &w.jobs {
            assert!(j.dag.tasks.iter().all(|t| t.demand.0[..4] == [1.0, 0.0, 0.0, 0.0]));
            for s in &j.dag.stages {
                let d: Vec<f64> = s.tasks().map(|t| j.dag.tasks[t as usize].duration).collect();
                assert!(d.iter().all(|&x| x == d[0]), "one duration per stage: {d:?}");
            }
        }
        // Same seed, same workload.
        let again = generate(&[q6()], 20, ArrivalProcess::Poisson { mean: 25.0 }, 1, 10, 3).unwrap();
        assert_eq!(
            w.jobs.iter().map(|j| j.arrival).collect::<Vec<_>>(),
            again.jobs.iter().map(|j| j.arrival).collect::<Vec<_>>()
        );
    }

    #[test]
    fn other_formats_and_no_files_are_refused() {
        let e = sources(&[], 10).unwrap_err().to_string();
        assert!(e.contains("--dags"), "{e}");
        let wf = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/wfcommons-1.4-example.json"));
        let e = sources(&[q6(), wf], 10).unwrap_err().to_string();
        assert!(e.contains("wfcommons-1.4-example.json") && e.contains("TPC-H"), "{e}");
    }
}
