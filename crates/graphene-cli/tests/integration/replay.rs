//! `graphene replay` through the CLI: exact JCTs on a hand-checked trace, output files,
//! determinism, and bad flags.

use crate::util::{assert_no_panic, repo, run, tempdir, write};

/// Job A (4 tasks of 10 s, cpu 1) arrives at 0 on one machine with 2 cores, job B (1 task of
/// 5 s) at 1. FIFO: A's tasks run at 0, 0, 10, 10, so B starts at 20 and ends at 25 (JCT 24).
/// CS with two equal queues: when the first A task ends at 10, q0 runs one task and q1 none, so
/// B runs from 10 to 15 (JCT 14) and A's last task starts at 15 (A ends at 25, JCT 25).
const TRACE: &str = "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations
A,0,q0,s,4,10,1,1,0,0,,
B,1,q1,s,1,5,1,1,0,0,,
";

fn jcts(dir: &std::path::Path) -> Vec<(String, f64)> {
    let text = std::fs::read_to_string(dir.join("jobs.csv")).expect("jobs.csv written");
    text.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].to_string(), f[4].parse().expect("numeric jct"))
        })
        .collect()
}

fn replay(trace: &std::path::Path, scheduler: &str, out: &std::path::Path) {
    run(&[
        "replay".as_ref(),
        trace.as_os_str(),
        "--machines".as_ref(),
        "1".as_ref(),
        "--capacity".as_ref(),
        "cpu=2,mem=8".as_ref(),
        "--scheduler".as_ref(),
        scheduler.as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
        "-q".as_ref(),
    ])
    .ok();
}

#[test]
fn fifo_and_cs_give_the_hand_computed_jcts() {
    let dir = tempdir();
    let trace = write(dir.path(), "t.csv", TRACE);
    replay(&trace, "fifo", &dir.path().join("fifo"));
    assert_eq!(jcts(&dir.path().join("fifo")), vec![("A".into(), 20.0), ("B".into(), 24.0)]);
    replay(&trace, "cs", &dir.path().join("cs"));
    assert_eq!(jcts(&dir.path().join("cs")), vec![("A".into(), 25.0), ("B".into(), 14.0)]);
    let schedule = std::fs::read_to_string(dir.path().join("cs/schedule.csv")).unwrap();
    assert_eq!(schedule.lines().count(), 1 + 5, "a header and one row per task");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("cs/summary.json")).unwrap()).unwrap();
    assert_eq!(summary["summary"]["makespan"], 25.0);
    assert_eq!(summary["summary"]["jct"]["mean"], 19.5);
}

