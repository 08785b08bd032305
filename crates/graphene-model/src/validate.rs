//! An independent schedule checker.
//!
//! It shares nothing with the code that builds schedules except the DAG and cluster model: it
//! reads task ids as text, recomputes every parent's end from the schedule itself and sweeps
//! start/end events per machine to check capacity at every instant. (Replays are checked by
//! `graphene::validate::validate_replay`, which reads the simulator's result.)

use std::collections::HashMap;
use std::fmt;

use serde::Deserialize;

use crate::model::{Cluster, Dag, EdgeKind, Network, Placement, Schedule, TaskId, MAX_RESOURCES};

/// Absolute and relative slack for comparing times computed by floating-point sums.
const TIME_EPS: f64 = 1e-6;

/// One scheduled task as a schedule file states it.
#[derive(Clone, Debug, Deserialize)]
pub struct Entry {
    pub id: String,
    pub machine: i64,
    pub start: f64,
    pub end: f64,
    /// priScore as a report states it (absent in hand-written files and in-memory schedules).
    #[serde(default)]
    pub priority: Option<f64>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Violation {
    UnknownTask {
        id: String,
    },
    Duplicate {
        id: String,
    },
    Missing {
        id: String,
    },
    NoSuchMachine {
        id: String,
        machine: i64,
        machines: usize,
    },
    BadTimes {
        id: String,
        start: f64,
        end: f64,
    },
    TooShort {
        id: String,
        ran: f64,
        duration: f64,
    },
    Dependency {
        parent: String,
        child: String,
        parent_end: f64,
        child_start: f64,
    },
    /// The parent ends in time, but its data reaches the child's machine too late from every
    /// run (copy) of the parent.
    Transfer {
        parent: String,
        child: String,
        machine: i64,
        arrival: f64,
        child_start: f64,
    },
    Capacity {
        machine: usize,
        time: f64,
        resource: String,
        used: f64,
        capacity: f64,
    },
    /// The precedence order names a task the DAG does not have, or one twice.
    OrderUnknownTask {
        id: String,
    },
    OrderDuplicate {
        id: String,
    },
    /// The order leaves out a task (an order, when present, ranks every task).
    OrderMissing {
        id: String,
    },
    /// A child ranked before its parent: an engine that follows the order would ask for the
    /// child first, which is the opposite of what a precedence order is for.
    OrderInverted {
        parent: String,
        child: String,
    },
    /// A figure the file states (its makespan, bounds, ratio, ...) that its tasks, the DAG or
    /// the cluster contradict: `stated` in the file, `actual` as `source` (a phrase ending in a
    /// verb: "its tasks end at") says.
    Stated {
        field: String,
        stated: String,
        actual: String,
        source: String,
    },
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::UnknownTask { id } => write!(f, "task '{id}' is not in the DAG"),
            Violation::Duplicate { id } => write!(f, "task '{id}' is scheduled more than once"),
            Violation::Missing { id } => write!(f, "task '{id}' is not scheduled"),
            Violation::NoSuchMachine { id, machine, machines } => {
                write!(f, "task '{id}' runs on machine {machine}, but machines are 0..{}", machines.saturating_sub(1))
            }
            Violation::BadTimes { id, start, end } => {
                write!(f, "task '{id}' has start {start} and end {end} (need finite times, 0 <= start <= end)")
            }
            Violation::TooShort { id, ran, duration } => {
                write!(f, "task '{id}' runs for {ran} but its duration is {duration}")
            }
            Violation::Dependency { parent, child, parent_end, child_start } => write!(
                f,
                "task '{child}' starts at {child_start} before its parent '{parent}' ends at {parent_end}"
            ),
            Violation::Transfer { parent, child, machine, arrival, child_start } => write!(
                f,
                "task '{child}' starts on machine {machine} at {child_start} before the data of its parent '{parent}' arrives there at {arrival}"
            ),
            Violation::Capacity { machine, time, resource, used, capacity } => write!(
                f,
                "machine {machine} at time {time}: {resource} in use {used} exceeds capacity {capacity}"
            ),
            Violation::OrderUnknownTask { id } => write!(f, "order names task '{id}', which is not in the DAG"),
            Violation::OrderDuplicate { id } => write!(f, "order names task '{id}' more than once"),
            Violation::OrderMissing { id } => write!(f, "order leaves out task '{id}'"),
            Violation::OrderInverted { parent, child } => {
                write!(f, "order ranks task '{child}' before its parent '{parent}'")
            }
            Violation::Stated { field, stated, actual, source } => {
                write!(f, "{field} is {stated} in the file, but {source} {actual}")
            }
        }
    }
}

