//! The online baselines (`tetris`, `cp`, `drf`, `random`, `slearn`, `graphene+cs`,
//! `graphene+tetris`) and every other name in `graphene::online::NAMES`, through the library:
//! every job finishes, realized schedules respect the DAGs and the machines' cpu and mem,
//! `random` and `slearn` are functions of their seed, hand-computed JCTs for `tetris`, `cp` and
//! `slearn`, and `slearn`'s JCTs do not move when estimates are wrong.

use std::collections::BTreeMap;

use graphene::model::{Cluster, ClusterSpec, Workload};
use graphene::online::{by_name, GrapheneOnline, OnlineSettings, NAMES};
use graphene::sim::{run, SimConfig, SimResult};

use crate::util::repo;

/// Two queues, all-to-all and one-to-one (`~`) edges, a stage with per-task durations.
const TWO_QUEUES: &str = "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations
a,0,q0,map,6,4,2,4,10,0,,
a,0,q0,fix,6,3.5,1,2,0,20,~map,1;2;3;4;5;6
a,0,q0,red,2,5,3,8,0,50,fix,
b,1,q1,s0,5,3,1,6,30,0,,
b,1,q1,s1,5,2,2,2,0,0,~s0,
b,1,q1,s2,1,1,1,1,0,0,s1,
c,2.5,q0,only,4,6,4,4,0,0,,
d,3,q1,x,3,2,2,10,0,0,,
d,3,q1,y,3,4,1,1,0,0,~x,
";

fn workload(text: &str) -> Workload {
    graphene::trace::parse(text, None).expect("a valid trace").0
}

fn cluster(w: &Workload, machines: usize, cap: &[(&str, f64)]) -> Cluster {
    let cap: BTreeMap<String, f64> = cap.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    ClusterSpec::uniform(machines, cap).resolve(&w.jobs[0].dag.resources).expect("a valid cluster")
}

fn settings(w: &Workload, seed: u64) -> OnlineSettings {
    let q = w.queues().len().max(1);
    OnlineSettings {
        shares: vec![1.0 / q as f64; q],
        graphene: GrapheneOnline::default(),
        seed,
        tetris_kappa: None,
        tetris_overbook: 1.0,
        tetris_srpt_scale: Default::default(),
        cs_accounting: graphene::online::CsAccounting::Containers,
        cs_user_limit: None,
        cs_yarn: graphene::online::CsYarn::default(),
        decima_model: None,
        decima_bundled: None,
        sticky: false,
    }
}

fn replay(name: &str, w: &Workload, c: &Cluster, seed: u64, misestimate: Option<(f64, f64)>) -> SimResult {
    let mut policy = by_name(name, &settings(w, seed)).expect("a known scheduler");
    run(w, c, policy.as_mut(), &SimConfig { heartbeat: 1.0, misestimate, seed, ..SimConfig::default() })
        .expect("the replay runs")
}

