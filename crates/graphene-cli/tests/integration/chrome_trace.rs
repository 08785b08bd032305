//! Chrome trace-event output (`export --format chrome`, `replay --trace-out`), checked by a few
//! lines of Python that hold it to what Perfetto's JSON importer needs (complete events with
//! numeric microsecond times on integer pid/tid, slices on one thread never overlapping,
//! process and thread names, numeric counters) and to the schedule it came from.

use crate::util::{repo, run, tempdir};

const CHECK: &str = r#"
import csv, json, sys
trace, kind, source = sys.argv[1], sys.argv[2], sys.argv[3]
t = json.load(open(trace))
ev = t["traceEvents"]
assert isinstance(ev, list) and ev
procs, threads, lanes = {}, set(), {}
for e in ev:
    ph = e["ph"]
    assert ph in ("X", "M", "C"), e
    assert isinstance(e["pid"], int)
    if ph == "M":
        if e["name"] == "process_name": procs[e["pid"]] = e["args"]["name"]
        if e["name"] == "thread_name": threads.add((e["pid"], e["tid"]))
    elif ph == "X":
        assert isinstance(e["tid"], int) and isinstance(e["name"], str)
        assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float)) and e["dur"] >= 0
        lanes.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    else:
        assert e["args"] and all(isinstance(v, (int, float)) for v in e["args"].values()), e
for (pid, tid), spans in lanes.items():
    assert pid in procs and (pid, tid) in threads, (pid, tid)
    spans.sort()
    for a, b in zip(spans, spans[1:]):
        assert a[1] <= b[0] + 1e-6, ("overlap", pid, tid, a, b)
xs = [e for e in ev if e["ph"] == "X"]
if kind == "replay":
    rows = list(csv.DictReader(open(source)))
    got = sorted((e["args"]["job"], e["args"]["task"], e["pid"] - 1, round(e["ts"]), round(e["ts"] + e["dur"])) for e in xs)
    want = sorted((r["job"], r["task"], int(r["machine"]), round(float(r["start"]) * 1e6), round(float(r["end"]) * 1e6)) for r in rows)
else:
    s = json.load(open(source))
    got = sorted((e["args"]["task"], e["pid"] - 1, round(e["ts"]), round(e["ts"] + e["dur"])) for e in xs)
    want = sorted((x["id"], x["machine"], round(x["start"] * 1e6), round(x["end"] * 1e6)) for x in s["tasks"])
assert got == want, (len(got), len(want))
running = max(e["args"]["running tasks"] for e in ev if e["ph"] == "C" and e["pid"] == 0)
print(len(xs), running)
"#;

fn check(trace: &std::path::Path, kind: &str, source: &std::path::Path) -> (usize, i64) {
    let out = std::process::Command::new("python3")
        .args(["-c", CHECK])
        .arg(trace)
        .arg(kind)
        .arg(source)
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut it = text.split_whitespace();
    (it.next().unwrap().parse().unwrap(), it.next().unwrap().parse().unwrap())
}

#[test]
fn a_schedule_exports_as_a_chrome_trace() {
    let dir = tempdir();
    let sched = dir.path().join("s.json");
    let dag = repo("traces/example.json");
    run(&["build-schedule".as_ref(), dag.as_os_str(), "-q".as_ref(), "--out".as_ref(), sched.as_os_str()]).ok();
    let export = |out: &std::path::Path| {
        run(&[
            "export".as_ref(),
            sched.as_os_str(),
            "--format".as_ref(),
            "chrome".as_ref(),
            "--dag".as_ref(),
            dag.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ])
        .ok();
    };
    let trace = dir.path().join("t.json");
    export(&trace);
    let tasks = serde_json::from_slice::<serde_json::Value>(&std::fs::read(&sched).unwrap()).unwrap()["tasks"]
        .as_array()
        .unwrap()
        .len();
    let (xs, running) = check(&trace, "schedule", &sched);
    assert_eq!(xs, tasks);
    assert!(running >= 1);
    // Same bytes on a second export.
    let again = dir.path().join("t2.json");
    export(&again);
    assert_eq!(std::fs::read(&trace).unwrap(), std::fs::read(&again).unwrap());
}

#[test]
fn a_replay_writes_its_chrome_trace() {
    let dir = tempdir();
    let out = dir.path().join("r");
    let trace = dir.path().join("replay.json");
    let src = repo("tests/data/spark/tpch-q3");
    run(&[
        "replay".as_ref(),
        src.as_os_str(),
        "--machines".as_ref(),
        "2".as_ref(),
        "--capacity".as_ref(),
        "cpu=4,mem=2".as_ref(),
        "--scheduler".as_ref(),
        "graphene".as_ref(),
        "-q".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
        "--trace-out".as_ref(),
        trace.as_os_str(),
    ])
    .ok();
    let rows = std::fs::read_to_string(out.join("schedule.csv")).unwrap().lines().count() - 1;
    let (xs, running) = check(&trace, "replay", &out.join("schedule.csv"));
    assert_eq!(xs, rows);
    // Two machines of 4 cores, one core a task: never more than 8 running.
    assert!((1..=8).contains(&running), "{running}");
}
