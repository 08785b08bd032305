//! Wave- and parallelism-dependent task durations (`replay --waves`): the duration model of
//! Decima's simulator, as `ArchieGertsman/spark-sched-sim` implements it, as an option of this
//! simulator. Off by default; with it, a task's *realized* duration is drawn at launch from
//! Decima's measured samples, while policies keep seeing the trace's durations as estimates.
//!
//! # The sidecar (`gen-trace --style spark-sched-sim --waves-out FILE`)
//!
//! ```json
//! {"format": "graphene-waves", "unit": "ms",
//!  "jobs": {"j00": "tpch-2g-q6", ...},
//!  "dags": {"tpch-2g-q6": {"s0": {"first_wave": {"2": [3629, 3417], ...},
//!                                 "rest_wave": {...}, "fresh_durations": {...}}, ...}}}
//! ```
//!
//! `jobs` maps every job of the trace to the DAG it was drawn from, `dags` holds each DAG's
//! stages (named as in the trace) with Decima's three sample lists in milliseconds, keyed by the
//! executor count they were measured at. [`Sidecar::bind`] resolves it against a workload; a
//! missing job, DAG or stage, a key that is not a whole number >= 1, a negative or non-finite
//! sample, a stage without any sample or without a `first_wave` key are errors naming the field.
//! `train-decima --waves` makes the same sidecar in memory for every sequence it draws
//! (`trace::spark_sched_sim::WaveLibrary`, the code `--waves-out` writes with) and binds it the
//! same way (`online::decima::train`, module doc).
//!
//! # The rules (spark-sched-sim, `spark_sched_sim/data_samplers/tpch.py`, class
//! `TPCHDataSampler`, and `spark_sched_sim/spark_sched_sim.py`; read, not copied)
//!
//! 1. **Cleaning** (`_pre_process_task_duration`): per key, the samples of `first_wave` that
//!    also appear in `fresh_durations` are removed (as a multiset: one removal per matching
//!    fresh sample), and a key whose cleaned `first_wave` is empty takes the cleaned list of the
//!    nearest smaller key (in numeric order; the smallest key stays empty if it is).
//! 2. **Executors the job holds** (`task_duration`: `len(job.local_executors)`): one machine is
//!    one executor (spark-sched-sim's setting: 10 one-slot machines). A machine is local to the
//!    job of the last task it launched, from that launch until it launches a task of another
//!    job (it stays local while idle, as an executor idle in its job's pool). The count at a
//!    launch includes the launching machine (spark-sched-sim attaches an executor to the job
//!    when it arrives, before its first task). spark-sched-sim also detaches the executors of a
//!    job that has no task left to launch; such a job launches nothing more, so its count is
//!    never read again and the two notions agree on every launch.
//! 3. **Executor key** (`_sample_executor_key`, `_init_executor_intervals`): with levels 5, 10,
//!    20, 40, 50, 60, 80, 100 and `n` executors: `n <= 5` gives 5, a level gives itself, `n`
//!    between levels `l < n < r` draws `U` in [0, 1) and takes `l` when
//!    `1 + floor(U (r - l)) <= n - l`, else `r` (so `l` with probability `(n - l) / (r - l)`, as
//!    spark-sched-sim does: its rule, not linear interpolation), `n > 100` gives 100. A key the
//!    stage's `first_wave` does not hold becomes its largest `first_wave` key.
//! 4. **Category** (`task_duration`): *fresh* when the executor is idle (`executor.task is
//!    None`: it just moved from another job, or sat idle): `fresh_durations[key]`, else
//!    `first_wave[key]` plus the warm-up delay (1 s); *rest wave* when the executor's previous
//!    task was of the same stage: `rest_wave[key]`, else `first_wave[key]`, else
//!    `fresh_durations[key]`; otherwise *first wave*: `first_wave[key]`, else
//!    `fresh_durations[key]`. A missing key or an empty list falls through to the next choice;
//!    the draw is uniform over the list.
//! 5. **Moving delay** (`_send_executor`, `moving_delay` = 2000 ms in `config/decima_tpch.yaml`):
//!    an executor sent to a job it is not local to travels that long before its task starts;
//!    executors start in the common pool, so the first task of every machine pays it too.
//!
//! How "idle" maps here: this simulator has no commitments, so a machine whose task ends and
//! that launches a task of the same job at the same instant (its end-of-task heartbeat)
//! continues (rest or first wave); one that launches later, after sitting empty, is fresh, and
//! one that last served another job (or none) moves (fresh, plus the moving delay).
//!
//! # Where this departs from spark-sched-sim
//!
//! * spark-sched-sim makes an executor idle (fresh) when its stage has no task left and no
//!   commitment was waiting for it, even if the scheduler then sends it to another stage of the
//!   same job at once; here such an executor continues (first wave): there are no commitments.
//! * The moving delay is part of the task's run (the machine is held, `start` in the schedule
//!   is the launch), not a separate event; the task's children wait for both.
//! * `n` above 100 on a cluster larger than 100 executors: spark-sched-sim maps `n` = the
//!   cluster size to key 0 (then to the largest key), any other to 100; here every such `n` is
//!   100 (then the largest key if the stage lacks 100).
//! * When no list at the key has a sample (no fallback in spark-sched-sim: it raises), the task
//!   runs the trace's duration.
//! * Draws come from a ChaCha8 stream of the replay's `--seed` (stream 1; the misestimation
//!   draws use stream 0), consumed in event order: same inputs and seed, same bytes. The numbers
//!   drawn differ from numpy's, so single runs do not match spark-sched-sim's, only the model.
//! * A machine's speed (`--speeds`) divides the drawn duration, not the moving delay.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::Workload;