/// Checks `r` independently of the simulator's own bookkeeping: every task ran exactly once,
/// every job finished at a finite time no earlier than its last task, children started after
/// their parents ended, and no machine ever held more cpu or mem than it has.
fn check(name: &str, w: &Workload, c: &Cluster, r: &SimResult) {
    const EPS: f64 = 1e-6;
    assert_eq!(r.jobs.len(), w.jobs.len(), "{name}: one outcome per job");
    assert_eq!(r.runs.len(), w.tasks(), "{name}: every task ran once");
    let mut run_of: Vec<Vec<Option<(f64, f64)>>> = w.jobs.iter().map(|j| vec![None; j.dag.len()]).collect();
    for x in &r.runs {
        let slot = &mut run_of[x.job as usize][x.task as usize];
        assert!(slot.is_none(), "{name}: job {} task {} ran twice", x.job, x.task);
        assert!(x.start >= w.jobs[x.job as usize].arrival - EPS, "{name}: a task started before its job arrived");
        assert!(x.end >= x.start, "{name}: a task ended before it started");
        *slot = Some((x.start, x.end));
    }
    for (j, job) in w.jobs.iter().enumerate() {
        let out = &r.jobs[j];
        assert!(out.finish.is_finite(), "{name}: job {} never finished", job.name);
        let last = run_of[j].iter().map(|s| s.expect("ran").1).fold(0.0, f64::max);
        assert!(
            (out.finish - last).abs() < EPS,
            "{name}: job {} finish {} != last task end {last}",
            job.name,
            out.finish
        );
        // Dependencies, edge by edge from the stage lists: all-to-all waits for the whole
        // parent stage, one-to-one for the parent task with the same index.
        let dag = &job.dag;
        for st in &dag.stages {
            for e in &st.parents {
                let p = &dag.stages[e.stage as usize];
                for i in 0..st.len {
                    let start = run_of[j][(st.first + i) as usize].unwrap().0;
                    let parents: Vec<u32> = match e.kind {
                        graphene::model::EdgeKind::AllToAll => p.tasks().collect(),
                        graphene::model::EdgeKind::OneToOne => vec![p.first + i],
                    };
                    for pt in parents {
                        let end = run_of[j][pt as usize].unwrap().1;
                        assert!(
                            start >= end - EPS,
                            "{name}: job {} {}[{i}] starts at {start} before parent {} ends at {end}",
                            job.name,
                            st.name,
                            dag.task_name(pt)
                        );
                    }
                }
            }
        }
    }
    // Capacity: sweep each machine's start/end events, ends first at equal times.
    let dims: Vec<usize> = ["cpu", "mem"]
        .iter()
        .map(|n| w.jobs[0].dag.resources.iter().position(|r| r == n).expect("cpu and mem"))
        .collect();
    for (m, cap) in c.machines.iter().enumerate() {
        let mut events: Vec<(f64, i8, usize, u32)> = Vec::new();
        for (i, x) in r.runs.iter().enumerate() {
            if x.machine as usize == m {
                events.push((x.start, 1, i, x.job));
                events.push((x.end, -1, i, x.job));
            }
        }
        events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut used = [0.0f64; 2];
        for (time, kind, i, job) in events {
            let x = &r.runs[i];
            let task = &w.jobs[job as usize].dag.tasks[x.task as usize];
            let factor = r.factors[job as usize][task.stage as usize].1;
            for (k, &d) in dims.iter().enumerate() {
                used[k] += kind as f64 * task.demand.0[d] * factor;
                assert!(
                    used[k] <= cap.0[d] * (1.0 + EPS) + EPS,
                    "{name}: machine {m} holds {} of resource {d} at {time}, capacity {}",
                    used[k],
                    cap.0[d]
                );
            }
        }
    }
}

#[test]
fn every_scheduler_finishes_small_csv_validly() {
    let w = workload(&std::fs::read_to_string(repo("traces/small.csv")).unwrap());
    // Tight enough that jobs overlap and compete (a 40-task scan stage needs 40 cores).
    let c = cluster(&w, 3, &[("cpu", 8.0), ("mem", 32.0), ("disk", 200.0), ("net", 1250.0)]);
    for name in NAMES {
        check(name, &w, &c, &replay(name, &w, &c, 3, None));
        check(&format!("{name} misestimated"), &w, &c, &replay(name, &w, &c, 3, Some((-0.4, 0.4))));
    }
}

#[test]
fn every_scheduler_finishes_two_queues_with_one_to_one_edges_validly() {
    let w = workload(TWO_QUEUES);
    assert_eq!(w.queues().len(), 2);
    for machines in [1, 2] {
        let c = cluster(&w, machines, &[("cpu", 6.0), ("mem", 16.0), ("disk", 40.0), ("net", 60.0)]);
        for name in NAMES {
            check(name, &w, &c, &replay(name, &w, &c, 5, None));
        }
    }
}

fn fingerprint(r: &SimResult) -> Vec<(u32, u32, u32, u64, u64)> {
    r.runs.iter().map(|x| (x.job, x.task, x.machine, x.start.to_bits(), x.end.to_bits())).collect()
}