/// The hand-checked trace through `cs` with YARN's mechanics on one machine of 3 cores
/// (`--cs-am cpu=1,mem=0.001 --cs-assignments-per-heartbeat 1 --periodic-heartbeats`, heartbeat
/// 1 s): one container per heartbeat, so A's AM at 0, B's AM at 1 (q1 holds nothing), A's
/// first task at 2 (the queues are level, one AM each; ties go to q0), on the last free core.
/// Each later end frees that core at the next heartbeat with the queues level again: A's tasks
/// 2-12, 12-22, 22-32, 32-42 (JCT 42); A's AM then exits, and B's task runs 42-47 (JCT 46).
#[test]
fn cs_with_yarn_mechanics_gives_the_hand_computed_jcts() {
    let dir = tempdir();
    let trace = write(dir.path(), "t.csv", TRACE);
    let out = dir.path().join("cs");
    let r = run(&[
        "replay".as_ref(),
        trace.as_os_str(),
        "--machines".as_ref(),
        "1".as_ref(),
        "--capacity".as_ref(),
        "cpu=3,mem=8".as_ref(),
        "--scheduler".as_ref(),
        "cs".as_ref(),
        "--cs-am".as_ref(),
        "cpu=1,mem=0.001".as_ref(),
        "--cs-assignments-per-heartbeat".as_ref(),
        "1".as_ref(),
        "--periodic-heartbeats".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
        "-q".as_ref(),
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(jcts(&out), vec![("A".into(), 42.0), ("B".into(), 46.0)]);
}

/// `cs` (the default) and `slearn`, whose pilots are drawn from the seed; a replay that writes
/// its outputs has also passed the replay checker (`replay` refuses to write otherwise).
#[test]
fn replay_is_byte_identical_for_a_seed() {
    let dir = tempdir();
    let trace = repo("traces/small.csv");
    for scheduler in ["cs", "slearn"] {
        for i in 0..2 {
            let out = dir.path().join(format!("{scheduler}{i}"));
            run(&[
                "replay".as_ref(),
                trace.as_os_str(),
                "--scheduler".as_ref(),
                scheduler.as_ref(),
                "--misestimate=-0.5:0.5".as_ref(),
                "--seed".as_ref(),
                "9".as_ref(),
                "--no-timing".as_ref(),
                "-q".as_ref(),
                "--out".as_ref(),
                out.as_os_str(),
            ])
            .ok();
        }
        for f in ["jobs.csv", "schedule.csv", "summary.json"] {
            let a = std::fs::read(dir.path().join(format!("{scheduler}0")).join(f)).unwrap();
            let b = std::fs::read(dir.path().join(format!("{scheduler}1")).join(f)).unwrap();
            assert!(a == b, "{scheduler}: {f} differs between two runs with the same seed");
        }
    }
}

#[test]
fn bad_replay_flags_are_clear_errors() {
    let dir = tempdir();
    let trace = write(dir.path(), "t.csv", TRACE);
    for (flags, needle) in [
        (vec!["--scheduler", "nope"], "unknown online scheduler"),
        (vec!["--misestimate", "2:1"], "--misestimate"),
        (vec!["--queues", "zz=1"], "trace's queues are q0, q1"),
        (vec!["--heartbeat", "0"], "heartbeat"),
        (vec!["--cs-am", "gpu=1"], "--cs-am names 'gpu'"),
        (vec!["--cs-am", "cpu=99"], "fits no machine"),
        (vec!["--cs-am", "cpu"], "--cs-am"),
        (vec!["--cs-am", "cpu=nan"], "--cs-am"),
        (vec!["--cs-assignments-per-heartbeat", "0"], "at least 1"),
        (vec!["--container-overhead", "-1"], "container overhead"),
        (vec!["--container-overhead", "inf"], "container overhead"),
        (vec!["--graphene-rm"], "graphene scheduler only, not to 'cs'"),
        (vec!["--graphene-rm", "--scheduler", "graphene+cs"], "graphene scheduler only"),
    ] {
        let mut args: Vec<std::ffi::OsString> = vec!["replay".into(), trace.clone().into()];
        args.extend(flags.iter().map(|f| f.into()));
        args.push("--out".into());
        args.push(dir.path().join("o").into());
        let r = run(&args);
        assert_no_panic(&r);
        assert_eq!(r.code, Some(1), "{flags:?} should fail");
        assert!(r.stderr.contains(needle), "{flags:?}: stderr was {}", r.stderr);
    }
}

/// On the hand-checked trace, FIFO against the CS baseline: job A takes 20 s instead of 25
/// (gap +0.2), job B 24 s instead of 14 (gap (14 - 24) / 14 = -5/7). Nearest-rank percentiles
/// of those two values: p10, p25, p50 are -5/7; p75 and p90 are 0.2.
#[test]
fn replay_compare_reports_per_job_gaps_against_the_baseline() {
    let dir = tempdir();
    let trace = write(dir.path(), "t.csv", TRACE);
    let r = run(&[
        "replay-compare".as_ref(),
        trace.as_os_str(),
        "--machines".as_ref(),
        "1".as_ref(),
        "--capacity".as_ref(),
        "cpu=2,mem=8".as_ref(),
        "--schedulers".as_ref(),
        "fifo,cs".as_ref(),
        "--baseline".as_ref(),
        "cs".as_ref(),
        "--json".as_ref(),
        "-q".as_ref(),
    ])
    .ok();
    let v = r.json();
    let rows = v["rows"].as_array().expect("rows");
    let fifo = rows.iter().find(|r| r["scheduler"] == "fifo").expect("fifo row");
    let gaps: Vec<f64> = fifo["gap_vs_baseline"].as_array().unwrap().iter().map(|g| g.as_f64().unwrap()).collect();
    let b = (14.0 - 24.0) / 14.0;
    assert_eq!(gaps, vec![b, b, b, 0.2, 0.2]);
    let cs = rows.iter().find(|r| r["scheduler"] == "cs").expect("cs row");
    assert_eq!(cs["jct"]["mean"], 19.5);
    assert_eq!(fifo["makespan"], 25.0);
}

/// The replay checker accepts what the simulator produces under each online scheduler, and
/// catches a schedule someone tampered with (so it is not a check that cannot fail).
#[test]
fn realized_schedules_pass_the_replay_checker_and_tampering_is_caught() {
    use graphene::model::ClusterSpec;
    use graphene::online::{by_name, GrapheneOnline, OnlineSettings};
    use graphene::sim::{run, SimConfig};
    use graphene::trace::{load, TraceOptions};
    use graphene::validate::{validate_replay, Violation};

    let (w, _) = load(&repo("traces/small.csv"), &TraceOptions { format: None, queues: None }).expect("trace loads");
    let cluster = ClusterSpec::uniform(2, ClusterSpec::default_capacity()).resolve(&w.jobs[0].dag.resources).unwrap();
    let mut settings = OnlineSettings {
        shares: vec![0.5, 0.5],
        graphene: GrapheneOnline::default(),
        seed: 0,
        tetris_kappa: None,
        tetris_overbook: 1.0,
        tetris_srpt_scale: Default::default(),
        cs_accounting: graphene::online::CsAccounting::Containers,
        cs_user_limit: None,
        cs_yarn: graphene::online::CsYarn::default(),
        decima_model: None,
        decima_bundled: None,
        sticky: false,
    };
    // Every scheduler, also wrapped by `--sticky` (which must not hand out a task twice when
    // the wrapped scheduler picks one it kept; machines here have room for several tasks).
    for sticky in [false, true] {
        settings.sticky = sticky;
        for name in graphene::online::NAMES {
            let cfg = SimConfig { misestimate: Some((-0.3, 0.3)), ..SimConfig::default() };
            let r = run(&w, &cluster, by_name(name, &settings).unwrap().as_mut(), &cfg).unwrap();
            assert_eq!(validate_replay(&w, &cluster, &r), vec![], "{name}, sticky {sticky}");
            assert!(r.jobs.iter().all(|j| j.finish.is_finite()), "{name}, sticky {sticky}: every job finishes");
        }
    }
    settings.sticky = false;
    let mut r = run(&w, &cluster, by_name("fifo", &settings).unwrap().as_mut(), &SimConfig::default()).unwrap();
    // Move a task that has a parent to start at its job's arrival: it now overlaps its parent.
    let i = r
        .runs
        .iter()
        .position(|x| !w.jobs[x.job as usize].dag.stage_of(x.task).parents.is_empty())
        .expect("some task has a parent");
    let arrival = w.jobs[r.runs[i].job as usize].arrival;
    let len = r.runs[i].end - r.runs[i].start;
    r.runs[i].start = arrival;
    r.runs[i].end = arrival + len;
    let v = validate_replay(&w, &cluster, &r);
    assert!(v.iter().any(|x| matches!(x, Violation::Dependency { .. })), "{v:?}");
    // Run the first task twice and drop the last: a duplicate and a missing task.
    let first = r.runs[0];
    r.runs.pop();
    r.runs.push(first);
    let v = validate_replay(&w, &cluster, &r);
    assert!(v.iter().any(|x| matches!(x, Violation::Duplicate { .. })), "{v:?}");
    assert!(v.iter().any(|x| matches!(x, Violation::Missing { .. })), "{v:?}");
}

/// The fairness bound, in the simulator: with kappa set, Graphene keeps every queue's deficit
/// within kappa x C at all times for two queues (its look-ahead rule; allocations here are
/// smaller than kappa x C, the proof's condition) and within kappa x C + 2F for three and four
/// queues (F the largest single charge; the bound the fairness module's property test
/// observes), and the counters do get close to the bound, so the check is not vacuous. With
/// `time-bounded` charges no launch charges more than kappa x C, so the same bounds hold for a
/// kappa below the largest resource-time charge too (F then at most kappa x C).
#[test]
fn deficits_stay_within_kappa_c_in_the_simulator() {
    use graphene::model::ClusterSpec;
    use graphene::online::{Charge, Graphene, GrapheneOnline};
    use graphene::sim::{run, SimConfig};
    use graphene::trace::{load, TraceOptions};

    for queues in [2, 3, 4] {
        let opts = TraceOptions { format: None, queues: Some(queues) };
        let (w, _) = load(&repo("traces/small.csv"), &opts).expect("trace loads");
        let cluster =
            ClusterSpec::uniform(2, ClusterSpec::default_capacity()).resolve(&w.jobs[0].dag.resources).unwrap();
        let total = cluster.total_capacity();
        for charge in [Charge::Task, Charge::Time, Charge::TimeBounded] {
            // F: the largest single charge: a task's dominant share (DRF, C = 1), times its
            // duration over the charge window when charges are resource-time.
            let f = w
                .jobs
                .iter()
                .flat_map(|j| j.dag.tasks.iter())
                .map(|t| {
                    let share = (0..total.0.len())
                        .filter(|&r| total.0[r] > 0.0)
                        .map(|r| t.demand.0[r] / total.0[r])
                        .fold(0.0, f64::max);
                    charge.amount(share, t.duration, None)
                })
                .fold(0.0, f64::max);
            let mut closest: f64 = 0.0;
            let kappas: &[f64] =
                if charge == Charge::TimeBounded { &[f / 4.0, f / 2.0, f, 0.2] } else { &[f, 0.2, 0.4] };
            for &kappa in kappas {
                let cfg = GrapheneOnline {
                    kappa: Some(kappa),
                    charge,
                    shares: vec![1.0; queues],
                    ..GrapheneOnline::default()
                };
                let mut g = Graphene::new(cfg);
                run(&w, &cluster, &mut g, &SimConfig::default()).unwrap();
                let seen = g.deficits().max_seen();
                let bound = if queues == 2 { kappa } else { kappa + 2.0 * f.min(kappa) };
                assert!(seen <= bound + 1e-9, "{queues} queues, {charge:?}, kappa {kappa}: deficit {seen} > {bound}");
                closest = closest.max(seen / kappa);
            }
            assert!(closest > 0.5, "{queues} queues, {charge:?}: deficits never came near the bound ({closest})");
        }
    }
}

/// Machine speeds in the simulator: two tasks of 10 s that each need a whole machine, on a
/// machine of speed 1 and one of speed 2, run 10 s and 5 s; the replay checker accepts that
/// only because it knows the speeds (without them the 5 s run is too short).
#[test]
fn replay_runs_tasks_at_their_machines_speed() {
    use graphene::model::ClusterSpec;
    use graphene::online::Fifo;
    use graphene::sim::{run as simulate, SimConfig};
    use graphene::trace::{load, TraceOptions};
    use graphene::validate::{validate_replay, validate_replay_on, Violation};

    let dir = tempdir();
    let trace = write(
        dir.path(),
        "t.csv",
        "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations\nA,0,q0,s,2,10,2,1,0,0,,\n",
    );
    let out = dir.path().join("r");
    let args = ["replay", trace.to_str().unwrap(), "--machines", "2", "--capacity", "cpu=2,mem=8", "--speeds", "1,2"];
    run(&[&args[..], &["--scheduler", "fifo", "-q", "--out", out.to_str().unwrap()]].concat()).ok();
    let sched = std::fs::read_to_string(out.join("schedule.csv")).unwrap();
    let mut ran: Vec<(u32, f64)> = sched
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[2].parse().unwrap(), f[4].parse::<f64>().unwrap() - f[3].parse::<f64>().unwrap())
        })
        .collect();
    ran.sort_by_key(|a| a.0);
    assert_eq!(ran, vec![(0, 10.0), (1, 5.0)], "{sched}");

    let (w, _) = load(&trace, &TraceOptions::default()).unwrap();
    let cap = [("cpu".to_string(), 2.0), ("mem".to_string(), 8.0)].into_iter().collect();
    let cluster = ClusterSpec::uniform(2, cap).resolve(&w.jobs[0].dag.resources).unwrap();
    let cfg = SimConfig { speeds: vec![1.0, 2.0], ..SimConfig::default() };
    let r = simulate(&w, &cluster, &mut Fifo, &cfg).unwrap();
    assert_eq!(validate_replay_on(&w, &cluster, &cfg.speeds, &r), vec![]);
    assert!(validate_replay(&w, &cluster, &r).iter().any(|v| matches!(v, Violation::TooShort { .. })));
}

