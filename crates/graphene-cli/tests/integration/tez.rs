//! Tez history (`--format tez`): the committed fixtures are real Tez 0.10.5 history files
//! (tests/data/tez/README.md); the reader's own tests compare them with their raw records. Here:
//! the commands that read DAGs, auto-detection, `--dag`, and `export --from-history`.

use graphene::formats::{self, LoadOptions};
use graphene::model::Dag;

use crate::util::{repo, run, tempdir};

const DIR: &str = "tests/data/tez/history";

/// The second session's file (etl-q2 alone), whatever its application attempt id.
fn second() -> std::path::PathBuf {
    let mut files: Vec<_> = std::fs::read_dir(repo(DIR)).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files.pop().unwrap()
}
/// `graphene-tez-signature/1` of Map 1, Map 2 -> Reducer 3 (the shared test vector).
const ETL: &str = "101843599e02475317b784fba8058a85d1a0d208acb6f7262098ece585f2be7d";

fn dag(name: &str) -> Dag {
    let opts = LoadOptions { dag: Some(name.into()), ..LoadOptions::default() };
    formats::load_dag(&repo(DIR), &opts).unwrap()
}

fn max_ms(d: &Dag, stage: &str) -> f64 {
    let s = &d.stages[d.stage_by_name(stage).unwrap() as usize];
    s.tasks().map(|t| d.tasks[t as usize].duration).fold(0.0, f64::max)
}

#[test]
fn build_schedule_reads_history_detected_or_named_and_the_schedule_validates() {
    let dir = repo(DIR);
    let detected = run(&["build-schedule", dir.to_str().unwrap(), "--dag", "diamond", "--no-timing", "-q"]).ok();
    let named =
        run(&["build-schedule", "--format", "tez", dir.to_str().unwrap(), "--dag", "diamond", "--no-timing", "-q"])
            .ok();
    assert_eq!(detected.stdout, named.stdout);
    assert!(detected.stderr.contains("3 DAGs read; 1 failed DAGs left out (first: doomed)"), "{}", detected.stderr);
    assert!(detected.stderr.contains("3 failed task attempts not counted; 1 killed task attempts not counted"));
    let v = detected.json();
    assert_eq!(v["dag"], "diamond");
    assert_eq!(v["tasks"].as_array().unwrap().len(), 6);
    // diamond: A -> B (one-to-one), A -> C, then D: the makespan is at least the longest chain.
    let d = dag("diamond");
    let chain = max_ms(&d, "A") + max_ms(&d, "B").max(max_ms(&d, "C")) + max_ms(&d, "D");
    assert!(v["makespan"].as_f64().unwrap() + 1e-9 >= v["lower_bounds"]["critical_path"].as_f64().unwrap());
    assert!(v["lower_bounds"]["critical_path"].as_f64().unwrap() <= chain + 1e-9);

    // The one-DAG file: no --dag needed; `validate` (the independent validator) accepts it.
    let tmp = tempdir();
    let out = tmp.path().join("s.json");
    run(&["build-schedule", &second().to_string_lossy(), "-q", "--out", out.to_str().unwrap()]).ok();
    let ok = run(&["validate", &second().to_string_lossy(), out.to_str().unwrap()]).ok();
    assert!(ok.stdout_str().contains("valid"), "{}", ok.stdout_str());
}

#[test]
fn lower_bound_of_a_picked_dag() {
    let dir = repo(DIR);
    let v = run(&["lower-bound", dir.to_str().unwrap(), "--dag", "etl-q1", "--json"]).ok().json();
    let d = dag("etl-q1");
    let cp = max_ms(&d, "Map 1").max(max_ms(&d, "Map 2")) + max_ms(&d, "Reducer 3");
    assert!((v["lower_bounds"]["critical_path"].as_f64().unwrap() - cp).abs() < 1e-9, "{v}");
    // By number (counting the failed DAG) and by Tez DAG id.
    let by_n = run(&["lower-bound", dir.to_str().unwrap(), "--dag", "1", "--json"]).ok().json();
    let id = formats::tez::read(&dir).unwrap().runs[0].id.clone();
    assert!(id.starts_with("dag_") && id.ends_with("_1"), "{id}");
    let by_id = run(&["lower-bound", dir.to_str().unwrap(), "--dag", &id, "--json"]).ok().json();
    assert_eq!(by_n, v);
    assert_eq!(by_id, v);
}

