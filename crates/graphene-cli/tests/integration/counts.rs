//! Counts and generated outputs: every count a flag can set is checked against a limit before
//! any work (a refusal names the flag, the value, the limit and how to raise it), and what a
//! command generates is what the tool reads back.

use crate::util::{example, p, refused, repo, run, tempdir, write};

/// `gen-trace --queues` and `replay --spread-queues` are queue counts, each queue of a trace
/// holding a job: bounded by --limit-jobs (a billion queues for five jobs was a 24 GB abort).
/// Within the limit no list of queue names is built.
#[test]
fn queue_counts_are_bounded_by_the_job_limit() {
    let dir = tempdir();
    let r = run(&["gen-trace", "--dags", &example(), "--jobs", "5", "--queues", "1000000000", "-q"]);
    refused(
        &r,
        "--queues (each queue of a trace holds a job): 1000000000 exceeds the limit of 1000000 (raise it with --limit-jobs)",
    );
    let r = run(&["gen-trace", "--dags", &example(), "--jobs", "5", "--queues", "11", "--limit-jobs", "10", "-q"]);
    refused(
        &r,
        "--queues (each queue of a trace holds a job): 11 exceeds the limit of 10 (raise it with --limit-jobs)",
    );
    let t = dir.path().join("t.csv");
    run(&["gen-trace", "--dags", &example(), "--jobs", "3", "--queues", "1000000", "-q", "--out", &p(&t)]).ok();
    let text = std::fs::read_to_string(&t).unwrap();
    assert_eq!(text.lines().count(), 1 + 3 * 4, "three jobs of four stages");
    let out = p(&dir.path().join("o"));
    let r = run(&["replay", &p(&t), "--scheduler", "fifo", "--spread-queues", "1000000000", "-q", "--out", &out]);
    refused(
        &r,
        "--spread-queues (each queue of a trace holds a job): 1000000000 exceeds the limit of 1000000 (raise it with --limit-jobs)",
    );
    assert!(!dir.path().join("o").exists(), "nothing written");
    let r = run(&["replay-compare", &p(&t), "--schedulers", "fifo,cs", "--spread-queues", "1000000000", "-q"]);
    refused(&r, "--spread-queues (each queue of a trace holds a job): 1000000000 exceeds the limit of 1000000");
    run(&["replay", &p(&t), "--scheduler", "fifo", "--spread-queues", "1000000", "-q", "--out", &out]).ok();
}

/// gen-trace writes only traces its own replay reads: no empty trace, no arrival past 1e12 s
/// (whichever process draws it), no more tasks than --limit-tasks; each refused before
/// anything is written, with the reason.
#[test]
fn gen_trace_refuses_what_replay_would_refuse() {
    let dir = tempdir();
    let t = dir.path().join("t.csv");
    let example = example();
    let gen_to = |extra: &[&str]| {
        let mut args =
            vec!["gen-trace".to_string(), "--dags".into(), example.clone(), "-q".into(), "--out".into(), p(&t)];
        args.extend(extra.iter().map(|s| s.to_string()));
        run(&args)
    };
    refused(&gen_to(&["--jobs", "0"]), "--jobs must be at least 1 (a trace holds at least one job)");
    refused(
        &gen_to(&["--jobs", "3", "--arrival", "fixed:1e12"]),
        "--arrival fixed:1000000000000: job j0002 would arrive at 2000000000000 s, after the largest time a trace may \
         hold (1e12 s); use a shorter interval or fewer --jobs",
    );
    let r = gen_to(&["--jobs", "3", "--arrival", "poisson:1e300"]);
    refused(&r, "--arrival poisson:1e300: job j0001 would arrive at ");
    assert!(r.stderr.contains("use a smaller mean gap or fewer --jobs"), "{}", r.stderr);
    // The example DAG has 52 tasks: the third job would bring the trace to 156.
    refused(
        &gen_to(&["--jobs", "3", "--limit-tasks", "150"]),
        "tasks of the jobs drawn (up to job j0002): 156 exceeds the limit of 150 (raise it with --limit-tasks)",
    );
    assert!(!t.exists(), "no trace written by a refused run");
    // At the bound exactly: written, and replay reads it.
    gen_to(&["--jobs", "3", "--arrival", "fixed:5e11"]).ok();
    let text = std::fs::read_to_string(&t).unwrap();
    assert!(text.lines().any(|l| l.starts_with("j0002,1000000000000,")), "{text}");
    // replay's reader takes it (replaying it would simulate 1e12 s).
    let (w, _) = graphene::trace::load(&t, &Default::default()).unwrap();
    assert_eq!(w.jobs[2].arrival, 1e12);
    let out = p(&dir.path().join("o"));
    gen_to(&["--jobs", "3", "--limit-tasks", "156"]).ok();
    run(&["replay", &p(&t), "--scheduler", "fifo", "-q", "--limit-tasks", "156", "--out", &out]).ok();
}