/// Runs `scheduler` on `trace` and returns schedule.csv's rows as (task id, machine, start, end).
fn realized(
    trace: &std::path::Path,
    out: &std::path::Path,
    scheduler: &str,
    extra: &[&str],
) -> Vec<(String, u32, f64, f64)> {
    let args = [
        "replay",
        trace.to_str().unwrap(),
        "--scheduler",
        scheduler,
        "-q",
        "--no-timing",
        "--out",
        out.to_str().unwrap(),
    ];
    run(&[&args[..], extra].concat()).ok();
    std::fs::read_to_string(out.join("schedule.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[1].to_string(), f[2].parse().unwrap(), f[3].parse().unwrap(), f[4].parse().unwrap())
        })
        .collect()
}

/// Online HEFT's processor choice: one 10 s task, a machine of speed 1 and one of speed 2. The
/// task goes to the fast machine and runs 5 s, whichever machine asks first (the slow one
/// declines while the fast one has room). FIFO takes the first machine that asks.
#[test]
fn heft_online_puts_a_task_where_it_finishes_first() {
    let dir = tempdir();
    let trace = write(
        dir.path(),
        "t.csv",
        "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations\nA,0,q0,s,1,10,2,1,0,0,,\n",
    );
    for speeds in ["1,2", "2,1"] {
        let cluster = ["--machines", "2", "--capacity", "cpu=2,mem=8", "--speeds", speeds];
        let heft = realized(&trace, &dir.path().join("h"), "heft", &cluster);
        let fast = if speeds == "1,2" { 1 } else { 0 };
        assert_eq!(heft.len(), 1);
        // Heartbeats are staggered over the first second (machine 1 first asks at 0.5 s).
        let start = if fast == 0 { 0.0 } else { 0.5 };
        assert_eq!((heft[0].1, heft[0].2, heft[0].3), (fast, start, start + 5.0), "speeds {speeds}: {heft:?}");
    }
    let fifo = realized(
        &trace,
        &dir.path().join("f"),
        "fifo",
        &["--machines", "2", "--capacity", "cpu=2,mem=8", "--speeds", "1,2"],
    );
    assert_eq!((fifo[0].1, fifo[0].3 - fifo[0].2), (0, 10.0), "fifo takes machine 0, the first to ask: {fifo:?}");
}

