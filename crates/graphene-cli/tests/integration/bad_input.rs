//! Every class of bad input through the CLI, one test each: the run must fail with a non-zero
//! exit, must not panic, and must say where the problem is (the file, then the line and column
//! or the field), so that a user can fix the input without reading the code.

use std::path::Path;

use crate::util::{assert_no_panic, repo, run, tempdir, write, Run};

/// Runs `build-schedule` on a DAG with this text and returns the run and the file's name.
fn build_with(dag_text: &str) -> (Run, String) {
    let dir = tempdir();
    let name = "bad-input-dag.json";
    let path = write(dir.path(), name, dag_text);
    let r = run(&[Path::new("build-schedule"), &path, Path::new("--no-timing")]);
    (r, name.to_string())
}

/// Asserts a clean failure whose message names `file` and contains every one of `needles`.
fn assert_fails_naming(r: &Run, file: &str, needles: &[&str]) {
    assert_no_panic(r);
    assert_ne!(r.code, Some(0), "bad input was accepted; stdout:\n{}", String::from_utf8_lossy(&r.stdout));
    assert!(r.stdout.is_empty(), "a failed run prints no schedule");
    assert!(r.stderr.contains(file), "the message does not name the file {file}:\n{}", r.stderr);
    for n in needles {
        assert!(r.stderr.contains(n), "the message lacks '{n}':\n{}", r.stderr);
    }
}

#[test]
fn cycle_is_reported_with_the_stages_on_it() {
    // alpha -> beta -> gamma -> alpha, and delta off the cycle.
    let (r, file) = build_with(
        r#"{"stages": [
            {"id": "delta", "tasks": 1, "duration": 1},
            {"id": "alpha", "tasks": 1, "duration": 1, "parents": ["gamma", "delta"]},
            {"id": "beta",  "tasks": 1, "duration": 1, "parents": ["alpha"]},
            {"id": "gamma", "tasks": 1, "duration": 1, "parents": ["beta"]}]}"#,
    );
    assert_fails_naming(&r, &file, &["cycle", "alpha", "beta", "gamma"]);
    assert!(!r.stderr.contains("delta"), "delta is not on the cycle:\n{}", r.stderr);
    // The stages must be listed along the edges (parent before child), closing the loop.
    let line = r.stderr.lines().find(|l| l.contains("cycle")).unwrap();
    let path: Vec<&str> = line.rsplit(": ").next().unwrap().split(" -> ").map(str::trim).collect();
    assert_eq!(path.len(), 4, "{line}");
    assert_eq!(path.first(), path.last(), "the cycle closes: {line}");
    let edges = [("alpha", "beta"), ("beta", "gamma"), ("gamma", "alpha")];
    for w in path.windows(2) {
        assert!(edges.contains(&(w[0], w[1])), "{} -> {} is not an edge of the DAG: {line}", w[0], w[1]);
    }
}

#[test]
fn self_loop_is_a_cycle() {
    let (r, file) = build_with(r#"{"stages": [{"id": "loop", "tasks": 1, "duration": 1, "parents": ["loop"]}]}"#);
    assert_fails_naming(&r, &file, &["cycle", "loop"]);
}

#[test]
fn unknown_parent_stage_is_named() {
    let (r, file) = build_with(
        r#"{"stages": [{"id": "a", "tasks": 1, "duration": 1},
                       {"id": "b", "tasks": 1, "duration": 1, "parents": ["a", "nosuchstage"]}]}"#,
    );
    assert_fails_naming(&r, &file, &["'b'", "parents", "nosuchstage"]);
}

#[test]
fn duplicate_stage_id_is_named() {
    let (r, file) = build_with(
        r#"{"stages": [{"id": "twice", "tasks": 1, "duration": 1}, {"id": "twice", "tasks": 2, "duration": 3}]}"#,
    );
    assert_fails_naming(&r, &file, &["stages[1]", "duplicate", "twice"]);
}

#[test]
fn negative_duration_is_named_by_field() {
    let (r, file) = build_with(
        r#"{"stages": [{"id": "a", "tasks": 1, "duration": 1},
                       {"id": "b", "tasks": [{"duration": 2}, {"duration": -3}]}]}"#,
    );
    assert_fails_naming(&r, &file, &["stages[1]", "tasks[1]", "duration", "-3"]);
}

