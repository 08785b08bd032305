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
//! work. [`waves_sidecar`] (`gen-trace --waves-out`) writes the samples beside the trace so that
//! `replay --waves` can draw them at run time as spark-sched-sim does ([`crate::formats::waves`]).
//!
//! # Sizes without a file: 50g, 80g, 100g ([`sources_sized`], `--sizes`)
//!
//! The shared store holds the 2g/5g/10g/20g files, not the 50g/80g/100g ones spark-sched-sim
//! also draws from. With `--sizes` (e.g. `2g,5g,10g,20g,50g,80g,100g`) a size that no file
//! holds is made from the two largest sizes the files hold, `lo` < `hi` (10g and 20g with the
//! shared data), query by query and stage by stage, keeping every query's stages and edges:
//!
//! * a stage's task count `n` and its total work `w` (task count x stage-mean duration at
//!   `executors`) each follow the straight line through their `lo` and `hi` values,
//!   `y(S) = y(hi) + max(0, (y(hi) - y(lo)) / (hi - lo)) x (S - hi)`: a line that falls is held
//!   flat at `y(hi)`;
//! * the task count is `y(S)` rounded to the nearest integer (halves away from zero), at least 1;
//!   every task runs `w(S) / n(S)`.
//!
//! Why this rule: in Decima's measurements a stage either reads the input (its task count grows
//! in proportion to the size: 12/29/58/117/295/474/593 tasks for 2g..100g) or is a shuffle of a
//! fixed 200 (or other fixed) partitions whose tasks grow longer, and in both cases the stage's
//! total work grows about linearly with the size beyond 10g. Of the candidates measured against
//! decima-sim's public 50g/80g/100g files (a least-squares line over all four sizes, the line
//! through 10g and 20g, log-log power laws) the line through 10g and 20g came closest in total
//! work per query (power laws fell 10-26% short at 100g); BENCHMARKS.md ("Decima trained for
//! Decima's own setting") gives the measured distance. The made DAGs are named
//! `tpch-<S>g-fit-q<k>` so that a trace says which jobs are made, not measured.
//!
//! The rule draws nothing: the DAGs are a pure function of the files, `executors` and the sizes,
//! so a trace or a training run stays byte-identical for its seed, which draws (as without
//! `--sizes`) each job's size uniformly over the sizes listed, in their order, then its query.
//! Files whose size is not listed serve only as `lo`/`hi`.

use std::path::PathBuf;

use super::generate::{generate_from, ArrivalProcess};
use crate::error::{Error, Result};
use crate::formats::{self, tpch, Format};
use crate::model::{Dag, DagBuilder, StageSpec, TaskSpec, Workload};

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

/// Parses `--sizes`: a comma-separated list of TPC-H input sizes in GB with a `g` suffix, e.g.
/// `2g,5g,10g,20g,50g,80g,100g` (order kept: it is the order sizes are drawn in).
pub fn parse_sizes(text: &str) -> Result<Vec<u32>> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let size = parse_size(part.trim()).ok_or_else(|| {
            Error::Usage(format!("--sizes '{text}': '{}' is not a size like 50g (whole GB, at least 1)", part.trim()))
        })?;
        if out.contains(&size) {
            return Err(Error::Usage(format!("--sizes '{text}': {size}g is listed twice")));
        }
        out.push(size);
    }
    Ok(out)
}

/// `"50g"` -> 50; `None` for anything else (no suffix, 0, not a whole number).
fn parse_size(text: &str) -> Option<u32> {
    let digits = text.strip_suffix('g').or_else(|| text.strip_suffix('G'))?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u32>().ok().filter(|&n| n >= 1)
}