/// Two outputs of one command are never the same file: gen-trace's trace and waves sidecar, and
/// replay's --trace-out and the files of its --out folder, under any spelling or hard link
/// (the sidecar used to replace the trace, exit 0).
#[test]
fn two_outputs_on_one_file_are_refused() {
    let dir = tempdir();
    let q6 = p(&repo("tests/data/tpch-2g-q6.json"));
    let gen = |out: Option<&str>, waves: &str| {
        let mut args = vec!["gen-trace", "--style", "spark-sched-sim", "--dags", q6.as_str(), "--jobs", "3", "-q"];
        if let Some(o) = out {
            args.extend(["--out", o]);
        }
        args.extend(["--waves-out", waves]);
        run(&args)
    };
    let x = p(&dir.path().join("x.csv"));
    let dotted = format!("{}/./x.csv", dir.path().display());
    let r = gen(Some(&x), &dotted);
    refused(&r, &format!("--waves-out {dotted} and --out {x} are the same file; give each output its own file"));
    assert!(!dir.path().join("x.csv").exists(), "refused before writing anything");
    // A file that exists, and a hard link to it.
    let old = write(dir.path(), "y.csv", "old");
    let hard = dir.path().join("hard.csv");
    std::fs::hard_link(&old, &hard).unwrap();
    refused(&gen(Some(&p(&old)), &p(&hard)), "are the same file");
    assert_eq!(std::fs::read_to_string(&old).unwrap(), "old");
    // Both on standard output (no --out is standard output).
    refused(&gen(None, "-"), "--waves-out - and --out - are standard output");
    // Separate files: both written.
    let w = dir.path().join("w.json");
    gen(Some(&x), &p(&w)).ok();
    assert!(std::fs::read_to_string(&x).unwrap().starts_with("job,arrival"));
    assert!(std::fs::read_to_string(&w).unwrap().contains("graphene-waves"));

    let trace = p(&repo("traces/small.csv"));
    let out = dir.path().join("res");
    let clash = format!("{}/../res/summary.json", out.display());
    let r = run(&["replay", &trace, "-q", "--out", &p(&out), "--trace-out", &clash]);
    refused(&r, "are the same file");
    assert!(!out.exists(), "refused before the replay");
    run(&["replay", &trace, "-q", "--out", &p(&out), "--trace-out", &p(&out.join("trace.json"))]).ok();
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["summary"]["jobs"], 20, "summary.json is the summary");
}

