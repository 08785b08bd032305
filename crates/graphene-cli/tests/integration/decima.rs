//! `decima` through the library and the CLI: valid schedules, the action rules (only runnable
//! stages that fit are picked, every action launches a task), seeded training is reproducible
//! bit for bit, and bad weights files are refused with the file and field named.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use graphene::formats::{self, LoadOptions};
use graphene::model::{Cluster, ClusterSpec, Dag, Workload};
use graphene::online::decima::{self, Decima, Model, TrainConfig};
use graphene::sim::{run, SimConfig};
use graphene::trace::{self, ArrivalProcess, TraceOptions};
use graphene::validate::validate_replay;

use crate::util::{repo, run as cli, sss_trace, tempdir, write};

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

/// `train-decima` on `dags` for a few seconds: 10 executors on 3 one-slot machines, Poisson
/// arrivals every 4 s, 2 rollouts, one evaluation trace after every iteration, seed 5; `own`
/// and `extra` add to (or override) that, and the model goes to `DIR/out`.
fn tiny_train(dir: &Path, dags: &[String], own: &[&str], extra: &[&str], out: &str) -> crate::util::Run {
    let mut args: Vec<String> = vec!["train-decima".into(), "--dags".into()];
    args.extend(dags.iter().cloned());
    let common = [
        "--executors",
        "10",
        "--machines",
        "3",
        "--capacity",
        "cpu=1,mem=1,disk=1,net=1",
        "--arrival",
        "poisson:4",
        "--rollouts",
        "2",
        "--eval-traces",
        "1",
        "--eval-every",
        "1",
        "--seed",
        "5",
        "-q",
    ];
    args.extend(own.iter().chain(&common).chain(extra).map(|a| a.to_string()));
    args.extend(["--out".into(), dir.join(out).display().to_string()]);
    cli(&args)
}

/// Decima's TPC-H files in the shared data (2g to 20g), those that are there.
fn shared_tpch() -> Vec<PathBuf> {
    ["2g", "5g", "10g", "20g"]
        .iter()
        .filter_map(|s| crate::util::shared(&format!("data/decima-tpch/json/tpch-{s}.json")))
        .collect()
}

/// Writes `DIR/ss.csv`: a spark-sched-sim-style trace of 50 jobs from the shared TPC-H files
/// (Poisson arrivals with a mean gap of 25 s, 10 executors) with `extra` options; `None`
/// without the shared files.
fn spark_sched_sim_trace(dir: &Path, extra: &[&str]) -> Option<PathBuf> {
    let tpch_files = shared_tpch();
    if tpch_files.len() < 4 {
        return None;
    }
    let t = dir.join("ss.csv");
    let mut args: Vec<String> = vec!["gen-trace".into(), "--style".into(), "spark-sched-sim".into(), "--dags".into()];
    args.extend(tpch_files.iter().map(|p| p.display().to_string()));
    args.extend(extra.iter().map(|a| a.to_string()));
    for a in ["--jobs", "50", "--arrival", "poisson:25", "--executors", "10", "-q", "--out"] {
        args.push(a.into());
    }
    args.push(t.display().to_string());
    cli(&args).ok();
    Some(t)
}

