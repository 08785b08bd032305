//! The schedule report (`schedule.json`) every schedule-producing command writes.

use serde::Serialize;

use crate::lowerbound::LowerBounds;
use crate::model::{Dag, Schedule};
use crate::offline::{priorities, SearchReport};

#[derive(Debug, Serialize)]
pub struct TaskOut {
    pub id: String,
    pub stage: String,
    pub machine: u32,
    pub start: f64,
    pub end: f64,
    /// priScore in [0, 1]: 1 for the task that starts first.
    pub priority: f64,
    /// In the troublesome set Graphene placed first; written only when true, so that reports
    /// of other schedulers (and most tasks) stay as they were.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub troublesome: bool,
}

#[derive(Debug, Serialize)]
pub struct ScheduleReport {
    pub dag: String,
    pub scheduler: String,
    pub makespan: f64,
    pub lower_bounds: LowerBounds,
    /// makespan / best lower bound.
    pub ratio: f64,
    pub machines: usize,
    pub resources: Vec<String>,
    pub tasks: Vec<TaskOut>,
    /// Task ids by decreasing priority.
    pub order: Vec<String>,
    pub search: Option<SearchReport>,
    pub elapsed_ms: f64,
}

impl ScheduleReport {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        dag: &Dag,
        scheduler: &str,
        machines: usize,
        schedule: &Schedule,
        bounds: LowerBounds,
        search: Option<SearchReport>,
        elapsed_ms: f64,
    ) -> ScheduleReport {
        let (order, pri) = priorities(schedule);
        let makespan = schedule.makespan();
        let best = bounds.best();
        let mut trouble = vec![false; dag.len()];
        for part in search.iter().flat_map(|s| &s.parts) {
            for &t in &part.troublesome {
                trouble[t as usize] = true;
            }
        }
        ScheduleReport {
            dag: dag.name.clone(),
            scheduler: scheduler.to_string(),
            makespan,
            lower_bounds: bounds,
            ratio: if best > 0.0 { makespan / best } else { 1.0 },
            machines,
            resources: dag.resources.clone(),
            tasks: schedule
                .placements
                .iter()
                .map(|p| TaskOut {
                    id: dag.task_name(p.task),
                    stage: dag.stage_of(p.task).name.clone(),
                    machine: p.machine,
                    start: p.start,
                    end: p.end,
                    priority: pri[p.task as usize],
                    troublesome: trouble[p.task as usize],
                })
                .collect(),
            order: order.iter().map(|&t| dag.task_name(t)).collect(),
            search,
            elapsed_ms,
        }
    }

    pub fn to_json(&self) -> Vec<u8> {
        let mut v = serde_json::to_vec_pretty(self).expect("a report always serializes");
        v.push(b'\n');
        v
    }
}
