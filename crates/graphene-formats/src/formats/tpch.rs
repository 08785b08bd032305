//! Decima's TPC-H JSON: one file per input size holding the stage DAGs of the 22 queries with
//! task durations measured on Spark (see `data/decima-tpch/README.md` beside the repository).
//!
//! Each query becomes one DAG named `tpch-<input_size>-q<query>` (the file name stands in for
//! `tpch-<input_size>` when the file gives no size). Stage `k` is named `s<k>` and holds
//! `num_tasks` tasks; every `[parent, child]` pair in `edges` is an all-to-all edge.
//!
//! # How a task's duration is derived
//!
//! Decima measured each stage at several executor counts E (the string keys of `first_wave`,
//! `rest_wave` and `fresh_durations`, in milliseconds). A replay needs one fixed duration per
//! task, so with `executors` = the `--executors` option:
//!
//! 1. The key E is the largest measured key `<= executors`, or the smallest key when every key
//!    is larger. Keys are those of any of the three lists.
//! 2. The sample list is `first_wave[E]` followed by `rest_wave[E]`; if that is empty,
//!    `fresh_durations[E]`. If that is empty too, the same two steps are tried at the other keys,
//!    nearest to E first (the smaller key on a tie).
//! 3. Task `i` (0-based) of the stage gets sample `i mod len`, divided by 1000 (seconds).
//!
//! Taking the samples in order rather than at random keeps the DAG a pure function of the file
//! and the executor count, and cycling through the list keeps each stage's duration mix the one
//! Spark measured, including its stragglers. A stage with no sample at any key is an error.
//!
//! [`parse_with`] and [`Durations::StageMean`] give every task of a stage the mean of that
//! sample list instead: spark-sched-sim's workload (`gen-trace --style spark-sched-sim`), where
//! a stage is one duration, not a mix.
//!
//! Every task demands `cpu` = 1 (one executor slot) and nothing else: the file has no resource
//! data, so a demand profile supplies the rest.

use std::collections::{BTreeMap, HashSet};

use serde::Deserialize;

use super::native::default_resources;
use crate::error::{Error, Result};
use crate::model::{Dag, DagBuilder, EdgeKind, ResVec, StageSpec, TaskSpec};

/// More tasks than any real Spark stage; guards against a typo allocating without bound.
pub(crate) const MAX_TASKS_PER_STAGE: u64 = 10_000_000;

#[derive(Deserialize)]
struct TpchFile {
    #[serde(default)]
    input_size: Option<String>,
    queries: Vec<QueryFile>,
}

#[derive(Deserialize)]
struct QueryFile {
    query: u32,
    #[serde(default)]
    num_stages: Option<usize>,
    #[serde(default)]
    edges: Vec<[u64; 2]>,
    stages: Vec<StageFile>,
}

#[derive(Deserialize)]
struct StageFile {
    stage: u64,
    num_tasks: u64,
    #[serde(default)]
    first_wave: BTreeMap<String, Vec<f64>>,
    #[serde(default)]
    rest_wave: BTreeMap<String, Vec<f64>>,
    #[serde(default)]
    fresh_durations: BTreeMap<String, Vec<f64>>,
}

/// The file's `input_size` (e.g. `"20g"`), if it gives one and is a Decima TPC-H file.
pub fn input_size(text: &str) -> Result<Option<String>> {
    #[derive(Deserialize)]
    struct Size {
        #[serde(default)]
        input_size: Option<String>,
    }
    let s: Size = serde_json::from_str(text).map_err(|e| Error::from_json(&e))?;
    Ok(s.input_size.filter(|v| !v.trim().is_empty()))
}

/// What a stage's tasks run for, from the sample list the module doc's rule picks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durations {
    /// Task i runs sample i mod len: the measured mix, stragglers included.
    Samples,
    /// Every task runs the samples' mean: one duration per stage.
    StageMean,
}

pub fn parse(text: &str, name: &str, query: Option<u32>, executors: u32) -> Result<Vec<Dag>> {
    parse_with(text, name, query, executors, Durations::Samples)
}