#[test]
fn random_is_a_function_of_its_seed() {
    let w = workload(&std::fs::read_to_string(repo("traces/small.csv")).unwrap());
    let c = cluster(&w, 3, &[("cpu", 8.0), ("mem", 32.0), ("disk", 200.0), ("net", 1250.0)]);
    let a = replay("random", &w, &c, 11, None);
    let b = replay("random", &w, &c, 11, None);
    assert_eq!(fingerprint(&a), fingerprint(&b));
    let finishes = |r: &SimResult| r.jobs.iter().map(|j| j.finish.to_bits()).collect::<Vec<_>>();
    assert_eq!(finishes(&a), finishes(&b));
    let other = replay("random", &w, &c, 12, None);
    assert_ne!(fingerprint(&a), fingerprint(&other), "another seed makes other choices");
}

fn jcts(r: &SimResult) -> Vec<f64> {
    r.jobs.iter().map(|j| j.jct()).collect()
}

/// One machine with 1 core and 8 memory; every task takes 1 core and 1 memory.
/// A (one 10 s task) arrives at 0 and runs 0-10. B (two 10 s tasks) arrives at 1, C (one 5 s
/// task) at 2; both wait. When A ends at 10 both candidates align equally:
/// (1/1)(1/1) + (1/8)(8/8) = 1.125, so eps = 1.125. Remaining work: B 2 x 10 x (1 + 1/8) = 22.5,
/// C 5 x 1.125 = 5.625 (disk and net have capacity 0 and count for nothing). Scores: B 1.125 -
/// 1.125 x 22.5/22.5 = 0, C 1.125 - 1.125 x 0.25 = 0.84: C runs 10-15 (JCT 13), then B's tasks
/// 15-25 and 25-35 (JCT 34). FIFO instead runs B first: B 10-30 (JCT 29), C 30-35 (JCT 33).
#[test]
fn tetris_prefers_less_remaining_work_among_equal_alignments() {
    let w = workload(
        "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations
A,0,q,s,1,10,1,1,0,0,,
B,1,q,s,2,10,1,1,0,0,,
C,2,q,s,1,5,1,1,0,0,,
",
    );
    let c = cluster(&w, 1, &[("cpu", 1.0), ("mem", 8.0)]);
    assert_eq!(jcts(&replay("tetris", &w, &c, 0, None)), vec![10.0, 34.0, 13.0]);
    assert_eq!(jcts(&replay("fifo", &w, &c, 0, None)), vec![10.0, 29.0, 33.0]);
}

/// Tetris behind Graphene's deficit-counter bound (`--tetris-kappa`), by hand. One machine with
/// 1 core and 8 memory, every task 1 core and 1 memory. Queue q0: A, four 1 s tasks; queue q1:
/// B, one 30 s task; both at 0. Without the bound Tetris runs the job with less work left
/// first: A 0-4, B 4-34 (JCTs 4 and 34). With kappa 0.02, DRF charges in resource-time (a 1 s
/// task charges its dominant share 1 x 1/60; B's task 30/60), both queues contending with equal
/// shares: A's first two tasks credit B 1/120 each (B at 0.0167); a third would lift B to
/// 0.025, over 0.02, and B's task would lift A over the bound too (0.25 - 0.0167), so the strict pass
/// allows nothing and the fallback serves the most-owed queue, B: 2-32, then A 32-34 (JCTs 34
/// and 32). Graphene's own scheduler, with the same bound, gets the same counters.
#[test]
fn tetris_with_the_deficit_bound_serves_the_owed_queue() {
    let w = workload(
        "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations
A,0,q0,s,4,1,1,1,0,0,,
B,0,q1,s,1,30,1,1,0,0,,
",
    );
    let c = cluster(&w, 1, &[("cpu", 1.0), ("mem", 8.0)]);
    assert_eq!(jcts(&replay("tetris", &w, &c, 0, None)), vec![4.0, 34.0]);
    let mut s = settings(&w, 0);
    s.tetris_kappa = Some(0.02);
    let mut policy = by_name("tetris", &s).unwrap();
    let r = run(&w, &c, policy.as_mut(), &SimConfig { heartbeat: 1.0, ..SimConfig::default() }).unwrap();
    check("tetris-fair", &w, &c, &r);
    assert_eq!(jcts(&r), vec![34.0, 32.0]);
}

