//! LongScore and FragScore: how likely a task is to hurt the schedule if placed late.

use crate::lowerbound::twork;
use crate::model::{Dag, ResVec, TaskId};
use crate::space::Space;

/// Makespan a greedy packer (longest first, earliest fit) reaches for these tasks alone.
pub fn exec_time(dag: &Dag, tasks: &[TaskId], caps: &[ResVec]) -> f64 {
    let mut order = tasks.to_vec();
    order.sort_by(|&a, &b| dag.tasks[b as usize].duration.total_cmp(&dag.tasks[a as usize].duration).then(a.cmp(&b)));
    let sub = machines_for(dag, &order, caps);
    let mut space = Space::new(sub.as_deref().unwrap_or(caps));
    for t in order {
        let task = &dag.tasks[t as usize];
        let (m, s) = space.earliest(0.0, task.duration, &task.demand);
        space.insert(m, s, s + task.duration, &task.demand);
    }
    space.makespan()
}

/// For a group of k tasks on more than k machines, the machines the greedy packer can use: per
/// distinct demand, the first k machines (in index order) it fits on an empty machine. Why: a
/// stage of a chain is one task, and building the space of 1,000 machines for each of 100,000
/// such stages was half the cost of the chain's build. Why it changes nothing: when a task is
/// placed at most k - 1 machines hold anything, so one of the first k machines it fits on is
/// empty and it can start at 0 there; the packer takes the lowest-index machine where it starts
/// at 0, which is at most that one. Machines keep their relative order, so ties break alike.
fn machines_for(dag: &Dag, tasks: &[TaskId], caps: &[ResVec]) -> Option<Vec<ResVec>> {
    const SMALL: usize = 64;
    let k = tasks.len();
    if k >= caps.len() || k > SMALL {
        return None;
    }
    let mut wanted: Vec<(ResVec, usize)> = Vec::new();
    for &t in tasks {
        let d = dag.tasks[t as usize].demand;
        if !wanted.iter().any(|w| w.0 == d) {
            wanted.push((d, k));
        }
    }
    let mut sub = Vec::new();
    for c in caps {
        let mut used = false;
        for w in wanted.iter_mut().filter(|w| w.1 > 0 && w.0.fits_in(c)) {
            w.1 -= 1;
            used = true;
        }
        if used {
            sub.push(*c);
            if wanted.iter().all(|w| w.1 == 0) {
                break;
            }
        }
    }
    // A demand no machine fits: leave the error to the full space, as before.
    wanted.iter().all(|w| w.1 < k).then_some(sub)
}

pub struct Scores {
    pub long: Vec<f64>,
    /// Per task, the FragScore of its group.
    pub frag: Vec<f64>,
}

/// LongScore(t) = duration / longest duration. FragScore(t) = TWork(group) / ExecTime(group) for
/// the task's group (a stage, or a task type in task-level formats): 1 when the group packs
/// perfectly, near 0 when it leaves most of the cluster idle. A group without work (zero demand
/// or zero duration) cannot fragment anything and scores 1.
pub fn compute(dag: &Dag, caps: &[ResVec]) -> Scores {
    let max_dur = dag.tasks.iter().map(|t| t.duration).fold(0.0, f64::max);
    let long = dag.tasks.iter().map(|t| if max_dur > 0.0 { t.duration / max_dur } else { 0.0 }).collect();
    let total = caps.iter().fold(ResVec::ZERO, |a, c| a.add(c));
    let mut members: Vec<Vec<TaskId>> = vec![Vec::new(); dag.groups.len()];
    for (i, t) in dag.tasks.iter().enumerate() {
        members[dag.stages[t.stage as usize].group as usize].push(i as TaskId);
    }
    let group_score: Vec<f64> = members
        .iter()
        .map(|ts| {
            let w = twork(dag, ts.iter().copied(), &total);
            if w <= 0.0 {
                return 1.0;
            }
            let e = exec_time(dag, ts, caps);
            if e > 0.0 {
                (w / e).min(1.0)
            } else {
                1.0
            }
        })
        .collect();
    let frag = dag.tasks.iter().map(|t| group_score[dag.stages[t.stage as usize].group as usize]).collect();
    Scores { long, frag }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DagBuilder, StageSpec, TaskSpec};
    use proptest::prelude::*;

    /// The greedy packer over every machine, as `exec_time` was before it picked a subset.
    fn exec_time_all(dag: &Dag, tasks: &[TaskId], caps: &[ResVec]) -> f64 {
        let mut order = tasks.to_vec();
        order.sort_by(|&a, &b| {
            dag.tasks[b as usize].duration.total_cmp(&dag.tasks[a as usize].duration).then(a.cmp(&b))
        });
        let mut space = Space::new(caps);
        for t in order {
            let task = &dag.tasks[t as usize];
            let (m, s) = space.earliest(0.0, task.duration, &task.demand);
            space.insert(m, s, s + task.duration, &task.demand);
        }
        space.makespan()
    }

    proptest! {
        /// On heterogeneous machines (some too small for some tasks), packing a small group on
        /// the machines `machines_for` keeps gives the makespan of packing it on all of them.
        #[test]
        fn a_small_group_packs_alike_on_the_machines_it_can_reach(
            caps in proptest::collection::vec((1u8..9, 1u8..9), 2..14),
            tasks in proptest::collection::vec((1u8..9, 1u8..5, 1u8..5), 1..10),
        ) {
            let caps: Vec<ResVec> = caps.iter().map(|&(c, m)| ResVec::from_slice(&[c as f64, m as f64])).collect();
            let mut b = DagBuilder::new("g", vec!["cpu".into(), "mem".into()]);
            let specs = tasks
                .iter()
                .map(|&(d, c, m)| TaskSpec { duration: d as f64, demand: ResVec::from_slice(&[c as f64, m as f64]) })
                .collect();
            b.stage(StageSpec { name: "s".into(), group: None, tasks: specs, parents: vec![] });
            let dag = b.build().unwrap();
            let ids: Vec<TaskId> = (0..dag.len() as TaskId).collect();
            // Only groups that fit somewhere reach the packer (the loader refuses the rest).
            prop_assume!(dag.tasks.iter().all(|t| caps.iter().any(|c| t.demand.fits_in(c))));
            prop_assert_eq!(exec_time(&dag, &ids, &caps), exec_time_all(&dag, &ids, &caps));
        }
    }
}