/// The `format` field of a sidecar.
pub const FORMAT: &str = "graphene-waves";
/// spark-sched-sim's `moving_delay` (config/decima_tpch.yaml: 2000 ms), in seconds.
pub const DEFAULT_MOVING_DELAY: f64 = 2.0;
/// spark-sched-sim's `warmup_delay` (config/decima_tpch.yaml: 1000 ms), in seconds.
pub const DEFAULT_WARMUP_DELAY: f64 = 1.0;
/// spark-sched-sim's executor levels (`_init_executor_intervals`).
const LEVELS: [u32; 8] = [5, 10, 20, 40, 50, 60, 80, 100];

/// One stage's samples as Decima's TPC-H files hold them: milliseconds per executor count (the
/// keys, whole numbers as strings).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageSamples {
    #[serde(default)]
    pub first_wave: BTreeMap<String, Vec<f64>>,
    #[serde(default)]
    pub rest_wave: BTreeMap<String, Vec<f64>>,
    #[serde(default)]
    pub fresh_durations: BTreeMap<String, Vec<f64>>,
}

impl StageSamples {
    /// Every sample multiplied by `factor` (the made TPC-H sizes, `trace::spark_sched_sim`).
    pub fn scaled(&self, factor: f64) -> StageSamples {
        let scale = |m: &BTreeMap<String, Vec<f64>>| {
            m.iter().map(|(k, v)| (k.clone(), v.iter().map(|x| x * factor).collect())).collect()
        };
        StageSamples {
            first_wave: scale(&self.first_wave),
            rest_wave: scale(&self.rest_wave),
            fresh_durations: scale(&self.fresh_durations),
        }
    }
}

/// The sidecar file (module doc).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sidecar {
    pub format: String,
    pub unit: String,
    /// Job name (as in the trace) -> DAG name (a key of `dags`).
    pub jobs: BTreeMap<String, String>,
    /// DAG name -> stage name (as in the trace) -> samples.
    pub dags: BTreeMap<String, BTreeMap<String, StageSamples>>,
}

/// One stage's cleaned samples in seconds, by numeric executor key.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StageWaves {
    pub first: BTreeMap<u32, Vec<f64>>,
    pub rest: BTreeMap<u32, Vec<f64>>,
    pub fresh: BTreeMap<u32, Vec<f64>>,
}

/// What a machine's history makes a launch (module doc, rule 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    /// The machine moved from another job or sat idle.
    Fresh,
    /// The machine's previous task was of the same stage, and it went on without a gap.
    Rest,
    /// Anything else: the first task of this stage on a machine already working for the job.
    First,
}

/// A workload's durations under the model: per job and stage, the cleaned samples (shared
/// between the jobs drawn from one DAG).
#[derive(Clone, Debug, Default)]
pub struct WaveModel {
    pub stages: Vec<Vec<Arc<StageWaves>>>,
}

/// The option as the simulator takes it (`sim::SimConfig::waves`).
#[derive(Clone, Debug)]
pub struct Waves {
    pub model: Arc<WaveModel>,
    /// Seconds an executor travels when it moves to another job.
    pub moving_delay: f64,
    /// Seconds added to a first-wave sample standing in for a missing fresh one.
    pub warmup_delay: f64,
}