/// The Capacity Scheduler's YARN options, by hand. One machine with 4 cores and 8 memory, two
/// queues with equal shares; only q0 has work: A, four 10 s tasks of 1 core and 1 memory.
/// Elastic queues (no user limit): all four run at 0, JCT 10. With YARN's default
/// user-limit-factor 1 and the DominantResourceCalculator the queue's one user gets no new
/// container once it holds more than half the cluster, checked before each request as YARN's
/// canAssignToUser does: at 0, 1 and 2 cores held it may ask again (the third brings it to 3 of
/// 4, past half), at 3 it may not: three at 0, the fourth at 10, JCT 20; with three tasks all
/// three run at 0, JCT 10 (a check after the request would have held the third back). With the
/// DefaultResourceCalculator (memory only) four tasks hold 4 of 8 memory: all four run, JCT 10.
#[test]
fn cs_user_limit_follows_the_resource_calculator() {
    let w = workload(
        "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations
A,0,q0,s,4,10,1,1,0,0,,
B,100,q1,s,1,1,1,1,0,0,,
",
    );
    let three = workload(
        "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations
A,0,q0,s,3,10,1,1,0,0,,
B,100,q1,s,1,1,1,1,0,0,,
",
    );
    let c = cluster(&w, 1, &[("cpu", 4.0), ("mem", 8.0)]);
    let cs_on = |w: &Workload, acc, f| {
        let mut s = settings(w, 0);
        s.cs_accounting = acc;
        s.cs_user_limit = f;
        let mut policy = by_name("cs", &s).unwrap();
        let r = run(w, &c, policy.as_mut(), &SimConfig { heartbeat: 1.0, ..SimConfig::default() }).unwrap();
        check("cs", w, &c, &r);
        jcts(&r)
    };
    let cs = |acc, f| cs_on(&w, acc, f);
    use graphene::online::CsAccounting::*;
    assert_eq!(cs(Containers, None), vec![10.0, 1.0]);
    assert_eq!(cs(Dominant, Some(1.0)), vec![20.0, 1.0]);
    assert_eq!(cs_on(&three, Dominant, Some(1.0)), vec![10.0, 1.0]);
    assert_eq!(cs(Memory, Some(1.0)), vec![10.0, 1.0]);
    assert_eq!(cs(Dominant, None), vec![10.0, 1.0]);
}

/// `cs` with YARN's application masters (`--cs-am`), by hand. One machine with 3 cores, one
/// queue, heartbeat 1 s; AM containers of 1 core. A (two 10 s tasks of 1 core) arrives at 0, B
/// (one 1 s task) at 0.5. At 0 the heartbeat grants A's AM (1 core), and A requests nothing in
/// that instant; at 1 A's two tasks take the other 2 cores (1-11). B's AM cannot fit until A's
/// first task ends at 11 (its finish heartbeat grants it; the second end frees A's AM); B's
/// task runs at the next heartbeat, 12-13. JCTs 11 and 12.5. Without AMs: A 0-10, B at the
/// heartbeat at 1, 1-2: 10 and 1.5. The same queues serve `cp` and `graphene+cs`.
#[test]
fn cs_application_masters_hold_a_container_per_job() {
    let w = workload(
        "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations
A,0,q0,s,2,10,1,1,0,0,,
B,0.5,q0,s,1,1,1,1,0,0,,
",
    );
    let c = cluster(&w, 1, &[("cpu", 3.0), ("mem", 8.0)]);
    let run_with = |name: &str, am: Option<f64>| {
        let mut s = settings(&w, 0);
        s.cs_yarn.am = am.map(|cpu| {
            let mut d = graphene::model::ResVec::ZERO;
            d.0[0] = cpu;
            d
        });
        let mut policy = by_name(name, &s).unwrap();
        let r = run(&w, &c, policy.as_mut(), &SimConfig { heartbeat: 1.0, ..SimConfig::default() }).unwrap();
        check(name, &w, &c, &r);
        jcts(&r)
    };
    assert_eq!(w.jobs[0].dag.resources[0], "cpu");
    for name in ["cs", "cp", "graphene+cs"] {
        assert_eq!(run_with(name, None), vec![10.0, 1.5], "{name}");
        assert_eq!(run_with(name, Some(1.0)), vec![11.0, 12.5], "{name}");
    }
}

