//! `graphene export`: the Tez and YARN exports read back to the schedule's precedence order,
//! priorities never put a child ahead of its parent, ties appear only where `--levels` folds,
//! and the SLS and CSV renderings of the bundled example, number by number.

use std::collections::HashSet;

use graphene::export::{self, ExportFormat, ExportOptions, ScheduleIn};
use graphene::model::Dag;
use proptest::prelude::*;
use serde_json::Value;

use crate::gen::{arb_case, config, Sizes};
use crate::util::{assert_no_panic, repo, run, tempdir, write};

/// The schedule file `build-schedule` would write for `which` on the case.
fn schedule_file(dag: &Dag, cluster: &graphene::Cluster, which: &str) -> (String, Vec<String>) {
    let which = graphene::Scheduler::parse(which).expect("known scheduler");
    // A small improver budget: the orders only feed the exports, whose round trip is the test.
    let cfg = graphene::OfflineConfig { improve_budget: 20_000, ..graphene::OfflineConfig::default() };
    let net = graphene::model::Network::uniform(cluster.len());
    let s = graphene::api::schedule(dag, cluster, &net, false, which, &cfg, 3, true).expect("a valid schedule");
    (String::from_utf8(s.json).unwrap(), s.report.order)
}

fn export_with(text: &str, dag: &Dag, format: ExportFormat, levels: Option<u32>, mixed: bool) -> String {
    let schedule = ScheduleIn::parse(text).expect("a schedule file parses");
    let mut opts = ExportOptions::new(format);
    opts.levels = levels;
    opts.allocation_request_id = mixed;
    String::from_utf8(export::export(&schedule, Some(dag), &opts).expect("export succeeds")).unwrap()
}

/// Priority per task id, from a Tez export.
fn tez_priorities(text: &str) -> Vec<(String, u32)> {
    let v: Value = serde_json::from_str(text).unwrap();
    v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["id"].as_str().unwrap().to_string(), t["priority"].as_u64().unwrap() as u32))
        .collect()
}

