//! Checking a realized replay: what the simulator says happened, checked against the workload
//! with no help from the simulator's own bookkeeping.

use std::collections::HashMap;

use crate::model::{Cluster, EdgeKind, Workload, MAX_RESOURCES};
use crate::sim::SimResult;
use crate::validate::Violation;

/// Every violation in `result` as a replay of `workload` on `cluster`: each task of each job
/// runs exactly once, on an existing machine, for at least its duration (overbooking may only
/// slow it down), after all its parents end; and at every instant the allocations on each
/// machine (demand x the misestimation factor the scheduler saw) fit its capacity on every
/// resource that may not be overbooked.
pub fn validate_replay(workload: &Workload, cluster: &Cluster, result: &SimResult) -> Vec<Violation> {
    validate_replay_on(workload, cluster, &[], result)
}

/// As [`validate_replay`] on machines of the given speeds (empty: all 1): a task runs at least
/// its duration divided by its machine's speed.
pub fn validate_replay_on(
    workload: &Workload,
    cluster: &Cluster,
    speeds: &[f64],
    result: &SimResult,
) -> Vec<Violation> {
    validate_replay_durations(workload, cluster, speeds, result, true)
}

/// As [`validate_replay_on`]; with `trace_durations` off (`replay --waves`, where a task runs a
/// duration drawn at launch, [`crate::sim::waves`]) a task's run is only checked to be finite
/// and to start after its job arrives, not to last its trace duration.
pub fn validate_replay_durations(
    workload: &Workload,
    cluster: &Cluster,
    speeds: &[f64],
    result: &SimResult,
    trace_durations: bool,
) -> Vec<Violation> {
    let mut out = Vec::new();
    let id = |job: u32, t: u32| {
        format!("{}/{}", workload.jobs[job as usize].name, workload.jobs[job as usize].dag.task_name(t))
    };
    let mut slot: Vec<Vec<Option<usize>>> = workload.jobs.iter().map(|j| vec![None; j.dag.len()]).collect();
    for (i, r) in result.runs.iter().enumerate() {
        let Some(job) = workload.jobs.get(r.job as usize) else {
            out.push(Violation::UnknownTask { id: format!("job #{}", r.job) });
            continue;
        };
        if r.task as usize >= job.dag.len() {
            out.push(Violation::UnknownTask { id: format!("{}/task #{}", job.name, r.task) });
            continue;
        }
        if slot[r.job as usize][r.task as usize].replace(i).is_some() {
            out.push(Violation::Duplicate { id: id(r.job, r.task) });
        }
        if r.machine as usize >= cluster.len() {
            out.push(Violation::NoSuchMachine {
                id: id(r.job, r.task),
                machine: r.machine as i64,
                machines: cluster.len(),
            });
        }
        let speed = speeds.get(r.machine as usize).copied().filter(|s| s.is_finite() && *s > 0.0).unwrap_or(1.0);
        let d = if trace_durations { job.dag.tasks[r.task as usize].duration / speed } else { 0.0 };
        if !(r.start.is_finite() && r.end.is_finite())
            || r.start < job.arrival
            || r.end - r.start < d * (1.0 - 1e-9) - 1e-9
        {
            out.push(Violation::TooShort { id: id(r.job, r.task), ran: r.end - r.start, duration: d });
        }
    }
    for (j, job) in workload.jobs.iter().enumerate() {
        let s = &slot[j];
        for t in 0..job.dag.len() {
            if s[t].is_none() {
                out.push(Violation::Missing { id: id(j as u32, t as u32) });
            }
        }
        let end = |t: u32| s[t as usize].map(|i| result.runs[i].end);
        for stage in &job.dag.stages {
            let latest = |p: &crate::model::Stage| {
                p.tasks().filter_map(|t| end(t).map(|e| (e, t))).fold(None, |a: Option<(f64, u32)>, x| match a {
                    Some(b) if b.0 >= x.0 => Some(b),
                    _ => Some(x),
                })
            };
            for e in &stage.parents {
                let p = &job.dag.stages[e.stage as usize];
                let all = latest(p);
                for t in stage.tasks() {
                    let Some(ci) = s[t as usize] else { continue };
                    let parent = match e.kind {
                        EdgeKind::AllToAll => all,
                        EdgeKind::OneToOne => {
                            let pt = p.first + job.dag.tasks[t as usize].index;
                            end(pt).map(|e| (e, pt))
                        }
                    };
                    if let Some((pe, pt)) = parent {
                        let cs = result.runs[ci].start;
                        if pe > cs + 1e-9 * (1.0 + cs.abs()) {
                            out.push(Violation::Dependency {
                                parent: id(j as u32, pt),
                                child: id(j as u32, t),
                                parent_end: pe,
                                child_start: cs,
                            });
                        }
                    }
                }
            }
        }
    }
    // Capacity: sweep allocations per machine, ends before starts at equal times.
    let hard = cluster.hard_mask();
    let mut by_machine: HashMap<u32, Vec<(f64, bool, usize)>> = HashMap::new();
    for (i, r) in result.runs.iter().enumerate() {
        if (r.machine as usize) < cluster.len() && r.end > r.start {
            let ev = by_machine.entry(r.machine).or_default();
            ev.push((r.start, true, i));
            ev.push((r.end, false, i));
        }
    }
    let mut machines: Vec<_> = by_machine.into_iter().collect();
    machines.sort_by_key(|(m, _)| *m);
    for (m, mut ev) in machines {
        ev.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let cap = &cluster.machines[m as usize];
        let mut used = [0.0f64; MAX_RESOURCES];
        let mut reported = [false; MAX_RESOURCES];
        let mut k = 0;
        while k < ev.len() {
            let time = ev[k].0;
            while k < ev.len() && ev[k].0 == time {
                let (_, start, i) = ev[k];
                let r = &result.runs[i];
                let job = &workload.jobs[r.job as usize];
                let task = &job.dag.tasks[r.task as usize];
                let factor =
                    result.factors.get(r.job as usize).and_then(|f| f.get(task.stage as usize)).map_or(1.0, |f| f.1);
                for x in 0..MAX_RESOURCES {
                    let v = task.demand.0[x] * factor;
                    used[x] += if start { v } else { -v };
                }
                k += 1;
            }
            for x in 0..cluster.resources.len() {
                if hard[x] && !reported[x] && used[x] > cap.0[x] * (1.0 + 1e-9) + 1e-9 {
                    reported[x] = true;
                    out.push(Violation::Capacity {
                        machine: m as usize,
                        time,
                        resource: cluster.resources[x].clone(),
                        used: used[x],
                        capacity: cap.0[x],
                    });
                }
            }
        }
    }
    out
}