/// Online HEFT's task order: upward rank. On one machine that runs one task at a time, stage b
/// (2 s, then its child c, 10 s: rank 12) goes before stage a (1 s, rank 1), which FIFO runs
/// first in stage order. Hand-checked schedules: heft b 0-2, c 2-12, a 12-13; fifo a 0-1,
/// b 1-3, c 3-13.
#[test]
fn heft_online_runs_the_longest_path_first() {
    let dir = tempdir();
    let trace = write(
        dir.path(),
        "t.csv",
        "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents\n\
         A,0,q0,a,1,1,1,1,0,0,\n\
         A,0,q0,b,1,2,1,1,0,0,\n\
         A,0,q0,c,1,10,1,1,0,0,b\n",
    );
    let cluster = ["--machines", "1", "--capacity", "cpu=1,mem=8"];
    let times = |rows: Vec<(String, u32, f64, f64)>| -> Vec<(String, f64, f64)> {
        let mut v: Vec<_> = rows.into_iter().map(|(id, _, s, e)| (id, s, e)).collect();
        v.sort_by(|x, y| x.1.total_cmp(&y.1));
        v
    };
    let heft = times(realized(&trace, &dir.path().join("h"), "heft", &cluster));
    let fifo = times(realized(&trace, &dir.path().join("f"), "fifo", &cluster));
    let ids = |v: &[(String, f64, f64)]| {
        v.iter().map(|x| (x.0.split('[').next().unwrap().to_string(), x.1, x.2)).collect::<Vec<_>>()
    };
    assert_eq!(ids(&heft), vec![("b".into(), 0.0, 2.0), ("c".into(), 2.0, 12.0), ("a".into(), 12.0, 13.0)]);
    assert_eq!(ids(&fifo), vec![("a".into(), 0.0, 1.0), ("b".into(), 1.0, 3.0), ("c".into(), 3.0, 13.0)]);
}

