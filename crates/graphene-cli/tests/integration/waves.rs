//! `replay --waves`: wave- and parallelism-dependent durations (`graphene::sim::waves`). Exact
//! JCTs on a tiny sidecar whose lists hold one sample each (so every realized duration is forced
//! by the category rules and the moving delay), determinism of the seeded draws, and bad
//! sidecars refused with the file and field named.

use std::path::Path;

use crate::util::{assert_no_panic, repo, run as cli, sss_trace, tempdir, write};

/// Job j0 (arrives at 0): stage a of 3 tasks, then b of 1; job j1 (arrives at 8): stage c of 1.
/// Every task is one slot; trace durations 1 s (what the schedulers see).
const TRACE: &str = "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations
j0,0,q0,a,3,1,1,0,0,0,,
j0,0,q0,b,1,1,1,0,0,0,a,
j1,8,q0,c,1,1,1,0,0,0,,
";

/// One sample per list (ms), measured at 2 executors only (every executor count maps there):
/// a: fresh 5.25 s, first wave 3 s, rest wave 2 s; b: 6 / 4 / 1 s; c: 1.5 / 0.5 / 0.25 s.
fn sidecar(a: &str) -> String {
    let stage = |fresh: u32, first: u32, rest: u32| {
        format!(
            r#"{{"fresh_durations":{{"2":[{fresh}]}},"first_wave":{{"2":[{first}]}},"rest_wave":{{"2":[{rest}]}}}}"#
        )
    };
    format!(
        r#"{{"format":"graphene-waves","unit":"ms","jobs":{{"j0":"d0","j1":"d1"}},
            "dags":{{"d0":{{"a":{a},"b":{}}},"d1":{{"c":{}}}}}}}"#,
        stage(6000, 4000, 1000),
        stage(1500, 500, 250)
    )
}

fn good_sidecar() -> String {
    sidecar(r#"{"fresh_durations":{"2":[5250]},"first_wave":{"2":[3000]},"rest_wave":{"2":[2000]}}"#)
}

/// `replay --scheduler fifo` on 2 one-slot machines (heartbeat 1 s: machine 0 beats at 0, 1,
/// 2, ..., machine 1 at 0.5, 1.5, ...); the JCTs from jobs.csv.
fn jcts(dir: &Path, trace: &Path, extra: &[&str]) -> Vec<f64> {
    let out = dir.join("out");
    let mut args: Vec<String> = [
        "replay",
        trace.to_str().unwrap(),
        "--scheduler",
        "fifo",
        "--machines",
        "2",
        "--capacity",
        "cpu=1,mem=1,disk=1,net=1",
        "-q",
        "--no-timing",
        "--out",
        out.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    cli(&args).ok();
    let text = std::fs::read_to_string(out.join("jobs.csv")).unwrap();
    text.lines().skip(1).map(|l| l.split(',').nth(4).unwrap().parse().unwrap()).collect()
}

/// Default moving delay (2 s), a machine heartbeats the moment its task ends.
/// * 0: m0 takes a[0]: a fresh machine moving to j0: fresh 5.25 + 2 = 7.25 s, ends 7.25.
/// * 0.5: m1 takes a[1] the same way, ends 7.75.
/// * 7.25: m0 goes on with a[2] at once, same stage: rest wave 2 s, ends 9.25.
/// * 7.75: m1 finds nothing (b waits for a[2]); j1 arrives at 8, m0 is busy.
/// * 8.5: m1 takes c: it moves from j0 to j1: fresh 1.5 + 2 = 3.5 s, ends 12 (j1: JCT 4).
/// * 9.25: m0 goes on with b, another stage of its job: first wave 4 s, ends 13.25 (j0: 13.25).
///
/// With --moving-delay 0.5: a[0] 0-5.75, a[1] 0.5-6.25, a[2] (rest) 5.75-7.75, b (first wave)
/// 7.75-11.75; c at 8.5: 1.5 + 0.5, ends 10.5. JCTs 11.75 and 2.5.
///
/// With --periodic-heartbeats (a machine launches only on its beat): a[0] 0-7.25, a[1]
/// 0.5-7.75; m0 sat idle from 7.25 to its beat at 8, so a[2] is fresh (5.25 s, no move: it is
/// still j0's): 8-13.25; c on m1 at 8.5 (moving): 8.5-12; b on m1 at its beat 13.5, moving back
/// from j1: 6 + 2 = 8 s, ends 21.5. JCTs 21.5 and 4.
#[test]
fn forced_samples_give_hand_computed_jcts() {
    let dir = tempdir();
    let trace = write(dir.path(), "t.csv", TRACE);
    let side = write(dir.path(), "w.json", &good_sidecar());
    let w = side.to_str().unwrap();
    assert_eq!(jcts(dir.path(), &trace, &["--waves", w]), [13.25, 4.0]);
    assert_eq!(jcts(dir.path(), &trace, &["--waves", w, "--moving-delay", "0.5"]), [11.75, 2.5]);
    assert_eq!(jcts(dir.path(), &trace, &["--waves", w, "--periodic-heartbeats"]), [21.5, 4.0]);
    // Off by default: the trace's 1 s durations. a[0] 0-1, a[1] 0.5-1.5, a[2] 1-2, b 2-3.
    assert_eq!(jcts(dir.path(), &trace, &[]), [3.0, 1.0]);
}

/// The sidecar of a spark-sched-sim trace (TPC-H Q6 at 2g: lists of several samples): the same
/// seed gives the same bytes, another seed other draws, and without --waves the trace's
/// durations.
#[test]
fn draws_are_seeded() {
    let dir = tempdir();
    let d = dir.path();
    let (t, w) = (d.join("t.csv"), d.join("w.json"));
    let q6 = repo("tests/data/tpch-2g-q6.json");
    sss_trace(&q6, 6, "poisson:5", 3, &t, Some(&w));
    let side: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&w).unwrap()).unwrap();
    assert_eq!(side["jobs"].as_object().unwrap().len(), 6);
    assert_eq!(side["jobs"]["j0000"], "tpch-2g-q6");
    let schedule = |seed: &str, waves: bool| {
        let out = d.join(format!("o{seed}{waves}"));
        let mut args = vec![
            "replay",
            t.to_str().unwrap(),
            "--scheduler",
            "fifo",
            "--machines",
            "10",
            "--capacity",
            "cpu=1,mem=1,disk=1,net=1",
            "-q",
            "--no-timing",
            "--seed",
            seed,
            "--out",
            out.to_str().unwrap(),
        ];
        if waves {
            args.extend(["--waves", w.to_str().unwrap()]);
        }
        cli(&args).ok();
        std::fs::read(out.join("schedule.csv")).unwrap()
    };
    assert_eq!(schedule("1", true), schedule("1", true));
    assert_ne!(schedule("1", true), schedule("2", true));
    assert_ne!(schedule("1", true), schedule("1", false));
    assert_eq!(schedule("1", false), schedule("2", false), "without --waves the seed draws nothing here");
}

