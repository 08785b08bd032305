//! Workload traces: the native CSV's round trip, `gen-trace` through the binary, the Alibaba
//! readers on the shared one-hour sample and on a hand-written raw excerpt full of broken jobs,
//! and positioned errors for malformed native rows.

use std::path::Path;

use graphene::formats::{self, LoadOptions};
use graphene::model::{Dag, Workload};
use graphene::trace::{self, ArrivalProcess, SkipReason, TraceFormat, TraceOptions};

use crate::util::{assert_no_panic, repo, run, tempdir, write};

const HEADER: &str = "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations\n";

/// The DAGs every generated workload here draws from: the example and TPC-H q6 with the
/// default (mixed) demand profile, whose per-task jitter the writer must collapse.
fn source_dags() -> Vec<Dag> {
    let opts = LoadOptions::default();
    let mut dags = formats::load_dags(&repo("traces/example.json"), &opts).unwrap();
    dags.extend(formats::load_dags(&repo("tests/data/tpch-2g-q6.json"), &opts).unwrap());
    dags
}

fn load(path: &Path) -> (Workload, trace::SkipReport) {
    trace::load(path, &TraceOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Asserts that `back` (read from a trace of `orig`) is `orig`, except that each stage's
/// demand is the per-resource maximum over the original stage's tasks.
fn assert_same_workload(orig: &Workload, back: &Workload) {
    assert_eq!(orig.jobs.len(), back.jobs.len());
    for (a, b) in orig.jobs.iter().zip(&back.jobs) {
        assert_eq!((&a.name, a.arrival, &a.queue), (&b.name, b.arrival, &b.queue));
        assert_eq!(a.dag.name, b.dag.name);
        let (da, db) = (&a.dag, &b.dag);
        assert_eq!(da.stages.len(), db.stages.len(), "job {}", a.name);
        assert_eq!(da.len(), db.len(), "job {}", a.name);
        for (sa, sb) in da.stages.iter().zip(&db.stages) {
            assert_eq!((&sa.name, sa.first, sa.len), (&sb.name, sb.first, sb.len), "job {}", a.name);
            assert_eq!(sa.parents, sb.parents, "job {} stage {}", a.name, sa.name);
            assert_eq!(sa.children, sb.children, "job {} stage {}", a.name, sa.name);
            let mut max = [0.0f64; 4];
            for t in sa.tasks() {
                for (k, r) in ["cpu", "mem", "disk", "net"].iter().enumerate() {
                    if let Some(i) = da.resources.iter().position(|n| n == r) {
                        max[k] = max[k].max(da.tasks[t as usize].demand.0[i]);
                    }
                }
            }
            for t in sa.tasks() {
                let (ta, tb) = (&da.tasks[t as usize], &db.tasks[t as usize]);
                assert_eq!(ta.duration, tb.duration, "job {} task {}", a.name, da.task_name(t));
                assert_eq!(tb.demand.0[..4], max, "job {} task {}", a.name, da.task_name(t));
            }
        }
    }
}

#[test]
fn generated_workload_round_trips_through_the_native_csv() {
    let dags = source_dags();
    assert_eq!(dags.len(), 2);
    for arrival in
        [ArrivalProcess::Poisson { mean: 7.5 }, ArrivalProcess::Fixed { interval: 0.1 }, ArrivalProcess::AllAtOnce]
    {
        let w = trace::generate(&dags, 40, arrival, 3, 11).unwrap();
        let text = trace::native_csv::write(&w).unwrap();
        let back = trace::native_csv::read(&text).unwrap();
        assert_same_workload(&w, &back);
        let again = trace::native_csv::write(&back).unwrap();
        assert_eq!(text, again, "write(read(write(w))) == write(w)");
        // What the writer emits round-trips exactly, demands included.
        assert_same_workload(&back, &trace::native_csv::read(&again).unwrap());
    }
}

#[test]
fn example_dag_round_trips_exactly() {
    // The example's stages give one demand for all their tasks: nothing is collapsed.
    let dag = formats::load_dag(&repo("traces/example.json"), &LoadOptions::default()).unwrap();
    let w = trace::generate(std::slice::from_ref(&dag), 3, ArrivalProcess::Fixed { interval: 2.5 }, 1, 0).unwrap();
    let back = trace::native_csv::read(&trace::native_csv::write(&w).unwrap()).unwrap();
    for (a, b) in w.jobs.iter().zip(&back.jobs) {
        for (ta, tb) in a.dag.tasks.iter().zip(&b.dag.tasks) {
            assert_eq!((ta.duration, ta.demand), (tb.duration, tb.demand));
        }
    }
    assert_eq!(back.jobs.iter().map(|j| j.arrival).collect::<Vec<_>>(), [0.0, 2.5, 5.0]);
}

fn gen_trace_args<'a>(seed: &'a str, extra: &[&'a str]) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "gen-trace".into(),
        "--dags".into(),
        repo("traces/example.json").display().to_string(),
        repo("tests/data/tpch-2g-q6.json").display().to_string(),
        "--jobs".into(),
        "25".into(),
        "--arrival".into(),
        "poisson:4".into(),
        "--queues".into(),
        "2".into(),
        "--seed".into(),
        seed.into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

#[test]
fn gen_trace_is_deterministic_and_reads_back() {
    let a = run(&gen_trace_args("5", &[])).ok();
    let b = run(&gen_trace_args("5", &["--quiet"])).ok();
    assert_eq!(a.stdout, b.stdout, "same seed, byte-identical trace");
    assert!(a.stderr.contains("25 jobs"), "{}", a.stderr);
    assert!(b.stderr.is_empty(), "--quiet: {}", b.stderr);
    let c = run(&gen_trace_args("6", &["-q"])).ok();
    assert_ne!(a.stdout, c.stdout, "another seed, another trace");

    let dir = tempdir();
    let out = dir.path().join("t.csv");
    let d = run(&gen_trace_args("5", &["-q", "--out", out.to_str().unwrap()])).ok();
    assert!(d.stdout.is_empty());
    assert_eq!(std::fs::read(&out).unwrap(), a.stdout, "--out writes what stdout gets");

    let (w, skipped) = load(&out);
    assert!(skipped.is_empty());
    assert_eq!(w.jobs.len(), 25);
    assert_eq!(w.jobs[0].name, "j0000");
    assert_eq!(w.jobs[0].arrival, 0.0);
    assert!(w.jobs.windows(2).all(|p| p[0].arrival <= p[1].arrival));
    assert!(w.queues().iter().all(|q| q == "q0" || q == "q1"));
    assert_eq!(trace::native_csv::write(&w).unwrap().as_bytes(), &a.stdout[..]);
}

#[test]
fn checked_in_small_trace_is_what_gen_trace_makes() {
    // traces/small.csv is documented in the README with this command.
    let r = run(&[
        "gen-trace",
        "--dags",
        repo("traces/example.json").to_str().unwrap(),
        repo("tests/data/tpch-2g-q6.json").to_str().unwrap(),
        "--jobs",
        "20",
        "--arrival",
        "poisson:15",
        "--queues",
        "2",
        "--seed",
        "1",
        "-q",
    ])
    .ok();
    let file = std::fs::read(repo("traces/small.csv")).unwrap();
    assert!(r.stdout == file, "traces/small.csv differs from what gen-trace makes now");
    let (w, _) = load(&repo("traces/small.csv"));
    assert_eq!(w.jobs.len(), 20);
}

/// `--trace-dags` draws from a trace's jobs, `--min-stages` keeps only deep ones, and
/// `--pick file` draws a file first: traces/small.csv holds 20 jobs of 2 and 4 stages,
/// motivating.json one DAG of 6; with --min-stages 3 the 2-stage jobs are left out, and with
/// --pick file about half of the jobs come from each file (without it, 1 in 21); with --demands the
/// trace's demands are drawn again from the profile.
#[test]
fn gen_trace_draws_from_traces_by_file_and_depth() {
    let small = repo("traces/small.csv").display().to_string();
    let mot = repo("traces/motivating.json").display().to_string();
    let stages = |out: &[u8]| -> Vec<usize> {
        let w = trace::parse(std::str::from_utf8(out).unwrap(), None).unwrap().0;
        w.jobs.iter().map(|j| j.dag.stages.len()).collect()
    };
    let deep =
        run(&["gen-trace", "--dags", &mot, "--trace-dags", &small, "--min-stages", "3", "--jobs", "30", "-q"]).ok();
    let s = stages(&deep.stdout);
    assert_eq!(s.len(), 30);
    assert!(s.iter().all(|&n| n >= 3), "{s:?}");
    assert!(s.contains(&4), "the trace's 4-stage jobs are drawn too: {s:?}");
    let both =
        run(&["gen-trace", "--dags", &mot, "--trace-dags", &small, "--pick", "file", "--jobs", "200", "-q"]).ok();
    let s = stages(&both.stdout);
    let from_mot = s.iter().filter(|&&n| n == 6).count();
    // A fair coin per job: 200 draws land within 70-130 with probability > 0.9999.
    assert!((70..=130).contains(&from_mot), "{from_mot} of 200 from motivating.json");
    let by_dag = run(&["gen-trace", "--dags", &mot, "--trace-dags", &small, "--jobs", "200", "-q"]).ok();
    let from_mot = stages(&by_dag.stdout).iter().filter(|&&n| n == 6).count();
    assert!(from_mot < 40, "--pick dag: one DAG among 21, drawn {from_mot} times of 200");
    let redrawn = run(&["gen-trace", "--trace-dags", &small, "--demands", "single", "--jobs", "5", "-q"]).ok();
    assert_ne!(redrawn.stdout, run(&["gen-trace", "--trace-dags", &small, "--jobs", "5", "-q"]).ok().stdout);
    let r = run(&["gen-trace", "--dags", &mot, "--min-stages", "9", "--jobs", "3"]);
    assert_no_panic(&r);
    assert_ne!(r.code, Some(0));
    assert!(r.stderr.contains("--min-stages"), "{}", r.stderr);
}

/// `--duration-scale` and `--min-duration` stretch every task before `--load` calibrates the
/// arrivals: the same draw (seed), every duration max(d x 2, 1), and the offered load is still
/// the target (the arrivals spread out instead). Bad values are refused before any file is read.
#[test]
fn gen_trace_stretches_durations_at_the_same_load() {
    let mot = repo("traces/motivating.json").display().to_string();
    let base = ["gen-trace", "--dags", &mot, "--jobs", "6", "--seed", "4", "--load", "0.8", "-q"];
    let parse = |out: &[u8]| trace::parse(std::str::from_utf8(out).unwrap(), None).unwrap().0;
    let plain = parse(&run(&base).ok().stdout);
    let mut args: Vec<&str> = base.to_vec();
    args.extend(["--duration-scale", "2", "--min-duration", "1"]);
    let long = parse(&run(&args).ok().stdout);
    assert_eq!(plain.jobs.len(), long.jobs.len());
    for (a, b) in plain.jobs.iter().zip(&long.jobs) {
        for (x, y) in a.dag.tasks.iter().zip(&b.dag.tasks) {
            assert!((y.duration - (x.duration * 2.0).max(1.0)).abs() < 1e-9, "{} -> {}", x.duration, y.duration);
        }
    }
    let cluster = graphene::model::ClusterSpec::uniform(
        10,
        [("cpu", 16.0), ("mem", 64.0), ("disk", 200.0), ("net", 1250.0)]
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
    )
    .resolve(&long.jobs[0].dag.resources)
    .unwrap();
    let (l, _) = trace::load::bottleneck(&long, &cluster);
    assert!((l - 0.8).abs() < 0.01, "offered load {l}");
    for bad in [["--min-duration", "-1"], ["--duration-scale", "0"], ["--duration-scale", "nan"]] {
        let r = run(&["gen-trace", "--dags", "/nonexistent.json", "--jobs", "2", bad[0], bad[1]]);
        assert_no_panic(&r);
        assert_eq!(r.code, Some(1), "{bad:?}");
        assert!(r.stderr.contains(bad[0]), "{bad:?}: {}", r.stderr);
    }
}

#[test]
fn gen_trace_rejects_bad_flags_cleanly() {
    for extra in [["--arrival", "poisson:-3"], ["--arrival", "gamma:2"], ["--queues", "0"]] {
        let mut args = gen_trace_args("1", &[]);
        // Later flags win in clap only for repeated options; replace the defaults instead.
        let i = args.iter().position(|a| a == extra[0]).unwrap();
        args[i + 1] = extra[1].to_string();
        let r = run(&args);
        assert_no_panic(&r);
        assert_ne!(r.code, Some(0), "{extra:?} accepted");
        assert!(r.stdout.is_empty());
        assert!(r.stderr.contains(extra[0]), "{extra:?}: {}", r.stderr);
    }
    let r = run(&["gen-trace", "--dags", "no-such-file.json", "--jobs", "3"]);
    assert_no_panic(&r);
    assert_ne!(r.code, Some(0));
    assert!(r.stderr.contains("no-such-file.json"), "{}", r.stderr);
}

#[test]
fn alibaba_sample_loads_every_job() {
    let path = crate::util::shared_or_skip!("data/alibaba-v2018-spar/sample_tasks.csv");
    let (w, skipped) = load(&path);
    // The data README: every DAG-style job is a valid DAG; jobs of task_ names are independent
    // tasks. Nothing is skipped.
    assert!(skipped.is_empty(), "{skipped}");
    assert_eq!(w.jobs.len(), 16_749);
    assert_eq!(w.jobs.iter().map(|j| j.dag.stages.len()).sum::<usize>(), 67_634);
    assert_eq!(w.tasks(), 3_056_536);
    assert!(w.jobs.windows(2).all(|p| p[0].arrival <= p[1].arrival));
    assert!(w.jobs.last().unwrap().arrival <= 3600.0);
    assert_eq!(w.queues(), ["default"]);
    let max_stages = w.jobs.iter().map(|j| j.dag.stages.len()).max().unwrap();
    assert_eq!(max_stages, 91);
    // The README's first rows: job j_1446403 at 0 s, stage J25_16_18_24 waits for three tasks,
    // 9 instances of 0.5 cores and 0.39 memory units for 382 s.
    let j = w.jobs.iter().find(|j| j.name == "j_1446403").unwrap();
    assert_eq!(j.arrival, 0.0);
    let s = &j.dag.stages[j.dag.stage_by_name("J25_16_18_24").unwrap() as usize];
    assert_eq!(s.len, 9);
    assert_eq!(s.parents.len(), 3);
    let t = &j.dag.tasks[s.first as usize];
    assert_eq!((t.duration, t.demand.0[0], t.demand.0[1], t.demand.0[2]), (382.0, 0.5, 0.39, 0.0));
    // A job of task_ names: independent stages.
    let k = w.jobs.iter().find(|j| j.name == "j_3758568").unwrap();
    assert!(k.dag.stages.len() >= 2 && !k.dag.has_edges());
}

#[test]
fn alibaba_raw_excerpt_skips_and_counts_broken_jobs() {
    let path = repo("tests/data/alibaba-batch-task-broken.csv");
    let (w, rep) = load(&path);
    let names: Vec<&str> = w.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["j_5", "j_1", "j_2", "j_6"], "kept jobs in arrival order");
    // Arrivals from the earliest start of a kept job (j_5 at 995); skipped j_3 at 900 does not count.
    assert_eq!(w.jobs.iter().map(|j| j.arrival).collect::<Vec<_>>(), [0.0, 5.0, 10.0, 105.0]);
    assert_eq!(w.jobs.iter().map(|j| j.dag.len()).collect::<Vec<_>>(), [3, 6, 2, 6]);
    for reason in [
        SkipReason::Cycle,
        SkipReason::MissingParent,
        SkipReason::ParentNotTerminated,
        SkipReason::DuplicateTaskId,
        SkipReason::BadInstanceNum,
        SkipReason::NegativeDuration,
        SkipReason::NonNumericTaskId,
        SkipReason::NoTerminatedTask,
        SkipReason::MissingValue,
    ] {
        assert_eq!(rep.count(reason), 1, "{reason:?}: {rep}");
    }
    assert_eq!(rep.jobs_skipped(), 9);
    assert_eq!(rep.jobs[&SkipReason::Cycle].1, "j_3");
    assert_eq!(rep.jobs[&SkipReason::MissingParent].1, "j_4");
    assert_eq!(rep.rows_not_terminated, 4, "j_5's Failed leaf, j_7's Waiting parent, j_12's two rows");
    let msg = rep.to_string();
    assert!(msg.starts_with("skipped 9 jobs: 1 missing parent (first: j_4), 1 parent not terminated"), "{msg}");
    assert!(msg.ends_with("; dropped 4 rows not Terminated"), "{msg}");

    // j_1: J3_1_2 joins M1 and M2; cpu = plan_cpu / 100, mem = plan_mem.
    let j1 = &w.jobs[1].dag;
    let join = &j1.stages[j1.stage_by_name("J3_1_2").unwrap() as usize];
    assert_eq!(join.parents.len(), 2);
    assert_eq!(j1.tasks[join.first as usize].duration, 30.0);
    let m2 = &j1.tasks[j1.stages[j1.stage_by_name("M2").unwrap() as usize].first as usize];
    assert_eq!(m2.demand.0[..4], [2.0, 1.5, 0.0, 0.0]);
    // j_5 kept without its Failed leaf M3.
    assert!(w.jobs[0].dag.stage_by_name("M3").is_none());
    // j_6 mixes a DAG and a task_ task: the latter is an independent stage of the same job.
    let j6 = &w.jobs[3].dag;
    let free = &j6.stages[j6.stage_by_name("task_WFla").unwrap() as usize];
    assert!(free.parents.is_empty() && free.children.is_empty());
    assert_eq!(free.len, 4);

    // The raw trace's own header line is accepted, and --queues spreads jobs round-robin.
    let dir = tempdir();
    let text = std::fs::read_to_string(&path).unwrap();
    let with_header = write(
        dir.path(),
        "batch_task.csv",
        &format!("task_name,instance_num,job_name,task_type,status,start_time,end_time,plan_cpu,plan_mem\n{text}"),
    );
    let (w2, rep2) =
        trace::load(&with_header, &TraceOptions { format: Some(TraceFormat::Alibaba), queues: Some(3) }).unwrap();
    assert_eq!(rep2, rep);
    assert_eq!(w2.jobs.iter().map(|j| j.queue.as_str()).collect::<Vec<_>>(), ["q0", "q1", "q2", "q0"]);
}

/// Loads a native trace with this text and returns the error message.
fn native_error(name: &str, text: &str) -> String {
    let dir = tempdir();
    let path = write(dir.path(), name, text);
    match trace::load(&path, &TraceOptions::default()) {
        Ok(_) => panic!("{name} was accepted"),
        Err(e) => {
            let m = e.to_string();
            assert!(m.starts_with(&path.display().to_string()), "the message does not name the file: {m}");
            m
        }
    }
}

#[test]
fn malformed_native_rows_name_file_line_and_column() {
    let ok = "a,0,q,s,1,2,1,1,0,0,,\n";
    let cases: [(&str, String, &str); 6] = [
        ("missing-column.csv", format!("{HEADER}{ok}a,0,q,t,1,2,1,1,0,0\n"), "line 3, column 20: parents: missing"),
        (
            "bad-duration.csv",
            format!("{HEADER}{ok}a,0,q,t,1,two,1,1,0,0,s,\n"),
            "line 3, column 11: duration: 'two' is not a number",
        ),
        (
            "unknown-parent.csv",
            format!("{HEADER}{ok}a,0,q,t,1,2,1,1,0,0,s;~x,\n"),
            "line 3, column 21: parents: job 'a' has no stage 'x'",
        ),
        (
            "inconsistent-arrival.csv",
            format!("{HEADER}{ok}b,1,q,s,1,2,1,1,0,0,,\na,0.5,q,t,1,2,1,1,0,0,s,\n"),
            "line 4, column 3: arrival: job 'a' arrives at 0.5 here but at 0 on line 2",
        ),
        (
            "inconsistent-queue.csv",
            format!("{HEADER}{ok}a,0,\"q,2\",t,1,2,1,1,0,0,s,\n"),
            "line 3, column 5: queue: job 'a' is in queue 'q,2' here but in 'q' on line 2",
        ),
        (
            "negative-demand.csv",
            format!("{HEADER}a,0,q,s,1,2,1,-1,0,0,,\n"),
            "line 2, column 15: mem: -1 is not a finite number >= 0",
        ),
    ];
    for (name, text, want) in cases {
        let m = native_error(name, &text);
        assert!(m.contains(name) && m.contains(want), "{name}: expected '{want}' in:\n{m}");
    }
}

#[test]
fn trace_format_is_detected_or_forced() {
    let dir = tempdir();
    let spar = write(dir.path(), "spar.csv", "0,j_1,M1,10,50.0,0.3,3\n1,j_2,task_x,5,100.0,0.1,2\n");
    let (w, _) = load(&spar);
    assert_eq!(w.tasks(), 5);
    // Forcing the native reader on an Alibaba file fails on its header, naming the file.
    let e =
        trace::load(&spar, &TraceOptions { format: Some(TraceFormat::Native), queues: None }).unwrap_err().to_string();
    assert!(e.contains("spar.csv: line 1, column 1: unknown column '0'"), "{e}");
    let other = write(dir.path(), "other.csv", "a,b,c\n");
    let e = trace::load(&other, &TraceOptions::default()).unwrap_err().to_string();
    assert!(e.contains("other.csv: line 1, column 1: cannot tell the trace format"), "{e}");
}
