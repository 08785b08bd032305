//! The commands' happy paths through the real binary: the schedule file contract, validate
//! accepting what build-schedule wrote, lower-bound and compare output, and determinism.

use std::collections::HashMap;

use graphene::{lowerbound, Scheduler};
use serde_json::Value;

use crate::util::{example, geq, load_dag, makespan_of, repo, run, scheduler, tempdir, Run};

fn motivating() -> String {
    repo("traces/motivating.json").display().to_string()
}

fn motivating_cluster() -> String {
    repo("traces/motivating-cluster.json").display().to_string()
}

fn build(extra: &[&str]) -> Run {
    let mut args = vec!["build-schedule"];
    args.extend_from_slice(extra);
    run(&args).ok()
}

fn f(v: &Value, what: &str) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{what} is not a number: {v}"))
}

#[test]
fn build_schedule_writes_the_contract_fields() {
    let ex = example();
    let out = build(&[&ex, "--no-timing", "--quiet"]).json();
    let dag = load_dag(&repo("traces/example.json"));

    assert_eq!(out["dag"], "example");
    assert_eq!(out["scheduler"], "graphene");
    assert_eq!(f(&out["elapsed_ms"], "elapsed_ms"), 0.0, "--no-timing reports 0");
    assert!(out["search"].is_object(), "graphene reports its search: {}", out["search"]);

    let lb = &out["lower_bounds"];
    let bounds: Vec<f64> = ["critical_path", "total_work", "stage_aware"].iter().map(|k| f(&lb[k], k)).collect();
    let makespan = f(&out["makespan"], "makespan");
    for b in &bounds {
        assert!(geq(makespan, *b), "makespan {makespan} below bound {b}");
    }
    // The file's bounds are the library's.
    let cluster =
        graphene::ClusterSpec::uniform(10, graphene::ClusterSpec::default_capacity()).resolve(&dag.resources).unwrap();
    let want = lowerbound::compute(&dag, &cluster);
    assert_eq!(bounds, vec![want.critical_path, want.total_work, want.stage_aware]);

    let tasks = out["tasks"].as_array().expect("tasks is an array");
    assert_eq!(tasks.len(), dag.len());
    let mut pri: HashMap<String, f64> = HashMap::new();
    let mut latest_end: f64 = 0.0;
    for t in tasks {
        for key in ["id", "stage", "machine", "start", "end", "priority"] {
            assert!(t.get(key).is_some(), "task lacks {key}: {t}");
        }
        let id = t["id"].as_str().unwrap().to_string();
        let stage = t["stage"].as_str().unwrap();
        assert!(id.starts_with(&format!("{stage}[")), "task id {id} names its stage {stage}");
        assert!(t["machine"].as_u64().unwrap() < 10);
        let (s, e) = (f(&t["start"], "start"), f(&t["end"], "end"));
        assert!(0.0 <= s && s <= e, "{t}");
        latest_end = latest_end.max(e);
        let p = f(&t["priority"], "priority");
        assert!((0.0..=1.0).contains(&p), "priority {p} outside [0, 1]");
        assert!(pri.insert(id, p).is_none(), "task listed twice");
    }
    assert_eq!(makespan, latest_end, "makespan is the latest end");

    let order: Vec<&str> = out["order"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(order.len(), dag.len(), "order lists every task");
    assert_eq!(pri[order[0]], 1.0, "the first task of order has priority 1");
    assert_eq!(pri[*order.last().unwrap()], 0.0, "the last task of order has priority 0");
    for w in order.windows(2) {
        assert!(pri[w[0]] > pri[w[1]], "order must be by strictly decreasing priority: {} then {}", w[0], w[1]);
    }
}

#[test]
fn baselines_write_the_same_contract_without_a_search_report() {
    let ex = example();
    let out = build(&[&ex, "--scheduler", "cp", "--no-timing", "-q"]).json();
    assert_eq!(out["scheduler"], "cp");
    assert!(out["search"].is_null(), "baselines have no search report: {}", out["search"]);
    assert_eq!(out["tasks"].as_array().unwrap().len(), 52);
}

#[test]
fn build_schedule_makespan_is_the_library_makespan() {
    let (mot, cl) = (motivating(), motivating_cluster());
    for name in ["graphene", "cp", "bfs"] {
        let out = build(&[&mot, "--cluster", &cl, "--scheduler", name, "--no-timing", "-q"]).json();
        let dag = load_dag(&repo("traces/motivating.json"));
        let cluster = crate::util::load_cluster(&repo("traces/motivating-cluster.json"), &dag);
        assert_eq!(f(&out["makespan"], "makespan"), makespan_of(scheduler(name), &dag, &cluster), "{name}");
    }
}

#[test]
fn validate_accepts_what_build_schedule_wrote() {
    let dir = tempdir();
    let (ex, mot, cl) = (example(), motivating(), motivating_cluster());
    for name in Scheduler::names() {
        for (dag, cluster) in [(&ex, None), (&mot, Some(&cl))] {
            let out = dir.path().join(format!("{name}.json"));
            let out_s = out.display().to_string();
            let mut args = vec![dag.as_str(), "--scheduler", name, "--no-timing", "-q", "--out", &out_s];
            let mut v_args = vec!["validate", dag.as_str(), &out_s];
            if let Some(c) = cluster {
                args.extend(["--cluster", c.as_str()]);
                v_args.extend(["--cluster", c.as_str()]);
            }
            let r = build(&args);
            assert!(r.stdout.is_empty(), "--out writes nothing to stdout");
            let v = run(&v_args);
            assert_eq!(v.code, Some(0), "validate rejects {name}'s schedule of {dag}:\n{}", v.stderr);
            assert!(v.stdout_str().starts_with("valid:"), "{}", v.stdout_str());
        }
    }
}

#[test]
fn lower_bound_json_parses_and_matches_the_library() {
    let (mot, cl) = (motivating(), motivating_cluster());
    let out = run(&["lower-bound", &mot, "--cluster", &cl, "--json"]).ok().json();
    assert_eq!(out["dag"], "motivating");
    assert_eq!(out["tasks"], 6);
    assert_eq!(out["machines"], 1);
    let lb = &out["lower_bounds"];
    assert_eq!(f(&lb["critical_path"], "critical_path"), 101.0);
    assert_eq!(f(&lb["total_work"], "total_work"), 100.25);
    let sa = f(&lb["stage_aware"], "stage_aware");
    assert_eq!(f(&out["best"], "best"), sa.max(101.0));
}

/// Rows of `compare --json` as (dag, scheduler) -> row.
fn rows_by_key(v: &Value) -> HashMap<(String, String), Value> {
    v["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| ((r["dag"].as_str().unwrap().to_string(), r["scheduler"].as_str().unwrap().to_string()), r.clone()))
        .collect()
}

#[test]
fn compare_json_covers_every_scheduler_and_graphene_is_best_on_motivating() {
    let (ex, mot) = (example(), motivating());
    let out = run(&["compare", &ex, &mot, "--json"]).ok().json();
    let rows = rows_by_key(&out);
    let names = Scheduler::names();
    assert_eq!(out["rows"].as_array().unwrap().len(), 2 * names.len());
    for dag in ["example", "motivating"] {
        let g = f(&rows[&(dag.to_string(), "graphene".to_string())]["makespan"], "makespan");
        for name in &names {
            let r = &rows[&(dag.to_string(), name.to_string())];
            let (ms, lb) = (f(&r["makespan"], "makespan"), f(&r["lower_bound"], "lower_bound"));
            assert!(geq(ms, lb), "{dag}/{name}: makespan {ms} below lower bound {lb}");
            assert_eq!(f(&r["ratio"], "ratio"), ms / lb);
            if dag == "motivating" {
                assert!(g <= ms, "graphene {g} is beaten by {name} {ms} on motivating");
            }
        }
    }
    let summary = out["summary"].as_array().expect("summary");
    assert_eq!(summary.len(), names.len());
    let graphene = summary.iter().find(|s| s["scheduler"] == "graphene").expect("graphene summary");
    assert_eq!(graphene["dags"], 2);
    assert_eq!(graphene["best_count"], 2);
}

#[test]
fn compare_on_the_motivating_cluster_separates_graphene_from_cp_and_tetris() {
    let (mot, cl) = (motivating(), motivating_cluster());
    let out = run(&["compare", &mot, "--cluster", &cl, "--json"]).ok().json();
    let rows = rows_by_key(&out);
    let ms = |s: &str| f(&rows[&("motivating".to_string(), s.to_string())]["makespan"], s);
    let g = ms("graphene");
    for name in Scheduler::names() {
        assert!(g <= ms(name), "graphene {g} beaten by {name} {}", ms(name));
    }
    assert!(ms("cp") >= 1.5 * g);
    assert!(ms("tetris") >= 1.5 * g);
}

#[test]
fn compare_csv_has_one_row_per_dag_and_scheduler_matching_the_json() {
    let (ex, mot) = (example(), motivating());
    let csv = run(&["compare", &ex, &mot, "--csv"]).ok().stdout_str();
    let json = rows_by_key(&run(&["compare", &ex, &mot, "--json"]).ok().json());
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("dag,tasks,scheduler,makespan,lower_bound,ratio,elapsed_ms"));
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 2 * Scheduler::names().len());
    for line in rows {
        let cols: Vec<&str> = line.split(',').collect();
        assert_eq!(cols.len(), 7, "{line}");
        let r = &json[&(cols[0].to_string(), cols[2].to_string())];
        assert_eq!(cols[1].parse::<u64>().unwrap(), r["tasks"].as_u64().unwrap(), "{line}");
        assert_eq!(cols[3].parse::<f64>().unwrap(), f(&r["makespan"], "makespan"), "{line}");
        assert_eq!(cols[4].parse::<f64>().unwrap(), f(&r["lower_bound"], "lower_bound"), "{line}");
    }
}

