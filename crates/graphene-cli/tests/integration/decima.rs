//! `decima` through the library and the CLI: valid schedules, the action rules (only runnable
//! stages that fit are picked, every action launches a task), seeded training is reproducible
//! bit for bit, and bad weights files are refused with the file and field named.

use std::collections::BTreeMap;

use graphene::formats::{self, LoadOptions};
use graphene::model::{Cluster, ClusterSpec, Dag, Workload};
use graphene::online::decima::{self, Decima, Model, TrainConfig};
use graphene::sim::{run, SimConfig};
use graphene::trace::{self, ArrivalProcess, TraceOptions};
use graphene::validate::validate_replay;

use crate::util::{repo, run as cli, tempdir, write};

fn small() -> (Workload, Cluster) {
    let (w, _) = trace::load(&repo("traces/small.csv"), &TraceOptions { format: None, queues: None }).unwrap();
    let c = ClusterSpec::uniform(2, ClusterSpec::default_capacity()).resolve(&w.jobs[0].dag.resources).unwrap();
    (w, c)
}

/// TPC-H Q6 at 2g (two stages, 13 tasks) with the default demand profile.
fn q6() -> Vec<Dag> {
    formats::load_dags(&repo("tests/data/tpch-2g-q6.json"), &LoadOptions { executors: 20, ..LoadOptions::default() })
        .unwrap()
}

fn small_cluster(machines: usize) -> Cluster {
    let cap: BTreeMap<String, f64> = [("cpu", 8.0), ("mem", 32.0), ("disk", 200.0), ("net", 1250.0)]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    ClusterSpec::uniform(machines, cap).resolve(&trace::RESOURCES.map(String::from)).unwrap()
}

/// A Poisson workload of Q6 jobs, dense enough that jobs overlap.
fn q6_workload(jobs: usize, seed: u64) -> Workload {
    trace::generate(&q6(), jobs, ArrivalProcess::Poisson { mean: 3.0 }, 1, seed).unwrap()
}

/// The bundled model and random weights (greedy and sampling) give schedules the independent
/// validator accepts, on the bundled trace and on a TPC-H workload, and every job ends.
#[test]
fn realized_schedules_are_valid() {
    let (w, c) = small();
    let q = q6_workload(30, 4);
    let qc = small_cluster(3);
    let bundled = Model::bundled().expect("the bundled model loads");
    for (name, w, c) in [("small", &w, &c), ("q6", &q, &qc)] {
        for (label, mut p) in [
            ("bundled", Decima::new(&bundled)),
            ("random", Decima::new(&Model::init(5))),
            ("sampling", Decima::sampling(&Model::init(6), 9)),
        ] {
            let r = run(w, c, &mut p, &SimConfig::default()).unwrap();
            assert_eq!(validate_replay(w, c, &r), vec![], "{name} {label}");
            assert!(r.jobs.iter().all(|j| j.finish.is_finite()), "{name} {label}: every job finishes");
        }
    }
}

/// Every action picks a stage with a runnable task (the softmax is masked to runnable stages
/// that fit the machine) and launches at least one task (limits above the job's share), under
/// sampling with several seeds, where every candidate gets picked sometimes.
#[test]
fn actions_pick_runnable_stages_and_launch_a_task() {
    let q = q6_workload(40, 11);
    let c = small_cluster(2);
    let mut total = 0;
    for seed in 0..4 {
        let mut p = Decima::sampling(&Model::init(seed), seed);
        p.actions = Some(Vec::new());
        let r = run(&q, &c, &mut p, &SimConfig::default()).unwrap();
        assert_eq!(validate_replay(&q, &c, &r), vec![]);
        let actions = p.actions.take().unwrap();
        assert!(!actions.is_empty());
        for a in &actions {
            assert!(a.was_runnable, "seed {seed}: picked stage {} of job {} with nothing runnable", a.stage, a.job);
            assert!(a.launched >= 1, "seed {seed}: an action launched nothing: {a:?}");
        }
        // Limits below "unlimited" are exercised too.
        assert!(actions.iter().any(|a| a.limit.is_finite()), "seed {seed}: some finite limit");
        total += actions.len();
    }
    assert!(total > 40, "{total} actions");
}

fn tiny_config(seed: u64) -> TrainConfig {
    TrainConfig {
        iterations: 3,
        rollouts: 3,
        seed,
        episode_start: 40.0,
        episode_growth: 10.0,
        episode_max: 80.0,
        mean_gap: 3.0,
        max_jobs: 20,
        ..TrainConfig::default()
    }
}

/// Same seed, same weights file, byte for byte (rollouts run in parallel); another seed gives
/// other weights; training moves the weights.
#[test]
fn training_is_a_function_of_its_seed() {
    let dags = q6();
    let c = small_cluster(2);
    let init = Model::init(1);
    let train = |seed| decima::train(&dags, &c, &tiny_config(seed), &init, &[], 0, &mut |_| {}).unwrap().last;
    let a = train(3);
    let b = train(3);
    let other = train(4);
    assert_eq!(a.to_json(), b.to_json());
    assert_ne!(a.params, other.params);
    assert_ne!(a.params, init.params);
}