/// Bad sidecars and flags: exit 1 (clap's usage errors: 2), the file and the field named, no
/// panic.
#[test]
fn bad_sidecars_are_refused_naming_file_and_field() {
    let dir = tempdir();
    let trace = write(dir.path(), "t.csv", TRACE);
    let good = good_sidecar();
    let cases: Vec<(&str, String, &str)> = vec![
        ("json.json", "{".into(), "json.json"),
        ("nojob.json", good.replace(r#","j1":"d1""#, ""), "jobs.j1"),
        ("nodag.json", good.replace(r#""j1":"d1""#, r#""j1":"d9""#), "dags.d9"),
        ("nostage.json", good.replace(r#""d1":{"c":"#, r#""d1":{"x":"#), "dags.d1.c"),
        (
            "empty.json",
            sidecar(r#"{"fresh_durations":{"2":[]},"first_wave":{"2":[]},"rest_wave":{}}"#),
            "dags.d0.a: no sample",
        ),
        ("negative.json", sidecar(r#"{"first_wave":{"2":[-3000]}}"#), "dags.d0.a.first_wave.\"2\"[0]"),
        ("key.json", sidecar(r#"{"first_wave":{"two":[3000]}}"#), "dags.d0.a.first_wave.\"two\""),
        ("nofirst.json", sidecar(r#"{"fresh_durations":{"2":[3000]}}"#), "dags.d0.a.first_wave"),
        ("unknown.json", sidecar(r#"{"first_waves":{"2":[3000]}}"#), "first_waves"),
        ("format.json", good.replace("graphene-waves", "other"), "format"),
    ];
    for (name, text, says) in cases {
        let p = write(dir.path(), name, &text);
        let r = cli(&["replay", trace.to_str().unwrap(), "--machines", "2", "--waves", p.to_str().unwrap(), "-q"]);
        assert_no_panic(&r);
        assert_eq!(r.code, Some(1), "{name}: {}", r.stderr);
        assert!(r.stderr.contains(name) && r.stderr.contains(says), "{name}: {}", r.stderr);
    }
    let good = write(dir.path(), "good.json", &good);
    for (extra, code, says) in [
        (vec!["--waves", good.to_str().unwrap(), "--moving-delay", "-1"], 1, "--moving-delay"),
        (vec!["--moving-delay", "1"], 2, "--waves"),
        (vec!["--waves", "/nonexistent/w.json"], 1, "/nonexistent/w.json"),
    ] {
        let mut args = vec!["replay", trace.to_str().unwrap(), "--machines", "2", "-q"];
        args.extend(extra);
        let r = cli(&args);
        assert_no_panic(&r);
        assert_eq!(r.code, Some(code), "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
    }
    let q6 = repo("tests/data/tpch-2g-q6.json");
    let side = dir.path().join("side.json");
    let r =
        cli(&["gen-trace", "--dags", q6.to_str().unwrap(), "--jobs", "2", "-q", "--waves-out", side.to_str().unwrap()]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("--waves-out goes with --style spark-sched-sim"), "{}", r.stderr);
}
