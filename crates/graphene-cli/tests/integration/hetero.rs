//! Heterogeneous executors: HEFT and CPOP against the makespans of an independent
//! implementation (`reference/hetero`), DEFT's duplication, the validator's transfer checks.

use std::path::PathBuf;

use graphene::formats::hetero;
use graphene::hetero::{run, HeteroAlgo};
use graphene::model::{Cluster, ClusterSpec, Dag};

fn reference_dir() -> PathBuf {
    crate::util::repo("../shared/reference/hetero")
}

fn instance(name: &str) -> (Dag, Cluster, ClusterSpec) {
    let (dag, spec) = hetero::load(&reference_dir().join(format!("{name}.json"))).expect("reference instance");
    let cluster = spec.resolve(&dag.resources).expect("cluster");
    (dag, cluster, spec)
}

fn reference() -> serde_json::Value {
    let text = std::fs::read_to_string(reference_dir().join("reference.json")).expect("reference.json");
    serde_json::from_str(&text).expect("reference.json is JSON")
}

#[test]
fn heft_and_cpop_match_the_reference_makespans() {
    let _ = crate::util::shared_or_skip!("reference/hetero");
    let r = reference();
    let all = r["makespans"].as_object().expect("makespans");
    assert_eq!(all.len(), 8);
    let mut failures = Vec::new();
    for (name, want) in all {
        let (dag, cluster, spec) = instance(name);
        assert_eq!(dag.len() as u64, want["tasks"].as_u64().unwrap(), "{name}: task count");
        assert_eq!(cluster.len() as u64, want["nodes"].as_u64().unwrap(), "{name}: node count");
        for algo in [HeteroAlgo::Heft, HeteroAlgo::Cpop] {
            let got = run(algo, &dag, &cluster, &spec.network()).schedule.makespan();
            let w = want[algo.name()].as_f64().unwrap();
            if ((got - w) / w).abs() > 1e-6 {
                failures.push(format!("{name} {}: got {got}, reference {w}", algo.name()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

use graphene::hetero::Policy;
use graphene::model::{Network, Schedule};
use graphene::validate::{validate_on, validate_schedule_on, Entry, Violation};

/// Two nodes of speed 1, bandwidth 1; `a` (work 1) feeds four children of work 2 with 3 units
/// of data each. HEFT keeps a's first children beside it and pays the transfer once
/// (makespan 7); DEFT copies `a` onto the second node instead (makespan 5).
const FORK: &str = r#"{"tasks": [{"id": "a", "cost": 1}, {"id": "b", "cost": 2}, {"id": "c", "cost": 2},
    {"id": "d", "cost": 2}, {"id": "e", "cost": 2}],
  "edges": [{"src": "a", "dst": "b", "data": 3}, {"src": "a", "dst": "c", "data": 3},
    {"src": "a", "dst": "d", "data": 3}, {"src": "a", "dst": "e", "data": 3}],
  "nodes": [{"id": "m0", "speed": 1}, {"id": "m1", "speed": 1}], "links": 1}"#;

fn parse(text: &str) -> (Dag, Cluster, Network) {
    let (dag, spec) = hetero::parse(text, "t").expect("instance");
    let cluster = spec.resolve(&dag.resources).expect("cluster");
    (dag, cluster, spec.network())
}

fn entry(id: &str, machine: i64, start: f64, end: f64) -> Entry {
    Entry { id: id.to_string(), machine, start, end, priority: None }
}

#[test]
fn deft_duplicates_the_parent_where_heft_pays_the_transfer() {
    let (dag, cluster, net) = parse(FORK);
    let heft = run(HeteroAlgo::Heft, &dag, &cluster, &net);
    assert_eq!(heft.schedule.makespan(), 7.0);
    assert!(heft.copies.is_empty());
    for p in [Policy::Fifo, Policy::Sjf, Policy::Hrrn, Policy::RankUp] {
        let s = run(HeteroAlgo::Deft(p), &dag, &cluster, &net);
        assert_eq!(s.schedule.makespan(), 5.0, "{p:?}");
        assert_eq!(s.copies.len(), 1, "{p:?}");
        let copy = s.copies[0];
        assert_eq!((dag.task_name(copy.task).as_str(), copy.machine, copy.start, copy.end), ("a[0]", 1, 0.0, 1.0));
        assert_eq!(validate_schedule_on(&dag, &cluster, &net, &s.schedule, &s.copies), vec![], "{p:?}");
        // Without the copy, the children on node 1 start before a's data can get there.
        let v = validate_schedule_on(&dag, &cluster, &net, &s.schedule, &[]);
        assert!(
            !v.is_empty() && v.iter().all(|x| matches!(x, Violation::Transfer { arrival, .. } if *arrival == 4.0)),
            "{v:?}"
        );
    }
}

#[test]
fn validator_checks_transfers_speeds_and_copies() {
    let text = r#"{"tasks": [{"id": "a", "cost": 2}, {"id": "b", "cost": 2}],
        "edges": [{"src": "a", "dst": "b", "data": 10}],
        "nodes": [{"id": "m0", "speed": 2}, {"id": "m1", "speed": 1}], "links": 5}"#;
    let (dag, cluster, net) = parse(text);
    let check = |e: &[Entry], c: &[Entry]| validate_on(&dag, &cluster, &net, e, c);
    // a runs 1 on the speed-2 node; b on the other node waits 10 / 5 = 2 for the data.
    assert_eq!(check(&[entry("a[0]", 0, 0.0, 1.0), entry("b[0]", 1, 3.0, 5.0)], &[]), vec![]);
    assert_eq!(check(&[entry("a[0]", 0, 0.0, 1.0), entry("b[0]", 0, 1.0, 2.0)], &[]), vec![]);
    let v = check(&[entry("a[0]", 0, 0.0, 1.0), entry("b[0]", 1, 2.0, 4.0)], &[]);
    assert_eq!(
        v,
        vec![Violation::Transfer {
            parent: "a[0]".into(),
            child: "b[0]".into(),
            machine: 1,
            arrival: 3.0,
            child_start: 2.0
        }]
    );
    // On the speed-1 node a task needs its whole work as run time.
    let v = check(&[entry("a[0]", 1, 0.0, 1.0), entry("b[0]", 1, 1.0, 3.0)], &[]);
    assert!(matches!(v[..], [Violation::TooShort { duration, .. }] if duration == 2.0), "{v:?}");
    // A copy of a next to b removes the transfer, but the copy itself must be a full run, must
    // be of a scheduled task, and takes the machine's capacity.
    let base = [entry("a[0]", 0, 0.0, 1.0), entry("b[0]", 1, 2.0, 4.0)];
    assert_eq!(check(&base, &[entry("a[0]", 1, 0.0, 2.0)]), vec![]);
    assert!(matches!(check(&base, &[entry("a[0]", 1, 0.5, 2.0)])[..], [Violation::TooShort { .. }, ..]));
    assert!(check(&base, &[entry("b[0]", 0, 5.0, 6.0), entry("zz[0]", 0, 0.0, 1.0)])
        .iter()
        .any(|x| matches!(x, Violation::UnknownTask { id } if id == "zz[0]")));
    assert!(check(&base, &[entry("a[0]", 1, 1.0, 3.0)])
        .iter()
        .any(|x| matches!(x, Violation::Capacity { machine: 1, .. })));
}

#[test]
fn every_scheduler_that_models_the_network_gives_valid_schedules_on_the_references() {
    let _ = crate::util::shared_or_skip!("reference/hetero");
    for name in ["h10-s1", "h50-s4", "h100-s5"] {
        let (dag, cluster, spec) = instance(name);
        let net = spec.network();
        for s in std::iter::once(graphene::Scheduler::Graphene).chain(graphene::Scheduler::hetero()) {
            let b = graphene::scheduler::build_on(s, &dag, &cluster, &net, &Default::default(), 0);
            let v = validate_schedule_on(&dag, &cluster, &net, &b.schedule, &b.copies);
            assert!(v.is_empty(), "{name} {}: {:?}", s.name(), &v[..v.len().min(3)]);
        }
    }
}

#[test]
fn graphene_on_a_uniform_network_is_the_homogeneous_constructor() {
    let _ = crate::util::shared_or_skip!("reference/hetero");
    let (dag, cluster, _) = instance("h50-s3");
    let cfg = graphene::OfflineConfig::default();
    let plain = graphene::build(graphene::Scheduler::Graphene, &dag, &cluster, &cfg, 0).schedule;
    let on = graphene::scheduler::build_on(
        graphene::Scheduler::Graphene,
        &dag,
        &cluster,
        &Network::uniform(cluster.len()),
        &cfg,
        0,
    )
    .schedule;
    let key = |s: &Schedule| s.placements.iter().map(|p| (p.task, p.machine, p.start, p.end)).collect::<Vec<_>>();
    assert_eq!(key(&plain), key(&on));
}

fn ref_file(name: &str) -> String {
    reference_dir().join(format!("{name}.json")).display().to_string()
}

#[test]
fn build_schedule_reads_the_network_file_and_reports_duplicates_speedup_and_slr() {
    let _ = crate::util::shared_or_skip!("reference/hetero");
    use crate::util::run;
    let out = run(&["build-schedule", &ref_file("h10-s1"), "--scheduler", "heft", "-q"]).ok().json();
    assert_eq!(out["machines"], 3);
    let ms = out["makespan"].as_f64().unwrap();
    assert!((ms - 17.360704).abs() < 1e-6 * 17.36, "{ms}");
    assert_eq!(out["copies"].as_array().map(Vec::len), Some(0));
    assert!(out["speedup"].as_f64().unwrap() > 1.0 && out["slr"].as_f64().unwrap() >= 1.0);

    let dir = crate::util::tempdir();
    let fork = crate::util::write(dir.path(), "fork.json", FORK);
    let out = run(&["build-schedule", fork.to_str().unwrap(), "--scheduler", "rankup-deft", "-q"]).ok().json();
    assert_eq!(out["makespan"], 5.0);
    let copies = out["copies"].as_array().expect("copies");
    assert_eq!(copies.len(), 1);
    assert_eq!(copies[0]["id"], "a[0]");

    // `graphene validate` checks the schedule file on the network file's machines, copies
    // included; without the copy, the child that relied on it waits for a transfer it skipped.
    let sched = crate::util::write(dir.path(), "deft.json", &serde_json::to_string(&out).unwrap());
    let v = run(&["validate", fork.to_str().unwrap(), sched.to_str().unwrap()]).ok();
    assert!(v.stdout_str().starts_with("valid: "), "{}", v.stdout_str());
    let mut stripped = out.clone();
    stripped["copies"] = serde_json::json!([]);
    let bad = crate::util::write(dir.path(), "no-copy.json", &serde_json::to_string(&stripped).unwrap());
    let v = run(&["validate", fork.to_str().unwrap(), bad.to_str().unwrap()]);
    assert_eq!(v.code, Some(1), "{}", v.stderr);
    assert!(v.stderr.contains("violation"), "{}", v.stderr);
}

#[test]
fn network_unaware_schedulers_are_refused_on_heterogeneous_clusters() {
    let _ = crate::util::shared_or_skip!("reference/hetero");
    use crate::util::run;
    let r = run(&["build-schedule", &ref_file("h10-s1"), "--scheduler", "tetris"]);
    assert_ne!(r.code, Some(0));
    assert!(r.stderr.contains("tetris plans at speed 1 without transfers"), "{}", r.stderr);
    let r = run(&["compare", &ref_file("h10-s1"), "--schedulers", "heft,cp"]);
    assert_ne!(r.code, Some(0));
    assert!(r.stderr.contains("cp plans at speed 1"), "{}", r.stderr);
    let example = crate::util::repo("traces/example.json").display().to_string();
    let r = run(&["build-schedule", &example, "--scheduler", "heft", "--machines", "2", "--speeds", "1,2,3"]);
    assert_ne!(r.code, Some(0));
    assert!(r.stderr.contains("--speeds gives 3 speeds for 2 machines"), "{}", r.stderr);
}

#[test]
fn compare_on_reference_files_prints_speedup_and_slr_for_graphene_and_the_list_schedulers() {
    let _ = crate::util::shared_or_skip!("reference/hetero");
    use crate::util::run;
    let out = run(&["compare", &ref_file("h20-s2"), "--json"]).ok().json();
    let rows = out["rows"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["scheduler"].as_str().unwrap()).collect();
    assert_eq!(names, ["graphene", "heft", "cpop", "fifo-deft", "sjf-deft", "hrrn-deft", "rankup-deft", "lachesis"]);
    let heft = rows.iter().find(|r| r["scheduler"] == "heft").unwrap();
    assert!((heft["makespan"].as_f64().unwrap() - 27.319929).abs() < 1e-6 * 27.32);
    for r in rows {
        let (ms, sp, slr) =
            (r["makespan"].as_f64().unwrap(), r["speedup"].as_f64().unwrap(), r["slr"].as_f64().unwrap());
        // speedup x makespan and SLR / makespan are properties of the DAG and machines alone.
        assert!((sp * ms - heft["speedup"].as_f64().unwrap() * 27.319929).abs() < 1e-3, "{r}");
        assert!((slr / ms - heft["slr"].as_f64().unwrap() / 27.319929).abs() < 1e-6, "{r}");
    }
}

#[test]
fn native_dag_files_carry_edge_data_and_keep_it_when_written_back() {
    let text = r#"{"stages": [{"id": "a", "tasks": 2, "duration": 1},
        {"id": "b", "tasks": 2, "duration": 1, "parents": [{"stage": "a", "kind": "one-to-one", "data": 2.5}]},
        {"id": "c", "tasks": 1, "duration": 1, "parents": ["a", {"stage": "b", "data": 4}]}]}"#;
    let dag = graphene::formats::native::parse(text, "d").unwrap();
    let id = |n: &str| dag.stage_by_name(n).unwrap();
    assert_eq!(
        (dag.edge_data(id("a"), id("b")), dag.edge_data(id("a"), id("c")), dag.edge_data(id("b"), id("c"))),
        (2.5, 0.0, 4.0)
    );
    let back = serde_json::to_string(&graphene::formats::native::to_file(&dag)).unwrap();
    let again = graphene::formats::native::parse(&back, "d").unwrap();
    assert_eq!(again.edge_data(id("a"), id("b")), 2.5);
    assert_eq!(again.edge_data(id("b"), id("c")), 4.0);
    let bad = text.replace("2.5", "-1");
    let e = graphene::formats::native::parse(&bad, "d").unwrap_err().to_string();
    assert!(e.contains("parents[0].data"), "{e}");
}

/// FORK on three machines of speed 1: m0 and m1 in one rack (group 0, bandwidth 3 inside it,
/// so a's 3 data units take 1), m2 alone in group 1 behind the slow cluster-wide bandwidth 0.3
/// (they take 10). a runs on m0 0-1; then HEFT picks, child by child, the earliest finish:
/// b m0 1-3, c m1 2-4 (m2 would finish at 13), d m0 3-5, e m1 4-6: makespan 6, m2 unused.
/// With 3 everywhere m2 is as good as m1: b m0 1-3, c m1 2-4, d m2 2-4, e m0 3-5: makespan 5.
#[test]
fn heft_keeps_transfers_inside_the_fast_rack() {
    let dag_text = r#"{"resources": ["cpu"], "stages": [
        {"id": "a", "tasks": 1, "duration": 1, "demands": {"cpu": 1}},
        {"id": "b", "tasks": 1, "duration": 2, "demands": {"cpu": 1}, "parents": [{"stage": "a", "data": 3}]},
        {"id": "c", "tasks": 1, "duration": 2, "demands": {"cpu": 1}, "parents": [{"stage": "a", "data": 3}]},
        {"id": "d", "tasks": 1, "duration": 2, "demands": {"cpu": 1}, "parents": [{"stage": "a", "data": 3}]},
        {"id": "e", "tasks": 1, "duration": 2, "demands": {"cpu": 1}, "parents": [{"stage": "a", "data": 3}]}]}"#;
    let dag = graphene::formats::native::parse(dag_text, "fork").unwrap();
    let racks = r#"{"machines": [{"count": 2, "capacity": {"cpu": 1}}, {"count": 1, "capacity": {"cpu": 1}}],
        "bandwidth": 0.3, "pair_bandwidth": [{"groups": [0, 0], "bandwidth": 3}]}"#;
    let flat = r#"{"machines": [{"count": 3, "capacity": {"cpu": 1}}], "bandwidth": 3}"#;
    let placed = |text: &str| {
        let spec = graphene::formats::cluster::parse(text).unwrap();
        let (cluster, net) = (spec.resolve(&dag.resources).unwrap(), spec.network());
        let s = run(HeteroAlgo::Heft, &dag, &cluster, &net);
        assert_eq!(validate_schedule_on(&dag, &cluster, &net, &s.schedule, &s.copies), vec![]);
        let mut by_task: Vec<(String, u32, f64)> =
            s.schedule.placements.iter().map(|p| (dag.task_name(p.task), p.machine, p.start)).collect();
        by_task.sort_by(|x, y| x.0.cmp(&y.0));
        (s.schedule.makespan(), by_task)
    };
    let row = |t: &str, m: u32, s: f64| (t.to_string(), m, s);
    assert_eq!(
        placed(racks),
        (
            6.0,
            vec![
                row("a[0]", 0, 0.0),
                row("b[0]", 0, 1.0),
                row("c[0]", 1, 2.0),
                row("d[0]", 0, 3.0),
                row("e[0]", 1, 4.0)
            ]
        )
    );
    assert_eq!(
        placed(flat),
        (
            5.0,
            vec![
                row("a[0]", 0, 0.0),
                row("b[0]", 0, 1.0),
                row("c[0]", 1, 2.0),
                row("d[0]", 2, 2.0),
                row("e[0]", 0, 3.0)
            ]
        )
    );

    // The validator holds a child in the far rack to the slow link: d on m2 at 2 would need a's
    // data, which arrives at 1 + 10 = 11.
    let spec = graphene::formats::cluster::parse(racks).unwrap();
    let (cluster, net) = (spec.resolve(&dag.resources).unwrap(), spec.network());
    let v = validate_on(
        &dag,
        &cluster,
        &net,
        &[
            entry("a[0]", 0, 0.0, 1.0),
            entry("b[0]", 0, 1.0, 3.0),
            entry("c[0]", 1, 2.0, 4.0),
            entry("d[0]", 2, 2.0, 4.0),
            entry("e[0]", 0, 3.0, 5.0),
        ],
        &[],
    );
    assert_eq!(
        v,
        vec![Violation::Transfer {
            parent: "a[0]".into(),
            child: "d[0]".into(),
            machine: 2,
            arrival: 11.0,
            child_start: 2.0
        }]
    );
}

