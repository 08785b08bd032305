//! An anytime improver after the constructor (`build-schedule --improve`): iterated greedy over
//! the precedence order.
//!
//! Why: the constructor tries a few placement keys per candidate troublesome set, so it can miss
//! orders that a small change fixes (a short task gating a long path placed last, Graham-style
//! bin-packing blocks placed longest first). A solution here is a priority list; it is decoded by
//! the same forward list scheduling the constructor uses (ready task with the best rank to the
//! earliest slot on any machine, holes filled), which reaches an optimal schedule for some list.
//! Each step moves one task earlier in the list: with probability 2/3 a task of the current
//! schedule's critical chain (walked back from the task that ends last, through the parent or
//! the machine neighbour that ends exactly when it starts), otherwise any task; a step that does
//! not lengthen the schedule is kept (plateaus are crossed), and the best schedule seen is
//! returned only if it is strictly shorter than the constructor's. The budget counts task
//! placements, not time, so the result is the same on any machine for the same seed and budget.
//! Moves: 40% a task of the critical chain moved earlier, 30% any task moved anywhere, 30% two
//! tasks swapped (a move later matters: a task holding an early slot can block a better one).
//! The search stops once its best schedule meets the DAG's lower bound: no list can do better,
//! so the rest of the budget could not change the result (small DAGs reach it often).

use std::collections::HashMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::plan::{Direction, Plan};
use crate::model::{Cluster, Dag, Schedule, TaskId};

/// What the improver did, for the schedule's JSON.
#[derive(Clone, Debug, Serialize)]
pub struct ImproveReport {
    /// Task placements allowed (work units).
    pub budget: u64,
    /// Task placements spent.
    pub work: u64,
    /// Priority lists decoded.
    pub decodes: u64,
    pub seed: u64,
    /// The constructor's makespan and the one returned.
    pub from: f64,
    pub to: f64,
    /// True when the search stopped before its budget because the best schedule met the lower
    /// bound (proved optimal). Absent from the JSON otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub at_bound: bool,
}

/// The budget value that means "sized to the DAG" (`--improve auto`, the default).
pub const AUTO_IMPROVE: u64 = u64::MAX;

/// The automatic budget for an `n`-task DAG: 50,000,000 / n task placements (as many list
/// decodes as 50,000,000 / n^2), between 50,000 and 500,000. Small DAGs, where one better
/// order is worth most and a decode costs microseconds, get the most decodes (20,000 at 25
/// tasks); a 5,000-task DAG gets 10 decodes, which keeps its build under a second.
pub fn auto_budget(n: usize) -> u64 {
    (50_000_000 / n.max(1) as u64).clamp(50_000, 500_000)
}

/// Forward list scheduling of all tasks by `rank` (lower first).
fn decode(dag: &Dag, cluster: &Cluster, rank: &[u32]) -> Schedule {
    let mut plan = Plan::new(dag, &cluster.machines);
    let all: Vec<TaskId> = (0..dag.len() as TaskId).collect();
    plan.place_by(&all, &vec![true; dag.len()], Direction::Forward, |t| -(rank[t as usize] as f64));
    plan.into_schedule()
}

/// The tasks of the chain that ends the schedule: from the task ending last, back through the
/// parent or same-machine task that ends exactly when it starts (the one that held it back).
fn critical_chain(dag: &Dag, s: &Schedule) -> Vec<TaskId> {
    let n = dag.len();
    let mut start = vec![0.0; n];
    let mut end = vec![0.0; n];
    let mut machine = vec![0u32; n];
    let mut by_end: HashMap<(u32, u64), Vec<TaskId>> = HashMap::with_capacity(n);
    for p in &s.placements {
        start[p.task as usize] = p.start;
        end[p.task as usize] = p.end;
        machine[p.task as usize] = p.machine;
        by_end.entry((p.machine, p.end.to_bits())).or_default().push(p.task);
    }
    let Some(mut t) =
        s.placements.iter().max_by(|a, b| a.end.total_cmp(&b.end).then(b.task.cmp(&a.task))).map(|p| p.task)
    else {
        return Vec::new();
    };
    let mut chain = vec![t];
    let mut seen = vec![false; n];
    seen[t as usize] = true;
    loop {
        let st = start[t as usize];
        if st <= 0.0 {
            break;
        }
        let mut next = None;
        dag.for_each_parent(t, |p| {
            if next.is_none() && end[p as usize] == st {
                next = Some(p);
            }
        });
        if next.is_none() {
            next = by_end
                .get(&(machine[t as usize], st.to_bits()))
                .and_then(|v| v.iter().copied().find(|&x| !seen[x as usize]));
        }
        match next {
            Some(p) if !seen[p as usize] => {
                seen[p as usize] = true;
                chain.push(p);
                t = p;
            }
            _ => break,
        }
    }
    chain
}