/// YARN's one off-switch container per node heartbeat (`--cs-assignments-per-heartbeat 1`) and
/// node managers that report a finished container only at their next heartbeat
/// (`--periodic-heartbeats`), by hand. One machine with 4 cores, heartbeat 1 s. A: four 10 s
/// tasks of 1 core at 0: one per heartbeat, 0-10, 1-11, 2-12, 3-13: JCT 13 (all at 0 without
/// the limit: 10). B: a chain of two 0.5 s tasks at 0 on a 1-core machine: the second starts
/// when the first ends (0.5, the machine heartbeats then), JCT 1; with periodic heartbeats only
/// at the next heartbeat, 1-1.5: JCT 1.5.
#[test]
fn cs_one_container_per_heartbeat_and_periodic_heartbeats() {
    let a = workload(
        "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations
A,0,q0,s,4,10,1,1,0,0,,
",
    );
    let b = workload(
        "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations
B,0,q0,s0,1,0.5,1,1,0,0,,
B,0,q0,s1,1,0.5,1,1,0,0,s0,
",
    );
    let jct = |w: &Workload, cores: f64, per: Option<usize>, periodic: bool| {
        let c = cluster(w, 1, &[("cpu", cores), ("mem", 8.0)]);
        let mut s = settings(w, 0);
        s.cs_yarn.per_heartbeat = per;
        let mut policy = by_name("cs", &s).unwrap();
        let cfg = SimConfig { heartbeat: 1.0, periodic_only: periodic, ..SimConfig::default() };
        let r = run(w, &c, policy.as_mut(), &cfg).unwrap();
        check("cs", w, &c, &r);
        jcts(&r)
    };
    assert_eq!(jct(&a, 4.0, None, false), vec![10.0]);
    assert_eq!(jct(&a, 4.0, Some(1), false), vec![13.0]);
    assert_eq!(jct(&a, 4.0, Some(1), true), vec![13.0]);
    assert_eq!(jct(&b, 1.0, None, false), vec![1.0]);
    assert_eq!(jct(&b, 1.0, None, true), vec![1.5]);
}

/// YARN's strict FIFO with node reservations (`--cs-reservations`), by hand. One machine with 4
/// cores, one queue, heartbeat 1 s. A: three 10 s tasks of 1 core at 0 (0-10). B: one 5 s task
/// of 2 cores at 0.5. C: four 10 s tasks of 1 core at 1. Without reservations B does not fit the
/// one free core at 1, so C's first task takes it (1-11), then C's others take each core A
/// frees at 10 (10-20), and B fits only when two of those end: 20-25. JCTs 10, 24.5, 19. With
/// reservations B reserves the machine at 1; the first core A frees at 10 completes B's 2
/// cores (10-15); C's tasks then reserve and take cores one by one (10-20, 10-20, 15-25,
/// 15-25). JCTs 10, 14.5, 24.
#[test]
fn cs_reservations_keep_fifo_strict() {
    let w = workload(
        "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations
A,0,q0,s,3,10,1,1,0,0,,
B,0.5,q0,s,1,5,2,1,0,0,,
C,1,q0,s,4,10,1,1,0,0,,
",
    );
    let c = cluster(&w, 1, &[("cpu", 4.0), ("mem", 8.0)]);
    for name in ["cs", "cp", "graphene+cs"] {
        let jct = |reserve: bool| checked_jcts(name, &w, &c, |s| s.cs_yarn.reserve = reserve);
        assert_eq!(jct(false), vec![10.0, 24.5, 19.0], "{name}");
        assert_eq!(jct(true), vec![10.0, 14.5, 24.0], "{name}");
    }
}

/// The JCTs of `name` on `w` (1 s heartbeats, seed 0) with `edit` applied to the default
/// settings, after the independent [`check`].
fn checked_jcts(name: &str, w: &Workload, c: &Cluster, edit: impl FnOnce(&mut OnlineSettings)) -> Vec<f64> {
    let mut s = settings(w, 0);
    edit(&mut s);
    let mut policy = by_name(name, &s).unwrap();
    let r = run(w, c, policy.as_mut(), &SimConfig { heartbeat: 1.0, ..SimConfig::default() }).unwrap();
    check(name, w, c, &r);
    jcts(&r)
}