/// `compare --no-timing` reports every elapsed_ms as 0, in each of its three outputs, so two
/// runs print the same bytes; without it the times are measured (some row takes > 0 ms).
#[test]
fn compare_no_timing_is_byte_identical_across_runs() {
    let (ex, mot) = (example(), motivating());
    for fmt in ["--csv", "--json", "--threads=1"] {
        let once = run(&["compare", &ex, &mot, fmt, "--no-timing"]).ok().stdout_str();
        assert_eq!(once, run(&["compare", &ex, &mot, fmt, "--no-timing"]).ok().stdout_str(), "{fmt}");
        if fmt == "--json" {
            let v: serde_json::Value = serde_json::from_str(&once).unwrap();
            assert!(v["rows"].as_array().unwrap().iter().all(|r| r["elapsed_ms"] == 0.0), "{once}");
            let timed = run(&["compare", &ex, &mot, fmt]).ok().json();
            assert!(timed["rows"].as_array().unwrap().iter().any(|r| f(&r["elapsed_ms"], "elapsed_ms") > 0.0));
        }
    }
}

#[test]
fn build_schedule_is_byte_identical_across_runs() {
    let (ex, mot, cl) = (example(), motivating(), motivating_cluster());
    let cases: Vec<Vec<&str>> = vec![
        vec![&ex, "--no-timing", "-q"],
        vec![&mot, "--cluster", &cl, "--no-timing", "-q"],
        vec![&ex, "--scheduler", "random", "--seed", "7", "--no-timing", "-q"],
        vec![&mot, "--cluster", &cl, "--scheduler", "random", "--seed", "7", "--no-timing", "-q"],
    ];
    for args in cases {
        let a = build(&args);
        let b = build(&args);
        assert!(!a.stdout.is_empty());
        assert!(a.stdout == b.stdout, "two runs of {args:?} differ");
    }
}