/// [`parse`], with the tasks' durations taken as `durations` says.
pub fn parse_with(
    text: &str,
    name: &str,
    query: Option<u32>,
    executors: u32,
    durations: Durations,
) -> Result<Vec<Dag>> {
    let file: TpchFile = serde_json::from_str(text).map_err(|e| Error::from_json(&e))?;
    let prefix = match file.input_size.as_deref() {
        Some(size) if !size.trim().is_empty() => format!("tpch-{size}"),
        _ => name.to_string(),
    };
    let mut seen = HashSet::new();
    for (qi, q) in file.queries.iter().enumerate() {
        if !seen.insert(q.query) {
            return Err(Error::field(format!("queries[{qi}].query"), format!("query {} appears twice", q.query)));
        }
    }
    let mut order: Vec<usize> = (0..file.queries.len()).collect();
    order.sort_by_key(|&i| file.queries[i].query);
    match query {
        Some(n) => {
            let Some(qi) = file.queries.iter().position(|q| q.query == n) else {
                let available: Vec<String> = order.iter().map(|&i| file.queries[i].query.to_string()).collect();
                return Err(Error::Usage(format!(
                    "query {n} is not in this file; it holds queries {}",
                    if available.is_empty() { "(none)".to_string() } else { available.join(", ") }
                )));
            };
            Ok(vec![query_dag(&file.queries[qi], qi, &prefix, executors, durations)?])
        }
        None => {
            if file.queries.is_empty() {
                return Err(Error::field("queries", "the file holds no queries"));
            }
            order.iter().map(|&qi| query_dag(&file.queries[qi], qi, &prefix, executors, durations)).collect()
        }
    }
}

/// A DAG's name and its stages' names with their sample lists ([`wave_samples`]).
pub type QueryWaves = (String, Vec<(String, crate::formats::waves::StageSamples)>);

/// Every query's stages with their three raw sample lists (ms, as the file holds them), named
/// as [`parse`] names the DAGs (`tpch-<input_size>-q<query>`, else `<name>-q<query>`) and
/// stages (`s<stage>`): what `gen-trace --waves-out` writes for `replay --waves`
/// ([`crate::formats::waves`]). The DAGs themselves are checked by [`parse`].
pub fn wave_samples(text: &str, name: &str) -> Result<Vec<QueryWaves>> {
    let file: TpchFile = serde_json::from_str(text).map_err(|e| Error::from_json(&e))?;
    let prefix = match file.input_size.as_deref() {
        Some(size) if !size.trim().is_empty() => format!("tpch-{size}"),
        _ => name.to_string(),
    };
    Ok(file
        .queries
        .into_iter()
        .map(|q| {
            let stages = q
                .stages
                .into_iter()
                .map(|s| {
                    let samples = crate::formats::waves::StageSamples {
                        first_wave: s.first_wave,
                        rest_wave: s.rest_wave,
                        fresh_durations: s.fresh_durations,
                    };
                    (format!("s{}", s.stage), samples)
                })
                .collect();
            (format!("{prefix}-q{}", q.query), stages)
        })
        .collect())
}

fn query_dag(q: &QueryFile, qi: usize, prefix: &str, executors: u32, durations: Durations) -> Result<Dag> {
    let at = format!("queries[{qi}] (query {})", q.query);
    let n = q.stages.len();
    if let Some(declared) = q.num_stages {
        if declared != n {
            return Err(Error::field(format!("{at}.num_stages"), format!("says {declared} but {n} stages are listed")));
        }
    }
    // Stages are addressed by their `stage` number, which must be 0..n-1 each once.
    let mut by_number: Vec<Option<usize>> = vec![None; n];
    for (si, s) in q.stages.iter().enumerate() {
        crate::deadline::poll()?;
        let slot = usize::try_from(s.stage).ok().and_then(|k| by_number.get_mut(k)).ok_or_else(|| {
            Error::field(format!("{at}.stages[{si}].stage"), format!("stage {} is out of range 0..{}", s.stage, n))
        })?;
        if slot.is_some() {
            return Err(Error::field(format!("{at}.stages[{si}].stage"), format!("stage {} appears twice", s.stage)));
        }
        *slot = Some(si);
    }
    let mut parents: Vec<Vec<u64>> = vec![Vec::new(); n];
    // An edge listed twice is one edge (found with a set: scanning the child's parents so far
    // was quadratic in a stage with many).
    let mut listed: HashSet<(u64, u64)> = HashSet::with_capacity(q.edges.len());
    for (ei, &[p, c]) in q.edges.iter().enumerate() {
        for end in [p, c] {
            if end >= n as u64 {
                return Err(Error::field(
                    format!("{at}.edges[{ei}]"),
                    format!("stage {end} does not exist (the query has stages 0..{})", n.saturating_sub(1)),
                ));
            }
        }
        if listed.insert((p, c)) {
            parents[c as usize].push(p);
        }
    }
    let mut b = DagBuilder::new(format!("{prefix}-q{}", q.query), default_resources());
    for (k, slot) in by_number.iter().enumerate() {
        let si = slot.expect("every stage number 0..n-1 was filled");
        let s = &q.stages[si];
        let sat = format!("{at}.stages[{si}] (stage {k})");
        if s.num_tasks == 0 || s.num_tasks > MAX_TASKS_PER_STAGE {
            return Err(Error::field(
                format!("{sat}.num_tasks"),
                format!("{} is not a task count between 1 and {MAX_TASKS_PER_STAGE}", s.num_tasks),
            ));
        }
        let mut samples = stage_samples(s, executors, &sat)?;
        if durations == Durations::StageMean {
            samples = vec![samples.iter().sum::<f64>() / samples.len() as f64];
        }
        let cpu = ResVec::from_slice(&[1.0]);
        let tasks = (0..s.num_tasks as usize)
            .map(|i| TaskSpec { duration: samples[i % samples.len()] / 1000.0, demand: cpu })
            .collect();
        b.stage(StageSpec {
            name: format!("s{k}"),
            group: None,
            tasks,
            parents: parents[k].iter().map(|p| (format!("s{p}"), EdgeKind::AllToAll)).collect(),
        });
    }
    b.build()
}