/// `--misestimate-what` keeps the draws and leaves one estimate exact: per stage, the duration
/// factor under `durations` is the one `both` uses, with the demand factor 1, and the other way
/// round for `demands`.
#[test]
fn misestimating_durations_or_demands_alone_keeps_the_same_draws() {
    use graphene::model::ClusterSpec;
    use graphene::online::Fifo;
    use graphene::sim::{run, Misestimated, SimConfig};
    use graphene::trace::{load, TraceOptions};

    let (w, _) = load(&repo("traces/small.csv"), &TraceOptions { format: None, queues: None }).expect("trace loads");
    let cluster = ClusterSpec::uniform(2, ClusterSpec::default_capacity()).resolve(&w.jobs[0].dag.resources).unwrap();
    let factors = |what| {
        let cfg = SimConfig { misestimate: Some((-0.5, 0.5)), misestimate_what: what, seed: 3, ..SimConfig::default() };
        run(&w, &cluster, &mut Fifo, &cfg).unwrap().factors.concat()
    };
    let both = factors(Misestimated::Both);
    assert!(both.iter().all(|&(d, q)| d != 1.0 && q != 1.0 && d != q), "{both:?}");
    assert_eq!(factors(Misestimated::Durations), both.iter().map(|&(d, _)| (d, 1.0)).collect::<Vec<_>>());
    assert_eq!(factors(Misestimated::Demands), both.iter().map(|&(_, q)| (1.0, q)).collect::<Vec<_>>());

    let r =
        crate::util::run(&["replay", repo("traces/small.csv").to_str().unwrap(), "--misestimate-what", "durations"]);
    assert_ne!(r.code, Some(0), "--misestimate-what needs --misestimate");
    assert!(r.stderr.contains("--misestimate"), "{}", r.stderr);
}