/// Model selection: the kept weights are those with the lowest held-out score on the curve
/// (ties to the earlier iteration), scoring them again gives that score, and the last weights
/// are still returned beside them.
#[test]
fn training_keeps_the_best_checkpoint_of_the_curve() {
    let dags = q6();
    let c = small_cluster(2);
    let eval = [q6_workload(8, 11), q6_workload(8, 12)];
    let cfg = TrainConfig { iterations: 4, ..tiny_config(5) };
    let t = decima::train(&dags, &c, &cfg, &Model::init(2), &eval, 1, &mut |_| {}).unwrap();
    let curve: Vec<(usize, f64)> = t.stats.iter().filter_map(|s| s.eval_jct.map(|j| (s.iteration, j))).collect();
    assert_eq!(curve.len(), 5, "before and after each iteration");
    let min = curve.iter().map(|c| c.1).fold(f64::INFINITY, f64::min);
    let first = *curve.iter().find(|c| c.1 == min).unwrap();
    assert_eq!(t.best_at, Some(first));
    let again = decima::train::evaluate(&t.best, &eval, &c, cfg.heartbeat).unwrap();
    assert_eq!(again.to_bits(), min.to_bits(), "the kept weights are the ones scored");
    if first.0 < cfg.iterations {
        assert_ne!(t.best.params, t.last.params);
    }
}

/// A weights file that is not JSON, names another architecture, or has too few parameters is
/// refused with the file and the line or field; replay and train-decima exit non-zero with it.
#[test]
fn bad_model_files_are_refused_with_file_and_field() {
    let dir = tempdir();
    let good = Model::init(0).to_json();
    let v: serde_json::Value = serde_json::from_str(&good).unwrap();
    let mut arch = v.clone();
    arch["arch"]["embed"] = 16.into();
    let mut short = v.clone();
    short["params"].as_array_mut().unwrap().pop();
    let mut wrong = v.clone();
    wrong["format"] = "tensorflow".into();
    let cases = [
        ("syntax.json", "{\"format\": ".to_string(), "line 1"),
        ("arch.json", arch.to_string(), "arch.embed"),
        ("short.json", short.to_string(), "params"),
        ("format.json", wrong.to_string(), "format"),
    ];
    for (name, text, field) in cases {
        let p = write(dir.path(), name, &text);
        let e = Model::load(&p).unwrap_err().to_string();
        assert!(e.contains(name) && e.contains(field), "{name}: {e}");
        let r = cli(&[
            "replay".as_ref(),
            repo("traces/small.csv").as_os_str(),
            "--scheduler".as_ref(),
            "decima".as_ref(),
            "--decima-model".as_ref(),
            p.as_os_str(),
            "--out".as_ref(),
            dir.path().join("out").as_os_str(),
        ]);
        assert_eq!(r.code, Some(1), "{name}: {}", r.stderr);
        assert!(r.stderr.contains(name) && r.stderr.contains(field), "{name}: {}", r.stderr);
    }
    let missing = dir.path().join("missing.json");
    let e = Model::load(&missing).unwrap_err().to_string();
    assert!(e.contains("missing.json"), "{e}");
    // A good file round-trips.
    let p = write(dir.path(), "good.json", &good);
    assert!(Model::load(&p).unwrap() == Model::init(0), "weights survive the file bit for bit");
}

/// `train-decima` writes a weights file `replay --decima-model` reads, and the same command
/// twice writes the same bytes.
#[test]
fn train_decima_cli_round_trips() {
    let dir = tempdir();
    let out = |n: &str| dir.path().join(n);
    let train = |name: &str| {
        cli(&[
            "train-decima".as_ref(),
            "--dags".as_ref(),
            repo("tests/data/tpch-2g-q6.json").as_os_str(),
            "--machines".as_ref(),
            "2".as_ref(),
            "--iterations".as_ref(),
            "2".as_ref(),
            "--rollouts".as_ref(),
            "2".as_ref(),
            "--episode-start".as_ref(),
            "40".as_ref(),
            "--max-jobs".as_ref(),
            "10".as_ref(),
            "--eval-traces".as_ref(),
            "1".as_ref(),
            "--eval-jobs".as_ref(),
            "5".as_ref(),
            "--eval-every".as_ref(),
            "1".as_ref(),
            "--seed".as_ref(),
            "2".as_ref(),
            "--out".as_ref(),
            out(name).as_os_str(),
        ])
        .ok()
    };
    let r = train("a.json");
    assert!(r.stderr.contains("held-out mean JCT"), "{}", r.stderr);
    train("b.json");
    let a = std::fs::read(out("a.json")).unwrap();
    assert_eq!(a, std::fs::read(out("b.json")).unwrap());
    let m: serde_json::Value = serde_json::from_slice(&a).unwrap();
    let curve = m["trained"]["learning_curve"].as_array().unwrap();
    assert_eq!(curve.len(), 3, "before and after each iteration");
    let min = curve.iter().map(|c| c["mean_jct"].as_f64().unwrap()).fold(f64::INFINITY, f64::min);
    assert_eq!(m["trained"]["chosen"]["mean_jct"].as_f64(), Some(min), "the file keeps the best checkpoint");
    cli(&[
        "replay".as_ref(),
        repo("traces/small.csv").as_os_str(),
        "--scheduler".as_ref(),
        "decima".as_ref(),
        "--decima-model".as_ref(),
        out("a.json").as_os_str(),
        "--out".as_ref(),
        out("replay").as_os_str(),
        "-q".as_ref(),
    ])
    .ok();
}