/// [`sources`] for the sizes listed (one list of DAGs per size, in `sizes`' order): a size some
/// file holds (its `input_size`, else its name `tpch-<N>g`) is that file's DAGs, any other is
/// made by the module doc's rule from the two largest sizes the files hold, and must be larger
/// than both. `None`: one list per file, as [`sources`].
pub fn sources_sized(paths: &[PathBuf], sizes: Option<&[u32]>, executors: u32) -> Result<Vec<Vec<Dag>>> {
    let per_file = sources(paths, executors)?;
    let Some(sizes) = sizes else { return Ok(per_file) };
    if sizes.is_empty() {
        return Err(Error::Usage("--sizes lists no size".into()));
    }
    let mut held: Vec<(u32, &[Dag])> = Vec::new();
    for (p, dags) in paths.iter().zip(&per_file) {
        let size = file_size(p)?;
        if let Some((_, _)) = held.iter().find(|(s, _)| *s == size) {
            return Err(Error::Usage(format!("--sizes: two files hold size {size}g (one file per size)")));
        }
        held.push((size, dags.as_slice()));
    }
    held.sort_by_key(|(s, _)| *s);
    sizes
        .iter()
        .map(|&size| {
            if let Some((_, dags)) = held.iter().find(|(s, _)| *s == size) {
                return Ok(dags.to_vec());
            }
            let [.., (lo, lo_dags), (hi, hi_dags)] = held[..] else {
                return Err(Error::Usage(format!(
                    "--sizes: no file holds {size}g, and making it needs files of two sizes below it (e.g. 10g and 20g)"
                )));
            };
            if size < hi {
                return Err(Error::Usage(format!(
                    "--sizes: no file holds {size}g; sizes are made only above the largest file's ({hi}g), give a {size}g file"
                )));
            }
            extrapolate(lo_dags, lo, hi_dags, hi, size)
        })
        .collect()
}

/// The TPC-H size of file `p` in GB: its `input_size`, else its name `tpch-<N>g`.
fn file_size(p: &std::path::Path) -> Result<u32> {
    let label = match tpch::input_size(&formats::read_text(p)?).map_err(|e| e.in_file(p))? {
        Some(label) => label,
        None => formats::stem(p).strip_prefix("tpch-").unwrap_or_default().to_string(),
    };
    parse_size(label.trim()).ok_or_else(|| {
        Error::Usage(format!(
            "--sizes: cannot tell the TPC-H size of {} (its input_size, else a name tpch-<N>g, should be like 20g)",
            p.display()
        ))
    })
}

/// The `replay --waves` sidecar of a workload drawn from [`sources_sized`]`(paths, sizes,
/// executors)` (`gen-trace --waves-out`, [`crate::formats::waves`]): `drawn[i]` is the DAG job `i`
/// of `jobs` was drawn from. [`WaveLibrary::load`] then [`WaveLibrary::sidecar`]; a caller
/// that draws many workloads from the same files (`train-decima --waves`) loads the library
/// once.
pub fn waves_sidecar(
    paths: &[PathBuf],
    sizes: Option<&[u32]>,
    executors: u32,
    jobs: &[String],
    drawn: &[String],
) -> Result<crate::formats::waves::Sidecar> {
    WaveLibrary::load(paths, sizes, executors)?.sidecar(jobs, drawn)
}

/// Decima's wave samples of every DAG [`sources_sized`]`(paths, sizes, executors)` gives, by
/// DAG name: the one place both `gen-trace --waves-out` (a sidecar file) and `train-decima
/// --waves` (a sidecar in memory per episode) get them from. A DAG a file holds gets that
/// file's three sample lists per stage, as measured. A made DAG (`tpch-<S>g-fit-q<k>`, the
/// module doc's sizes) gets the lists of the same query and stage in the largest file, every
/// sample scaled by the made stage's task duration over that file's (both stage means at
/// `executors`): the lists keep their shape across waves and executor counts and their mean
/// moves as the made durations do.
#[derive(Clone, Debug, Default)]
pub struct WaveLibrary {
    dags: std::collections::HashMap<String, std::collections::BTreeMap<String, crate::formats::waves::StageSamples>>,
}