#[test]
fn nan_string_duration_is_a_positioned_type_error() {
    // serde_json reports the position just past the offending value: line 3, column 50.
    let (r, file) = build_with("{\"stages\": [\n  {\"id\": \"a\", \"tasks\": 1, \"duration\": 1},\n  {\"id\": \"b\", \"tasks\": 1, \"duration\": \"NaN\"}\n]}\n");
    assert_fails_naming(&r, &file, &["line 3", "column", "NaN"]);
}

#[test]
fn out_of_range_duration_is_a_positioned_error() {
    let (r, file) = build_with("{\"stages\": [\n  {\"id\": \"a\", \"tasks\": 1,\n   \"duration\": 1e999}]}\n");
    assert_fails_naming(&r, &file, &["line 3", "column", "out of range"]);
}

#[test]
fn negative_demand_is_named_by_field() {
    let (r, file) =
        build_with(r#"{"stages": [{"id": "a", "tasks": 1, "duration": 1, "demands": {"cpu": 1, "mem": -2}}]}"#);
    assert_fails_naming(&r, &file, &["demands.mem", "-2"]);
}

#[test]
fn task_that_fits_no_machine_is_named() {
    // Default machines have 16 cores.
    let (r, file) = build_with(
        r#"{"stages": [{"id": "ok", "tasks": 1, "duration": 1, "demands": {"cpu": 16}},
                       {"id": "huge", "tasks": 2, "duration": 1, "demands": {"cpu": 100}}]}"#,
    );
    assert_fails_naming(&r, &file, &["huge[0]", "cpu=100", "16"]);
}

#[test]
fn empty_dag_is_rejected() {
    let (r, file) = build_with(r#"{"stages": []}"#);
    assert_fails_naming(&r, &file, &["stages", "no tasks"]);
}

#[test]
fn malformed_json_reports_line_and_column() {
    // A missing comma before "tasks" on line 3; serde_json points at the unexpected quote,
    // column 14 (two spaces, `{"id": "b" ` is 11 characters, the quote is the 14th).
    let (r, file) = build_with(
        "{\"stages\": [\n  {\"id\": \"a\", \"tasks\": 1, \"duration\": 1},\n  {\"id\": \"b\" \"tasks\": 1}\n]}\n",
    );
    assert_fails_naming(&r, &file, &["line 3, column 14"]);
}

#[test]
fn unknown_resource_in_demands_is_named() {
    let (r, file) = build_with(r#"{"stages": [{"id": "a", "tasks": 1, "duration": 1, "demands": {"gpu": 1}}]}"#);
    assert_fails_naming(&r, &file, &["demands.gpu", "unknown resource"]);
}

#[test]
fn one_to_one_edge_between_unequal_stages_is_rejected() {
    let (r, file) = build_with(
        r#"{"stages": [{"id": "a", "tasks": 2, "duration": 1},
                       {"id": "b", "tasks": 3, "duration": 1, "parents": [{"stage": "a", "kind": "one-to-one"}]}]}"#,
    );
    assert_fails_naming(&r, &file, &["'b'", "one-to-one"]);
}

#[test]
fn malformed_cluster_file_reports_its_name_and_position() {
    let dir = tempdir();
    let cluster =
        write(dir.path(), "broken-cluster.json", "{\"machines\": [\n  {\"count\": 2, \"capacity\": {\"cpu\": }}]}\n");
    let r = run(&[Path::new("build-schedule"), &repo("traces/example.json"), Path::new("--cluster"), &cluster]);
    assert_fails_naming(&r, "broken-cluster.json", &["line 2", "column"]);
}