/// `--cs-tez-order`: a job's stages by distance from the roots (Tez's natural order, what the
/// SLS AM gets from `export-trace --order natural`) instead of stage index. Chain a -> b -> e
/// (1, 1, 5 s) beside root c (three 1 s tasks), 2 cores. By index: a and c at 0, b and c at 1,
/// e and c at 2, e ends at 7. By depth: a and c at 0, then c's last two (depth 0) before b
/// (depth 1) at 1, b at 2, e 3-8: JCT 8.
#[test]
fn cs_tez_order_runs_shallower_stages_first() {
    let w = workload(
        "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations
J,0,q0,a,1,1,1,1,0,0,,
J,0,q0,b,1,1,1,1,0,0,a,
J,0,q0,e,1,5,1,1,0,0,b,
J,0,q0,c,3,1,1,1,0,0,,
",
    );
    let c = cluster(&w, 1, &[("cpu", 2.0), ("mem", 8.0)]);
    let jct = |tez: bool| checked_jcts("cs", &w, &c, |s| s.cs_yarn.tez_order = tez);
    assert_eq!(jct(false), vec![7.0]);
    assert_eq!(jct(true), vec![8.0]);
}

/// `--container-overhead`: every task holds its machine and keeps its children waiting that
/// long past its duration. The chain of two 0.5 s tasks on 1 core with 0.25 s: 0-0.75 and
/// 0.75-1.5 (the end frees the machine, which heartbeats then): JCT 1.5; the realized runs last
/// 0.75 s each.
#[test]
fn container_overhead_lengthens_every_container() {
    let w = workload(
        "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations
B,0,q0,s0,1,0.5,1,1,0,0,,
B,0,q0,s1,1,0.5,1,1,0,0,s0,
",
    );
    let c = cluster(&w, 1, &[("cpu", 1.0), ("mem", 8.0)]);
    let mut policy = by_name("cs", &settings(&w, 0)).unwrap();
    let cfg = SimConfig { heartbeat: 1.0, container_overhead: 0.25, ..SimConfig::default() };
    let r = run(&w, &c, policy.as_mut(), &cfg).unwrap();
    check("cs", &w, &c, &r);
    assert_eq!(jcts(&r), vec![1.5]);
    assert!(r.runs.iter().all(|x| x.end - x.start == 0.75));
    let bad = SimConfig { container_overhead: -1.0, ..SimConfig::default() };
    assert!(run(&w, &c, by_name("cs", &settings(&w, 0)).unwrap().as_mut(), &bad).is_err());
}

/// DRF across two queues, by hand. One machine with 4 cores and 4 memory. q0: A, four 10 s
/// tasks of cpu 1, mem 0.5 (dominant share 1/4 each); q1: B, two 10 s tasks of cpu 0.5, mem 2
/// (1/2 each); both at 0. Lowest dominant share first, ties to q0: A (A 1/4), B (B 1/2), A (A
/// 1/2), A again on the tie (A 3/4, cpu 3.5, mem 3.5); B's second task needs 2 memory and A's
/// fourth a fifth core, so nothing more fits until 10, when A's last and B's last run 10-20:
/// JCTs 20 and 20. FIFO gives A all four cores at 0 (A 10) and B 10-20 (B 20).
#[test]
fn drf_serves_the_lowest_dominant_share() {
    let w = workload(
        "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations
A,0,q0,s,4,10,1,0.5,0,0,,
B,0,q1,s,2,10,0.5,2,0,0,,
",
    );
    let c = cluster(&w, 1, &[("cpu", 4.0), ("mem", 4.0)]);
    let r = replay("drf", &w, &c, 0, None);
    check("drf", &w, &c, &r);
    assert_eq!(jcts(&r), vec![20.0, 20.0]);
    assert_eq!(r.runs.iter().filter(|x| x.start == 0.0).count(), 4, "three of A's tasks and one of B's at 0");
    assert_eq!(jcts(&replay("fifo", &w, &c, 0, None)), vec![10.0, 20.0]);
}