/// Checks a precedence order (task ids, first served first): every task of the DAG exactly
/// once, and every parent before its children. Linear in tasks and stage edges: per edge it
/// compares the parent stage's last rank with the child stage's first (all-to-all), or ranks
/// task by task (one-to-one). An empty order (a file without one) has nothing to check.
pub fn check_order(dag: &Dag, order: &[String]) -> Vec<Violation> {
    let mut out = Vec::new();
    if order.is_empty() {
        return out;
    }
    let mut rank: Vec<Option<usize>> = vec![None; dag.len()];
    for (i, id) in order.iter().enumerate() {
        match dag.task_by_name(id) {
            None => out.push(Violation::OrderUnknownTask { id: id.clone() }),
            Some(t) if rank[t as usize].is_some() => out.push(Violation::OrderDuplicate { id: id.clone() }),
            Some(t) => rank[t as usize] = Some(i),
        }
    }
    for (t, r) in rank.iter().enumerate() {
        if r.is_none() {
            out.push(Violation::OrderMissing { id: dag.task_name(t as TaskId) });
        }
    }
    if !out.is_empty() {
        return out;
    }
    let rank: Vec<usize> = rank.into_iter().map(|r| r.expect("checked above")).collect();
    for stage in &dag.stages {
        for e in &stage.parents {
            let p = &dag.stages[e.stage as usize];
            match e.kind {
                EdgeKind::AllToAll => {
                    let last = p.tasks().max_by_key(|&t| rank[t as usize]).expect("stages have tasks");
                    let first = stage.tasks().min_by_key(|&t| rank[t as usize]);
                    if let Some(first) = first {
                        if rank[first as usize] < rank[last as usize] {
                            out.push(Violation::OrderInverted {
                                parent: dag.task_name(last),
                                child: dag.task_name(first),
                            });
                        }
                    }
                }
                EdgeKind::OneToOne => {
                    for i in 0..stage.len {
                        let (pt, ct) = (p.first + i, stage.first + i);
                        if rank[ct as usize] < rank[pt as usize] {
                            out.push(Violation::OrderInverted { parent: dag.task_name(pt), child: dag.task_name(ct) });
                        }
                    }
                }
            }
        }
    }
    out
}

/// Entries for a schedule held in memory, by task name, so that in-memory schedules go through
/// exactly the same checks as files.
pub fn entries_of(dag: &Dag, schedule: &Schedule) -> Vec<Entry> {
    placement_entries(dag, &schedule.placements)
}

fn placement_entries(dag: &Dag, placements: &[Placement]) -> Vec<Entry> {
    placements
        .iter()
        .map(|p| Entry {
            id: dag.task_name(p.task),
            machine: p.machine as i64,
            start: p.start,
            end: p.end,
            priority: None,
        })
        .collect()
}

pub fn validate_schedule(dag: &Dag, cluster: &Cluster, schedule: &Schedule) -> Vec<Violation> {
    validate(dag, cluster, &entries_of(dag, schedule))
}

/// `validate_schedule` on machines of different speeds with transfers, accepting `copies`
/// (duplicated runs of tasks that also appear in `schedule`).
pub fn validate_schedule_on(
    dag: &Dag,
    cluster: &Cluster,
    net: &Network,
    schedule: &Schedule,
    copies: &[Placement],
) -> Vec<Violation> {
    validate_on(dag, cluster, net, &entries_of(dag, schedule), &placement_entries(dag, copies))
}

fn late(a: f64, b: f64) -> bool {
    // a > b beyond rounding
    a > b + TIME_EPS * (1.0 + b.abs())
}

/// Every violation of `entries` as a schedule of `dag` on `cluster` (empty when valid).
pub fn validate(dag: &Dag, cluster: &Cluster, entries: &[Entry]) -> Vec<Violation> {
    validate_on(dag, cluster, &Network::uniform(cluster.len()), entries, &[])
}