impl WaveLibrary {
    /// Reads the files' samples and makes those of the made sizes (see the type's doc).
    pub fn load(paths: &[PathBuf], sizes: Option<&[u32]>, executors: u32) -> Result<WaveLibrary> {
        use crate::formats::waves::StageSamples;
        use std::collections::{BTreeMap, HashMap};
        let lists = sources_sized(paths, sizes, executors)?;
        let per_file = sources(paths, executors)?;
        let mut raw: HashMap<String, Vec<(String, StageSamples)>> = HashMap::new();
        let mut largest: Option<(u32, usize)> = None;
        for (fi, p) in paths.iter().enumerate() {
            let text = formats::read_text(p)?;
            for (name, stages) in tpch::wave_samples(&text, &formats::stem(p)).map_err(|e| e.in_file(p))? {
                raw.insert(name, stages);
            }
            if sizes.is_some() {
                let size = file_size(p)?;
                if largest.is_none_or(|(s, _)| size > s) {
                    largest = Some((size, fi));
                }
            }
        }
        let stage_duration = |d: &Dag, k: usize| d.tasks[d.stages[k].first as usize].duration;
        let mut dags = HashMap::new();
        for dag in lists.iter().flatten() {
            let name = &dag.name;
            if dags.contains_key(name) {
                continue;
            }
            let stages: Vec<(String, StageSamples)> = if let Some(stages) = raw.get(name) {
                stages.clone()
            } else {
                let Some((_, hi)) = largest else {
                    return Err(Error::Usage(format!("--waves: no TPC-H file holds the samples of DAG {name}")));
                };
                let query = name.rsplit('-').next().unwrap_or(name);
                let hi_dag = per_file[hi].iter().find(|d| d.name.rsplit('-').next() == Some(query));
                let hi_raw = hi_dag.and_then(|d| raw.get(&d.name).map(|r| (d, r)));
                let Some((hi_dag, hi_raw)) = hi_raw else {
                    return Err(Error::Usage(format!(
                        "--waves: the largest file has no query {query} to scale for {name}"
                    )));
                };
                hi_raw
                    .iter()
                    .map(|(stage, samples)| {
                        let k = dag.stages.iter().position(|s| &s.name == stage);
                        let h = hi_dag.stages.iter().position(|s| &s.name == stage);
                        match (k, h) {
                            (Some(k), Some(h)) => {
                                Ok((stage.clone(), samples.scaled(stage_duration(dag, k) / stage_duration(hi_dag, h))))
                            }
                            _ => Err(Error::Usage(format!("--waves: stage {stage} of {name} is not in both DAGs"))),
                        }
                    })
                    .collect::<Result<_>>()?
            };
            dags.insert(name.clone(), stages.into_iter().collect::<BTreeMap<_, _>>());
        }
        Ok(WaveLibrary { dags })
    }

    /// The sidecar of a workload whose job `jobs[i]` was drawn from the DAG `drawn[i]` (the
    /// names [`super::generate::generate_from_named`] gives): every job listed, every DAG drawn with its lists.
    pub fn sidecar(&self, jobs: &[String], drawn: &[String]) -> Result<crate::formats::waves::Sidecar> {
        use crate::formats::waves::{Sidecar, FORMAT};
        let mut dags = std::collections::BTreeMap::new();
        for name in drawn {
            if dags.contains_key(name) {
                continue;
            }
            let stages = self
                .dags
                .get(name)
                .ok_or_else(|| Error::Usage(format!("--waves: no TPC-H file holds the samples of DAG {name}")))?;
            dags.insert(name.clone(), stages.clone());
        }
        Ok(Sidecar {
            format: FORMAT.into(),
            unit: "ms".into(),
            jobs: jobs.iter().cloned().zip(drawn.iter().cloned()).collect(),
            dags,
        })
    }

    /// The wave model of `workload`, whose job `i` was drawn from the DAG `drawn[i]` (a workload
    /// cut at an episode's end keeps a prefix of its jobs, so `drawn` may be longer): [`WaveLibrary::sidecar`] bound to it ([`crate::formats::waves::Sidecar::bind`]),
    /// exactly what `replay --waves` makes of the sidecar file `gen-trace --waves-out` writes.
    pub fn model(&self, workload: &Workload, drawn: &[String]) -> Result<crate::formats::waves::WaveModel> {
        let names: Vec<String> = workload.jobs.iter().map(|j| j.name.clone()).collect();
        self.sidecar(&names, &drawn[..names.len().min(drawn.len())])?.bind(workload)
    }
}