/// The trainers' counts are checked before any file is read (the DAG file here does not
/// exist): rollouts (each kept in memory until the step; a million grew 25 MB/s), executors,
/// jobs per batch or episode, and the held-out jobs.
#[test]
fn trainer_counts_are_refused_before_any_file_is_read() {
    let dir = tempdir();
    let missing = p(&dir.path().join("missing.json"));
    let out = p(&dir.path().join("w.json"));
    let train = |cmd: &str, extra: &[&str]| {
        let mut args = vec![cmd, "--dags", missing.as_str(), "-q", "--out", out.as_str()];
        args.extend(extra);
        run(&args)
    };
    let rollouts = "--rollouts: 1000000 exceeds the limit of 256 (every rollout's decisions are kept in memory \
                    until the iteration's step)";
    refused(&train("train-decima", &["--rollouts", "1000000"]), rollouts);
    refused(&train("train-lachesis", &["--rollouts", "1000000"]), rollouts);
    refused(&train("train-decima", &["--rollouts", "257"]), "--rollouts: 257 exceeds the limit of 256");
    for (extra, want) in [
        (
            &["--machines", "1000000000"][..],
            "--machines: 1000000000 exceeds the limit of 1000000 (raise it with --limit-machines)",
        ),
        (
            &["--jobs-min", "1000000000", "--jobs-max", "1000000000"][..],
            "--jobs-max (jobs of a batch): 1000000000 exceeds the limit of 1000000 (raise it with --limit-jobs)",
        ),
        (
            &["--eval-batches", "1000000000"][..],
            "held-out jobs (--eval-batches x --eval-jobs): 5666666663 exceeds the limit of 1000000 (raise it with \
             --limit-jobs)",
        ),
        (&["--eval-jobs", "1000000000"][..], "held-out jobs (--eval-batches x --eval-jobs): 6000000000 exceeds"),
        (&["--eval-jobs", "2,0"][..], "--eval-jobs takes job counts of at least 1"),
        (&["--machines", "0"][..], "--machines must be at least 1"),
    ] {
        refused(&train("train-lachesis", extra), want);
    }
    for (extra, want) in [
        (
            &["--eval-traces", "1000000000"][..],
            "held-out jobs (--eval-traces x --eval-jobs): 40000000000 exceeds the limit of 1000000 (raise it with \
             --limit-jobs)",
        ),
        (&["--eval-jobs", "0"][..], "--eval-jobs must be at least 1 (jobs per held-out workload)"),
        (
            &["--jobs", "2000", "--limit-jobs", "1000"][..],
            "--jobs (jobs per episode): 2000 exceeds the limit of 1000 (raise it with --limit-jobs)",
        ),
    ] {
        refused(&train("train-decima", extra), want);
    }
    assert!(!dir.path().join("w.json").exists());
}

/// Training no longer reserves a record per iteration up front: a huge --iterations starts and
/// scores its first weights (it aborted on that allocation before); the run is then stopped.
#[test]
fn huge_iteration_counts_do_not_allocate_up_front() {
    use std::io::BufRead;
    let q6 = p(&repo("tests/data/tpch-2g-q6.json"));
    let dir = tempdir();
    for (cmd, extra) in [
        ("train-decima", &["--eval-traces", "1", "--eval-jobs", "3"][..]),
        ("train-lachesis", &["--eval-batches", "1", "--eval-jobs", "2"][..]),
    ] {
        let mut child = std::process::Command::new(crate::util::BIN)
            .args([cmd, "--dags", &q6, "--iterations", "1000000000000000", "--eval-every", "1"])
            .args(extra)
            .arg("--out")
            .arg(dir.path().join("w.json"))
            .env("RUST_BACKTRACE", "0")
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let mut seen = Vec::new();
        let started = loop {
            match lines.next() {
                Some(Ok(line)) if line.starts_with("iteration") => break true,
                Some(Ok(line)) => seen.push(line),
                _ => break false,
            }
        };
        let _ = child.kill();
        let _ = child.wait();
        assert!(started, "{cmd} ended before its first score: {}", seen.join("\n"));
    }
}

