//! LongScore and FragScore: how likely a task is to hurt the schedule if placed late.

use crate::model::{Dag, ResVec, TaskId};
use crate::space::Space;

/// Work of a set of tasks: the time the whole cluster would need for them if they could be
/// spread perfectly, max over resources of (sum of duration x demand) / (total capacity).
pub fn twork(dag: &Dag, tasks: impl IntoIterator<Item = TaskId>, total_cap: &ResVec) -> f64 {
    let mut sum = ResVec::ZERO;
    for t in tasks {
        let task = &dag.tasks[t as usize];
        sum.add_assign(&task.demand.scale(task.duration));
    }
    let mut w: f64 = 0.0;
    for r in 0..dag.dims() {
        if total_cap.0[r] > 0.0 {
            w = w.max(sum.0[r] / total_cap.0[r]);
        }
    }
    w
}

/// Makespan a greedy packer (longest first, earliest fit) reaches for these tasks alone.
pub fn exec_time(dag: &Dag, tasks: &[TaskId], caps: &[ResVec]) -> f64 {
    let mut order = tasks.to_vec();
    order.sort_by(|&a, &b| dag.tasks[b as usize].duration.total_cmp(&dag.tasks[a as usize].duration).then(a.cmp(&b)));
    let mut space = Space::new(caps);
    for t in order {
        let task = &dag.tasks[t as usize];
        let (m, s) = space.earliest(0.0, task.duration, &task.demand);
        space.insert(m, s, s + task.duration, &task.demand);
    }
    space.makespan()
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
