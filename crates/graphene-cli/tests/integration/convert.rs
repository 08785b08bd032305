//! `graphene convert`: every format graphene reads, written as native JSON, schedules and bounds
//! exactly as the original; the output is a fixpoint; bad input leaves no file behind.

use crate::util::{p, refused, repo, run, tempdir};

/// Inputs of every reader with a fixture in the repository (and the flags they need).
fn inputs() -> Vec<(String, Vec<&'static str>)> {
    vec![
        (repo("traces/example.json").display().to_string(), vec![]),
        (repo("traces/motivating.json").display().to_string(), vec![]),
        (repo("tests/data/task-graphs/fork-join.stg").display().to_string(), vec![]),
        (repo("tests/data/task-graphs/fork-join.dot").display().to_string(), vec![]),
        (repo("tests/data/task-graphs/fork-join.dax").display().to_string(), vec![]),
        (repo("tests/data/wfcommons-1.4-example.json").display().to_string(), vec![]),
        (repo("tests/data/tpch-2g-q6.json").display().to_string(), vec![]),
        (repo("tests/data/spark/tpch-q3").display().to_string(), vec![]),
        (repo("tests/data/spark/tpch-q3.zstd").display().to_string(), vec!["--job", "0"]),
    ]
}

fn lower_bound(dag: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["lower-bound", dag, "--json"];
    args.extend(extra);
    run(&args).ok().json()
}

fn build(dag: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["build-schedule", dag, "-q", "--no-timing"];
    args.extend(extra);
    run(&args).ok().json()
}

#[test]
fn convert_keeps_lower_bounds_and_schedules() {
    let dir = tempdir();
    for (i, (input, flags)) in inputs().into_iter().enumerate() {
        let out = dir.path().join(format!("dag{i}.json"));
        let mut args = vec!["convert", input.as_str(), "--out"];
        let out_s = p(&out);
        args.push(&out_s);
        args.extend(&flags);
        let r = run(&args).ok();
        assert!(r.stdout.is_empty(), "{input}: --out writes nothing to stdout");
        let native: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        assert!(native["stages"].as_array().is_some_and(|s| !s.is_empty()), "{input}: stages");

        let (a, b) = (lower_bound(&input, &flags), lower_bound(&out_s, &[]));
        assert_eq!(a["lower_bounds"], b["lower_bounds"], "{input}: lower bounds");
        assert_eq!(a["tasks"], b["tasks"], "{input}: task count");
        assert_eq!(a["dag"], b["dag"], "{input}: the DAG's name is kept");
        let (sa, sb) = (build(&input, &flags), build(&out_s, &[]));
        assert_eq!(sa["lower_bounds"], sb["lower_bounds"], "{input}: build-schedule's lower bounds");
        assert_eq!(sa["makespan"], sb["makespan"], "{input}: the same schedule");
        assert_eq!(sa["tasks"], sb["tasks"], "{input}: task by task");

        // Native JSON converts to itself, byte for byte; standard output holds the same bytes.
        let again = dir.path().join(format!("again{i}.json"));
        run(&["convert", out_s.as_str(), "--out", p(&again).as_str()]).ok();
        assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&again).unwrap(), "{input}: fixpoint");
        let stdout = run(&["convert", out_s.as_str()]).ok().stdout;
        assert_eq!(stdout, std::fs::read(&out).unwrap(), "{input}: stdout");
    }
}

#[test]
fn convert_keeps_one_to_one_edges_and_task_lists() {
    let dir = tempdir();
    let dag = crate::util::write(
        dir.path(),
        "mixed.json",
        r#"{"name": "mixed", "stages": [
            {"id": "a", "tasks": [{"duration": 1, "demands": {"cpu": 1}}, {"duration": 3, "demands": {"cpu": 2}}]},
            {"id": "b", "tasks": 2, "duration": 2, "demands": {"mem": 1},
             "parents": [{"stage": "a", "kind": "one-to-one", "data": 1.5}]},
            {"id": "c", "tasks": 1, "duration": 1, "parents": ["a", "b"]}]}"#,
    );
    let out = dir.path().join("out.json");
    run(&["convert", p(&dag).as_str(), "--out", p(&out).as_str()]).ok();
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let stages = v["stages"].as_array().unwrap();
    assert_eq!(stages[0]["tasks"].as_array().unwrap().len(), 2);
    assert_eq!(stages[0]["tasks"][1]["duration"], 3.0);
    assert_eq!(stages[1]["tasks"], 2);
    assert_eq!(stages[1]["parents"][0]["kind"], "one-to-one");
    assert_eq!(stages[1]["parents"][0]["data"], 1.5);
    assert_eq!(stages[2]["parents"], serde_json::json!(["a", "b"]));
}

#[test]
fn convert_refuses_bad_input_and_writes_nothing() {
    let dir = tempdir();
    let out = dir.path().join("out.json");
    let bad = crate::util::write(dir.path(), "bad.json", r#"{"stages": [{"id": "a", "tasks": 1, "duration": -1}]}"#);
    let r = run(&["convert", p(&bad).as_str(), "--out", p(&out).as_str()]);
    refused(&r, "bad.json");
    assert!(!out.exists(), "no output on a refusal");
    let r = run(&["convert", p(&dir.path().join("missing.json")).as_str(), "--out", p(&out).as_str()]);
    refused(&r, "missing.json");
    assert!(!out.exists());
    // An existing output is replaced only by a whole new file.
    std::fs::write(&out, "keep").unwrap();
    let r = run(&["convert", p(&bad).as_str(), "--out", p(&out).as_str()]);
    refused(&r, "bad.json");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep");
}