/// `--charge accrue` reaches both graphene and tetris's gate. Queue q0's job `a` holds the
/// cluster with 600 s tasks; q1's job `d` arrives at 100 s. Charged up front (`time`), `a`'s
/// tasks launch when q1 has nothing waiting, so they charge nobody and `d` waits for them all;
/// accruing, `a` keeps paying while its tasks run, q1 is soon owed the bound and `d` gets
/// the first machines that free. Two runs give the same bytes (and every written replay has
/// passed the replay checker).
#[test]
fn accruing_charges_serve_the_queue_a_long_job_keeps_waiting() {
    let dir = tempdir();
    let trace = write(
        dir.path(),
        "t.csv",
        "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations\n\
         a,0,q0,s,16,600,1,1,0,0,,\n\
         c,0,q1,s,40,30,1,1,0,0,,\n\
         d,100,q1,s,40,30,1,1,0,0,,\n\
         e,200,q0,s,8,30,1,1,0,0,,\n",
    );
    let finish = |out: &std::path::Path, job: &str| -> f64 {
        let text = std::fs::read_to_string(out.join("jobs.csv")).unwrap();
        let line = text.lines().find(|l| l.starts_with(&format!("{job},"))).unwrap();
        line.split(',').nth(3).unwrap().parse().unwrap()
    };
    for scheduler in [&["graphene"][..], &["tetris", "--tetris-kappa", "0.1"][..]] {
        let mut d = Vec::new();
        for (i, charge) in ["time", "accrue", "accrue"].into_iter().enumerate() {
            let out = dir.path().join(format!("{}-{i}", scheduler[0]));
            let mut args: Vec<std::ffi::OsString> = vec!["replay".into(), trace.clone().into(), "--scheduler".into()];
            args.extend(scheduler.iter().map(|s| s.into()));
            for a in
                ["--charge", charge, "--machines", "4", "--capacity", "cpu=4,mem=8,disk=8,net=8", "--no-timing", "-q"]
            {
                args.push(a.into());
            }
            args.push("--out".into());
            args.push(out.clone().into());
            run(&args).ok();
            d.push(finish(&out, "d"));
        }
        assert!(d[1] < d[0] - 100.0, "{scheduler:?}: d ends at {} accruing, {} charged up front", d[1], d[0]);
        for f in ["jobs.csv", "schedule.csv", "summary.json"] {
            let a = std::fs::read(dir.path().join(format!("{}-1", scheduler[0])).join(f)).unwrap();
            let b = std::fs::read(dir.path().join(format!("{}-2", scheduler[0])).join(f)).unwrap();
            assert!(a == b, "{scheduler:?}: {f} differs between two runs");
        }
    }
}