impl Waves {
    /// The model with spark-sched-sim's delays.
    pub fn new(model: WaveModel) -> Waves {
        Waves { model: Arc::new(model), moving_delay: DEFAULT_MOVING_DELAY, warmup_delay: DEFAULT_WARMUP_DELAY }
    }
}

impl Sidecar {
    /// Parses a sidecar's text (checks its `format` and `unit`; [`Sidecar::bind`] checks the rest).
    pub fn parse(text: &str) -> Result<Sidecar> {
        let s: Sidecar = serde_json::from_str(text).map_err(|e| Error::from_json(&e))?;
        if s.format != FORMAT {
            return Err(Error::field("format", format!("'{}' is not \"{FORMAT}\"", s.format)));
        }
        if s.unit != "ms" {
            return Err(Error::field("unit", format!("'{}' is not \"ms\" (samples are milliseconds)", s.unit)));
        }
        Ok(s)
    }

    /// The model for `workload`: every job must be listed, its DAG present and each of its
    /// stages described (module doc). Each DAG stage is cleaned once.
    pub fn bind(&self, workload: &Workload) -> Result<WaveModel> {
        let mut cache: HashMap<(&str, &str), Arc<StageWaves>> = HashMap::new();
        let mut stages = Vec::with_capacity(workload.jobs.len());
        for job in &workload.jobs {
            let dag_name = self.jobs.get(&job.name).ok_or_else(|| {
                Error::field(format!("jobs.{}", job.name), "missing: the trace's job has no entry (which DAG it is)")
            })?;
            let dag = self.dags.get(dag_name).ok_or_else(|| {
                Error::field(format!("dags.{dag_name}"), format!("missing: job {} names this DAG", job.name))
            })?;
            let mut per_stage = Vec::with_capacity(job.dag.stages.len());
            for st in &job.dag.stages {
                let key = (dag_name.as_str(), st.name.as_str());
                if let Some(w) = cache.get(&key) {
                    per_stage.push(w.clone());
                    continue;
                }
                let field = format!("dags.{dag_name}.{}", st.name);
                let samples = dag
                    .get(&st.name)
                    .ok_or_else(|| Error::field(&field, format!("missing: job {} has this stage", job.name)))?;
                let w = Arc::new(clean(samples, &field)?);
                cache.insert(key, w.clone());
                per_stage.push(w);
            }
            stages.push(per_stage);
        }
        Ok(WaveModel { stages })
    }
}

/// Reads and binds a sidecar file; errors name the file.
pub fn load(path: &Path, workload: &Workload) -> Result<WaveModel> {
    let text = crate::formats::read_text(path)?;
    Sidecar::parse(&text).and_then(|s| s.bind(workload)).map_err(|e| e.in_file(path))
}

/// Checks one list map and converts it to seconds by numeric key.
fn to_seconds(m: &BTreeMap<String, Vec<f64>>, field: &str) -> Result<BTreeMap<u32, Vec<f64>>> {
    let mut out = BTreeMap::new();
    for (k, v) in m {
        let key =
            k.trim().parse::<u32>().ok().filter(|&n| n >= 1).ok_or_else(|| {
                Error::field(format!("{field}.\"{k}\""), "an executor count must be a whole number >= 1")
            })?;
        for (i, &x) in v.iter().enumerate() {
            if !(x.is_finite() && x >= 0.0 && x / 1000.0 <= crate::limits::MAX_SECONDS) {
                return Err(Error::field(
                    format!("{field}.\"{k}\"[{i}]"),
                    format!("{x} is not a duration in ms (a number from 0 to 1e15)"),
                ));
            }
        }
        if out.insert(key, v.iter().map(|x| x / 1000.0).collect()).is_some() {
            return Err(Error::field(format!("{field}.\"{k}\""), format!("executor count {key} appears twice")));
        }
    }
    Ok(out)
}