/// `--scheduler lachesis` (the bundled model) on a reference instance: `build-schedule` writes a
/// schedule that `graphene validate` accepts on the instance's network, duplicates included, and
/// `compare` lists it beside the other list schedulers.
#[test]
fn lachesis_schedules_validate_through_the_cli() {
    let _ = crate::util::shared_or_skip!("reference/hetero");
    use crate::util::run;
    let dir = crate::util::tempdir();
    for name in ["h10-s1", "h100-s5"] {
        let out = run(&["build-schedule", &ref_file(name), "--scheduler", "lachesis", "-q"]).ok().json();
        assert_eq!(out["scheduler"], "lachesis");
        let sched = crate::util::write(dir.path(), &format!("{name}.json"), &serde_json::to_string(&out).unwrap());
        let v = run(&["validate", &ref_file(name), sched.to_str().unwrap()]).ok();
        assert!(v.stdout_str().starts_with("valid: "), "{name}: {}", v.stdout_str());
    }
    let out = run(&["compare", &ref_file("h50-s4"), "--schedulers", "heft,rankup-deft,lachesis"]).ok().stdout_str();
    assert!(out.contains("lachesis"), "{out}");
}

/// A `train-lachesis` run of seconds: 8 machines, batches of 1-2 TPC-H jobs, 3 iterations.
fn small_lachesis<'a>(dags: &'a str, out: &'a str) -> Vec<&'a str> {
    vec![
        "train-lachesis",
        "--dags",
        dags,
        "--machines",
        "8",
        "--jobs-min",
        "1",
        "--jobs-max",
        "2",
        "--iterations",
        "3",
        "--rollouts",
        "2",
        "--eval-batches",
        "1",
        "--eval-jobs",
        "1",
        "--eval-every",
        "2",
        "--seed",
        "4",
        "--out",
        out,
    ]
}