/// One machine with 2 cores; job J at 0: stage x (two 1 s tasks), stage y (one 3 s task), stage
/// z (one 3 s task after y), one core each. Bottom levels: x 1, y 3 + 3 = 6, z 3.
/// cp: at 0, y (6) then x[0] (1) take both cores; x[0] ends at 1 and x[1] runs 1-2; y ends at
/// 3 and z runs 3-6: JCT 6. cs (stage order): x[0], x[1] at 0-1, y 1-4, z 4-7: JCT 7.
#[test]
fn cp_runs_the_longest_path_first() {
    let w = workload(
        "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations
J,0,q,x,2,1,1,1,0,0,,
J,0,q,y,1,3,1,1,0,0,,
J,0,q,z,1,3,1,1,0,0,y,
",
    );
    let c = cluster(&w, 1, &[("cpu", 2.0), ("mem", 8.0)]);
    let r = replay("cp", &w, &c, 0, None);
    assert_eq!(jcts(&r), vec![6.0]);
    let y_start = r.runs.iter().find(|x| x.task == 2).unwrap().start;
    assert_eq!(y_start, 0.0, "the critical-path stage starts first");
    assert_eq!(jcts(&replay("cs", &w, &c, 0, None)), vec![7.0]);
}

/// SLearn, by hand. One machine with 2 cores, every task 1 core; a stage of 3 to 33 tasks has
/// one pilot (`pilots_for`), and tasks of a stage run equally long, so which task is the pilot
/// does not matter. A (4 tasks of 10 s) arrives at 0, B (4 tasks of 2 s) at 1.
/// * 0: A's pilot takes a core; nothing is learned yet, so work conservation gives the other
///   core to a second A task (both run 0-10).
/// * 10: both end. A's pilot took 10 s: A is estimated at 10 x 2 tasks not launched = 20. The
///   two free cores go, by priority, to B's pilot (pilots come before learned jobs: 10-12) and
///   to A (10-20).
/// * 12: B's pilot took 2 s: B is 2 x 3 = 6 against A's 10 x 1 = 10, so B runs although A
///   arrived first: 12-14, 14-16, 16-18 (B: JCT 17). A's last task gets the core at 18 and ends
///   at 28 (JCT 28).
///
/// FIFO runs A to the end first: A 20, B 23.
#[test]
fn slearn_runs_pilots_first_then_prefers_the_shorter_learned_job() {
    let w = workload(
        "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations
A,0,q,s,4,10,1,1,0,0,,
B,1,q,s,4,2,1,1,0,0,,
",
    );
    let c = cluster(&w, 1, &[("cpu", 2.0), ("mem", 8.0)]);
    let r = replay("slearn", &w, &c, 0, None);
    check("slearn", &w, &c, &r);
    assert_eq!(jcts(&r), vec![28.0, 17.0]);
    let mut starts: Vec<(f64, u32)> = r.runs.iter().map(|x| (x.start, x.job)).collect();
    starts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    assert_eq!(starts, vec![(0.0, 0), (0.0, 0), (10.0, 0), (10.0, 1), (12.0, 1), (14.0, 1), (16.0, 1), (18.0, 0)]);
    assert_eq!(jcts(&replay("fifo", &w, &c, 0, None)), vec![20.0, 23.0]);
}

/// SLearn on a DAG, by hand: stages are sampled as they become runnable, and a job's stages not
/// sampled yet count at the mean of its pilots so far. One machine with 1 core. A arrives at 0:
/// stage a1 (3 tasks of 4 s), then a2 (3 tasks of 1 s, after all of a1). B arrives at 0.5: 3
/// tasks of 5 s. One pilot per stage.
/// * 0-4: a1's pilot. A is then 4 x 2 (a1) + 4 x 3 (a2, not sampled: A's pilot mean) = 20.
/// * 4-9: B's pilot (pilots first). B is then 5 x 2 = 10 < 20: B runs 9-14, 14-19 (JCT 18.5).
///   Counting only a1 would have made A 8 < 10 and run A first; its true remaining work is 11.
/// * a1's other tasks 19-23, 23-27; a2's pilot 27-28, the rest 28-29, 29-30 (A: JCT 30).
#[test]
fn slearn_samples_each_stage_and_extrapolates_to_the_rest() {
    let w = workload(
        "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations
A,0,q,a1,3,4,1,1,0,0,,
A,0,q,a2,3,1,1,1,0,0,a1,
B,0.5,q,b,3,5,1,1,0,0,,
",
    );
    let c = cluster(&w, 1, &[("cpu", 1.0), ("mem", 8.0)]);
    let r = replay("slearn", &w, &c, 0, None);
    check("slearn", &w, &c, &r);
    assert_eq!(jcts(&r), vec![30.0, 18.5]);
    assert_eq!(jcts(&replay("fifo", &w, &c, 0, None)), vec![15.0, 29.5]);
}

