//! Spark event logs (`--format spark`): the committed fixtures were written by real Spark runs
//! (`scripts/spark-eventlogs`, commands in tests/data/README.md); what the reader makes of them
//! is checked against a few lines of Python that read the same JSON lines on their own, and the
//! compressed and rolling forms of one log must give the same DAGs as the plain one.

use std::path::{Path, PathBuf};

use graphene::formats::{self, LoadOptions};
use graphene::model::Dag;

use crate::util::{repo, run, tempdir};

const PLAIN: &str = "tests/data/spark/tpch-q3";
const ROLLING: &str = "tests/data/spark/eventlog_v2_tpch-q5-aqe";

fn dags(path: &Path) -> Vec<Dag> {
    formats::load_dags(path, &LoadOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Per job: sorted (stage, tasks, total duration in ms, parents that ran), computed from the log
/// by Python with no help from graphene: the successful attempt of each (stage, index), stages a
/// job lists that ran tasks, edges among those.
const ORACLE: &str = r#"
import json, sys
jobs, ran, best = {}, {}, {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    ev = e["Event"]
    if ev == "SparkListenerJobStart":
        jobs[e["Job ID"]] = {"stages": e["Stage Infos"], "ok": None}
    elif ev == "SparkListenerJobEnd":
        jobs[e["Job ID"]]["ok"] = e["Job Result"]["Result"] == "JobSucceeded"
    elif ev == "SparkListenerStageSubmitted":
        sid = e["Stage Info"]["Stage ID"]
        ran.setdefault(sid, min(j for j, v in jobs.items() if v["ok"] is None and any(s["Stage ID"] == sid for s in v["stages"])))
    elif ev == "SparkListenerTaskEnd" and e["Task End Reason"]["Reason"] == "Success":
        t = e["Task Info"]
        k = (e["Stage ID"], t["Index"])
        if k not in best or t["Finish Time"] < best[k][1]:
            best[k] = (t["Launch Time"], t["Finish Time"])
out = {}
for j, v in sorted(jobs.items()):
    if not v["ok"]:
        continue
    here = sorted({s["Stage ID"] for s in v["stages"] if ran.get(s["Stage ID"]) == j})
    rows = []
    for s in sorted({s["Stage ID"]: s for s in v["stages"]}.values(), key=lambda s: s["Stage ID"]):
        if s["Stage ID"] not in here:
            continue
        d = [f - l for (st, _), (l, f) in best.items() if st == s["Stage ID"]]
        rows.append([s["Stage ID"], len(d), sum(d), sorted(p for p in s["Parent IDs"] if p in here)])
    if rows:
        out[j] = rows
print(json.dumps(out))
"#;

fn oracle(plain: &Path) -> serde_json::Value {
    let out = std::process::Command::new("python3").arg("-c").arg(ORACLE).arg(plain).output().expect("python3 runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The same shape as the oracle's rows, from graphene's DAG.
fn summary(dag: &Dag) -> serde_json::Value {
    let id = |name: &str| name.strip_prefix("stage").unwrap().parse::<i64>().unwrap();
    let mut rows: Vec<(i64, serde_json::Value)> = dag
        .stages
        .iter()
        .map(|s| {
            let ms: f64 = s.tasks().map(|t| dag.tasks[t as usize].duration * 1000.0).sum();
            let mut parents: Vec<i64> = s.parents.iter().map(|p| id(&dag.stages[p.stage as usize].name)).collect();
            parents.sort();
            (id(&s.name), serde_json::json!([id(&s.name), s.len, ms.round() as i64, parents]))
        })
        .collect();
    rows.sort_by_key(|r| r.0);
    serde_json::Value::Array(rows.into_iter().map(|r| r.1).collect())
}

fn job_id(dag: &Dag) -> String {
    dag.name.rsplit_once("-job").unwrap().1.to_string()
}

#[test]
fn plain_log_holds_the_stages_tasks_and_durations_python_reads() {
    let plain = repo(PLAIN);
    let want = oracle(&plain);
    let got = dags(&plain);
    let want = want.as_object().unwrap();
    assert_eq!(got.len(), want.len(), "jobs: graphene {} python {}", got.len(), want.len());
    for dag in &got {
        assert_eq!(summary(dag), want[&job_id(dag)], "{}", dag.name);
    }
    // The query's join is a real DAG: some job has a stage with two parents.
    assert!(got.iter().any(|d| d.stages.iter().any(|s| s.parents.len() >= 2)));
    // Demands: one core per task; local[4] with spark.driver.memory 2g gives 0.5 GiB a task.
    let d = &got[0].tasks[0].demand;
    assert_eq!((d.0[0], d.0[1]), (1.0, 0.5));
}

fn same_dags(a: &[Dag], b: &[Dag]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x.name, y.name);
        assert_eq!(summary(x), summary(y), "{}", x.name);
        let tx: Vec<_> = x.tasks.iter().map(|t| (t.duration, t.demand.0)).collect();
        let ty: Vec<_> = y.tasks.iter().map(|t| (t.duration, t.demand.0)).collect();
        assert_eq!(tx, ty, "{}", x.name);
    }
}

#[test]
fn compressed_logs_give_the_plain_logs_dags() {
    let plain = dags(&repo(PLAIN));
    for codec in ["zstd", "lz4", "snappy"] {
        let path = repo(&format!("{PLAIN}.{codec}"));
        same_dags(&plain, &dags(&path));
    }
}

#[test]
fn a_rolling_log_split_in_parts_gives_the_same_dags() {
    let plain_path = repo(PLAIN);
    let text = std::fs::read_to_string(&plain_path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let dir = tempdir();
    let roll = dir.path().join("eventlog_v2_local-1");
    std::fs::create_dir(&roll).unwrap();
    std::fs::write(roll.join("appstatus_local-1"), "").unwrap();
    // Ten parts: in name order part 10 comes before part 2, in Spark's after part 9.
    let tenth = lines.len().div_ceil(10);
    for (i, chunk) in lines.chunks(tenth).enumerate() {
        std::fs::write(roll.join(format!("events_{}_local-1", i + 1)), chunk.join("\n") + "\n").unwrap();
    }
    assert!(roll.join("events_10_local-1").exists());
    same_dags(&dags(&plain_path), &dags(&roll));
}

#[test]
fn a_real_rolling_zstd_log_with_adaptive_execution_reads() {
    let path = repo(ROLLING);
    let got = dags(&path);
    // Adaptive execution runs the query as several jobs, some reusing earlier shuffles.
    assert!(got.len() >= 3, "{} jobs", got.len());
    let r = run(&[
        "replay".as_ref(),
        path.as_os_str(),
        "--machines".as_ref(),
        "1".as_ref(),
        "--capacity".as_ref(),
        "cpu=4,mem=2".as_ref(),
        "--out".as_ref(),
        tempdir().path().join("r").as_os_str(),
    ]);
    let err = r.ok().stderr;
    assert!(err.contains("jobs read") && err.contains("skipped stages"), "{err}");
}

#[test]
fn replay_takes_the_jobs_at_their_submission_times() {
    let dir = tempdir();
    let out = dir.path().join("r");
    let plain = repo(PLAIN);
    run(&[
        "replay".as_ref(),
        plain.as_os_str(),
        "--machines".as_ref(),
        "2".as_ref(),
        "--capacity".as_ref(),
        "cpu=4,mem=2".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
    ])
    .ok();
    let jobs = std::fs::read_to_string(out.join("jobs.csv")).unwrap();
    // Submission times from the log, by Python: (JobStart Submission Time - ApplicationStart) / 1000.
    let py = r#"
import json, sys
start, subs = None, []
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["Event"] == "SparkListenerApplicationStart": start = e["Timestamp"]
    if e["Event"] == "SparkListenerJobStart": subs.append((e["Job ID"], (e["Submission Time"] - start) / 1000))
print(json.dumps(subs))
"#;
    let o = std::process::Command::new("python3").arg("-c").arg(py).arg(&plain).output().unwrap();
    let subs: Vec<(i64, f64)> = serde_json::from_slice(&o.stdout).unwrap();
    let rows: Vec<Vec<String>> = jobs.lines().skip(1).map(|l| l.split(',').map(String::from).collect()).collect();
    assert_eq!(rows.len(), subs.len());
    for (job, arrival) in subs {
        let row = rows.iter().find(|r| r[0] == format!("job{job}")).unwrap();
        assert!((row[2].parse::<f64>().unwrap() - arrival).abs() < 1e-9, "{row:?} vs {arrival}");
    }
}

fn broken(name: &str, edit: impl FnOnce(Vec<String>) -> Vec<String>) -> (tempfile::TempDir, PathBuf) {
    let text = std::fs::read_to_string(repo(PLAIN)).unwrap();
    let lines = edit(text.lines().map(String::from).collect());
    let dir = tempdir();
    let p = dir.path().join(name);
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    (dir, p)
}

fn fails(path: &Path, want: &[&str]) {
    let r = run(&["build-schedule".as_ref(), path.as_os_str(), "--format".as_ref(), "spark".as_ref()]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let err = r.stderr;
    assert!(err.contains(&path.display().to_string()), "{err}");
    for w in want {
        assert!(err.contains(w), "missing '{w}' in: {err}");
    }
}

fn line_of(lines: &[String], event: &str) -> usize {
    lines.iter().position(|l| l.contains(&format!("\"Event\":\"{event}\""))).unwrap()
}

#[test]
fn malformed_logs_are_clear_errors_naming_file_line_and_field() {
    // A line cut short (not an in-progress log): the line and that it is truncated.
    let (_d, p) = broken("cut", |mut l| {
        let i = line_of(&l, "SparkListenerTaskEnd");
        let half = l[i].len() / 2;
        l[i].truncate(half);
        l
    });
    let i = line_of(
        &std::fs::read_to_string(repo(PLAIN)).unwrap().lines().map(String::from).collect::<Vec<_>>(),
        "SparkListenerTaskEnd",
    );
    fails(&p, &[&format!("line {}", i + 1), "cut short"]);

    // An event no Spark writes.
    let (_d, p) = broken("unknown", |mut l| {
        l.insert(3, r#"{"Event":"NoSuchEvent","x":1}"#.into());
        l
    });
    fails(&p, &["line 4", "Event", "unknown event 'NoSuchEvent'"]);

    // A stage whose parent never appears.
    let (_d, p) = broken("parent", |mut l| {
        let i = line_of(&l, "SparkListenerJobStart");
        let mut e: serde_json::Value = serde_json::from_str(&l[i]).unwrap();
        e["Stage Infos"][0]["Parent IDs"] = serde_json::json!([999]);
        l[i] = e.to_string();
        l
    });
    fails(&p, &["Parent IDs", "stage 999 never appears"]);

    // The same task id ending twice.
    let (_d, p) = broken("dup", |mut l| {
        let i = line_of(&l, "SparkListenerTaskEnd");
        let dup = l[i].clone();
        l.insert(i + 1, dup);
        l
    });
    fails(
        &p,
        &[
            &format!(
                "line {}",
                line_of(
                    &std::fs::read_to_string(repo(PLAIN)).unwrap().lines().map(String::from).collect::<Vec<_>>(),
                    "SparkListenerTaskEnd"
                ) + 2
            ),
            "Task ID",
            "duplicate task id",
        ],
    );

    // A failed job asked for by id: said so, not mangled.
    let (_d, p) = broken("failed", |l| {
        l.into_iter().map(|x| x.replace("\"Result\":\"JobSucceeded\"", "\"Result\":\"JobFailed\"")).collect()
    });
    fails(&p, &["no job that succeeded", "failed jobs left out"]);
}

fn args(a: &[&str]) -> Vec<std::ffi::OsString> {
    a.iter().map(Into::into).collect()
}

#[test]
fn an_in_progress_logs_cut_last_line_is_dropped_with_a_note_by_every_command() {
    let text = std::fs::read_to_string(repo(PLAIN)).unwrap();
    let lines = text.lines().count();
    let dir = tempdir();
    let p = dir.path().join("local-1.inprogress");
    let cut = &text[..text.trim_end().len() - 10];
    std::fs::write(&p, cut).unwrap();
    let app = graphene::formats::spark::read(&p).unwrap();
    assert!(app.report.partial_line_dropped);
    assert!(app.report.to_string().contains("cut-short last line"));
    // Known by its name (--format spark) or by its content, by a DAG command, a replay or a
    // trace of its DAGs: the same job, and the same note naming the file.
    let log = p.to_str().unwrap();
    let note = format!("{log}: 1 jobs read; the cut-short last line of the in-progress log dropped");
    let (out, trace) = (dir.path().join("out"), dir.path().join("trace.csv"));
    let (out, trace, plain) = (out.to_str().unwrap(), trace.to_str().unwrap(), repo(PLAIN));
    let cluster = ["--machines", "1", "--capacity", "cpu=4,mem=2"];
    let runs: Vec<Vec<&str>> = vec![
        vec!["lower-bound", log],
        vec!["lower-bound", log, "--format", "spark"],
        vec!["build-schedule", log, "-q", "--no-timing"],
        vec!["replay", log, "-q", "--out", out],
        vec!["gen-trace", "--dags", log, "--jobs", "2", "--out", trace],
        vec!["gen-trace", "--dags", plain.to_str().unwrap(), "--trace-dags", log, "--jobs", "2", "--out", trace],
    ];
    for a in runs {
        let mut a = a;
        if a[0] != "gen-trace" {
            a.extend(cluster);
        }
        let r = run(&args(&a));
        assert_eq!(r.code, Some(0), "{a:?}: {}", r.stderr);
        assert!(r.stderr.contains(&note), "{a:?}: {}", r.stderr);
    }
    let r = run(&args(&["lower-bound", log, "--machines", "1", "--capacity", "cpu=4,mem=2"])).ok();
    assert!(r.stdout_str().contains("critical_path 3.050000"), "{}", r.stdout_str());

    // Not in progress: the cut line is an error, naming the file's path (not its stem), by
    // content or by --format.
    let done = dir.path().join("local-1");
    std::fs::write(&done, cut).unwrap();
    for extra in [&[][..], &["--format", "spark"][..]] {
        let mut a = vec!["lower-bound", done.to_str().unwrap()];
        a.extend(extra);
        let r = run(&args(&a));
        assert_eq!(r.code, Some(1), "{}", r.stderr);
        let want = format!("error: {}: line {lines}, column ", done.display());
        assert!(r.stderr.starts_with(&want) && r.stderr.contains("the line is cut short"), "{}", r.stderr);
    }
}

/// A rolling log's directory: `appstatus_<status>` (none when empty) and parts (name, text).
fn rolling(status: &str, parts: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempdir();
    let roll = dir.path().join("eventlog_v2_local-1");
    std::fs::create_dir(&roll).unwrap();
    if !status.is_empty() {
        std::fs::write(roll.join(format!("appstatus_{status}")), "").unwrap();
    }
    for (name, text) in parts {
        std::fs::write(roll.join(name), text).unwrap();
    }
    (dir, roll)
}

fn refused(path: &Path, want: &str) {
    let r = run(&args(&["lower-bound", path.to_str().unwrap(), "--machines", "1", "--capacity", "cpu=4,mem=2"]));
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains(want), "missing '{want}' in: {}", r.stderr);
}

#[test]
fn a_rolling_log_reads_only_its_own_applications_parts_all_of_them() {
    let text = std::fs::read_to_string(repo(PLAIN)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let half = lines.len() / 2;
    let (a, b) = (lines[..half].join("\n") + "\n", lines[half..].join("\n") + "\n");

    // Another application's part beside this one's: refused, naming it and the application
    // the status file names (Spark writes only its own application's parts here).
    let (_d, roll) =
        rolling("local-1", &[("events_1_local-1", &a), ("events_2_local-1", &b), ("events_3_other-7", &b)]);
    refused(
        &roll,
        &format!(
            "{}: a part of application 'other-7', but this directory's log is application 'local-1' (by \
             appstatus_local-1)",
            roll.join("events_3_other-7").display()
        ),
    );
    // Without a status file the parts must agree among themselves.
    let (_d, roll) = rolling("", &[("events_1_local-1", &a), ("events_2_other-7", &b)]);
    refused(
        &roll,
        "a part of application 'other-7', but this directory's log is application 'local-1' (by events_1_local-1)",
    );
    // A part missing between two others.
    let (_d, roll) = rolling("local-1", &[("events_1_local-1", &a), ("events_3_local-1", &b)]);
    refused(
        &roll,
        &format!(
            "{}: part 2 is missing between events_1_local-1 and events_3_local-1: the log is incomplete",
            roll.display()
        ),
    );
    // Its own parts, with an attempt id and a codec named, read as one log.
    let (_d, roll) = rolling("local-1_1", &[("events_1_local-1_1", &a), ("events_2_local-1_1", &b)]);
    same_dags(&dags(&repo(PLAIN)), &dags(&roll));

    // A running application (appstatus_...inprogress): its last part may end in a cut line.
    let cut = &b[..b.trim_end().len() - 10];
    let (_d, roll) = rolling("local-1.inprogress", &[("events_1_local-1", &a), ("events_2_local-1", cut)]);
    let r = run(&args(&["lower-bound", roll.to_str().unwrap(), "--machines", "1", "--capacity", "cpu=4,mem=2"])).ok();
    assert!(r.stderr.contains("the cut-short last line of the in-progress log dropped"), "{}", r.stderr);
    // ... but only the last part, and only while it runs.
    let (_d, roll) = rolling("local-1", &[("events_1_local-1", &a), ("events_2_local-1", cut)]);
    refused(&roll, "the line is cut short");
}

#[test]
fn a_named_pipe_among_a_rolling_logs_parts_is_refused_without_opening_it() {
    let text = std::fs::read_to_string(repo(PLAIN)).unwrap();
    let (_d, roll) = rolling("local-1", &[("events_1_local-1", &text)]);
    let fifo = roll.join("events_2_local-1");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
    assert!(made.success());
    // Should the reader open the pipe it would wait for a writer forever: this one comes after
    // a while and writes nothing, so that such a reader ends (and the test fails) instead.
    let guard = fifo.clone();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(10));
        let _ = std::fs::OpenOptions::new().write(true).open(guard);
    });
    refused(
        &roll,
        &format!(
            "{}: not a regular file (a named pipe, socket, device or directory): a rolling log's parts are files",
            fifo.display()
        ),
    );
}

/// A small log: an application started at 1000 ms on a 4-core executor, job 0 of stages 0 and
/// 1 (1 after 0), one 10 ms task each. `edit` changes its text.
fn mini(edit: impl FnOnce(String) -> String) -> (tempfile::TempDir, PathBuf) {
    let text = r#"{"Event":"SparkListenerLogStart","Spark Version":"3.5.0"}
{"Event":"SparkListenerApplicationStart","App Name":"mini","App ID":"local-1","Timestamp":1000}
{"Event":"SparkListenerExecutorAdded","Executor Info":{"Total Cores":4}}
{"Event":"SparkListenerJobStart","Job ID":0,"Submission Time":2000,"Stage Infos":[{"Stage ID":0,"Number of Tasks":1,"Parent IDs":[]},{"Stage ID":1,"Number of Tasks":1,"Parent IDs":[0]}]}
{"Event":"SparkListenerStageSubmitted","Stage Info":{"Stage ID":0,"Number of Tasks":1}}
{"Event":"SparkListenerTaskEnd","Stage ID":0,"Task End Reason":{"Reason":"Success"},"Task Info":{"Task ID":0,"Index":0,"Launch Time":2000,"Finish Time":2010}}
{"Event":"SparkListenerStageSubmitted","Stage Info":{"Stage ID":1,"Number of Tasks":1}}
{"Event":"SparkListenerTaskEnd","Stage ID":1,"Task End Reason":{"Reason":"Success"},"Task Info":{"Task ID":1,"Index":0,"Launch Time":2010,"Finish Time":2020}}
{"Event":"SparkListenerJobEnd","Job ID":0,"Job Result":{"Result":"JobSucceeded"}}
"#;
    let dir = tempdir();
    let p = dir.path().join("local-1");
    std::fs::write(&p, edit(text.to_string())).unwrap();
    (dir, p)
}

fn file(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn the_small_log_reads() {
    let (_d, p) = mini(|t| t);
    let r = run(&args(&["lower-bound", p.to_str().unwrap(), "--machines", "1", "--capacity", "cpu=4,mem=2"])).ok();
    assert!(r.stdout_str().contains("critical_path 0.020000"), "{}", r.stdout_str());
}

#[test]
fn a_stage_listed_twice_with_other_parents_or_tasks_is_refused_naming_both() {
    // A stage listed twice with other parents: by the same job, and by a later one.
    let (_d, p) = mini(|t| {
        t.replace(
            r#"{"Stage ID":1,"Number of Tasks":1,"Parent IDs":[0]}]"#,
            r#"{"Stage ID":1,"Number of Tasks":1,"Parent IDs":[0]},{"Stage ID":1,"Number of Tasks":1,"Parent IDs":[]}]"#,
        )
    });
    fails(
        &p,
        &[&format!(
            "{}: line 4: Stage Infos: stage 1 Parent IDs: [] here, but [0] where job 0 listed it first (at {}:4)",
            file(&p),
            file(&p)
        )],
    );
    let (_d, p) = mini(|t| {
        t + r#"{"Event":"SparkListenerJobStart","Job ID":1,"Submission Time":3000,"Stage Infos":[{"Stage ID":1,"Number of Tasks":1,"Parent IDs":[7]},{"Stage ID":2,"Number of Tasks":1,"Parent IDs":[1]}]}
"#
    });
    fails(
        &p,
        &[&format!(
            "{}: line 10: Stage Infos: stage 1 Parent IDs: [7] here, but [0] where job 0 listed it first (at {}:4)",
            file(&p),
            file(&p)
        )],
    );
    // ... or with another task count.
    let (_d, p) = mini(|t| {
        t + r#"{"Event":"SparkListenerJobStart","Job ID":1,"Submission Time":3000,"Stage Infos":[{"Stage ID":0,"Number of Tasks":8,"Parent IDs":[]}]}
"#
    });
    fails(&p, &["line 10: Stage Infos: stage 0 Number of Tasks: 8 here, but 1 where job 0 listed it first"]);
}

#[test]
fn a_job_submitted_before_the_application_started_is_refused_not_moved() {
    // A job submitted before the application started: refused, not moved to time 0.
    let (_d, p) = mini(|t| t.replace(r#""Submission Time":2000"#, r#""Submission Time":500"#));
    fails(
        &p,
        &[&format!(
            "job 0 (line {}:4) Submission Time: 500 is before the application started, Timestamp 1000 (at {}:2)",
            file(&p),
            file(&p)
        )],
    );
}

#[test]
fn times_out_of_range_are_refused_with_line_and_field() {
    let (_d, p) = mini(|t| t.replace(r#""Timestamp":1000"#, &format!(r#""Timestamp":{}"#, i64::MIN)));
    fails(&p, &["line 2: Timestamp: -9223372036854775808 is not a time (milliseconds since 1970, at least 0)"]);
    let (_d, p) = mini(|t| t.replace(r#""Submission Time":2000"#, &format!(r#""Submission Time":{}"#, i64::MIN)));
    fails(&p, &["line 4: Submission Time: -9223372036854775808 is not a time"]);
    let (_d, p) = mini(|t| t.replace(r#""Submission Time":2000"#, &format!(r#""Submission Time":{}"#, i64::MAX)));
    fails(
        &p,
        &[&format!(
            "job 0 (line {}:4) Submission Time: arrival 9.223372036854774e15 is above the largest accepted, 1e12 s",
            file(&p)
        )],
    );
}

#[test]
fn cores_and_cpus_that_are_not_positive_are_refused_with_line_and_field() {
    let (_d, p) = mini(|t| t.replace(r#""Total Cores":4"#, r#""Total Cores":-4"#));
    fails(&p, &["line 3: Executor Info.Total Cores: -4 is not a positive number"]);
    let (_d, p) = mini(|t| {
        t.replace(
            r#"{"Event":"SparkListenerExecutorAdded","Executor Info":{"Total Cores":4}}"#,
            r#"{"Event":"SparkListenerResourceProfileAdded","Resource Profile Id":0,"Executor Resource Requests":{"cores":{"Amount":-2}}}"#,
        )
    });
    fails(&p, &["line 3: Executor Resource Requests.cores.Amount: -2 is not a positive number"]);
    let (_d, p) = mini(|t| {
        t.replace(
            r#"{"Event":"SparkListenerExecutorAdded","Executor Info":{"Total Cores":4}}"#,
            r#"{"Event":"SparkListenerEnvironmentUpdate","Spark Properties":{"spark.executor.cores":"-2"}}"#,
        )
    });
    fails(
        &p,
        &[&format!("{}: line 3: Spark Properties.spark.executor.cores: '-2' is not a positive number", file(&p))],
    );
}

#[test]
fn job_ids_below_0_or_beyond_i64_are_refused_not_wrapped() {
    // None below 0 in a log, and none beyond an i64 asked for (no wrapping to -1).
    let (_d, p) = mini(|t| t.replace(r#""Job ID":0"#, r#""Job ID":-1"#));
    fails(&p, &["line 4: Job ID: -1 is not a job id (Spark numbers jobs from 0)"]);
    let (_d, p) = mini(|t| t);
    let r = run(&args(&[
        "lower-bound",
        p.to_str().unwrap(),
        "--job",
        "18446744073709551615",
        "--machines",
        "1",
        "--capacity",
        "cpu=4,mem=2",
    ]));
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "{}: the log has no Spark job 18446744073709551615 (job ids are 0 to 9223372036854775807)",
            file(&p)
        )),
        "{}",
        r.stderr
    );
}

#[test]
fn a_corrupt_byte_in_a_compressed_log_is_refused_by_its_checksum() {
    // One digit of a task's time in block 8 of Spark's lz4 stream, changed: the block still
    // decompresses (to other times: a total work of 3.264 s instead of 3.314 s), and only
    // lz4-java's block checksum tells.
    let mut raw = std::fs::read(repo(&format!("{PLAIN}.lz4"))).unwrap();
    let at = 57496;
    assert!(raw[at].is_ascii_digit());
    raw[at] = b'0' + (raw[at] - b'0' + 1) % 10;
    let dir = tempdir();
    let p = dir.path().join("local-1.lz4");
    std::fs::write(&p, &raw).unwrap();
    let r = run(&[
        "lower-bound".as_ref(),
        p.as_os_str(),
        "--machines".as_ref(),
        "1".as_ref(),
        "--capacity".as_ref(),
        "cpu=4,mem=2".as_ref(),
    ]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stdout.is_empty());
    let want = format!(
        "{}: lz4 block 8 at byte 57213: checksum mismatch (the block's bytes hash to 0x5c831e9, its header says \
         0xc1873c6): the file is corrupt",
        p.display()
    );
    assert!(r.stderr.contains(&want), "{}", r.stderr);
}

#[test]
fn jobs_and_the_tasks_they_make_count_against_the_limits() {
    // Five jobs that each list stage 0 and submit it again (a later job re-runs a stage whose
    // output was lost): the stage's 10 tasks are in each job's DAG, 50 in all.
    let (_d, p) = mini(|_| {
        let mut t = String::from(
            r#"{"Event":"SparkListenerApplicationStart","App Name":"again","Timestamp":1000}
"#,
        );
        for j in 0..5 {
            t += &format!(
                r#"{{"Event":"SparkListenerJobStart","Job ID":{j},"Submission Time":2000,"Stage Infos":[{{"Stage ID":0,"Number of Tasks":10}}]}}
{{"Event":"SparkListenerStageSubmitted","Stage Info":{{"Stage ID":0,"Stage Attempt ID":{j},"Number of Tasks":10}}}}
"#
            );
            for i in 0..2 {
                let id = 2 * j + i;
                t += &format!(
                    r#"{{"Event":"SparkListenerTaskEnd","Stage ID":0,"Task End Reason":{{"Reason":"Success"}},"Task Info":{{"Task ID":{id},"Index":{id},"Launch Time":2000,"Finish Time":2010}}}}
"#
                );
            }
            t += &format!(
                r#"{{"Event":"SparkListenerJobEnd","Job ID":{j},"Job Result":{{"Result":"JobSucceeded"}}}}
"#
            );
        }
        t
    });
    let log = p.to_str().unwrap();
    let lb = |limit: &[&str]| {
        let mut a = vec!["lower-bound", log, "--job", "4", "--machines", "1", "--capacity", "cpu=4,mem=2"];
        a.extend(limit);
        run(&args(&a))
    };
    let r = lb(&[]).ok();
    assert!(r.stdout_str().starts_with("again-job4: 10 tasks"), "{}", r.stdout_str());
    let r = lb(&["--limit-tasks", "49"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "error: {log}: tasks of the log's jobs (a stage run by several jobs counts in each): 50 exceeds the \
             limit of 49 (raise it with --limit-tasks)"
        )),
        "{}",
        r.stderr
    );
    let r = lb(&["--limit-jobs", "4"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "error: {log}: line 22: jobs in the log: 5 exceeds the limit of 4 (raise it with --limit-jobs)"
        )),
        "{}",
        r.stderr
    );
}