/// `--no-timing`: the trainers' progress and summary lines carry no wall-clock seconds, so two
/// runs with one seed print the same text.
#[test]
fn trainers_print_the_same_text_under_no_timing() {
    let data = crate::util::shared_or_skip!("data/decima-tpch/json");
    use crate::util::run;
    let dir = crate::util::tempdir();
    let dags = data.join("tpch-2g.json").display().to_string();
    let train = |out: &str| {
        let out = dir.path().join(out).display().to_string();
        let mut args = small_lachesis(&dags, &out);
        args.push("--no-timing");
        let r = run(&args).ok();
        (r.stderr.replace(&out, "OUT"), std::fs::read(&out).expect("model written"))
    };
    let (a, b) = (train("a.json"), train("b.json"));
    assert_eq!(a, b, "same seed, same text and bytes");
    assert!(a.0.contains("train-lachesis: 3 iterations x 2 rollouts, "), "{}", a.0);
    assert!(a.0.contains("iteration     0: held-out greedy / rankup-deft "), "{}", a.0);
    assert!(!a.0.contains(" s)") && !a.0.contains(" in "), "a timing is printed: {}", a.0);
}

/// `train-lachesis` twice with one seed writes the same bytes; the file records the setting; a
/// file of another format given as --init is refused naming the field.
#[test]
fn train_lachesis_is_deterministic_and_records_its_setting() {
    let data = crate::util::shared_or_skip!("data/decima-tpch/json");
    use crate::util::run;
    let dir = crate::util::tempdir();
    let dags = data.join("tpch-2g.json").display().to_string();
    let train = |out: &str, extra: &[&str]| {
        let out = dir.path().join(out).display().to_string();
        let mut args = small_lachesis(&dags, &out);
        args.push("--quiet");
        args.extend_from_slice(extra);
        run(&args).ok();
        std::fs::read(&out).expect("model written")
    };
    let (a, b) = (train("a.json", &[]), train("b.json", &[]));
    assert_eq!(a, b, "same seed, same bytes");
    let m: serde_json::Value = serde_json::from_slice(&a).unwrap();
    assert_eq!(m["format"], "graphene-lachesis");
    assert_eq!(m["trained"]["setting"]["machines"], 8);
    assert!(m["trained"]["setting"].get("decision").is_none(), "the default decision is not written");
    assert!(m["trained"]["config"].get("decision").is_none());
    // Per-task decisions: deterministic too, recorded in the setting, other weights.
    let (t, u) = (train("t.json", &["--decision", "task"]), train("u.json", &["--decision", "task"]));
    assert_eq!(t, u, "same seed, same bytes with --decision task");
    let mt: serde_json::Value = serde_json::from_slice(&t).unwrap();
    assert_eq!(mt["trained"]["setting"]["decision"], "task");
    assert_eq!(mt["trained"]["config"]["decision"], "task");
    assert_ne!(mt["params"], m["params"]);
    let out = dir.path().join("d.json").display().to_string();
    let r = run(&["train-lachesis", "--dags", &dags, "--decision", "job", "--out", &out]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("--decision") && r.stderr.contains("task"), "{}", r.stderr);
    assert_eq!(m["trained"]["config"]["seed"], 4);
    assert_eq!(m["trained"]["learning_curve"].as_array().map(Vec::len), Some(3));

    let bad = crate::util::write(
        dir.path(),
        "bad.json",
        &String::from_utf8(a).unwrap().replace("graphene-lachesis", "graphene-decima"),
    );
    let out = dir.path().join("c.json").display().to_string();
    let r =
        run(&["train-lachesis", "--dags", &dags, "--iterations", "1", "--init", bad.to_str().unwrap(), "--out", &out]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("format") && r.stderr.contains("bad.json"), "{}", r.stderr);
    let r = run(&["train-lachesis", "--dags", &dags, "--rollouts", "1", "--out", &out]);
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("rollouts"), "{}", r.stderr);
}