/// Checks a stage's samples and cleans them (module doc, rule 1).
fn clean(s: &StageSamples, field: &str) -> Result<StageWaves> {
    let first = to_seconds(&s.first_wave, &format!("{field}.first_wave"))?;
    let rest = to_seconds(&s.rest_wave, &format!("{field}.rest_wave"))?;
    let fresh = to_seconds(&s.fresh_durations, &format!("{field}.fresh_durations"))?;
    if first.is_empty() {
        return Err(Error::field(format!("{field}.first_wave"), "no executor count: the key rule needs one"));
    }
    if first.values().chain(rest.values()).chain(fresh.values()).all(Vec::is_empty) {
        return Err(Error::field(field, "no sample in any list"));
    }
    let mut cleaned = BTreeMap::new();
    let mut last: Vec<f64> = Vec::new();
    for (&k, list) in &first {
        let mut pending: HashMap<u64, usize> = HashMap::new();
        for &d in fresh.get(&k).map(Vec::as_slice).unwrap_or(&[]) {
            *pending.entry(bits(d)).or_default() += 1;
        }
        let mut kept = Vec::with_capacity(list.len());
        for &d in list {
            match pending.get_mut(&bits(d)) {
                Some(n) if *n > 0 => *n -= 1,
                _ => kept.push(d),
            }
        }
        if kept.is_empty() {
            kept = last.clone();
        }
        last = kept.clone();
        cleaned.insert(k, kept);
    }
    Ok(StageWaves { first: cleaned, rest, fresh })
}

/// Equal numbers, equal bits (0 and -0 are one sample).
fn bits(x: f64) -> u64 {
    if x == 0.0 {
        0
    } else {
        x.to_bits()
    }
}

/// The executor key for `n` executors (module doc, rule 3), drawing from `rng` only between
/// levels.
pub fn executor_key(st: &StageWaves, n: u32, rng: &mut impl Rng) -> u32 {
    let key = if n <= LEVELS[0] {
        LEVELS[0]
    } else if n >= LEVELS[LEVELS.len() - 1] {
        LEVELS[LEVELS.len() - 1]
    } else if LEVELS.contains(&n) {
        n
    } else {
        let i = LEVELS.iter().position(|&l| l > n).unwrap_or(LEVELS.len() - 1);
        let (l, r) = (LEVELS[i - 1], LEVELS[i]);
        let u: f64 = rng.gen();
        let point = 1 + (u * f64::from(r - l)) as u32;
        if point <= n - l {
            l
        } else {
            r
        }
    };
    if st.first.contains_key(&key) {
        key
    } else {
        st.first.keys().next_back().copied().unwrap_or(key)
    }
}

/// A uniform draw from `lists[key]`, `None` when the key is missing or its list empty.
fn draw(lists: &BTreeMap<u32, Vec<f64>>, key: u32, rng: &mut impl Rng) -> Option<f64> {
    let list = lists.get(&key).filter(|l| !l.is_empty())?;
    Some(list[rng.gen_range(0..list.len())])
}