#[test]
fn graphene_output_does_not_depend_on_the_thread_count() {
    let (ex, mot, cl) = (example(), motivating(), motivating_cluster());
    for base in [vec![ex.as_str()], vec![mot.as_str(), "--cluster", cl.as_str()]] {
        let with = |k: &'static str| {
            let mut a = base.clone();
            a.extend(["--no-timing", "-q", "--threads", k]);
            build(&a).stdout
        };
        assert!(with("1") == with("2"), "{base:?}: 1 and 2 threads give different schedules");
    }
}

#[test]
fn random_scheduler_depends_on_its_seed() {
    // On the motivating example the order among ready tasks decides the makespan (103 to 297),
    // so a seed-blind random scheduler would give one output for every seed.
    let (mot, cl) = (motivating(), motivating_cluster());
    let outputs: std::collections::HashSet<Vec<u8>> = (0..8)
        .map(|seed| {
            let s = seed.to_string();
            build(&[&mot, "--cluster", &cl, "--scheduler", "random", "--seed", &s, "--no-timing", "-q"]).stdout
        })
        .collect();
    assert!(outputs.len() > 1, "8 seeds gave one and the same schedule");
}

#[test]
fn other_formats_schedule_and_validate_with_every_scheduler() {
    // The reader fixtures in tests/data (WfCommons, Decima TPC-H) carry no demands, so a demand
    // profile fills them in; validate must rebuild the very same DAG from the same flags.
    let dir = tempdir();
    let fixtures = [
        ("tests/data/wfcommons-1.4-example.json", vec!["--demands", "mixed", "--seed", "3"]),
        ("tests/data/tpch-2g-q6.json", vec!["--query", "6", "--demands", "uniform", "--seed", "5"]),
    ];
    for (fixture, flags) in fixtures {
        let path = repo(fixture);
        assert!(path.exists(), "fixture {fixture} is missing");
        let dag = path.display().to_string();
        for name in Scheduler::names() {
            let out = dir.path().join(format!("{name}.json")).display().to_string();
            let mut args = vec![dag.as_str(), "--scheduler", name, "--no-timing", "-q", "--out", &out];
            args.extend(flags.iter().copied());
            build(&args);
            let report: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
            let ms = f(&report["makespan"], "makespan");
            for (k, v) in report["lower_bounds"].as_object().unwrap() {
                assert!(geq(ms, f(v, k)), "{fixture}/{name}: makespan {ms} below {k} {v}");
            }
            let mut v_args = vec!["validate", dag.as_str(), &out];
            v_args.extend(flags.iter().copied());
            let v = run(&v_args);
            assert_eq!(v.code, Some(0), "{fixture}/{name}: validate rejects the schedule:\n{}", v.stderr);
        }
    }
}