fn check_case(dag: &Dag, text: &str, order: &[String], levels: Option<u32>, mixed: bool) -> Result<(), TestCaseError> {
    let tez = export_with(text, dag, ExportFormat::Tez, levels, mixed);
    let yarn = export_with(text, dag, ExportFormat::Yarn, levels, mixed);
    prop_assert_eq!(&export::tez::read_order(&tez).unwrap(), order, "tez round trip");
    prop_assert_eq!(&export::yarn::read_order(&yarn).unwrap(), order, "yarn round trip");

    let pri = tez_priorities(&tez);
    let by_id: std::collections::HashMap<&str, u32> = pri.iter().map(|(id, p)| (id.as_str(), *p)).collect();
    // Listed in precedence order with non-decreasing priorities.
    prop_assert!(pri.windows(2).all(|w| w[0].1 <= w[1].1));
    let n = order.len();
    let distinct: HashSet<u32> = pri.iter().map(|p| p.1).collect();
    match levels {
        None => {
            // No ties at all: the priorities alone give the order.
            let mut sorted = pri.clone();
            sorted.reverse();
            sorted.sort_by_key(|p| p.1);
            prop_assert_eq!(sorted.iter().map(|p| &p.0).collect::<Vec<_>>(), order.iter().collect::<Vec<_>>());
            prop_assert_eq!(distinct.len(), n);
        }
        // With allocationRequestId the bands are exactly the --levels asked for.
        Some(k) if mixed => prop_assert_eq!(distinct.len(), n.min(k as usize)),
        // Without it a band is cut where the container size changes: at least as many values,
        // and never two sizes (vcores, memory-mb) at one priority.
        Some(k) => {
            prop_assert!(distinct.len() >= n.min(k as usize));
            let size = |id: &str| {
                let d = dag.tasks[dag.task_by_name(id).unwrap() as usize].demand.0;
                ((d[0].ceil() as u64).max(1), ((d[1] * 1024.0).ceil() as u64).max(1))
            };
            let mut seen: std::collections::HashMap<u32, (u64, u64)> = std::collections::HashMap::new();
            for (id, p) in &pri {
                let s = size(id);
                prop_assert_eq!(*seen.entry(*p).or_insert(s), s, "two sizes at priority {}", p);
            }
        }
    }
    // Tez ranges: low = 3p, high = 3p - 2 for every task and vertex.
    let v: Value = serde_json::from_str(&tez).unwrap();
    for t in v["tasks"].as_array().unwrap().iter().chain(v["vertices"].as_array().unwrap()) {
        let p = t["priority"].as_u64().unwrap();
        prop_assert_eq!((t["low"].as_u64().unwrap(), t["high"].as_u64().unwrap()), (3 * p, 3 * p - 2));
    }
    prop_assert_eq!(v["format"].as_str(), Some("graphene-tez/2"));
    // No dependency inverted: a parent's number is never above its child's (strictly below
    // without --levels).
    for t in 0..dag.len() as u32 {
        let pt = by_id[dag.task_name(t).as_str()];
        let mut bad = None;
        dag.for_each_parent(t, |p| {
            let pp = by_id[dag.task_name(p).as_str()];
            if pp > pt || (levels.is_none() && pp == pt) {
                bad = Some((dag.task_name(p), pp, pt));
            }
        });
        prop_assert!(bad.is_none(), "parent/child priorities inverted: {:?} for {}", bad, dag.task_name(t));
    }
    // YARN and Tez agree task by task.
    let y: Value = serde_json::from_str(&yarn).unwrap();
    let ypri: Vec<(String, u32)> = y["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["task"].as_str().unwrap().to_string(), r["priority"].as_u64().unwrap() as u32))
        .collect();
    prop_assert_eq!(ypri, pri);
    Ok(())
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn tez_and_yarn_round_trip_without_inverting_dependencies(case in arb_case(Sizes::PROPERTY), k in 1u32..6) {
        let dag = case.dag();
        let cluster = case.cluster(&dag);
        for which in ["graphene", "cp", "random"] {
            let (text, order) = schedule_file(&dag, &cluster, which);
            for levels in [None, Some(k), Some(1)] {
                check_case(&dag, &text, &order, levels, false)?;
                check_case(&dag, &text, &order, levels, true)?;
            }
        }
    }
}

fn example_schedule(dir: &std::path::Path) -> String {
    let ex = repo("traces/example.json").display().to_string();
    let r = run(&["build-schedule", &ex, "--no-timing", "-q"]).ok();
    write(dir, "schedule.json", &r.stdout_str()).display().to_string()
}

#[test]
fn example_exports_through_the_cli() {
    let dir = tempdir();
    let s = example_schedule(dir.path());
    let ex = repo("traces/example.json").display().to_string();

    let csv = run(&["export", &s, "--format", "csv"]).ok().stdout_str();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows[0], "task,stage,priority,start,end,machine");
    assert_eq!(rows.len(), 53);
    let pri: Vec<u32> = rows[1..].iter().map(|r| r.split(',').nth(2).unwrap().parse().unwrap()).collect();
    assert_eq!(pri, (1..=52).collect::<Vec<_>>());

    // Without the DAG the sizes are unknown: --levels must say the YARN version copes.
    let r = run(&["export", &s, "--format", "tez", "--levels", "3"]);
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("--levels needs --dag") && r.stderr.contains("--allocation-request-id"), "{}", r.stderr);
    let tez: Value = run(&["export", &s, "--format", "tez", "--levels", "3", "--allocation-request-id"]).ok().json();
    assert_eq!(tez["mixed_sizes_per_priority"], true);
    let vertices: Vec<(&str, u64)> = tez["vertices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["name"].as_str().unwrap(), v["priority"].as_u64().unwrap()))
        .collect();
    // Four vertices in three bands: ranks 0..3 -> 0*3/4+1, 1*3/4+1, 2*3/4+1, 3*3/4+1.
    assert_eq!(vertices, [("scan", 1), ("agg", 1), ("fix", 2), ("out", 3)]);
    let counts = tez["tasks"].as_array().unwrap().iter().fold([0; 3], |mut c, t| {
        c[t["priority"].as_u64().unwrap() as usize - 1] += 1;
        c
    });
    // 52 tasks in three bands: rank*3/52 < 1 for ranks 0-17, < 2 for 18-34, then 35-51.
    assert_eq!(counts, [18, 17, 17]);
    // First attempts at 3p - 1, retries at 3p - 2: band 1 is [1, 3].
    assert_eq!((tez["tasks"][0]["high"].as_u64(), tez["tasks"][0]["low"].as_u64()), (Some(1), Some(3)));

    // With the DAG, bands are cut where the container size changes: scan (1 vcore, 4096 MB)
    // and agg (2, 8192) shared band 1 above; now they cannot.
    let sized: Value = run(&["export", &s, "--format", "tez", "--levels", "3", "--dag", &ex]).ok().json();
    assert_eq!(sized["mixed_sizes_per_priority"], false);
    let vp: Vec<(&str, u64)> = sized["vertices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["name"].as_str().unwrap(), v["priority"].as_u64().unwrap()))
        .collect();
    assert!(vp.windows(2).all(|w| w[0].1 < w[1].1), "{vp:?}");
    let mut size_at: std::collections::HashMap<u64, &str> = std::collections::HashMap::new();
    for t in sized["tasks"].as_array().unwrap() {
        let stage = t["vertex"].as_str().unwrap();
        let first = *size_at.entry(t["priority"].as_u64().unwrap()).or_insert(stage);
        // The example's stages all differ in size, so no priority holds two stages.
        assert_eq!(first, stage, "{first} and {stage} share a priority");
    }

    let yarn: Value = run(&["export", &s, "--format", "yarn", "--dag", &ex]).ok().json();
    let reqs = yarn["requests"].as_array().unwrap();
    assert_eq!(reqs.len(), 52);
    let agg = reqs.iter().find(|r| r["task"] == "agg[0]").unwrap();
    // agg: cpu 2, mem 8 (GB) -> 8192 MB, 30 s.
    assert_eq!(agg["capability"], serde_json::json!({"memory-mb": 8192, "vcores": 2}));
    assert_eq!(agg["duration-ms"], 30000);
    let out0 = reqs.iter().find(|r| r["task"] == "out[0]").unwrap();
    // out: cpu 1 and no memory -> 1 MB, the least YARN can be asked for; 1 s.
    assert_eq!(out0["capability"], serde_json::json!({"memory-mb": 1, "vcores": 1}));
    assert_eq!(out0["duration-ms"], 1000);

    let sls: Value = run(&["export", &s, "--format", "sls", "--dag", &ex, "--queue", "q1"]).ok().json();
    assert_eq!(sls["am.type"], "graphene");
    assert_eq!(sls["job.id"], "job_example");
    assert_eq!(sls["job.queue.name"], "q1");
    assert_eq!(sls["job.start.ms"], 0);
    assert_eq!(sls["job.end.ms"], 50500);
    let tasks = sls["job.tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 52);
    let p: Vec<u64> = tasks.iter().map(|t| t["container.priority"].as_u64().unwrap()).collect();
    assert_eq!(p, (1..=52).collect::<Vec<_>>());
    // The allocation id is the entry's position: the AM's allocationRequestId per task.
    for (i, t) in tasks.iter().enumerate() {
        assert_eq!(t["container.allocation.id"], i as u64);
        assert_eq!(t["count"], 1);
    }
    // Task and parents travel in container.type: all-to-all bare, one-to-one with '~'.
    let kind =
        |id: &str| tasks.iter().find(|t| t["container.type"].as_str().unwrap().split('<').next() == Some(id)).unwrap();
    assert_eq!(kind("scan[0]")["container.type"], "scan[0]");
    assert_eq!(kind("agg[3]")["container.type"], "agg[3]<scan");
    assert_eq!(kind("fix[1]")["container.type"], "fix[1]<agg");
    assert_eq!(kind("out[1]")["container.type"], "out[1]<~fix");
    let first = &tasks[0];
    assert_eq!(first["container.duration.ms"], 12000);
    assert_eq!(first["container.memory-mb"], 4096);
    assert_eq!(first["container.vcores"], 1);
}

#[test]
fn export_is_byte_identical_across_runs_and_to_a_file() {
    let dir = tempdir();
    let s = example_schedule(dir.path());
    let out = dir.path().join("tez.json").display().to_string();
    let a = run(&["export", &s, "--format", "tez"]).ok().stdout;
    run(&["export", &s, "--format", "tez", "--out", &out]).ok();
    assert_eq!(a, std::fs::read(&out).unwrap());
}

#[test]
fn bad_exports_are_reported() {
    let dir = tempdir();
    let s = example_schedule(dir.path());
    let ex = repo("traces/example.json").display().to_string();
    let mot = repo("traces/motivating.json").display().to_string();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["--format".into(), "yarn".into()], "--format yarn needs --dag"),
        (vec!["--format".into(), "tez".into(), "--levels".into(), "0".into()], "--levels must be at least 1"),
        (vec!["--format".into(), "tez".into(), "--dag".into(), mot], "is not in DAG 'motivating'"),
        (
            vec!["--format".into(), "yarn".into(), "--dag".into(), ex.clone(), "--mem-resource".into(), "ram".into()],
            "has no resource 'ram'",
        ),
        (
            vec!["--format".into(), "sls".into(), "--dag".into(), ex, "--time-ms".into(), "0".into()],
            "--time-ms 0 must be a positive number",
        ),
    ];
    for (extra, want) in cases {
        let mut args = vec!["export".to_string(), s.clone()];
        args.extend(extra);
        let r = run(&args);
        assert_no_panic(&r);
        assert_eq!(r.code, Some(1), "{args:?}");
        assert!(r.stderr.contains(want), "{args:?}: {}", r.stderr);
    }

    // An order that skips a task, or puts a child before its parent.
    let text = std::fs::read_to_string(&s).unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["order"].as_array_mut().unwrap().pop();
    let p = write(dir.path(), "short.json", &v.to_string());
    let r = run(&["export", p.to_str().unwrap(), "--format", "csv"]);
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("short.json: order: task 'out[1]' is missing"), "{}", r.stderr);

    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["order"].as_array_mut().unwrap().reverse();
    let p = write(dir.path(), "reversed.json", &v.to_string());
    let ex = repo("traces/example.json").display().to_string();
    let r = run(&["export", p.to_str().unwrap(), "--format", "tez", "--dag", &ex]);
    assert_eq!(r.code, Some(1));
    assert!(
        r.stderr.contains("reversed.json: order: task '") && r.stderr.contains("comes before its parent"),
        "{}",
        r.stderr
    );

    let p = write(dir.path(), "broken.json", "{\"tasks\": [}");
    let r = run(&["export", p.to_str().unwrap(), "--format", "csv"]);
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("broken.json: line 1, column 12"), "{}", r.stderr);
}
