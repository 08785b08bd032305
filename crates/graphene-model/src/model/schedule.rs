//! A schedule: where and when every task runs.

use super::dag::TaskId;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Placement {
    pub task: TaskId,
    pub machine: u32,
    pub start: f64,
    pub end: f64,
}

/// Placements indexed by task id (`placements[t].task == t`), starting at time 0.
#[derive(Clone, Debug, Default)]
pub struct Schedule {
    pub placements: Vec<Placement>,
}

impl Schedule {
    pub fn makespan(&self) -> f64 {
        let start = self.placements.iter().map(|p| p.start).fold(f64::INFINITY, f64::min);
        let end = self.placements.iter().map(|p| p.end).fold(f64::NEG_INFINITY, f64::max);
        if self.placements.is_empty() {
            0.0
        } else {
            end - start.min(0.0)
        }
    }

    /// Task ids by start time, then end time, then id: the precedence order the schedule implies.
    pub fn order_by_start(&self) -> Vec<TaskId> {
        let mut ids: Vec<TaskId> = self.placements.iter().map(|p| p.task).collect();
        ids.sort_by(|&a, &b| {
            let (pa, pb) = (&self.placements[a as usize], &self.placements[b as usize]);
            pa.start.total_cmp(&pb.start).then(pa.end.total_cmp(&pb.end)).then(a.cmp(&b))
        });
        ids
    }
}