/// Improves `initial` within `budget` task placements; returns it unchanged unless something
/// strictly shorter was found.
pub fn improve(
    dag: &Dag,
    cluster: &Cluster,
    initial: Schedule,
    budget: u64,
    seed: u64,
    deadline: &crate::Deadline,
) -> (Schedule, ImproveReport) {
    let n = dag.len() as u64;
    let budget = if budget == AUTO_IMPROVE { auto_budget(dag.len()) } else { budget };
    let from = initial.makespan();
    let mut report = ImproveReport { budget, work: 0, decodes: 0, seed, from, to: from, at_bound: false };
    if n < 2 || budget < n {
        return (initial, report);
    }
    // Nothing strictly shorter than the bound exists, so the search may stop once it is met.
    let bound = crate::lowerbound::compute(dag, cluster).best();
    if from <= bound {
        report.at_bound = true;
        return (initial, report);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // The constructor's order as the starting list.
    let mut list: Vec<TaskId> = initial.order_by_start();
    let ranks = |list: &[TaskId]| {
        let mut r = vec![0u32; list.len()];
        for (i, &t) in list.iter().enumerate() {
            r[t as usize] = i as u32;
        }
        r
    };
    let current = decode(dag, cluster, &ranks(&list));
    report.work += n;
    report.decodes += 1;
    let mut cur_m = current.makespan();
    let mut best: Option<Schedule> = None;
    let mut best_m = from;
    if cur_m < best_m {
        best_m = cur_m;
        best = Some(current.clone());
    }
    let mut chain = critical_chain(dag, &current);
    while report.work + n <= budget && !deadline.expired() {
        if best_m <= bound {
            report.at_bound = true;
            break;
        }
        let mut cand = list.clone();
        let pos = ranks(&cand);
        let len = cand.len();
        match rng.gen_range(0..10) {
            // A task of the critical chain, earlier.
            0..=3 if !chain.is_empty() => {
                let t = chain[rng.gen_range(0..chain.len())];
                let from_pos = pos[t as usize] as usize;
                if from_pos == 0 {
                    report.work += 1; // a move that cannot be made still costs, so the loop ends
                    continue;
                }
                let moved = cand.remove(from_pos);
                cand.insert(rng.gen_range(0..from_pos), moved);
            }
            // Any task, anywhere (later too: a task that takes an early slot may block better).
            0..=6 => {
                let moved = cand.remove(rng.gen_range(0..len));
                cand.insert(rng.gen_range(0..len), moved);
            }
            // Two tasks trade places.
            _ => {
                let (a, b) = (rng.gen_range(0..len), rng.gen_range(0..len));
                cand.swap(a, b);
            }
        }
        if cand == list {
            report.work += 1;
            continue;
        }
        let s = decode(dag, cluster, &ranks(&cand));
        report.work += n;
        report.decodes += 1;
        let m = s.makespan();
        if m <= cur_m {
            if m < best_m {
                best_m = m;
                best = Some(s.clone());
            }
            cur_m = m;
            chain = critical_chain(dag, &s);
            list = cand;
        }
    }
    match best {
        Some(b) if best_m < from => {
            report.to = best_m;
            (b, report)
        }
        _ => (initial, report),
    }
}