/// Values checked after the cluster file is read have no position to report: the message names
/// the field instead (and no "line 0").
#[test]
fn bad_cluster_values_are_named_by_field() {
    let dir = tempdir();
    for (text, field) in [
        (r#"{"machines": [{"capacity": {"cpu": 16}, "speed": 0}]}"#, "machines[0].speed: 0 is not a finite number > 0"),
        (
            r#"{"machines": [{"capacity": {"cpu": 16}}], "pair_bandwidth": [{"groups": [0, 1], "bandwidth": 2}]}"#,
            "pair_bandwidth[0].groups: group 1 does not exist",
        ),
    ] {
        let cluster = write(dir.path(), "bad-values-cluster.json", text);
        let r = run(&[Path::new("build-schedule"), &repo("traces/example.json"), Path::new("--cluster"), &cluster]);
        assert_fails_naming(&r, "bad-values-cluster.json", &[field]);
        assert!(!r.stderr.contains("line 0"), "{}", r.stderr);
    }
}

// ---- validate: schedules that do not match the DAG ----------------------------------------

/// A two-stage DAG on one 4-core machine: a[0], a[1] (4 long, 2 cores each), then b[0] (3 long,
/// 3 cores) after both.
const CHAIN: &str = r#"{"name": "chain", "resources": ["cpu"], "stages": [
    {"id": "a", "tasks": 2, "duration": 4, "demands": {"cpu": 2}},
    {"id": "b", "tasks": 1, "duration": 3, "demands": {"cpu": 3}, "parents": ["a"]}]}"#;

/// Runs `validate` of `schedule_tasks` (the JSON array of tasks) against CHAIN on `machines`
/// machines of `cpu` cores.
fn validate_chain_on(schedule_tasks: &str, machines: &str, cpu: &str) -> Run {
    let dir = tempdir();
    let dag = write(dir.path(), "chain.json", CHAIN);
    let sched = write(dir.path(), "chain-schedule.json", &format!("{{\"tasks\": {schedule_tasks}}}"));
    let capacity = format!("cpu={cpu}");
    run(&[
        Path::new("validate"),
        &dag,
        &sched,
        Path::new("--machines"),
        Path::new(machines),
        Path::new("--capacity"),
        Path::new(&capacity),
    ])
}

fn validate_chain(schedule_tasks: &str) -> Run {
    validate_chain_on(schedule_tasks, "1", "4")
}

const A0: &str = r#"{"id": "a[0]", "machine": 0, "start": 0, "end": 4}"#;
const A1: &str = r#"{"id": "a[1]", "machine": 0, "start": 0, "end": 4}"#;
const B0: &str = r#"{"id": "b[0]", "machine": 0, "start": 4, "end": 7}"#;

fn assert_invalid(r: &Run, needles: &[&str]) {
    assert_no_panic(r);
    assert_eq!(r.code, Some(1), "validate must exit 1 on an invalid schedule:\n{}", r.stderr);
    assert!(r.stderr.contains("chain-schedule.json"), "names the schedule file:\n{}", r.stderr);
    for n in needles {
        assert!(r.stderr.contains(n), "the report lacks '{n}':\n{}", r.stderr);
    }
}