/// Jobs with DAGs and skewed per-task durations for the misestimation and seed tests: 1-core
/// tasks, so on machines of 1.35 cores exactly one task fits whatever factor in [0.7, 1.3]
/// scales its request, and misestimation can change a policy's choices only if it reads
/// estimated durations.
const SKEWED: &str = "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations
a,0,q0,m,6,3,1,1,0,0,,9;1;1;2;3;2
a,0,q0,r,3,2,1,1,0,0,m,
b,1,q1,m,4,1,1,1,0,0,,
b,1,q1,x,4,6,1,1,0,0,~m,2;4;8;10
c,2,q0,s,8,2,1,1,0,0,,1;1;1;1;1;1;1;9
c,2,q0,t,2,5,1,1,0,0,s,
d,3,q1,only,12,1,1,1,0,0,,
e,4,q0,big,5,8,1,1,0,0,,12;4;8;8;8
e,4,q0,tail,1,1,1,1,0,0,big,
f,5,q1,pair,2,3,1,1,0,0,,
";

/// SLearn never reads estimates: its JCTs are bit-for-bit the same with and without
/// `--misestimate`, for several seeds, where policies that plan with estimated durations change.
#[test]
fn slearn_is_immune_to_misestimated_durations() {
    let w = workload(SKEWED);
    let c = cluster(&w, 3, &[("cpu", 1.35), ("mem", 8.0)]);
    let bits = |r: &SimResult| r.jobs.iter().map(|j| j.finish.to_bits()).collect::<Vec<_>>();
    let mut others_moved = 0;
    for seed in 1..=4 {
        let exact = replay("slearn", &w, &c, seed, None);
        let off = replay("slearn", &w, &c, seed, Some((-0.3, 0.3)));
        check("slearn misestimated", &w, &c, &off);
        assert_eq!(bits(&exact), bits(&off), "seed {seed}: {:?} vs {:?}", jcts(&exact), jcts(&off));
        for other in ["tetris", "graphene"] {
            if bits(&replay(other, &w, &c, seed, None)) != bits(&replay(other, &w, &c, seed, Some((-0.3, 0.3)))) {
                others_moved += 1;
            }
        }
    }
    assert!(others_moved > 0, "the setting must be one where reading estimates changes the outcome");
}

/// The pilot draw is seeded: the same seed gives the same schedule, every schedule passes the
/// replay checker, and another seed picks other pilots and so (with skewed tasks) schedules
/// differently.
#[test]
fn slearn_is_valid_and_a_function_of_its_seed() {
    use graphene::validate::validate_replay;
    let small = workload(&std::fs::read_to_string(repo("traces/small.csv")).unwrap());
    let skewed = workload(SKEWED);
    for (w, c) in [
        (&small, cluster(&small, 3, &[("cpu", 8.0), ("mem", 32.0), ("disk", 200.0), ("net", 1250.0)])),
        (&skewed, cluster(&skewed, 2, &[("cpu", 2.0), ("mem", 8.0)])),
    ] {
        for mis in [None, Some((-0.4, 0.4))] {
            let a = replay("slearn", w, &c, 7, mis);
            assert_eq!(validate_replay(w, &c, &a), vec![]);
            check("slearn", w, &c, &a);
            assert_eq!(fingerprint(&a), fingerprint(&replay("slearn", w, &c, 7, mis)));
        }
    }
    let c = cluster(&skewed, 2, &[("cpu", 2.0), ("mem", 8.0)]);
    let base = fingerprint(&replay("slearn", &skewed, &c, 7, None));
    assert!(
        (8..16).any(|seed| fingerprint(&replay("slearn", &skewed, &c, seed, None)) != base),
        "the seed picks the pilots"
    );
}