#[test]
fn dag_selection_errors_say_why() {
    let dir = repo(DIR);
    let several = run(&["lower-bound", dir.to_str().unwrap()]);
    assert_eq!(several.code, Some(1));
    assert!(
        several.stderr.contains("holds 3 DAGs (etl-q1, diamond, etl-q2); pick one with --dag"),
        "{}",
        several.stderr
    );
    let failed = run(&["lower-bound", dir.to_str().unwrap(), "--dag", "doomed"]);
    assert_eq!(failed.code, Some(1));
    assert!(failed.stderr.contains("is left out: it ended FAILED"), "{}", failed.stderr);
    let missing = run(&["lower-bound", dir.to_str().unwrap(), "--dag", "nothing"]);
    assert_eq!(missing.code, Some(1));
    assert!(missing.stderr.contains("no such DAG in the history"), "{}", missing.stderr);
}

#[test]
fn export_from_history_writes_one_file_per_signature() {
    let tmp = tempdir();
    let out = tmp.path().join("exports");
    let dir = repo(DIR);
    let r = run(&[
        "export",
        "--format",
        "tez",
        "--from-history",
        dir.to_str().unwrap(),
        "--out-dir",
        out.to_str().unwrap(),
    ])
    .ok();
    assert!(r.stderr.contains("etl-q2 (2 runs, median task duration per vertex)"), "{}", r.stderr);
    assert!(r.stderr.contains("diamond (1 run)"), "{}", r.stderr);
    let mut names: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.contains(&format!("{ETL}.json")));
    for n in &names {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join(n)).unwrap()).unwrap();
        assert_eq!(v["format"], "graphene-tez/2");
        assert_eq!(format!("{}.json", v["signature"].as_str().unwrap()), *n);
        let d = dag(v["dag"].as_str().unwrap());
        assert_eq!(v["tasks"].as_array().unwrap().len(), d.len());
        // Every vertex comes before its children.
        let pri: std::collections::HashMap<&str, u64> = v["vertices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| (x["name"].as_str().unwrap(), x["priority"].as_u64().unwrap()))
            .collect();
        for s in &d.stages {
            for p in &s.parents {
                assert!(pri[d.stages[p.stage as usize].name.as_str()] < pri[s.name.as_str()], "{n}: {}", s.name);
            }
        }
    }
    // The etl shape: the latest run's parallelism (etl-q2: 2, 1, 3).
    let etl: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join(format!("{ETL}.json"))).unwrap()).unwrap();
    assert_eq!(etl["dag"], "etl-q2");
    let tasks: Vec<(String, u64)> = etl["vertices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["name"].as_str().unwrap().to_string(), x["tasks"].as_u64().unwrap()))
        .collect();
    let mut sorted = tasks.clone();
    sorted.sort();
    assert_eq!(sorted, [("Map 1".to_string(), 2), ("Map 2".to_string(), 1), ("Reducer 3".to_string(), 3)]);
    // Again: the same bytes (files replaced in place).
    let before = std::fs::read(out.join(format!("{ETL}.json"))).unwrap();
    run(&["export", "--format", "tez", "--from-history", dir.to_str().unwrap(), "--out-dir", out.to_str().unwrap()])
        .ok();
    assert_eq!(std::fs::read(out.join(format!("{ETL}.json"))).unwrap(), before);

    // Only tez; not with a schedule file.
    let yarn = run(&[
        "export",
        "--format",
        "yarn",
        "--from-history",
        dir.to_str().unwrap(),
        "--out-dir",
        out.to_str().unwrap(),
    ]);
    assert_eq!(yarn.code, Some(1));
    assert!(yarn.stderr.contains("use --format tez"), "{}", yarn.stderr);
    let both = run(&["export", "--format", "tez", "s.json", "--from-history", dir.to_str().unwrap(), "--out-dir", "x"]);
    assert_eq!(both.code, Some(2), "{}", both.stderr);
}

#[test]
fn export_refuses_a_vertex_name_with_a_tab() {
    let tmp = tempdir();
    let text = std::fs::read_to_string(second()).unwrap().replace("Map 2", "Map\\t2");
    let hist = tmp.path().join("history.txt.appattempt_1_0001_000000");
    std::fs::write(&hist, text).unwrap();
    let out = tmp.path().join("exports");
    let r = run(&[
        "export",
        "--format",
        "tez",
        "--from-history",
        hist.to_str().unwrap(),
        "--out-dir",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("has no graphene-tez-signature/1: a vertex name holds a tab"), "{}", r.stderr);
    assert!(!out.join(format!("{ETL}.json")).exists());
}