/// `replay ARGS... --scheduler decima -q --out DIR/out` with the model at `model` (None: the
/// bundled one); the run must succeed.
fn replay_decima(trace: &Path, model: Option<&Path>, dir: &Path, extra: &[&str]) -> String {
    let mut args: Vec<String> = vec![
        "replay".into(),
        trace.display().to_string(),
        "--scheduler".into(),
        "decima".into(),
        "-q".into(),
        "--out".into(),
        dir.join("out").display().to_string(),
    ];
    if let Some(m) = model {
        args.extend(["--decima-model".into(), m.display().to_string()]);
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    cli(&args).ok().stderr
}

/// A tiny spark-sched-sim-style training run on TPC-H Q6 (8-job episodes, 2 iterations) into
/// `dir/out`, with `extra` flags.
fn tiny_sss_train(dir: &Path, out: &str, extra: &[&str]) -> crate::util::Run {
    let q6 = repo("tests/data/tpch-2g-q6.json");
    let sss =
        ["--style", "spark-sched-sim", "--jobs", "8", "--iterations", "2", "--episode-start", "40", "--eval-jobs", "5"];
    tiny_train(dir, &[q6.display().to_string()], &sss, extra, out)
}

/// [`tiny_sss_train`] twice with the same flags into `a` and `b`: the same bytes (returned).
fn trained_twice(dir: &Path, a: &str, b: &str, extra: &[&str]) -> String {
    tiny_sss_train(dir, a, extra).ok();
    tiny_sss_train(dir, b, extra).ok();
    let text = std::fs::read_to_string(dir.join(a)).unwrap();
    assert_eq!(text, std::fs::read_to_string(dir.join(b)).unwrap(), "{extra:?}: same seed, same bytes");
    text
}

/// The setting of replaying traces/small.csv on 2 default machines, as a model would record it.
fn small_setting() -> decima::Setting {
    let (w, c) = small();
    let run = decima::RunShape::of(&w, &c, &[], 1.0);
    decima::Setting {
        machines: run.machines,
        overbook: run.overbook,
        speeds: None,
        heartbeat: 1.0,
        arrival: decima::setting::Arrival { poisson_mean: run.mean_gap.unwrap(), load: run.load },
        jobs: w.jobs.len(),
        dags: vec![decima::setting::DagSource { file: "small.csv".into(), format: None, query: None }],
        executors: 20,
        demands: "default".into(),
        demand_seed: 0,
        waves: None,
        sticky: false,
    }
}

/// `replay --scheduler decima` prints one warning naming each differing field with both values
/// when the run's setting is not the model's, nothing when it is, a note for a model without a
/// setting, and it never fails the run.
#[test]
fn decima_replay_warns_when_the_setting_differs() {
    let dir = tempdir();
    let trace = repo("traces/small.csv");
    let mut m = Model::init(4);
    m.set_setting(&small_setting());
    let matching = write(dir.path(), "matching.json", &m.to_json());
    let e = replay_decima(&trace, Some(&matching), dir.path(), &["--machines", "2"]);
    assert!(!e.contains("warning"), "a matching run: {e}");

    let e = replay_decima(&trace, Some(&matching), dir.path(), &["--machines", "3", "--no-overbook"]);
    assert_eq!(e.matches("warning").count(), 1, "one warning: {e}");
    assert!(e.contains("matching.json was trained for another setting (3 field(s) differ"), "{e}");
    assert!(e.contains("  machines: model trained with 2; this run has 3"), "{e}");
    assert!(e.contains("  overbooked resources: model trained with disk,net; this run has none"), "{e}");
    // A third more machines, the same jobs: the offered load falls by a third, beyond 1.5x.
    assert!(e.contains("  offered load: model trained with 158%; this run has 106%"), "{e}");
    assert!(!e.contains("capacity"), "{e}");

    let e = replay_decima(&trace, Some(&matching), dir.path(), &["--machines", "2", "--heartbeat", "2"]);
    assert!(e.contains("  heartbeat: model trained with 1 s; this run has 2 s"), "{e}");

    // replay-compare warns too, once, when decima is among its schedulers.
    let r = cli(&[
        "replay-compare".as_ref(),
        trace.as_os_str(),
        "--schedulers".as_ref(),
        "fifo,decima".as_ref(),
        "--decima-model".as_ref(),
        matching.as_os_str(),
        "--machines".as_ref(),
        "3".as_ref(),
        "-q".as_ref(),
    ])
    .ok();
    assert_eq!(r.stderr.matches("warning").count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("machines: model trained with 2; this run has 3"), "{}", r.stderr);
    let r =
        cli(&["replay-compare".as_ref(), trace.as_os_str(), "--schedulers".as_ref(), "fifo".as_ref(), "-q".as_ref()])
            .ok();
    assert!(!r.stderr.contains("warning"), "no decima, no warning: {}", r.stderr);

    // A file written before settings were kept: the setting is unknown.
    let old = write(dir.path(), "old.json", &Model::init(4).to_json());
    let e = replay_decima(&trace, Some(&old), dir.path(), &[]);
    assert!(e.contains("warning: decima model") && e.contains("old.json records no training setting"), "{e}");

    // The bundled model on its own setting's cluster: the small trace is slower-paced and
    // smaller than TPC-H at 80% load, but the cluster matches.
    let e = replay_decima(&trace, None, dir.path(), &[]);
    assert!(!e.contains("capacity") && !e.contains("machines:"), "{e}");
}

/// `train-decima` records the setting it trained for: the cluster, heartbeat, arrival rate
/// (given by --arrival, or by --load), jobs per episode and DAG sources; the flags' bad values
/// are refused naming them.
#[test]
fn train_decima_records_its_setting() {
    let dir = tempdir();
    let q6 = repo("tests/data/tpch-2g-q6.json");
    let train = |out: &str, extra: &[&str]| {
        let mut args: Vec<String> = vec![
            "train-decima".into(),
            "--dags".into(),
            q6.display().to_string(),
            "--machines".into(),
            "2".into(),
            "--iterations".into(),
            "1".into(),
            "--rollouts".into(),
            "2".into(),
            "--episode-start".into(),
            "40".into(),
            "--eval-every".into(),
            "0".into(),
            "-q".into(),
            "--out".into(),
            dir.path().join(out).display().to_string(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        cli(&args)
    };
    train(
        "a.json",
        &["--arrival", "poisson:3", "--jobs", "12", "--heartbeat", "2", "--executors", "10", "--query", "6"],
    )
    .ok();
    let m = Model::load(&dir.path().join("a.json")).unwrap();
    let s = m.setting().unwrap().expect("a setting");
    assert_eq!(s.machines.len(), 1);
    assert_eq!(s.machines[0].count, 2);
    assert_eq!(s.machines[0].capacity, ClusterSpec::default_capacity());
    assert_eq!(s.overbook, ["disk", "net"]);
    assert_eq!((s.heartbeat, s.jobs, s.executors), (2.0, 12, 10));
    assert_eq!(s.arrival.poisson_mean, 3.0);
    let load = s.arrival.load.expect("estimated");
    assert!(load > 0.0 && load.is_finite(), "{load}");
    assert_eq!(s.dags.len(), 1);
    assert_eq!((s.dags[0].file.as_str(), s.dags[0].query), ("tpch-2g-q6.json", Some(6)));
    assert_eq!(m.trained["config"]["max_jobs"], 12);
    assert_eq!(m.trained["config"]["mean_gap"], 3.0);

    // --load sets the rate instead; the model's own load is the target.
    train("b.json", &["--load", "0.5", "--max-jobs", "9", "--no-overbook"]).ok();
    let s = Model::load(&dir.path().join("b.json")).unwrap().setting().unwrap().unwrap();
    assert_eq!((s.arrival.load, s.jobs), (Some(0.5), 9));
    assert!(s.overbook.is_empty());
    // The estimated load of a mean gap inverts the mean gap of a load.
    train("c.json", &["--arrival", &format!("poisson:{}", s.arrival.poisson_mean), "--no-overbook"]).ok();
    let c = Model::load(&dir.path().join("c.json")).unwrap().setting().unwrap().unwrap();
    // (Up to the arrivals' rounding to milliseconds.)
    assert!((c.arrival.load.unwrap() - 0.5).abs() < 1e-6, "{:?}", c.arrival);

    for (extra, needle) in [
        (&["--arrival", "fixed:3"][..], "--arrival"),
        (&["--arrival", "poisson:0"][..], "--arrival"),
        (&["--arrival", "poisson:3", "--load", "0.5"][..], "--load"),
        (&["--jobs", "0"][..], "--jobs"),
        (&["--heartbeat", "0"][..], "--heartbeat"),
        (&["--speeds", "1,2"][..], "--speeds"),
    ] {
        let r = train("bad.json", extra);
        assert_eq!(r.code, Some(if needle == "--load" { 2 } else { 1 }), "{extra:?}: {}", r.stderr);
        assert!(r.stderr.contains(needle), "{extra:?}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    }
    // Training with the setting of the small trace and replaying it there: no warning.
    let e =
        replay_decima(&repo("traces/small.csv"), Some(&dir.path().join("a.json")), dir.path(), &["--machines", "2"]);
    assert!(e.contains("heartbeat: model trained with 2 s; this run has 1 s"), "{e}");
}

/// `gen-trace --style spark-sched-sim`: the documented shape (job count, one-slot tasks, one
/// duration per stage equal to the stage's mean sample at --executors, Poisson arrivals at the
/// given mean), deterministic for a seed; a decima replay of it with the bundled model warns
/// about the cluster, and a replay with another scheduler does not.
#[test]
fn decima_spark_sched_sim_trace_has_the_documented_shape() {
    let dir = tempdir();
    let q6 = repo("tests/data/tpch-2g-q6.json");
    let tpch = shared_tpch();
    let files = if tpch.len() == 4 { tpch } else { vec![q6.clone()] };
    let out = dir.path().join("ss.csv");
    let gen = |out: &Path| {
        let mut args: Vec<String> =
            vec!["gen-trace".into(), "--style".into(), "spark-sched-sim".into(), "--dags".into()];
        args.extend(files.iter().map(|p| p.display().to_string()));
        for a in ["--jobs", "50", "--arrival", "poisson:25", "--executors", "10", "--seed", "1", "-q", "--out"] {
            args.push(a.into());
        }
        args.push(out.display().to_string());
        cli(&args).ok()
    };
    gen(&out);
    let text = std::fs::read_to_string(&out).unwrap();
    gen(&dir.path().join("again.csv"));
    assert_eq!(text, std::fs::read_to_string(dir.path().join("again.csv")).unwrap(), "same seed, same bytes");
    let (w, _) = trace::load(&out, &TraceOptions { format: None, queues: None }).unwrap();
    assert_eq!(w.jobs.len(), 50);
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(&f[6..10], ["1", "0", "0", "0"], "cpu=1 only: {line}");
        assert_eq!(f[11], "", "one duration per stage, no per-task list: {line}");
    }
    // Arrivals: exactly the seed's exponential draws (the arrival stream does not depend on
    // which DAGs are drawn), and their mean gap within 3 standard errors of 25 s.
    let want = trace::generate(&self::q6(), 50, ArrivalProcess::Poisson { mean: 25.0 }, 1, 1).unwrap();
    let arrivals = |w: &Workload| w.jobs.iter().map(|j| j.arrival).collect::<Vec<_>>();
    assert_eq!(arrivals(&w), arrivals(&want));
    let gap = w.jobs[49].arrival / 49.0;
    assert!((gap - 25.0).abs() <= 3.0 * 25.0 / 49f64.sqrt(), "mean gap {gap}");
    // Durations: with the Q6 fixture alone every job is Q6, at its stage means for 10 executors.
    let means = formats::tpch::parse_with(
        &std::fs::read_to_string(&q6).unwrap(),
        "q6",
        None,
        10,
        formats::tpch::Durations::StageMean,
    )
    .unwrap();
    let single = dir.path().join("q6.csv");
    sss_trace(&q6, 50, "poisson:25", 1, &single, None);
    let (w6, _) = trace::load(&single, &TraceOptions { format: None, queues: None }).unwrap();
    for j in &w6.jobs {
        let d: Vec<f64> = j.dag.tasks.iter().map(|t| t.duration).collect();
        assert_eq!(d, means[0].tasks.iter().map(|t| t.duration).collect::<Vec<_>>());
    }
    // Flags that choose DAGs or demands another way are refused, naming them.
    let r = cli(&[
        "gen-trace",
        "--style",
        "spark-sched-sim",
        "--dags",
        q6.to_str().unwrap(),
        "--jobs",
        "3",
        "--demands",
        "mixed",
    ]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("--demands"), "{}", r.stderr);
    let r = cli(&[
        "gen-trace",
        "--style",
        "spark-sched-sim",
        "--dags",
        &repo("traces/example.json").display().to_string(),
        "--jobs",
        "3",
    ]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("example.json") && r.stderr.contains("TPC-H"), "{}", r.stderr);

    // Replayed on 10 one-slot executors (the Q6 trace: a replay of the full mix takes longer
    // than this test should): the TPC-H model warns about the cluster.
    let cluster = ["--machines", "10", "--capacity", "cpu=1,mem=1,disk=1,net=1"];
    let e = replay_decima(&single, Some(&repo("crates/graphene/models/decima-tpch.json")), dir.path(), &cluster);
    assert_eq!(e.matches("warning").count(), 1, "{e}");
    assert!(
        e.contains(
            "capacity: model trained with cpu=16,disk=200,mem=64,net=1250; this run has cpu=1,disk=1,mem=1,net=1"
        ),
        "{e}"
    );
    assert!(e.contains("mean arrival gap: model trained with 8.01 s (Poisson)"), "{e}");
    let mut args = vec!["replay", single.to_str().unwrap(), "--scheduler", "fifo", "-q", "--out"];
    let o = dir.path().join("fifo");
    args.push(o.to_str().unwrap());
    args.extend(cluster);
    let r = cli(&args).ok();
    assert!(!r.stderr.contains("warning"), "{}", r.stderr);
}

/// The model trained for Decima's own setting (`models/decima-sss.json`, see
/// `crates/graphene/models/README.md`): it loads, records 10 one-slot executors, 50-job episodes
/// of spark-sched-sim's TPC-H mix at a mean gap of 25 s, and so raises no warning for a run of
/// that setting and one for the multi-resource TPC-H setting the bundled model is for.
#[test]
fn the_spark_sched_sim_model_has_its_setting() {
    let path = repo("crates/graphene/models/decima-sss.json");
    let m = Model::load(&path).expect("the model loads");
    assert_eq!(m.to_json(), std::fs::read_to_string(&path).unwrap(), "the file is what this build writes");
    let s = m.setting().unwrap().expect("a setting");
    let one: BTreeMap<String, f64> = ["cpu", "disk", "mem", "net"].into_iter().map(|r| (r.to_string(), 1.0)).collect();
    assert_eq!(s.machines, vec![graphene::model::MachineGroup { count: 10, capacity: one.clone() }]);
    assert_eq!((s.heartbeat, s.jobs, s.executors), (1.0, 50, 10));
    assert_eq!(s.arrival.poisson_mean, 25.0);
    assert_eq!(s.demands, "spark-sched-sim");
    assert_eq!(m.trained["style"], "spark-sched-sim");
    let files: Vec<&str> = s.dags.iter().map(|d| d.file.as_str()).collect();
    assert_eq!(files, ["tpch-2g.json", "tpch-5g.json", "tpch-10g.json", "tpch-20g.json"]);

    // A run of its setting (a 50-job sequence at its load): no difference. The bundled model's
    // setting (10 x 16 cores, 8 s gaps, 200 jobs): the cluster and the arrival rate differ.
    let c = ClusterSpec::uniform(10, one).resolve(&trace::RESOURCES.map(String::from)).unwrap();
    let own = decima::RunShape {
        machines: decima::setting::groups(&c),
        overbook: decima::setting::overbooked(&c),
        speeds: None,
        heartbeat: 1.0,
        jobs: 50,
        mean_gap: Some(25.8),
        load: s.arrival.load,
        waves: None,
        sticky: false,
    };
    assert_eq!(s.differences(&own), vec![]);
    assert_eq!(decima::setting::warning(Some(&s), "decima-sss.json", &own), None);
    let other = Model::bundled().unwrap().setting().unwrap().unwrap();
    let tpch = decima::RunShape {
        machines: other.machines.clone(),
        overbook: other.overbook.clone(),
        speeds: None,
        heartbeat: 1.0,
        jobs: 200,
        mean_gap: Some(other.arrival.poisson_mean),
        load: other.arrival.load,
        waves: None,
        sticky: false,
    };
    let fields: Vec<&str> = s.differences(&tpch).iter().map(|d| d.field).collect();
    assert!(fields.contains(&"capacity") && fields.contains(&"mean arrival gap"), "{fields:?}");
    assert!(other.differences(&own).iter().any(|d| d.field == "capacity"), "and the other way round");

    // Through the CLI, on a spark-sched-sim trace drawn from the shared TPC-H files (skipped
    // without them): no warning on 10 one-slot machines, a warning on the default cluster.
    let dir = tempdir();
    let Some(t) = spark_sched_sim_trace(dir.path(), &["--seed", "42"]) else { return };
    let one_slot = ["--machines", "10", "--capacity", "cpu=1,mem=1,disk=1,net=1"];
    let e = replay_decima(&t, Some(&path), dir.path(), &one_slot);
    assert!(!e.contains("warning"), "its own setting: {e}");
    let e = replay_decima(&t, None, dir.path(), &one_slot);
    assert!(!e.contains("warning"), "without --decima-model the bundled model of this setting is picked: {e}");
    let e = replay_decima(&t, Some(&repo("crates/graphene/models/decima-tpch.json")), dir.path(), &one_slot);
    assert!(e.contains("warning") && e.contains("capacity"), "the TPC-H model warns there: {e}");
    let e = replay_decima(&t, Some(&path), dir.path(), &["--machines", "10"]);
    assert!(e.contains("decima-sss.json was trained for another setting") && e.contains("capacity"), "{e}");
}

/// Without `--decima-model`, `replay --scheduler decima` runs the bundled model whose setting
/// is closest to the run: on spark-sched-sim's one-slot workload of the full 2g-100g mix, the
/// model trained for exactly that (the same JCTs as naming it), not the multi-resource TPC-H
/// model, which is several times worse there; on the default cluster, the TPC-H model. The
/// warning names the model picked.
#[test]
fn decima_picks_the_bundled_model_of_the_run_setting() {
    let dir = tempdir();
    let Some(t) = spark_sched_sim_trace(dir.path(), &["--seed", "9601", "--sizes", "2g,5g,10g,20g,50g,80g,100g"])
    else {
        return;
    };
    let one_slot = ["--machines", "10", "--capacity", "cpu=1,mem=1,disk=1,net=1", "--no-timing"];
    let jobs = |model: Option<&Path>| {
        let e = replay_decima(&t, model, dir.path(), &one_slot);
        (e, std::fs::read_to_string(dir.path().join("out/jobs.csv")).unwrap())
    };
    let (e, picked) = jobs(None);
    assert!(!e.contains("warning"), "{e}");
    let (_, sss100) = jobs(Some(&repo("crates/graphene/models/decima-sss-100g.json")));
    assert_eq!(picked, sss100, "the model trained for 2g-100g on 10 one-slot executors");
    let (e, tpch) = jobs(Some(&repo("crates/graphene/models/decima-tpch.json")));
    assert!(e.contains("capacity: model trained with cpu=16"), "{e}");
    let mean = |csv: &str| {
        let mut r = csv::Reader::from_reader(csv.as_bytes());
        let col = r.headers().unwrap().iter().position(|h| h == "jct").expect("a jct column");
        let v: Vec<f64> = r.records().map(|x| x.unwrap()[col].parse().unwrap()).collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    assert!(mean(&tpch) > 2.0 * mean(&picked), "tpch {} picked {}", mean(&tpch), mean(&picked));

    // On the default cluster (16 cores, 64 GB, ...) the TPC-H model is the closest; it differs
    // in the arrivals only, and the warning says it was picked and lists what is bundled.
    let e = replay_decima(&t, None, dir.path(), &["--no-timing"]);
    assert!(e.contains("bundled models/decima-tpch.json, the closest to this run"), "{e}");
    assert!(!e.contains("capacity:"), "{e}");
    assert!(
        e.contains("no bundled model was trained for this setting (bundled: decima-tpch.json, decima-sss.json"),
        "{e}"
    );
}

/// `train-decima --style spark-sched-sim` draws jobs as `gen-trace --style spark-sched-sim`
/// does (one-slot tasks at their stage's mean duration), records that in the file, and is
/// deterministic for a seed; `--features log` and `--freed own-job` are kept as
/// `trained.features` and `trained.freed` and read back; flags that do not go with the style,
/// or a scaling or rule unlike `--init`'s, are refused.
#[test]
fn train_decima_spark_sched_sim_style_and_options() {
    let dir = tempdir();
    let q6 = repo("tests/data/tpch-2g-q6.json");
    let own =
        ["--style", "spark-sched-sim", "--jobs", "8", "--iterations", "2", "--episode-start", "40", "--eval-jobs", "5"];
    let train = |out: &str, extra: &[&str]| tiny_train(dir.path(), &[q6.display().to_string()], &own, extra, out);
    train("a.json", &["--features", "log", "--freed", "own-job"]).ok();
    train("b.json", &["--features", "log", "--freed", "own-job"]).ok();
    let a = std::fs::read_to_string(dir.path().join("a.json")).unwrap();
    assert_eq!(a, std::fs::read_to_string(dir.path().join("b.json")).unwrap(), "same seed, same bytes");
    let m = Model::load(&dir.path().join("a.json")).unwrap();
    assert_eq!(m.trained["style"], "spark-sched-sim");
    assert_eq!(m.trained["features"], "log");
    assert_eq!(m.scaling().unwrap(), decima::features::Scaling::Log);
    assert_eq!(m.trained["freed"], "own-job");
    assert_eq!(m.freed().unwrap(), decima::policy::Freed::OwnJob);
    let s = m.setting().unwrap().unwrap();
    assert_eq!((s.demands.as_str(), s.executors, s.jobs), ("spark-sched-sim", 10, 8));
    assert_eq!(s.machines[0].capacity["cpu"], 1.0);
    // Without --features the file says nothing (linear, as every older file).
    train("c.json", &[]).ok();
    let c = Model::load(&dir.path().join("c.json")).unwrap();
    assert!(c.trained.get("features").is_none() && c.trained.get("freed").is_none());
    assert_eq!(c.scaling().unwrap(), decima::features::Scaling::Linear);
    assert_eq!(c.freed().unwrap(), decima::policy::Freed::AnyJob);
    assert_ne!(c.params, m.params, "another scaling, other gradients");
    // Continuing from a log-scaled file keeps its scaling; asking for another is refused.
    train("d.json", &["--init", dir.path().join("a.json").to_str().unwrap()]).ok();
    let d = Model::load(&dir.path().join("d.json")).unwrap();
    assert_eq!((&d.trained["features"], &d.trained["freed"]), (&"log".into(), &"own-job".into()));
    for flag in ["--features=linear", "--freed=any-job"] {
        let r = train("e.json", &["--init", dir.path().join("a.json").to_str().unwrap(), flag]);
        assert_eq!(r.code, Some(1), "{}", r.stderr);
        assert!(r.stderr.contains(flag.split('=').next().unwrap()), "{}", r.stderr);
    }
    for flag in [&["--demands", "mixed"][..], &["--query", "6"][..]] {
        let r = train("f.json", flag);
        assert_eq!(r.code, Some(1), "{}", r.stderr);
        assert!(r.stderr.contains(flag[0]) && r.stderr.contains("spark-sched-sim"), "{}", r.stderr);
    }
    // Both models replay the style's one-slot jobs to valid schedules; under own-job, freed
    // slots stay with their machine's job.
    let w = trace::spark_sched_sim::generate(
        std::slice::from_ref(&q6),
        12,
        ArrivalProcess::Poisson { mean: 4.0 },
        1,
        10,
        3,
    )
    .unwrap();
    let cl = ClusterSpec::uniform(
        3,
        [("cpu", 1.0), ("mem", 1.0), ("disk", 1.0), ("net", 1.0)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
    .resolve(&trace::RESOURCES.map(String::from))
    .unwrap();
    for model in [&m, &c] {
        let r = run(&w, &cl, &mut Decima::new(model), &SimConfig::default()).unwrap();
        assert_eq!(validate_replay(&w, &cl, &r), vec![]);
        assert!(r.jobs.iter().all(|j| j.finish.is_finite()));
    }
    assert!(w.jobs.iter().all(|j| j.dag.tasks.iter().all(|t| t.demand.0[0] == 1.0)));
}

/// `--sizes` on `gen-trace --style spark-sched-sim` and `train-decima --style spark-sched-sim`:
/// a size no file holds is made from the two largest sizes given (here Q6 at 2g and a copy
/// sized 5g whose scan stage has 29 tasks, so 50g's scan has 29 + 17/3 x 45 = 284), draws are
/// the same bytes for a seed, the trainer keeps the sizes as `trained.sizes`, and bad sizes are
/// clear errors, never panics.
#[test]
fn spark_sched_sim_sizes_are_made_drawn_and_recorded() {
    let dir = tempdir();
    let q6 = repo("tests/data/tpch-2g-q6.json");
    let text = std::fs::read_to_string(&q6).unwrap();
    assert!(text.contains(r#""input_size":"2g""#) && text.contains(r#""num_tasks":12,"#));
    let five = dir.path().join("q6-5g.json");
    std::fs::write(
        &five,
        text.replace(r#""input_size":"2g""#, r#""input_size":"5g""#)
            .replace(r#""num_tasks":12,"#, r#""num_tasks":29,"#),
    )
    .unwrap();
    let files = [q6.display().to_string(), five.display().to_string()];
    let gen = |out: &str, sizes: &str, extra: &[&str]| {
        let mut args: Vec<String> = vec!["gen-trace".into(), "--dags".into(), files[0].clone(), files[1].clone()];
        args.extend(extra.iter().map(|s| s.to_string()));
        for a in ["--sizes", sizes, "--jobs", "40", "--arrival", "poisson:25", "--executors", "10", "--seed", "4"] {
            args.push(a.into());
        }
        args.extend(["-q".into(), "--out".into(), dir.path().join(out).display().to_string()]);
        cli(&args)
    };
    let sss = ["--style", "spark-sched-sim"];
    gen("a.csv", "2g,50g", &sss).ok();
    gen("b.csv", "2g,50g", &sss).ok();
    let a = std::fs::read_to_string(dir.path().join("a.csv")).unwrap();
    assert_eq!(a, std::fs::read_to_string(dir.path().join("b.csv")).unwrap(), "same seed, same bytes");
    // Stage s0 rows: 12 tasks (2g) or 284 (made 50g), nothing else; both sizes drawn.
    let scans: Vec<&str> =
        a.lines().filter(|l| l.split(',').nth(3) == Some("s0")).map(|l| l.split(',').nth(4).unwrap()).collect();
    assert_eq!(scans.len(), 40);
    assert!(scans.iter().all(|n| *n == "12" || *n == "284"), "{scans:?}");
    assert!(scans.contains(&"12") && scans.contains(&"284"), "{scans:?}");
    for (sizes, extra, says) in [
        ("2g,50g", &[][..], "--sizes goes with --style spark-sched-sim"),
        ("3g", &sss[..], "only above the largest file's (5g)"),
        ("50", &sss[..], "'50' is not a size like 50g"),
        ("50g,50g", &sss[..], "50g is listed twice"),
    ] {
        let r = gen("c.csv", sizes, extra);
        assert_eq!(r.code, Some(1), "{sizes}: {}", r.stderr);
        assert!(r.stderr.contains(says) && !r.stderr.contains("panicked"), "{sizes}: {}", r.stderr);
    }
    let own = ["--sizes", "2g,50g", "--jobs", "6", "--iterations", "1", "--eval-jobs", "4"];
    let train = |out: &str, extra: &[&str]| tiny_train(dir.path(), &files[..2], &own, extra, out);
    train("m.json", &sss).ok();
    train("n.json", &sss).ok();
    let m = std::fs::read_to_string(dir.path().join("m.json")).unwrap();
    assert_eq!(m, std::fs::read_to_string(dir.path().join("n.json")).unwrap(), "same seed, same bytes");
    let m = Model::load(&dir.path().join("m.json")).unwrap();
    assert_eq!(m.trained["sizes"], serde_json::json!(["2g", "50g"]));
    let r = train("o.json", &[]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("--sizes goes with --style spark-sched-sim"), "{}", r.stderr);
}

/// `decima-sss-100g.json`, the model for Decima's own setting over the full size mix 2g-100g
/// (50g/80g/100g made by `--sizes`): its file is what this build writes, its setting is the
/// mix's (10 one-slot machines, 50 jobs, 25 s gaps, the offered load of 2g-100g) and keeps the
/// sizes; on a 2g-100g trace it replays with no warning, while the 2g-20g model warns about
/// the offered load.
#[test]
fn the_full_mix_model_has_its_setting() {
    let path = repo("crates/graphene/models/decima-sss-100g.json");
    let m = Model::load(&path).expect("the model loads");
    assert_eq!(m.to_json(), std::fs::read_to_string(&path).unwrap(), "the file is what this build writes");
    let s = m.setting().unwrap().expect("a setting");
    assert_eq!((s.heartbeat, s.jobs, s.executors), (1.0, 50, 10));
    assert_eq!((s.arrival.poisson_mean, s.demands.as_str()), (25.0, "spark-sched-sim"));
    assert_eq!(s.arrival.load, Some(2.662908112671691));
    assert_eq!(m.trained["style"], "spark-sched-sim");
    assert_eq!(m.trained["sizes"], serde_json::json!(["2g", "5g", "10g", "20g", "50g", "80g", "100g"]));
    assert_eq!(m.scaling().unwrap(), decima::features::Scaling::Log);
    let files: Vec<&str> = s.dags.iter().map(|d| d.file.as_str()).collect();
    assert_eq!(files, ["tpch-2g.json", "tpch-5g.json", "tpch-10g.json", "tpch-20g.json"]);

    let dir = tempdir();
    let Some(t) = spark_sched_sim_trace(dir.path(), &["--sizes", "2g,5g,10g,20g,50g,80g,100g", "--seed", "9501"])
    else {
        return;
    };
    let one_slot = ["--machines", "10", "--capacity", "cpu=1,mem=1,disk=1,net=1"];
    let e = replay_decima(&t, Some(&path), dir.path(), &one_slot);
    assert!(!e.contains("warning"), "its own setting: {e}");
    let e = replay_decima(&t, Some(&repo("crates/graphene/models/decima-sss.json")), dir.path(), &one_slot);
    assert!(e.contains("decima-sss.json was trained for another setting") && e.contains("offered load"), "{e}");
}

/// `train-decima --style spark-sched-sim --waves`: every episode and held-out workload runs
/// wave durations (the sidecar `gen-trace --waves-out` would write, made in memory), so the
/// learning curve and the weights differ from the same run without them; the same seed gives
/// the same bytes; the file records the waves (and `--moving-delay`) in its setting, reads
/// back and writes the same text; `replay` and `replay-compare --scheduler decima` warn when a
/// waves-trained model runs without `--waves` and a model trained without them runs with it;
/// `--waves` without the style is refused.
#[test]
fn train_decima_waves_is_seeded_recorded_and_warned_about() {
    let dir = tempdir();
    let d = dir.path();
    let q6 = repo("tests/data/tpch-2g-q6.json");
    let train = |out: &str, extra: &[&str]| tiny_sss_train(d, out, extra);
    let a = trained_twice(d, "a.json", "b.json", &["--waves"]);
    let m = Model::load(&d.join("a.json")).unwrap();
    assert_eq!(m.to_json(), a, "the file reads back to the same text");
    let s = m.setting().unwrap().unwrap();
    assert_eq!(s.waves, Some(decima::setting::WavesSetting { moving_delay: 2.0 }));
    assert_eq!(m.trained["waves"], serde_json::json!({"moving_delay": 2.0}));
    train("c.json", &["--waves", "--moving-delay", "0.5"]).ok();
    let c = Model::load(&d.join("c.json")).unwrap();
    assert_eq!(c.setting().unwrap().unwrap().waves, Some(decima::setting::WavesSetting { moving_delay: 0.5 }));
    train("p.json", &[]).ok();
    let p = Model::load(&d.join("p.json")).unwrap();
    assert_eq!(p.setting().unwrap().unwrap().waves, None);
    assert!(p.trained.get("waves").is_none() && !std::fs::read_to_string(d.join("p.json")).unwrap().contains("waves"));
    assert_ne!(m.trained["learning_curve"], p.trained["learning_curve"], "held-out scores under wave durations");
    assert_ne!(m.params, p.params, "episodes under wave durations");

    // Refused: --waves without the style, --moving-delay without --waves or not a duration.
    let plain = ["--jobs", "8", "--iterations", "1", "--eval-jobs", "5"];
    let r = tiny_train(d, &[q6.display().to_string()], &plain, &["--waves"], "e.json");
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("--waves goes with --style spark-sched-sim"), "{}", r.stderr);
    let r = train("e.json", &["--moving-delay", "1"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    let r = train("e.json", &["--waves", "--moving-delay", "-1"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("--moving-delay") && !r.stderr.contains("panicked"), "{}", r.stderr);
    assert!(!d.join("e.json").exists());

    // Replays: a trace of the models' own setting and its sidecar.
    let (t, w) = (d.join("t.csv"), d.join("w.json"));
    sss_trace(&q6, 8, "poisson:4", 9, &t, Some(&w));
    let one_slot = ["--machines", "3", "--capacity", "cpu=1,mem=1,disk=1,net=1"];
    let waves = [&one_slot[..], &["--waves", w.to_str().unwrap()]].concat();
    let durations = "durations: model trained with";
    let e = replay_decima(&t, Some(&d.join("a.json")), d, &waves);
    assert!(!e.contains(durations) && !e.contains("moving delay"), "its own durations: {e}");
    let e = replay_decima(&t, Some(&d.join("a.json")), d, &one_slot);
    assert!(
        e.contains("a.json was trained for another setting")
            && e.contains("\n  durations: model trained with wave durations (--waves, moving delay 2 s); this run has the trace's durations (no --waves)"),
        "{e}"
    );
    let e = replay_decima(&t, Some(&d.join("p.json")), d, &waves);
    assert!(
        e.contains("\n  durations: model trained with the trace's durations (no --waves); this run has wave durations (--waves, moving delay 2 s)"),
        "{e}"
    );
    let e = replay_decima(&t, Some(&d.join("p.json")), d, &one_slot);
    assert!(!e.contains(durations), "{e}");
    let e = replay_decima(&t, Some(&d.join("a.json")), d, &[&waves[..], &["--moving-delay", "0.5"]].concat());
    assert!(e.contains("\n  moving delay: model trained with 2 s; this run has 0.5 s"), "{e}");
    let m = d.join("a.json");
    let mut args = vec!["replay-compare", t.to_str().unwrap(), "--schedulers", "fifo,decima", "--decima-model"];
    args.push(m.to_str().unwrap());
    args.extend(["--baseline", "fifo", "-q"]);
    let args: Vec<String> = args.iter().map(|s| s.to_string()).chain(one_slot.iter().map(|s| s.to_string())).collect();
    let e = cli(&args).ok().stderr;
    assert!(e.contains("durations: model trained with wave durations"), "{e}");
}

/// `train-decima --sticky`: training keeps every machine on its job first (as `replay
/// --sticky`); the file records it, a seed gives the same bytes, the agent decides less often
/// and so learns other weights, and a replay warns when the model meets a run with the other
/// rule, in either direction, and is quiet when they match.
#[test]
fn train_decima_sticky_is_seeded_recorded_and_warned_about() {
    let dir = tempdir();
    let d = dir.path();
    let q6 = repo("tests/data/tpch-2g-q6.json");
    let train = |out: &str, extra: &[&str]| tiny_sss_train(d, out, extra);
    trained_twice(d, "s.json", "s2.json", &["--sticky"]);
    let m = Model::load(&d.join("s.json")).unwrap();
    assert!(m.setting().unwrap().unwrap().sticky);
    train("p.json", &[]).ok();
    let p = Model::load(&d.join("p.json")).unwrap();
    assert!(!p.setting().unwrap().unwrap().sticky);
    assert!(!std::fs::read_to_string(d.join("p.json")).unwrap().contains("sticky"), "absent when off");
    assert_ne!(m.params, p.params, "the agent decided for other machines");

    let t = d.join("t.csv");
    sss_trace(&q6, 8, "poisson:4", 9, &t, None);
    let one_slot = ["--machines", "3", "--capacity", "cpu=1,mem=1,disk=1,net=1"];
    let sticky = [&one_slot[..], &["--sticky"]].concat();
    let field = "\n  machines: model trained with";
    let e = replay_decima(&t, Some(&d.join("s.json")), d, &sticky);
    assert!(!e.contains(field), "its own rule: {e}");
    let e = replay_decima(&t, Some(&d.join("s.json")), d, &one_slot);
    assert!(
        e.contains("\n  machines: model trained with machines kept on their job first (--sticky); this run has every machine placed by the policy (no --sticky)"),
        "{e}"
    );
    let e = replay_decima(&t, Some(&d.join("p.json")), d, &sticky);
    assert!(
        e.contains("\n  machines: model trained with every machine placed by the policy (no --sticky); this run has machines kept on their job first (--sticky)"),
        "{e}"
    );
    let e = replay_decima(&t, Some(&d.join("p.json")), d, &one_slot);
    assert!(!e.contains(field), "{e}");
}

/// `decima-sss-100g-waves.json`, the full-mix model trained with `--waves`: its file is what
/// this build writes, its setting is `decima-sss-100g.json`'s plus the waves (moving delay 2
/// s), as `decima-sss-waves.json`'s is `decima-sss.json`'s; on a 2g-100g trace replayed with its sidecar it gives no warning, without `--waves` it
/// warns about the durations, and the model trained without waves warns the other way round.
#[test]
fn the_full_mix_waves_model_has_its_setting() {
    let path = repo("crates/graphene/models/decima-sss-100g-waves.json");
    let m = Model::load(&path).expect("the model loads");
    assert_eq!(m.to_json(), std::fs::read_to_string(&path).unwrap(), "the file is what this build writes");
    let s = m.setting().unwrap().expect("a setting");
    assert_eq!(s.waves, Some(decima::setting::WavesSetting { moving_delay: 2.0 }));
    let plain = Model::load(&repo("crates/graphene/models/decima-sss-100g.json")).unwrap().setting().unwrap().unwrap();
    assert_eq!(decima::Setting { waves: None, ..s.clone() }, plain, "the same setting but the waves");
    assert_eq!(m.trained["sizes"], serde_json::json!(["2g", "5g", "10g", "20g", "50g", "80g", "100g"]));
    assert_eq!(m.scaling().unwrap(), decima::features::Scaling::Log);
    // The 2g-20g model trained with waves: decima-sss.json's setting plus the waves.
    let small = Model::load(&repo("crates/graphene/models/decima-sss-waves.json")).unwrap();
    let small_plain = Model::load(&repo("crates/graphene/models/decima-sss.json")).unwrap().setting().unwrap().unwrap();
    let s2 = small.setting().unwrap().unwrap();
    assert_eq!(s2.waves, Some(decima::setting::WavesSetting { moving_delay: 2.0 }));
    assert_eq!(decima::Setting { waves: None, ..s2 }, small_plain);

    let dir = tempdir();
    let side = dir.path().join("w.json");
    let sizes = ["--sizes", "2g,5g,10g,20g,50g,80g,100g", "--seed", "7001", "--waves-out", side.to_str().unwrap()];
    let Some(t) = spark_sched_sim_trace(dir.path(), &sizes) else {
        return;
    };
    let one_slot = ["--machines", "10", "--capacity", "cpu=1,mem=1,disk=1,net=1"];
    let waves = [&one_slot[..], &["--waves", side.to_str().unwrap()]].concat();
    let e = replay_decima(&t, Some(&path), dir.path(), &waves);
    assert!(!e.contains("warning"), "its own setting: {e}");
    let e = replay_decima(&t, Some(&path), dir.path(), &one_slot);
    assert!(e.contains("decima-sss-100g-waves.json was trained for another setting (1 field(s)"), "{e}");
    assert!(e.contains("durations: model trained with wave durations"), "{e}");
    let e = replay_decima(&t, Some(&repo("crates/graphene/models/decima-sss-100g.json")), dir.path(), &waves);
    assert!(e.contains("durations: model trained with the trace's durations (no --waves)"), "{e}");
}

/// The two models trained with `--waves --sticky`: each file is what this build writes, and its
/// setting is the waves model's plus `sticky`; on a 2g-100g trace with its sidecar the full-mix
/// one is quiet with `--waves --sticky` and names the machines rule without `--sticky`.
#[test]
fn the_sticky_models_have_their_setting() {
    for (sticky, waves) in [
        ("decima-sss-100g-waves-sticky.json", "decima-sss-100g-waves.json"),
        ("decima-sss-waves-sticky.json", "decima-sss-waves.json"),
    ] {
        let path = repo(&format!("crates/graphene/models/{sticky}"));
        let m = Model::load(&path).expect("the model loads");
        assert_eq!(
            m.to_json(),
            std::fs::read_to_string(&path).unwrap(),
            "{sticky}: the file is what this build writes"
        );
        let s = m.setting().unwrap().expect("a setting");
        assert!(s.sticky, "{sticky}");
        let w = Model::load(&repo(&format!("crates/graphene/models/{waves}"))).unwrap().setting().unwrap().unwrap();
        assert_eq!(decima::Setting { sticky: false, ..s }, w, "{sticky}: {waves}'s setting plus sticky");
    }
    let path = repo("crates/graphene/models/decima-sss-100g-waves-sticky.json");
    let dir = tempdir();
    let side = dir.path().join("w.json");
    let sizes = ["--sizes", "2g,5g,10g,20g,50g,80g,100g", "--seed", "7001", "--waves-out", side.to_str().unwrap()];
    let Some(t) = spark_sched_sim_trace(dir.path(), &sizes) else {
        return;
    };
    let one_slot = ["--machines", "10", "--capacity", "cpu=1,mem=1,disk=1,net=1", "--waves", side.to_str().unwrap()];
    let e = replay_decima(&t, Some(&path), dir.path(), &[&one_slot[..], &["--sticky"]].concat());
    assert!(!e.contains("warning"), "its own setting: {e}");
    let e = replay_decima(&t, Some(&path), dir.path(), &one_slot);
    assert!(e.contains("machines: model trained with machines kept on their job first (--sticky)"), "{e}");
}