#[test]
fn validate_accepts_the_correct_chain_schedule() {
    // The control for the tests below: the same files with a correct schedule pass.
    let r = validate_chain(&format!("[{A0}, {A1}, {B0}]"));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

#[test]
fn validate_reports_an_unknown_task_id() {
    let r = validate_chain(&format!(r#"[{A0}, {A1}, {B0}, {{"id": "zz[0]", "machine": 0, "start": 7, "end": 8}}]"#));
    assert_invalid(&r, &["zz[0]", "not in the DAG"]);
}

#[test]
fn validate_reports_a_missing_task() {
    let r = validate_chain(&format!("[{A0}, {A1}]"));
    assert_invalid(&r, &["b[0]", "not scheduled"]);
}

#[test]
fn validate_reports_a_task_overlapping_its_parent() {
    // b[0] on a second machine from time 3, while a[0] and a[1] run until 4: a dependency
    // violation and nothing else (no machine is over capacity).
    let r =
        validate_chain_on(&format!(r#"[{A0}, {A1}, {{"id": "b[0]", "machine": 1, "start": 3, "end": 6}}]"#), "2", "4");
    assert_invalid(&r, &["'b[0]' starts at 3 before its parent", "ends at 4", "1 violation"]);
    assert!(!r.stderr.contains("exceeds capacity"), "{}", r.stderr);
}

#[test]
fn validate_reports_a_capacity_overrun() {
    // Correct timing, but a[0] and a[1] together need 4 cores on a 3-core machine.
    let r = validate_chain_on(&format!("[{A0}, {A1}, {B0}]"), "1", "3");
    assert_invalid(&r, &["machine 0 at time 0", "cpu in use 4 exceeds capacity 3", "1 violation"]);
    assert!(!r.stderr.contains("before its parent"), "{}", r.stderr);
}

#[test]
fn validate_reports_a_too_short_task_and_a_missing_machine() {
    let r = validate_chain(&format!(
        r#"[{A0}, {{"id": "a[1]", "machine": 5, "start": 0, "end": 4}}, {{"id": "b[0]", "machine": 0, "start": 4, "end": 5}}]"#
    ));
    assert_invalid(&r, &["a[1]", "machine 5", "b[0]", "duration is 3"]);
}

// ---- output files ------------------------------------------------------------------------

#[test]
fn out_path_in_a_missing_directory_fails_cleanly() {
    let dir = tempdir();
    let out = dir.path().join("no-such-dir").join("schedule.json");
    let r =
        run(&[Path::new("build-schedule"), &repo("traces/example.json"), Path::new("--out"), &out, Path::new("-q")]);
    assert_fails_naming(&r, "no-such-dir", &[]);
    assert!(!out.exists());
    assert!(!dir.path().join("no-such-dir").exists(), "the directory is not created behind the user's back");
}

#[test]
fn failing_run_leaves_the_previous_output_intact() {
    let dir = tempdir();
    let previous = "previous contents\n";
    let out = write(dir.path(), "schedule.json", previous);
    let bad = write(
        dir.path(),
        "cyclic.json",
        r#"{"stages": [{"id": "x", "tasks": 1, "duration": 1, "parents": ["y"]},
                                                                {"id": "y", "tasks": 1, "duration": 1, "parents": ["x"]}]}"#,
    );
    let r = run(&[Path::new("build-schedule"), &bad, Path::new("--out"), &out]);
    assert_fails_naming(&r, "cyclic.json", &["cycle"]);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), previous);
    // No temporary file is left behind either.
    let mut names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, vec!["cyclic.json", "schedule.json"]);
}

#[test]
fn successful_run_replaces_the_output_whole() {
    // The control for the test above: with good input the same --out path is overwritten with a
    // complete schedule.
    let dir = tempdir();
    let out = write(dir.path(), "schedule.json", "previous contents\n");
    run(&[Path::new("build-schedule"), &repo("traces/example.json"), Path::new("--out"), &out, Path::new("-q")]).ok();
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["tasks"].as_array().unwrap().len(), 52);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file left behind");
}

// ---- closed standard output ----------------------------------------------------------------

/// Runs a command whose standard output is a pipe already closed at the reading end (as with
/// `graphene compare ... | head -0`): writes fail with EPIPE at once, deterministically.
fn run_with_closed_stdout(args: &[&str]) -> Run {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let out = std::process::Command::new(crate::util::BIN)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(writer)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("the binary starts");
    Run { code: out.status.code(), stdout: vec![], stderr: String::from_utf8_lossy(&out.stderr).into_owned() }
}

/// Whether to exit 0 or 1 when the reader went away is the program's choice; panicking (and
/// printing a backtrace prompt at the user) is not.
#[test]
fn closed_stdout_is_not_a_panic() {
    let ex = repo("traces/example.json").display().to_string();
    let mut failures = Vec::new();
    for args in [
        vec!["build-schedule", ex.as_str(), "-q"],
        vec!["lower-bound", ex.as_str()],
        vec!["lower-bound", ex.as_str(), "--json"],
        vec!["compare", ex.as_str()],
        vec!["compare", ex.as_str(), "--json"],
        vec!["compare", ex.as_str(), "--csv"],
    ] {
        let r = run_with_closed_stdout(&args);
        if r.stderr.contains("panicked") || r.code.is_none() {
            let first = r.stderr.lines().find(|l| l.contains("panicked")).unwrap_or_default();
            failures.push(format!("{args:?} (exit {:?}): {first}", r.code));
        }
    }
    assert!(failures.is_empty(), "panicked or killed on a closed stdout:\n{}", failures.join("\n"));
}