/// Every DAG command takes a compressed Spark log and a rolling-log directory as `build-schedule`
/// does (`compare` once read them as text to look for a cluster in them); a log of several jobs
/// asks for `--job`, naming some of the DAGs, as a TPC-H file asks for `--query`.
#[test]
fn spark_logs_of_every_shape_go_to_every_dag_command_and_several_jobs_ask_for_job() {
    let zstd = repo("tests/data/spark/tpch-q3.zstd").display().to_string();
    let rolling = repo("tests/data/spark/eventlog_v2_tpch-q5-aqe").display().to_string();
    let small = ["--machines", "1", "--capacity", "cpu=4,mem=2"];
    for (log, job, dag) in [(&zstd, "0", "tpch-q3-job0"), (&rolling, "2", "tpch-q5-aqe-job2")] {
        let mut args =
            vec!["compare", log.as_str(), "--job", job, "--csv", "--no-timing", "--schedulers", "graphene,cp"];
        args.extend(small);
        let out = run(&args).ok().stdout_str();
        assert_eq!(out.lines().count(), 3, "{out}");
        assert!(out.lines().nth(1).unwrap().starts_with(&format!("{dag},")), "{out}");
        let lb = run(&["lower-bound", log.as_str(), "--job", job]).ok().stdout_str();
        assert!(lb.starts_with(&format!("{dag}: ")), "{lb}");
    }
    let mut args = vec!["build-schedule", rolling.as_str(), "-q"];
    args.extend(small);
    let r = run(&args);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("holds 15 DAGs (tpch-q5-aqe-job2, "), "{}", r.stderr);
    assert!(r.stderr.contains("pick one with --job ID"), "{}", r.stderr);
}