/// `--graphene-rm` (graphene as its scheduler in YARN's ResourceManager sees the cluster): one
/// job of two 10 s tasks of 2 cores and 1 GB on a machine of 2 cores and 8 GB. Plain graphene
/// holds cores to capacity, so the tasks run one after the other (JCT 20); under
/// `--graphene-rm` only memory is refused, both run at 0 with the cores overbooked, and the
/// overload slows neither (JCT 10). The replay passed the replay checker (it wrote outputs).
#[test]
fn graphene_rm_refuses_memory_only() {
    let dir = tempdir();
    let trace = write(
        dir.path(),
        "t.csv",
        "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations\nA,0,q0,s,2,10,2,1,0,0,,\n",
    );
    for (rm, jct) in [(false, 20.0), (true, 10.0)] {
        let out = dir.path().join(format!("rm-{rm}"));
        let mut args: Vec<std::ffi::OsString> = vec![
            "replay".into(),
            trace.clone().into(),
            "--machines".into(),
            "1".into(),
            "--capacity".into(),
            "cpu=2,mem=8".into(),
            "--scheduler".into(),
            "graphene".into(),
            "--out".into(),
            out.clone().into(),
            "-q".into(),
        ];
        if rm {
            args.push("--graphene-rm".into());
        }
        let r = run(&args);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        assert_eq!(jcts(&out), vec![("A".into(), jct)], "--graphene-rm {rm}");
    }
}