/// The list schedulers run as many tasks on a machine at once as fit its capacity in every
/// resource (dslab-dag's HEFT schedules each core), not one task per machine: 160 independent
/// one-core tasks of length 1 take 10 on one 16-core machine, 160 on a one-core one; the
/// audit's 50 machines of 16 cores run 800 such tasks in 1, not 16. Every schedule passes
/// `graphene validate` against the same cluster.
#[test]
fn list_schedulers_run_as_many_tasks_on_a_machine_as_fit_its_capacity() {
    let dir = crate::util::tempdir();
    let flat = |n: usize| {
        format!(
            r#"{{"resources": ["cpu"], "stages": [{{"id": "a", "tasks": {n}, "duration": 1, "demands": {{"cpu": 1}}}}]}}"#
        )
    };
    let small = crate::util::write(dir.path(), "flat160.json", &flat(160));
    let wide = crate::util::write(dir.path(), "flat800.json", &flat(800));
    let out = dir.path().join("s.json");
    let (o, s) = (out.display().to_string(), small.display().to_string());
    for algo in ["heft", "cpop", "fifo-deft", "sjf-deft", "hrrn-deft", "rankup-deft", "lachesis"] {
        for (dag, machines, capacity, want) in
            [(&small, "1", "cpu=16", 10.0), (&small, "1", "cpu=1", 160.0), (&wide, "50", "cpu=16", 1.0)]
        {
            let d = dag.display().to_string();
            let cluster = ["--machines", machines, "--capacity", capacity];
            let mut args = vec!["build-schedule", &d, "--scheduler", algo, "-q", "--no-timing", "-o", &o];
            args.extend(cluster);
            crate::util::run(&args).ok();
            let sched: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
            let got = sched["makespan"].as_f64().unwrap();
            assert_eq!(got, want, "{algo} on {machines} x {capacity}: {d}");
            let mut args = vec!["validate", &d, &o];
            args.extend(cluster);
            let v = crate::util::run(&args).ok();
            assert!(v.stdout_str().starts_with("valid:"), "{algo}: {}", v.stdout_str());
        }
        // Sixteen at once is the most one machine holds: against 8 cores the schedule breaks.
        let mut args = vec!["build-schedule", &s, "--scheduler", algo, "-q", "--no-timing", "-o", &o];
        args.extend(["--machines", "1", "--capacity", "cpu=16"]);
        crate::util::run(&args).ok();
        let v = crate::util::run(&["validate", &s, &o, "--machines", "1", "--capacity", "cpu=8"]);
        assert_eq!(v.code, Some(1), "{algo}");
        assert!(v.stderr.contains("machine 0 at time 0: cpu in use 16 exceeds capacity 8"), "{}", v.stderr);
    }
    // Every resource binds: 32 tasks of 8 GB on a 64 GB machine run 8 at a time (4 waves of
    // 2), then their 16 one-core children all at once: 9.
    let layered = crate::util::write(
        dir.path(),
        "layered.json",
        r#"{"resources": ["cpu", "mem"], "stages": [
            {"id": "a", "tasks": 32, "duration": 2, "demands": {"cpu": 1, "mem": 8}},
            {"id": "b", "tasks": 16, "duration": 1, "demands": {"cpu": 1}, "parents": ["a"]}]}"#,
    );
    let l = layered.display().to_string();
    for algo in ["heft", "cpop", "rankup-deft"] {
        let args = ["build-schedule", &l, "--scheduler", algo, "-q", "--no-timing", "-o", &o];
        crate::util::run(&[&args[..], &["--machines", "1", "--capacity", "cpu=16,mem=64"]].concat()).ok();
        let sched: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        assert_eq!(sched["makespan"].as_f64().unwrap(), 9.0, "{algo}");
        crate::util::run(&["validate", &l, &o, "--machines", "1", "--capacity", "cpu=16,mem=64"]).ok();
    }
    // compare runs the same library code.
    let r = crate::util::run(&["compare", &s, "--schedulers", "heft,cpop", "--machines", "1", "--capacity", "cpu=16"]);
    let text = r.ok().stdout_str();
    for algo in ["heft", "cpop"] {
        let line = text.lines().find(|l| l.split_whitespace().nth(2) == Some(algo)).expect("a row per scheduler");
        assert_eq!(line.split_whitespace().nth(3), Some("10.000"), "{line}");
    }
}

/// The online `heft` policy has always filled a machine's capacity at each heartbeat: the same
/// 160 one-core tasks replayed on one 16-core machine take 10 s.
#[test]
fn online_heft_fills_a_machine_to_its_capacity() {
    let dir = crate::util::tempdir();
    let dag = crate::util::write(
        dir.path(),
        "flat.json",
        r#"{"resources": ["cpu"], "stages": [{"id": "a", "tasks": 160, "duration": 1, "demands": {"cpu": 1}}]}"#,
    );
    let trace = dir.path().join("t.csv").display().to_string();
    crate::util::run(&["gen-trace", "--dags", &dag.display().to_string(), "--jobs", "1", "-q", "--out", &trace]).ok();
    let out = dir.path().join("r").display().to_string();
    let args = ["replay", &trace, "--scheduler", "heft", "--machines", "1", "--capacity", "cpu=16", "-q"];
    crate::util::run(&[&args[..], &["--out", &out]].concat()).ok();
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r/summary.json")).unwrap()).unwrap();
    assert_eq!(summary["summary"]["makespan"].as_f64(), Some(10.0), "{summary}");
}