/// The DAGs of size `size` made from the same queries at sizes `lo` < `hi` < `size` (the module
/// doc's rule). The two lists must hold the same queries in the same order, stage for stage.
pub fn extrapolate(lo_dags: &[Dag], lo: u32, hi_dags: &[Dag], hi: u32, size: u32) -> Result<Vec<Dag>> {
    if !(lo < hi && hi < size) {
        return Err(Error::Usage(format!("extrapolating to {size}g needs two smaller sizes, not {lo}g and {hi}g")));
    }
    if lo_dags.len() != hi_dags.len() {
        return Err(Error::Usage(format!(
            "--sizes: the {lo}g file holds {} queries and the {hi}g file {}; making {size}g needs the same queries in both",
            lo_dags.len(),
            hi_dags.len()
        )));
    }
    let slope = f64::from(hi - lo);
    let at = |y_lo: f64, y_hi: f64| y_hi + ((y_hi - y_lo) / slope).max(0.0) * f64::from(size - hi);
    lo_dags
        .iter()
        .zip(hi_dags)
        .map(|(a, b)| {
            let same = a.stages.len() == b.stages.len()
                && a.stages.iter().zip(&b.stages).all(|(x, y)| x.name == y.name && x.parents == y.parents);
            if !same {
                return Err(Error::Usage(format!(
                    "--sizes: {} and {} differ in their stages or edges; making {size}g needs the same query at both sizes",
                    a.name, b.name
                )));
            }
            let query = b.name.rsplit('-').next().unwrap_or(&b.name);
            if a.name.rsplit('-').next() != Some(query) {
                return Err(Error::Usage(format!(
                    "--sizes: the {lo}g file's {} meets the {hi}g file's {}; making {size}g needs the same queries in both",
                    a.name, b.name
                )));
            }
            let mut builder = DagBuilder::new(format!("tpch-{size}g-fit-{query}"), b.resources.clone());
            for (x, y) in a.stages.iter().zip(&b.stages) {
                let work = |d: &Dag, s: &crate::model::Stage| s.tasks().map(|t| d.tasks[t as usize].duration).sum::<f64>();
                let n = at(f64::from(x.len), f64::from(y.len)).round().max(1.0);
                let w = at(work(a, x), work(b, y));
                let duration = w / n;
                if n > tpch::MAX_TASKS_PER_STAGE as f64 {
                    return Err(Error::Usage(format!(
                        "--sizes: stage {} of {} would hold {n} tasks at {size}g, more than {}",
                        y.name,
                        b.name,
                        tpch::MAX_TASKS_PER_STAGE
                    )));
                }
                if !(duration.is_finite() && duration > 0.0) {
                    return Err(Error::Usage(format!(
                        "--sizes: stage {} of {} gives no positive duration at {size}g ({w} s of work over {n} tasks)",
                        y.name, b.name
                    )));
                }
                let demand = b.tasks[y.first as usize].demand;
                builder.stage(StageSpec {
                    name: y.name.clone(),
                    group: None,
                    tasks: vec![TaskSpec { duration, demand }; n as usize],
                    parents: y.parents.iter().map(|e| (b.stages[e.stage as usize].name.clone(), e.kind)).collect(),
                });
            }
            builder.build()
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

    /// A two-size TPC-H file of one query (query 6) with three stages: an input scan whose
    /// task count grows (58 -> 117), a 200-task shuffle whose tasks grow longer, and a stage
    /// whose count and work fall (3 -> 2 tasks), all measured at 10 executors.
    fn sized(size: &str, scan: (u32, &str), shuffle: &str, last: u32, edges: &str) -> String {
        let stage = |k: u32, n: u32, waves: &str| {
            format!(r#"{{"stage":{k},"num_tasks":{n},"first_wave":{{"10":{waves}}},"rest_wave":{{"10":[]}}}}"#)
        };
        format!(
            r#"{{"input_size":"{size}","queries":[{{"query":6,"edges":{edges},"stages":[{},{},{}]}}]}}"#,
            stage(0, scan.0, scan.1),
            stage(1, 200, shuffle),
            stage(2, last, "[1000]")
        )
    }

    fn small_pair() -> (String, String) {
        (
            sized("10g", (58, "[2000,3000]"), "[100]", 3, "[[0,1],[1,2]]"),
            sized("20g", (117, "[2300]"), "[200]", 2, "[[0,1],[1,2]]"),
        )
    }

    fn parsed(text: &str) -> Vec<Dag> {
        tpch::parse_with(text, "t", None, 10, tpch::Durations::StageMean).unwrap()
    }

    /// (tasks, duration of each) per stage, and the parents' names.
    fn shape(d: &Dag) -> Vec<(u32, f64, Vec<String>)> {
        d.stages
            .iter()
            .map(|s| {
                let durations: Vec<f64> = s.tasks().map(|t| d.tasks[t as usize].duration).collect();
                assert!(durations.iter().all(|&x| x == durations[0]), "one duration per stage");
                let parents = s.parents.iter().map(|e| d.stages[e.stage as usize].name.clone()).collect();
                (s.len, durations[0], parents)
            })
            .collect()
    }

    #[test]
    fn made_sizes_follow_the_line_through_the_two_largest() {
        let (lo, hi) = small_pair();
        let (lo, hi) = (parsed(&lo), parsed(&hi));
        let made = extrapolate(&lo, 10, &hi, 20, 100).unwrap();
        assert_eq!(made.len(), 1);
        assert_eq!(made[0].name, "tpch-100g-fit-q6");
        // Scan: tasks 117 + 5.9 x 80 = 589; work 269.1 + 12.41 x 80 = 1261.9 s over them.
        // Shuffle: 200 tasks, work 20 -> 40 s, so 200 s at 100g: 1 s each.
        // Falling stage: held at 20g's 2 tasks of 1 s.
        // Pinned to the bit (work is summed task by task, hence the last digits); the hand
        // values are 1261.9 / 589 = 2.14244482173175 and 1.
        assert_eq!(
            shape(&made[0]),
            vec![
                (589, 2.1424448217317575, vec![]),
                (200, 1.0000000000000007, vec!["s0".to_string()]),
                (2, 1.0, vec!["s1".to_string()])
            ]
        );
        assert!((2.1424448217317575 - 1261.9 / 589.0f64).abs() < 1e-12);
        let at50 = extrapolate(&lo, 10, &hi, 20, 50).unwrap();
        let sh = shape(&at50[0]);
        assert_eq!((sh[0].0, sh[1].0, sh[2].0), (294, 200, 2));
        assert!((sh[0].1 - 641.4 / 294.0).abs() < 1e-12 && (sh[1].1 - 0.5).abs() < 1e-12, "{sh:?}");
        // Total work: 1261.9 + 200 + 2 task-seconds.
        let work: f64 = made[0].tasks.iter().map(|t| t.duration).sum();
        assert!((work - 1463.9).abs() < 1e-9, "{work}");
    }

    fn write_files(dir: &std::path::Path, files: &[(&str, String)]) -> Vec<PathBuf> {
        files
            .iter()
            .map(|(name, text)| {
                let p = dir.join(name);
                std::fs::write(&p, text).unwrap();
                p
            })
            .collect()
    }

    #[test]
    fn sizes_pick_files_or_make_them_and_draws_are_deterministic() {
        let dir = tempfile::tempdir().unwrap();
        let (lo, hi) = small_pair();
        let paths = write_files(dir.path(), &[("a.json", lo), ("b.json", hi)]);
        let lists = sources_sized(&paths, Some(&[100, 10]), 10).unwrap();
        let names: Vec<&str> = lists.iter().map(|l| l[0].name.as_str()).collect();
        assert_eq!(names, ["tpch-100g-fit-q6", "tpch-10g-q6"]);
        assert_eq!(lists[0][0].len(), 589 + 200 + 2);
        // Without --sizes: one list per file, as before.
        assert_eq!(sources_sized(&paths, None, 10).unwrap().len(), 2);
        let draw = |seed| {
            let sources: Vec<&[Dag]> = lists.iter().map(Vec::as_slice).collect();
            let w = generate_from(&sources, 30, ArrivalProcess::Poisson { mean: 25.0 }, 1, seed).unwrap();
            crate::trace::native_csv::write(&w).unwrap()
        };
        assert_eq!(draw(5), draw(5));
        assert_ne!(draw(5), draw(6));
        let text = draw(5);
        let sizes_drawn: Vec<usize> =
            [",589,", ",58,"].iter().map(|needle| text.lines().filter(|l| l.contains(needle)).count()).collect();
        assert!(sizes_drawn.iter().all(|&n| n > 5) && sizes_drawn.iter().sum::<usize>() == 30, "{sizes_drawn:?}");
        // A file without input_size is sized by its name.
        let plain = small_pair().1.replace(r#""input_size":"20g","#, "");
        let more = write_files(dir.path(), &[("tpch-20g.json", plain)]);
        let lists = sources_sized(&[paths[0].clone(), more[0].clone()], Some(&[80]), 10).unwrap();
        assert_eq!(lists[0][0].stages[0].len, 117 + 354);
    }

    /// The `--waves-out` sidecar: a file's DAG carries its lists as measured; a made one the
    /// largest file's lists scaled by made / 20g stage duration (scan: 2300 ms x (1261.9 / 589)
    /// / 2.3 s = 2142.4 ms; shuffle: 200 ms x 1 / 0.2; the falling stage: 1000 x 1 / 1).
    #[test]
    fn waves_sidecar_scales_the_largest_files_lists_for_made_sizes() {
        let dir = tempfile::tempdir().unwrap();
        let (lo, hi) = small_pair();
        let paths = write_files(dir.path(), &[("a.json", lo), ("b.json", hi)]);
        let jobs = ["j0".to_string(), "j1".to_string(), "j2".to_string()];
        let drawn = ["tpch-100g-fit-q6".to_string(), "tpch-10g-q6".to_string(), "tpch-100g-fit-q6".to_string()];
        let side = waves_sidecar(&paths, Some(&[100, 10]), 10, &jobs, &drawn).unwrap();
        assert_eq!(side.format, "graphene-waves");
        assert_eq!(side.jobs["j2"], "tpch-100g-fit-q6");
        assert_eq!(side.dags.len(), 2);
        let made = &side.dags["tpch-100g-fit-q6"];
        let first = |st: &str| made[st].first_wave["10"][0];
        assert!((first("s0") - 1261.9 / 589.0 * 1000.0).abs() < 1e-6, "{}", first("s0"));
        assert!((first("s1") - 1000.0).abs() < 1e-6, "{}", first("s1"));
        assert!((first("s2") - 1000.0).abs() < 1e-9, "{}", first("s2"));
        assert_eq!(side.dags["tpch-10g-q6"]["s0"].first_wave["10"], [2000.0, 3000.0]);
        let e = waves_sidecar(&paths, Some(&[100]), 10, &jobs[..1], &["tpch-7g-q6".to_string()]).unwrap_err();
        assert!(e.to_string().contains("tpch-7g-q6"), "{e}");
    }

    #[test]
    fn bad_sizes_are_clear_errors() {
        for (text, says) in [
            ("", "not a size"),
            ("50", "not a size"),
            ("0g", "not a size"),
            ("1.5g", "not a size"),
            ("-5g", "not a size"),
            ("99999999999g", "not a size"),
            ("2g,,5g", "not a size"),
            ("50g,80g,50g", "50g is listed twice"),
        ] {
            let e = parse_sizes(text).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
        assert_eq!(parse_sizes("2g, 5G,100g").unwrap(), [2, 5, 100]);
        let dir = tempfile::tempdir().unwrap();
        let (lo, hi) = small_pair();
        let paths = write_files(dir.path(), &[("a.json", lo.clone()), ("b.json", hi.clone())]);
        let err = |paths: &[PathBuf], sizes: &[u32]| sources_sized(paths, Some(sizes), 10).unwrap_err().to_string();
        assert!(err(&paths, &[15]).contains("only above the largest file's (20g)"), "{}", err(&paths, &[15]));
        assert!(err(&paths[1..], &[50]).contains("two sizes below it"), "{}", err(&paths[1..], &[50]));
        assert!(err(&paths, &[]).contains("no size"));
        let twin = write_files(dir.path(), &[("c.json", hi.clone())]);
        assert!(err(&[paths[1].clone(), twin[0].clone()], &[50]).contains("two files hold size 20g"));
        let no_size = write_files(dir.path(), &[("q.json", hi.replace(r#""input_size":"20g","#, ""))]);
        let e = err(&[paths[0].clone(), no_size[0].clone()], &[50]);
        assert!(e.contains("cannot tell the TPC-H size") && e.contains("q.json"), "{e}");
        // The same query must have the same stages and edges at both sizes.
        let rewired = sized("20g", (117, "[2300]"), "[200]", 2, "[[0,1],[0,2]]");
        let other = write_files(dir.path(), &[("d.json", rewired)]);
        let e = err(&[paths[0].clone(), other[0].clone()], &[50]);
        assert!(e.contains("differ in their stages or edges") && e.contains("tpch-20g-q6"), "{e}");
        let e = extrapolate(&parsed(&lo), 20, &parsed(&hi), 10, 50).unwrap_err().to_string();
        assert!(e.contains("two smaller sizes"), "{e}");
        let e = extrapolate(&parsed(&lo), 10, &[], 20, 50).unwrap_err().to_string();
        assert!(e.contains("same queries"), "{e}");
        let q7 = parsed(&hi.replace(r#""query":6"#, r#""query":7"#));
        let e = extrapolate(&parsed(&lo), 10, &q7, 20, 50).unwrap_err().to_string();
        assert!(e.contains("tpch-10g-q6 meets the 20g file's tpch-20g-q7"), "{e}");
        // A size so large that a stage would exceed the reader's task limit.
        let e = extrapolate(&parsed(&lo), 10, &parsed(&hi), 20, 2_000_000).unwrap_err().to_string();
        assert!(e.contains("stage s0 of tpch-20g-q6 would hold 11799999 tasks at 2000000g, more than 10000000"), "{e}");
    }

    /// The shared 10g and 20g files made into 50g/80g/100g: total tasks and work over the 22
    /// queries. decima-sim's public files hold 27,157 / 31,657 / 34,660 tasks and 18,542 /
    /// 29,566 / 36,993 task-seconds at 10 executors (measured, BENCHMARKS.md).
    #[test]
    fn shared_10g_and_20g_make_the_public_sizes_task_counts() {
        let lo = crate::formats::test_support::shared("decima-tpch/json/tpch-10g.json");
        let hi = crate::formats::test_support::shared("decima-tpch/json/tpch-20g.json");
        let (Some(lo), Some(hi)) = (lo, hi) else { return };
        let (lo, hi) = (parsed(&lo), parsed(&hi));
        let mut got = Vec::new();
        for size in [50, 80, 100] {
            let made = extrapolate(&lo, 10, &hi, 20, size).unwrap();
            assert_eq!(made.len(), 22);
            let tasks: usize = made.iter().map(Dag::len).sum();
            let work: f64 = made.iter().flat_map(|d| d.tasks.iter().map(|t| t.duration)).sum();
            got.push((tasks, (work * 10.0).round() / 10.0));
        }
        assert_eq!(got, [(27175, 18375.8), (31666, 28766.1), (34660, 35693.0)]);
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