/// A task's realized duration in seconds (module doc, rules 3 and 4), `None` when no list at the
/// key has a sample; `n` is the executors the job holds, the launching one included.
pub fn sample(st: &StageWaves, n: u32, category: Category, warmup: f64, rng: &mut impl Rng) -> Option<f64> {
    let key = executor_key(st, n, rng);
    match category {
        Category::Fresh => draw(&st.fresh, key, rng).or_else(|| draw(&st.first, key, rng).map(|d| d + warmup)),
        Category::Rest => {
            draw(&st.rest, key, rng).or_else(|| draw(&st.first, key, rng)).or_else(|| draw(&st.fresh, key, rng))
        }
        Category::First => draw(&st.first, key, rng).or_else(|| draw(&st.fresh, key, rng)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn lists(pairs: &[(&str, &[f64])]) -> BTreeMap<String, Vec<f64>> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_vec())).collect()
    }

    /// Cleaning: at key 2 the fresh samples 3000 and 3000 remove both 3000s of first_wave (one
    /// each) but not the 1000; at key 5 everything is fresh, so key 5 takes key 2's cleaned
    /// list; key 10 keeps its own. Milliseconds become seconds.
    #[test]
    fn cleaning_removes_fresh_samples_and_fills_from_the_smaller_key() {
        let s = StageSamples {
            first_wave: lists(&[("2", &[3000.0, 1000.0, 3000.0]), ("5", &[4000.0]), ("10", &[500.0])]),
            rest_wave: lists(&[("2", &[200.0])]),
            fresh_durations: lists(&[("2", &[3000.0, 3000.0]), ("5", &[4000.0])]),
        };
        let w = clean(&s, "x").unwrap();
        assert_eq!(w.first, [(2, vec![1.0]), (5, vec![1.0]), (10, vec![0.5])].into_iter().collect());
        assert_eq!(w.rest, [(2, vec![0.2])].into_iter().collect());
        assert_eq!(w.fresh[&2], vec![3.0, 3.0]);
    }

    /// Rule 3: 1-5 -> 5, levels -> themselves, above 100 -> 100, between levels a draw whose
    /// left share is (n - l) / (r - l): at n = 8 (between 5 and 10) 3 in 5, counted over 10,000
    /// draws. A key the stage lacks becomes its largest first_wave key.
    #[test]
    fn executor_keys_follow_spark_sched_sims_intervals() {
        let all: BTreeMap<u32, Vec<f64>> = LEVELS.iter().map(|&l| (l, vec![1.0])).collect();
        let st = StageWaves { first: all, ..StageWaves::default() };
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for (n, k) in [(1, 5), (5, 5), (10, 10), (20, 20), (60, 60), (100, 100), (150, 100)] {
            assert_eq!(executor_key(&st, n, &mut rng), k, "n = {n}");
        }
        let left = (0..10_000).filter(|_| executor_key(&st, 8, &mut rng) == 5).count();
        assert!((5700..6300).contains(&left), "{left}");
        let few = StageWaves {
            first: [(2, vec![1.0]), (5, vec![1.0]), (13, vec![1.0])].into_iter().collect(),
            ..StageWaves::default()
        };
        assert_eq!(executor_key(&few, 10, &mut rng), 13);
        assert_eq!(executor_key(&few, 3, &mut rng), 5);
    }

    /// Rule 4 with single-sample lists: each category's own list, and its fallbacks.
    #[test]
    fn categories_draw_their_lists_and_fall_back_in_order() {
        let one = |x: f64| [(5u32, vec![x])].into_iter().collect::<BTreeMap<_, _>>();
        let full = StageWaves { first: one(2.0), rest: one(1.0), fresh: one(4.0) };
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let mut s = |w: &StageWaves, c| sample(w, 3, c, 1.0, &mut rng);
        assert_eq!(s(&full, Category::Fresh), Some(4.0));
        assert_eq!(s(&full, Category::Rest), Some(1.0));
        assert_eq!(s(&full, Category::First), Some(2.0));
        let no_fresh_no_rest = StageWaves { first: one(2.0), ..StageWaves::default() };
        assert_eq!(s(&no_fresh_no_rest, Category::Fresh), Some(3.0), "first wave + 1 s warm-up");
        assert_eq!(s(&no_fresh_no_rest, Category::Rest), Some(2.0));
        let only_fresh =
            StageWaves { first: [(5, vec![])].into_iter().collect(), fresh: one(4.0), ..StageWaves::default() };
        assert_eq!(s(&only_fresh, Category::Rest), Some(4.0));
        assert_eq!(s(&only_fresh, Category::First), Some(4.0));
        let nothing = StageWaves { first: [(5, vec![])].into_iter().collect(), ..StageWaves::default() };
        assert_eq!(s(&nothing, Category::First), None);
    }

    #[test]
    fn bad_samples_name_their_field() {
        let bad = |s: StageSamples| clean(&s, "dags.d.s0").unwrap_err().to_string();
        let e = bad(StageSamples { first_wave: lists(&[("x", &[1.0])]), ..StageSamples::default() });
        assert!(e.contains("dags.d.s0.first_wave.\"x\"") && e.contains("whole number"), "{e}");
        let e = bad(StageSamples { first_wave: lists(&[("2", &[1.0, -5.0])]), ..StageSamples::default() });
        assert!(e.contains("dags.d.s0.first_wave.\"2\"[1]") && e.contains("-5"), "{e}");
        let e = bad(StageSamples { rest_wave: lists(&[("2", &[1.0])]), ..StageSamples::default() });
        assert!(e.contains("dags.d.s0.first_wave") && e.contains("no executor count"), "{e}");
        let e = bad(StageSamples { first_wave: lists(&[("2", &[])]), ..StageSamples::default() });
        assert!(e.contains("dags.d.s0") && e.contains("no sample"), "{e}");
        let e = bad(StageSamples { first_wave: lists(&[("2", &[1.0]), ("02", &[1.0])]), ..StageSamples::default() });
        assert!(e.contains("appears twice"), "{e}");
        let e = Sidecar::parse(r#"{"format":"x","unit":"ms","jobs":{},"dags":{}}"#).unwrap_err().to_string();
        assert!(e.contains("format"), "{e}");
        let e =
            Sidecar::parse(r#"{"format":"graphene-waves","unit":"s","jobs":{},"dags":{}}"#).unwrap_err().to_string();
        assert!(e.contains("unit"), "{e}");
    }
}