/// The values of the library's named enums (input formats, export formats, chart metrics, lanes,
/// placement keys) reach clap from the library's own list: `--help` shows each value with the
/// first paragraph of its doc comment, a listed name parses, another is refused naming them all.
#[test]
fn library_enums_are_the_clis_possible_values() {
    use graphene::choice::Choice;
    use graphene::export::ExportFormat;
    use graphene::formats::Format;

    let help = run(&["build-schedule", "--help"]).ok().stdout_str();
    let shown = |name: &str| -> Option<String> {
        let lines = help.lines().map(str::trim);
        lines.filter_map(|l| l.strip_prefix(&format!("- {name}:"))).map(|h| h.trim().to_string()).next()
    };
    for c in Format::CHOICES {
        assert_eq!(shown(c.name), c.help(), "build-schedule --help on {}:\n{help}", c.name);
    }
    assert_eq!(shown("native").as_deref(), Some("graphene's own `dag.json`"));

    let r = run(&["export", "--format", "bogus", "x.json"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    let names = ExportFormat::names().join(", ");
    assert_eq!(names, "tez, yarn, sls, csv, chrome");
    assert!(r.stderr.contains(&format!("[possible values: {names}]")), "{}", r.stderr);

    let ex = example();
    let out = build(&[&ex, "--format", "native", "--placement", "mixed,longest", "--no-timing", "--quiet"]).json();
    assert_eq!(out["dag"], "example");
    let r = run(&["build-schedule", &ex, "--placement", "Mixed"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("[possible values: longest, path-length, mixed]"), "{}", r.stderr);
}

/// `-h` is a page: at most 40 lines for every command, the common flags under their headings
/// (the scheduler first where a command has one); `--help` holds every flag, limits last.
#[test]
fn short_help_fits_a_page_and_long_help_is_grouped() {
    let commands: &[&[&str]] = &[
        &["build-schedule"],
        &["lower-bound"],
        &["validate"],
        &["compare"],
        &["gen-trace"],
        &["replay"],
        &["replay-compare"],
        &["export"],
        &["export-trace"],
        &["serve"],
        &["train-decima"],
        &["train-lachesis"],
        &["plot", "gantt"],
        &["plot", "usage"],
        &["plot", "cdf"],
    ];
    for c in commands {
        let short = run(&[c, &["-h"][..]].concat()).ok().stdout_str();
        let lines = short.lines().count();
        assert!(lines <= 40, "{} -h is {lines} lines:\n{short}", c.join(" "));
        let long = run(&[c, &["--help"][..]].concat()).ok().stdout_str();
        assert!(long.lines().count() > lines, "{}: --help adds nothing to -h", c.join(" "));
        assert!(long.contains("\nLimits:\n      --limit-tasks <N>"), "{}: no Limits heading:\n{long}", c.join(" "));
        assert!(!short.contains("--limit-tasks <N>"), "{}: limits in -h", c.join(" "));
    }
    let replay = run(&["replay", "--help"]).ok().stdout_str();
    let at = |s: &str| replay.find(s).unwrap_or_else(|| panic!("no {s} in replay --help"));
    assert!(at("\nScheduler:\n      --scheduler") < at("\nCluster:"), "{replay}");
    assert!(at("\nCluster:") < at("\nOnline scheduler knobs:"));
    assert!(at("\nOnline scheduler knobs:") < at("\nOutput:"));
    assert!(!replay.contains("[default: 0] [default: 0]"), "a default shown twice");
}