/// Every violation of `entries` (one per task) and `copies` (extra runs of scheduled tasks, as
/// task duplication makes them) on machines of the given speeds, where a child may start only
/// once some run of each parent has ended and its data has crossed to the child's machine.
pub fn validate_on(dag: &Dag, cluster: &Cluster, net: &Network, entries: &[Entry], copies: &[Entry]) -> Vec<Violation> {
    let mut out = Vec::new();
    let speed = |m: i64| net.speeds.get(m as usize).copied().unwrap_or(1.0);
    let n = dag.len();
    // A run (entry or copy) on an existing machine, with sane times, lasting at least the
    // task's duration at that machine's speed; false when it is unusable for later checks.
    let run_ok = |e: &Entry, t: crate::model::TaskId, out: &mut Vec<Violation>| -> bool {
        if e.machine < 0 || e.machine as usize >= cluster.len() {
            out.push(Violation::NoSuchMachine { id: e.id.clone(), machine: e.machine, machines: cluster.len() });
            return false;
        }
        if !e.start.is_finite() || !e.end.is_finite() || e.start < -TIME_EPS || e.end < e.start {
            out.push(Violation::BadTimes { id: e.id.clone(), start: e.start, end: e.end });
            return false;
        }
        let d = dag.tasks[t as usize].duration / speed(e.machine);
        if late(d, e.end - e.start) {
            out.push(Violation::TooShort { id: e.id.clone(), ran: e.end - e.start, duration: d });
        }
        true
    };
    let mut slot: Vec<Option<usize>> = vec![None; n];
    for (i, e) in entries.iter().enumerate() {
        let Some(t) = dag.task_by_name(&e.id) else {
            out.push(Violation::UnknownTask { id: e.id.clone() });
            continue;
        };
        if slot[t as usize].is_some() {
            out.push(Violation::Duplicate { id: e.id.clone() });
            continue;
        }
        if !run_ok(e, t, &mut out) {
            continue;
        }
        slot[t as usize] = Some(i);
    }
    // Copies: checked like entries; a copy of a task that has no entry is unknown.
    let mut extra: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, e) in copies.iter().enumerate() {
        let Some(t) = dag.task_by_name(&e.id).filter(|&t| slot[t as usize].is_some()) else {
            out.push(Violation::UnknownTask { id: e.id.clone() });
            continue;
        };
        if !run_ok(e, t, &mut out) {
            continue;
        }
        extra[t as usize].push(i);
    }
    for (t, s) in slot.iter().enumerate() {
        if s.is_none() {
            out.push(Violation::Missing { id: dag.task_name(t as u32) });
        }
    }
    // Dependencies. Without data on an edge, each child run is held against the parent run that
    // ends first (for an all-to-all edge, the parent task whose first run ends last implies all
    // the others). With data, every parent task is checked: its data must reach the child's
    // machine from some run of the parent.
    let entry = |t: u32| slot[t as usize].map(|i| &entries[i]);
    let runs = |t: u32| entry(t).into_iter().chain(extra[t as usize].iter().map(|&i| &copies[i]));
    let first_end = |t: u32| runs(t).min_by(|a, b| a.end.total_cmp(&b.end)).map(|e| e.end);
    let latest: Vec<Option<(u32, f64)>> = dag
        .stages
        .iter()
        .map(|s| s.tasks().filter_map(|t| first_end(t).map(|e| (t, e))).max_by(|a, b| a.1.total_cmp(&b.1)))
        .collect();
    let has_data = dag.has_edge_data();
    for (t, task) in dag.tasks.iter().enumerate() {
        for child in runs(t as u32) {
            for e in &dag.stages[task.stage as usize].parents {
                let data = if has_data { dag.edge_data(e.stage, task.stage) } else { 0.0 };
                let parents: Vec<u32> = match (e.kind, data > 0.0) {
                    (EdgeKind::OneToOne, _) => vec![dag.stages[e.stage as usize].first + task.index],
                    (EdgeKind::AllToAll, false) => latest[e.stage as usize].map(|(p, _)| p).into_iter().collect(),
                    (EdgeKind::AllToAll, true) => dag.stages[e.stage as usize].tasks().collect(),
                };
                for p in parents {
                    let Some(pe) = first_end(p) else { continue };
                    if late(pe, child.start) {
                        out.push(Violation::Dependency {
                            parent: dag.task_name(p),
                            child: child.id.clone(),
                            parent_end: pe,
                            child_start: child.start,
                        });
                        break;
                    }
                    if data > 0.0 {
                        let arrival = runs(p)
                            .map(|r| r.end + net.transfer(data, r.machine as u32, child.machine as u32))
                            .fold(f64::INFINITY, f64::min);
                        if late(arrival, child.start) {
                            out.push(Violation::Transfer {
                                parent: dag.task_name(p),
                                child: child.id.clone(),
                                machine: child.machine,
                                arrival,
                                child_start: child.start,
                            });
                            break;
                        }
                    }
                }
            }
        }
    }
    // Capacity: sweep events per machine; at equal times ends come before starts.
    let hard = cluster.hard_mask();
    let mut by_machine: HashMap<usize, Vec<(f64, bool, u32)>> = HashMap::new();
    for t in 0..n as u32 {
        for e in runs(t) {
            if e.end > e.start {
                let ev = by_machine.entry(e.machine as usize).or_default();
                ev.push((e.start, true, t));
                ev.push((e.end, false, t));
            }
        }
    }
    let mut machines: Vec<_> = by_machine.into_iter().collect();
    machines.sort_by_key(|(m, _)| *m);
    for (m, mut events) in machines {
        events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let cap = &cluster.machines[m];
        let mut used = [0.0f64; MAX_RESOURCES];
        let mut reported = [false; MAX_RESOURCES];
        let mut i = 0;
        while i < events.len() {
            let time = events[i].0;
            while i < events.len() && events[i].0 == time {
                let (_, is_start, t) = events[i];
                let d = &dag.tasks[t as usize].demand;
                for r in 0..MAX_RESOURCES {
                    used[r] += if is_start { d.0[r] } else { -d.0[r] };
                }
                i += 1;
            }
            for r in 0..dag.dims() {
                if hard[r] && !reported[r] && used[r] > cap.0[r] * (1.0 + 1e-9) + 1e-9 {
                    reported[r] = true;
                    out.push(Violation::Capacity {
                        machine: m,
                        time,
                        resource: dag.resources[r].clone(),
                        used: used[r],
                        capacity: cap.0[r],
                    });
                }
            }
        }
    }
    out
}
