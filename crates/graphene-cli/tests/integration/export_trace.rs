//! `graphene export-trace --format sls`: a whole workload for graphene's SLS AM
//! (integrations/yarn-sls), in each order, and what bad input gets.

use std::collections::HashMap;

use serde_json::Value;

use crate::util::*;

/// Two jobs, two queues: j0 is a chain with a shuffle and a one-to-one edge, j1 a diamond.
const TRACE: &str = "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations
j0,0,q0,scan,3,2,1,2,0,0,,
j0,0,q0,agg,2,5,2,4.5,0,0,scan,
j0,0,q0,out,2,1,1,1,0,0,~agg,
j1,1.5,q1,a,1,1,1,1,0,0,,
j1,1.5,q1,b,2,10,4,8,0,0,a,
j1,1.5,q1,c,1,1,1,1,0,0,a,
j1,1.5,q1,d,1,3,1,1,0,0,b;c,
";

fn export(dir: &std::path::Path, trace: &str, order: &str, extra: &[&str]) -> Run {
    let t = write(dir, "trace.csv", trace);
    let out = dir.join(format!("out-{order}"));
    let mut args: Vec<String> = vec![
        "export-trace".into(),
        t.display().to_string(),
        "--format".into(),
        "sls".into(),
        "--order".into(),
        order.into(),
        "--out".into(),
        out.display().to_string(),
        "--machines".into(),
        "4".into(),
        "--capacity".into(),
        "cpu=16,mem=64".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    run(&args)
}

fn jobs(dir: &std::path::Path, order: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join(format!("out-{order}/sls-jobs.json"))).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// (stage, index) -> (priority, parent stages with '~' for one-to-one)
fn tasks_of(job: &Value) -> HashMap<(String, u32), (u64, Vec<String>)> {
    let mut out = HashMap::new();
    for t in job["job.tasks"].as_array().unwrap() {
        let ty = t["container.type"].as_str().unwrap();
        let (head, tail) = ty.split_once('<').unwrap_or((ty, ""));
        let (stage, idx) = head.trim_end_matches(']').split_once('[').unwrap();
        let parents = if tail.is_empty() { vec![] } else { tail.split(';').map(String::from).collect() };
        out.insert((stage.to_string(), idx.parse().unwrap()), (t["container.priority"].as_u64().unwrap(), parents));
    }
    out
}

#[test]
fn every_order_writes_every_job_with_arrival_queue_and_parents_first() {
    let dir = tempdir();
    for order in ["graphene", "natural", "cp"] {
        export(dir.path(), TRACE, order, &["--time-ms", "100"]).ok();
        let js = jobs(dir.path(), order);
        assert_eq!(js.len(), 2);
        assert_eq!(js[0]["job.id"], "j0");
        assert_eq!(js[1]["job.id"], "j1");
        assert_eq!(js[0]["job.queue.name"], "q0");
        assert_eq!(js[1]["job.queue.name"], "q1");
        // Arrival x --time-ms.
        assert_eq!(js[1]["job.start.ms"], 150);
        for j in &js {
            assert_eq!(j["am.type"], "graphene");
            let ts = tasks_of(j);
            let arr = j["job.tasks"].as_array().unwrap();
            // Listed by priority; allocation ids are positions.
            let pris: Vec<u64> = arr.iter().map(|t| t["container.priority"].as_u64().unwrap()).collect();
            assert!(pris.windows(2).all(|w| w[0] <= w[1]), "{order}: not in priority order: {pris:?}");
            for (i, t) in arr.iter().enumerate() {
                assert_eq!(t["container.allocation.id"], i as u64);
            }
            // No parent is ever behind its child.
            for ((stage, idx), (p, parents)) in &ts {
                for ps in parents {
                    let (one, name) = match ps.strip_prefix('~') {
                        Some(n) => (true, n),
                        None => (false, ps.as_str()),
                    };
                    for ((s2, i2), (pp, _)) in &ts {
                        if s2 == name && (!one || i2 == idx) {
                            assert!(pp <= p, "{order}: parent {s2}[{i2}] ({pp}) after child {stage}[{idx}] ({p})");
                        }
                    }
                }
            }
        }
        // Sizes: ceil(cpu) vcores, ceil(mem x 1024) MB; durations x --time-ms.
        let agg = js[0]["job.tasks"].as_array().unwrap().iter().find(|t| t["container.type"] == "agg[0]<scan").unwrap();
        assert_eq!(agg["container.vcores"], 2);
        assert_eq!(agg["container.memory-mb"], 4608);
        assert_eq!(agg["container.duration.ms"], 500);
        assert!(js[0]["job.tasks"].as_array().unwrap().iter().any(|t| t["container.type"] == "out[1]<~agg"));
        let m: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(format!("out-{order}/manifest.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(m["order"], order);
        assert_eq!(m["jobs"], 2);
        assert_eq!(m["tasks"], 12);
        assert_eq!(m["queues"], serde_json::json!(["q0", "q1"]));
        // One Rumen stand-in per job, job_0_<k>, in the job's queue.
        let rumen = std::fs::read_to_string(dir.path().join(format!("out-{order}/rumen-jobs.json"))).unwrap();
        let rs: Vec<Value> = rumen.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(rs.len(), 2);
        assert_eq!(rs[1]["jobID"], "job_0_0001");
        assert_eq!(rs[1]["queue"], "q1");
        assert_eq!(rs[1]["submitTime"], 150);
    }
}

#[test]
fn the_orders_differ_as_they_should() {
    let dir = tempdir();
    for order in ["natural", "cp"] {
        export(dir.path(), TRACE, order, &[]).ok();
    }
    let nat = tasks_of(&jobs(dir.path(), "natural")[1]);
    let cp = tasks_of(&jobs(dir.path(), "cp")[1]);
    let p = |m: &HashMap<(String, u32), (u64, Vec<String>)>, s: &str| m[&(s.to_string(), 0)].0;
    // Tez natural order: (distance from the roots + 1) x 3, so b and c tie at depth 1.
    assert_eq!((p(&nat, "a"), p(&nat, "b"), p(&nat, "c"), p(&nat, "d")), (3, 6, 6, 9));
    // Critical path: b (10 s to go, then d) before c (1 s).
    assert!(p(&cp, "b") < p(&cp, "c"));
    assert_eq!(p(&cp, "a"), 1);
}

#[test]
fn export_trace_is_deterministic() {
    let dir = tempdir();
    export(dir.path(), TRACE, "graphene", &[]).ok();
    let a = std::fs::read(dir.path().join("out-graphene/sls-jobs.json")).unwrap();
    export(dir.path(), TRACE, "graphene", &[]).ok();
    assert_eq!(a, std::fs::read(dir.path().join("out-graphene/sls-jobs.json")).unwrap());
}

#[test]
fn bad_input_gets_a_clear_message_and_no_output() {
    let dir = tempdir();
    let too_big = TRACE.replace("j1,1.5,q1,b,2,10,4,8,0,0,a,", "j1,1.5,q1,b,2,10,40,8,0,0,a,");
    let missing_parent = TRACE.replace("j1,1.5,q1,d,1,3,1,1,0,0,b;c,", "j1,1.5,q1,d,1,3,1,1,0,0,b;zz,");
    let malformed = TRACE.replace("j0,0,q0,agg,2,5,2,4.5,0,0,scan,", "j0,0,q0,agg,two,5,2,4.5,0,0,scan,");
    let bad_name = TRACE.replace(",c,", ",c<x,").replace("b;c,", "b;c<x,");
    let cases: Vec<(String, Vec<&str>, Vec<&str>)> = vec![
        (too_big, vec![], vec!["trace.csv", "job j1", "b[0]", "40 vcores", "larger than any node", "16 vcores"]),
        (
            TRACE.into(),
            vec!["--queues", "q0,q9"],
            vec!["trace.csv", "job j1", "queue", "'q1' is not a queue", "q0, q9"],
        ),
        (missing_parent, vec![], vec!["trace.csv", "zz"]),
        (malformed, vec![], vec!["trace.csv", "line 3", "tasks"]),
        (bad_name, vec![], vec!["trace.csv", "job j1", "stage 'c<x'", "cannot carry"]),
        (TRACE.into(), vec!["--time-ms", "0"], vec!["--time-ms 0 must be a positive number"]),
    ];
    for (i, (trace, extra, want)) in cases.into_iter().enumerate() {
        let sub = dir.path().join(format!("case{i}"));
        std::fs::create_dir_all(&sub).unwrap();
        let r = export(&sub, &trace, "graphene", &extra);
        assert_no_panic(&r);
        assert_eq!(r.code, Some(1), "case {i}: expected failure; stderr:\n{}", r.stderr);
        for w in want {
            assert!(r.stderr.contains(w), "case {i}: stderr lacks '{w}':\n{}", r.stderr);
        }
        assert!(!sub.join("out-graphene").exists(), "case {i}: output written despite the error");
    }
}

/// Real data: a TPC-H workload exports in all three orders with one entry per task.
#[test]
fn tpch_workload_exports_in_every_order() {
    let Some(tpch) = shared("data/decima-tpch/json/tpch-2g.json") else { return };
    let dir = tempdir();
    let trace = dir.path().join("tpch.csv").display().to_string();
    run(&[
        "gen-trace",
        "--dags",
        &tpch.display().to_string(),
        "--jobs",
        "3",
        "--queues",
        "2",
        "--seed",
        "5",
        "--demands",
        "mixed",
        "--out",
        &trace,
        "-q",
    ])
    .ok();
    let text = std::fs::read_to_string(&trace).unwrap();
    for order in ["graphene", "natural", "cp"] {
        export(dir.path(), &text, order, &[]).ok();
        let js = jobs(dir.path(), order);
        assert_eq!(js.len(), 3);
        let m: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(format!("out-{order}/manifest.json"))).unwrap(),
        )
        .unwrap();
        let n: usize = js.iter().map(|j| j["job.tasks"].as_array().unwrap().len()).sum();
        assert_eq!(m["tasks"].as_u64().unwrap() as usize, n);
    }
}