/// The duration samples (ms) a stage's tasks cycle through; the rule is in the module doc.
fn stage_samples<'a>(s: &'a StageFile, executors: u32, at: &str) -> Result<Vec<f64>> {
    let mut keys: BTreeMap<u32, ()> = BTreeMap::new();
    for (list, map) in
        [("first_wave", &s.first_wave), ("rest_wave", &s.rest_wave), ("fresh_durations", &s.fresh_durations)]
    {
        for (key, values) in map {
            let e: u32 = key
                .trim()
                .parse()
                .map_err(|_| Error::field(format!("{at}.{list}"), format!("key '{key}' is not an executor count")))?;
            if let Some(v) = values.iter().find(|v| !v.is_finite() || **v < 0.0) {
                return Err(Error::field(
                    format!("{at}.{list}.{key}"),
                    format!("duration {v} is not a finite number >= 0"),
                ));
            }
            keys.insert(e, ());
        }
    }
    let keys: Vec<u32> = keys.into_keys().collect();
    let Some(&smallest) = keys.first() else {
        return Err(Error::field(at, "no duration samples (first_wave, rest_wave and fresh_durations are empty)"));
    };
    let chosen = keys.iter().rev().copied().find(|&e| e <= executors).unwrap_or(smallest);
    let mut tries = keys.clone();
    tries.sort_by_key(|&e| (e.abs_diff(chosen), e));
    let get = |map: &'a BTreeMap<String, Vec<f64>>, e: u32| -> &'a [f64] {
        map.iter().find(|(k, _)| k.trim().parse::<u32>().ok() == Some(e)).map_or(&[], |(_, v)| v.as_slice())
    };
    for e in tries {
        let waves: Vec<f64> = get(&s.first_wave, e).iter().chain(get(&s.rest_wave, e)).copied().collect();
        if !waves.is_empty() {
            return Ok(waves);
        }
        let fresh = get(&s.fresh_durations, e);
        if !fresh.is_empty() {
            return Ok(fresh.to_vec());
        }
    }
    Err(Error::field(at, "no duration samples at any executor count"))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::formats::test_support::shared_or_skip;

    const Q6: &str = include_str!("../../../../tests/data/tpch-2g-q6.json");

    fn durations(dag: &Dag, stage: &str) -> Vec<f64> {
        let s = &dag.stages[dag.stage_by_name(stage).unwrap() as usize];
        s.tasks().map(|t| dag.tasks[t as usize].duration).collect()
    }

    /// Query 3 of a 1g file with one stage holding the given duration lists.
    fn one_stage(num_tasks: u32, waves: &str) -> String {
        format!(
            r#"{{"input_size":"1g","queries":[{{"query":3,"num_stages":1,"edges":[],
            "stages":[{{"stage":0,"num_tasks":{num_tasks},{waves}}}]}}]}}"#
        )
    }

    #[test]
    fn q6_2g_has_two_stages_of_12_and_1_tasks() {
        let dags = parse(&shared_or_skip!("decima-tpch/json/tpch-2g.json"), "tpch-2g", Some(6), 20).unwrap();
        assert_eq!(dags.len(), 1);
        let dag = &dags[0];
        assert_eq!(dag.name, "tpch-2g-q6");
        assert_eq!(dag.stages.iter().map(|s| (s.name.as_str(), s.len)).collect::<Vec<_>>(), [("s0", 12), ("s1", 1)]);
        assert_eq!(dag.stages[1].parents.len(), 1);
        assert_eq!(dag.stages[1].parents[0].stage, 0);
        assert_eq!(dag.stages[1].parents[0].kind, EdgeKind::AllToAll);
        assert_eq!(dag.resources, ["cpu", "mem", "disk", "net"]);
        assert!(dag.tasks.iter().all(|t| t.demand.0[..4] == [1.0, 0.0, 0.0, 0.0]));
        // Each stage is its own group.
        assert_eq!(dag.groups, ["s0", "s1"]);
    }

    #[test]
    fn q6_excerpt_durations_follow_the_executor_key_rule() {
        // Keys are 2, 5, 10, 12, 13. 20 executors -> key 13: stage 0 has 12 first-wave samples
        // and no rest wave, stage 1 one sample.
        let dag = &parse(Q6, "f", None, 20).unwrap()[0];
        let s0 = durations(dag, "s0");
        assert_eq!(s0[..3], [3.655, 3.631, 3.8]);
        assert_eq!(s0[11], 3.944);
        assert_eq!(durations(dag, "s1"), [1.143]);
        // 10 executors -> key 10: ten first-wave samples, then the rest wave [2010, 772].
        let dag = &parse(Q6, "f", Some(6), 10).unwrap()[0];
        let s0 = durations(dag, "s0");
        assert_eq!(s0[0], 3.534);
        assert_eq!(s0[9], 3.492);
        assert_eq!(s0[10..], [2.01, 0.772]);
        assert_eq!(durations(dag, "s1"), [0.343]);
        // 11 executors still -> key 10; 1 executor -> smallest key 2 (2 first + 10 rest = 12).
        assert_eq!(durations(&parse(Q6, "f", None, 11).unwrap()[0], "s1"), [0.343]);
        let dag = &parse(Q6, "f", None, 1).unwrap()[0];
        assert_eq!(durations(dag, "s0")[..3], [3.629, 3.417, 1.962]);
        assert_eq!(durations(dag, "s1"), [0.259]);
    }

    /// StageMean gives every task the mean of the list the key rule picks (not the mean over
    /// the tasks, which would weigh the first samples more when the count is not a multiple).
    #[test]
    fn stage_mean_is_the_mean_of_the_picked_samples() {
        let waves = r#""first_wave":{"2":[1000,2000],"5":[6000]},"rest_wave":{"2":[6000],"5":[]}"#;
        let dag = &parse_with(&one_stage(7, waves), "f", None, 2, Durations::StageMean).unwrap()[0];
        assert_eq!(durations(dag, "s0"), [3.0; 7]);
        let dag = &parse_with(&one_stage(2, waves), "f", None, 5, Durations::StageMean).unwrap()[0];
        assert_eq!(durations(dag, "s0"), [6.0; 2]);
        assert!(dag.tasks.iter().all(|t| t.demand.0[..4] == [1.0, 0.0, 0.0, 0.0]));
    }

    #[test]
    fn samples_cycle_and_fall_back_to_fresh_then_nearest_key() {
        let waves = r#""first_wave":{"2":[1000,2000],"5":[],"10":[]},
                       "rest_wave":{"2":[3000],"5":[],"10":[]},
                       "fresh_durations":{"2":[],"5":[4000],"10":[]}"#;
        // 5 executors: waves empty at 5, fresh has [4000]; 7 tasks cycle through one sample.
        let dag = &parse(&one_stage(7, waves), "f", None, 5).unwrap()[0];
        assert_eq!(dag.name, "tpch-1g-q3");
        assert_eq!(durations(dag, "s0"), [4.0; 7]);
        // 2 executors: [1000, 2000] ++ [3000], task i gets sample i mod 3.
        let dag = &parse(&one_stage(7, waves), "f", None, 2).unwrap()[0];
        assert_eq!(durations(dag, "s0"), [1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0]);
        // 50 executors -> key 10, empty everywhere; nearest other key is 5 (fresh [4000]).
        let dag = &parse(&one_stage(2, waves), "f", None, 50).unwrap()[0];
        assert_eq!(durations(dag, "s0"), [4.0, 4.0]);
        // Ties go to the smaller key: keys 2 and 8 around an empty 5.
        let tie = r#""first_wave":{"2":[1000],"5":[],"8":[8000]}"#;
        let dag = &parse(&one_stage(1, tie), "f", None, 5).unwrap()[0];
        assert_eq!(durations(dag, "s0"), [1.0]);
    }

    #[test]
    fn all_queries_in_order_with_the_readme_counts() {
        let stages = [4, 18, 6, 6, 14, 2, 13, 18, 14, 9, 11, 6, 7, 4, 7, 9, 6, 8, 4, 12, 16, 8];
        for (size, total) in [("2g", 20065), ("5g", 20479), ("10g", 21188), ("20g", 22684)] {
            let dags = parse(&shared_or_skip!(&format!("decima-tpch/json/tpch-{size}.json")), "t", None, 20).unwrap();
            assert_eq!(dags.len(), 22, "{size}");
            for (i, dag) in dags.iter().enumerate() {
                assert_eq!(dag.name, format!("tpch-{size}-q{}", i + 1));
                assert_eq!(dag.stages.len(), stages[i], "{}", dag.name);
            }
            assert_eq!(dags.iter().map(|d| d.len()).sum::<usize>(), total, "{size}");
            assert!(dags.iter().flat_map(|d| &d.tasks).all(|t| t.duration > 0.0));
            if size == "2g" {
                assert_eq!(dags[20].len(), 1844);
                assert_eq!(dags[5].len(), 13);
            }
        }
    }

    #[test]
    fn a_missing_query_lists_the_available_ones() {
        let e = parse(Q6, "f", Some(9), 20).unwrap_err().to_string();
        assert!(e.contains("query 9 is not in this file") && e.contains("holds queries 6"), "{e}");
        let e = parse(&shared_or_skip!("decima-tpch/json/tpch-5g.json"), "f", Some(23), 20).unwrap_err().to_string();
        assert!(e.contains("1, 2, 3") && e.contains("21, 22"), "{e}");
    }

    #[test]
    fn bad_files_are_errors() {
        let err = |text: &str| parse(text, "f", None, 20).unwrap_err().to_string();
        let e = err(
            r#"{"queries":[{"query":1,"edges":[[0,4]],"stages":[{"stage":0,"num_tasks":1,"first_wave":{"2":[5]}}]}]}"#,
        );
        assert!(e.contains("edges[0]") && e.contains("stage 4 does not exist"), "{e}");
        let e = err(r#"{"queries":[{"query":1,"stages":[{"stage":0,"num_tasks":0,"first_wave":{"2":[5]}}]}]}"#);
        assert!(e.contains("num_tasks"), "{e}");
        let e = err(r#"{"queries":[{"query":1,"stages":[{"stage":0,"num_tasks":2,"first_wave":{"two":[5]}}]}]}"#);
        assert!(e.contains("key 'two'"), "{e}");
        let e = err(r#"{"queries":[{"query":1,"stages":[{"stage":0,"num_tasks":2,"first_wave":{"2":[]}}]}]}"#);
        assert!(e.contains("no duration samples"), "{e}");
        let e = err(r#"{"queries":[{"query":1,"stages":[{"stage":0,"num_tasks":2,"first_wave":{"2":[-5]}}]}]}"#);
        assert!(e.contains("-5"), "{e}");
        let e = err(
            r#"{"queries":[{"query":1,"num_stages":3,"stages":[{"stage":0,"num_tasks":2,"first_wave":{"2":[5]}}]}]}"#,
        );
        assert!(e.contains("num_stages"), "{e}");
        let e = err(
            r#"{"queries":[{"query":1,"edges":[[0,1],[1,0]],"stages":[{"stage":0,"num_tasks":1,"first_wave":{"2":[5]}},{"stage":1,"num_tasks":1,"first_wave":{"2":[5]}}]}]}"#,
        );
        assert!(e.contains("cycle"), "{e}");
        let e = err(r#"{"queries":[{"query":1,"stages":[{"stage":1,"num_tasks":1,"first_wave":{"2":[5]}}]}]}"#);
        assert!(e.contains("out of range"), "{e}");
        match parse("{\"queries\": [\n {\"query\": 1, \"stages\": []}\n ,]}", "f", None, 20).unwrap_err() {
            Error::Syntax { line, column, .. } => assert_eq!((line, column), (3, 3)),
            other => panic!("expected a syntax error, got {other}"),
        }
        match parse("{\"queries\": [{\"query\": 1}]}", "f", None, 20).unwrap_err() {
            Error::Syntax { message, .. } => assert!(message.contains("stages"), "{message}"),
            other => panic!("expected a syntax error, got {other}"),
        }
    }
}