/// YARN and SLS exports scale durations and memory into whole numbers: a scale or a product
/// beyond what YARN holds (a Java long of ms and MB, an int of vcores) is refused, naming the
/// task, job or machine and the numbers (`--time-ms 1e300` wrote 18446744073709551615 per task).
#[test]
fn export_scales_are_checked_against_what_yarn_holds() {
    let dir = tempdir();
    let s = dir.path().join("s.json");
    run(&["build-schedule", &example(), "-q", "--no-timing", "--out", &p(&s)]).ok();
    let example = example();
    let export = |extra: &[&str]| {
        let mut args = vec!["export".to_string(), p(&s), "--dag".into(), example.clone()];
        args.extend(extra.iter().map(|a| a.to_string()));
        run(&args)
    };
    for format in ["yarn", "sls", "tez"] {
        refused(
            &export(&["--format", format, "--time-ms", "1e300"]),
            "--time-ms 1e300 is beyond the largest whole number YARN holds (9223372036854775807, a Java long)",
        );
    }
    refused(
        &export(&["--format", "yarn", "--time-ms", "1e18"]),
        "task scan[0]: duration 12 x --time-ms 1e18 = 1.2e19 is beyond the largest YARN holds (9223372036854775807)",
    );
    refused(
        &export(&["--format", "sls", "--mem-mb", "3e18"]),
        "task scan[0]: memory 4 x --mem-mb 3e18 = 1.2e19 is beyond the largest YARN holds (9223372036854775807)",
    );
    refused(
        &export(&["--format", "sls", "--time-ms", "3e17"]),
        "job.end.ms: makespan 50.5 x --time-ms 3e17 = 1.515e19 is beyond the largest YARN holds",
    );
    // Within the bound: the exact products.
    let ok = export(&["--format", "yarn", "--time-ms", "1e17"]).ok();
    let text = ok.stdout_str();
    assert!(text.contains("\"duration-ms\": 1200000000000000000"), "{text}");
    assert!(!text.contains("18446744073709551615"));

    let trace = p(&repo("traces/small.csv"));
    let cluster = write(
        dir.path(),
        "c.json",
        r#"{"machines": [{"count": 2, "capacity": {"cpu": 1e12, "mem": 64, "disk": 1, "net": 1}}]}"#,
    );
    let et = |extra: &[&str]| {
        let mut args = vec!["export-trace", trace.as_str(), "--format", "sls", "--order", "cp"];
        args.extend(extra);
        let out = dir.path().join("et");
        let out = p(&out);
        args.extend(["--out", out.as_str()]);
        run(&args)
    };
    refused(&et(&["--time-ms", "1e300"]), "--time-ms 1e300 is beyond the largest whole number YARN holds");
    refused(
        &et(&["--time-ms", "1e17"]),
        "job j0002: end 4858000000000000000 + 5050000000000000000 ms (arrival + critical path) is beyond the \
         largest YARN holds (9223372036854775807)",
    );
    refused(
        &et(&["--cluster", &p(&cluster)]),
        "machine 0: vcores 1000000000000 is beyond the largest YARN holds (2147483647)",
    );
    assert!(!dir.path().join("et").exists());
}

/// A waves sidecar sample of 1e15 ms (10^12 s, the largest accepted) ran the replay for hours
/// (every machine heartbeat through the long task) and then asked for 800 GB of fairness
/// windows. Now the quiet stretch is crossed in one step: the replay finishes, the long task
/// runs its 10^12 s, and the fairness windows widen (`window_s`).
#[test]
fn a_huge_waves_sample_replays_without_hanging() {
    let dir = tempdir();
    let trace = write(
        dir.path(),
        "t.csv",
        "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations\n\
         j0,0,q0,a,3,1,1,0,0,0,,\nj0,0,q0,b,1,1,1,0,0,0,a,\nj1,8,q0,c,1,1,1,0,0,0,,\n",
    );
    let waves = repo("fuzz/regressions/waves/fresh-sample-1e15-ms.json");
    let out = dir.path().join("r");
    for scheduler in ["fifo", "cs", "tetris", "graphene"] {
        let args = ["replay", &p(&trace), "--scheduler", scheduler, "--machines", "2", "--capacity", "cpu=1"];
        run(&[&args[..], &["--waves", &p(&waves), "--seed", "1", "-q", "--out", &p(&out)]].concat()).ok();
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        let makespan = s["summary"]["makespan"].as_f64().unwrap();
        assert!(makespan > 1e12 && makespan < 1e12 + 100.0, "{scheduler}: {makespan}");
        let window = s["summary"]["fairness"][0]["window_s"].as_f64().unwrap();
        assert!(window >= makespan / 1e6, "{scheduler}: window {window}");
    }
}

/// `--threads` above 1,024 and a learning rate above 1 are refused before any work (a billion
/// threads aborted; `--lr 1e300` trained weights into NaN and wrote them).
#[test]
fn threads_and_learning_rates_are_bounded() {
    let dir = tempdir();
    for cmd in ["build-schedule", "compare"] {
        refused(
            &run(&[cmd, &example(), "--threads", "1000000000", "-q"]),
            "--threads 1000000000 exceeds the limit of 1024",
        );
        refused(&run(&[cmd, &example(), "--threads", "0", "-q"]), "--threads must be at least 1");
    }
    run(&["build-schedule", &example(), "--threads", "2", "-q", "--no-timing"]).ok();
    let missing = p(&dir.path().join("missing.json"));
    let out = p(&dir.path().join("w.json"));
    for cmd in ["train-decima", "train-lachesis"] {
        refused(
            &run(&[cmd, "--dags", &missing, "--lr", "1e300", "-q", "--out", &out]),
            "--lr 1e300: learning rate above the limit of 1",
        );
    }
    assert!(!dir.path().join("w.json").exists());
}
