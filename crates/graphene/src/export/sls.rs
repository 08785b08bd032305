//! A YARN Scheduler Load Simulator (SLS) job trace for the schedule's one job.
//!
//! SLS reads a stream of JSON job objects (`slsrunner.sh --tracetype=SLS --tracelocation=FILE`).
//! Each task becomes one container entry with the fields SLS's runner reads: `count`,
//! `container.host`, `container.priority`, `duration.ms`, `container.type` and one
//! `container.<resource>` per YARN resource (`memory-mb`, `vcores`). SLS's stock MapReduce AM
//! knows two phases only: tasks of stages without parents are sent as `map`, all others as
//! `reduce`, which keeps the first barrier; the order inside each phase is the priority.

use serde::Serialize;

use super::levels::Priorities;
use super::schedule::ScheduleIn;
use super::yarn::{duration_ms, Columns};
use super::Units;
use crate::error::Result;
use crate::model::Dag;

#[derive(Serialize)]
struct Job {
    #[serde(rename = "am.type")]
    am_type: &'static str,
    #[serde(rename = "job.id")]
    id: String,
    #[serde(rename = "job.user")]
    user: &'static str,
    #[serde(rename = "job.queue.name")]
    queue: String,
    #[serde(rename = "job.start.ms")]
    start_ms: u64,
    /// The schedule's makespan (SLS only reports it).
    #[serde(rename = "job.end.ms")]
    end_ms: u64,
    #[serde(rename = "job.tasks")]
    tasks: Vec<Container>,
}

#[derive(Serialize)]
struct Container {
    count: u32,
    /// The machine the schedule chose, as an SLS node name (`node<machine>` in the default rack).
    #[serde(rename = "container.host")]
    host: String,
    #[serde(rename = "container.priority")]
    priority: u32,
    #[serde(rename = "container.type")]
    kind: &'static str,
    #[serde(rename = "duration.ms")]
    duration_ms: u64,
    #[serde(rename = "container.vcores")]
    vcores: u32,
    #[serde(rename = "container.memory-mb")]
    memory_mb: u64,
}

pub fn write(
    schedule: &ScheduleIn,
    dag: &Dag,
    order: &[usize],
    pri: &Priorities,
    units: &Units,
    queue: &str,
) -> Result<Vec<u8>> {
    let cols = Columns::find(dag, units)?;
    let tasks = order
        .iter()
        .map(|&i| {
            let t = &schedule.tasks[i];
            let id = dag.task_by_name(&t.id).expect("schedule checked against the DAG");
            let cap = cols.capability(dag, id, units);
            Container {
                count: 1,
                host: format!("/default-rack/node{}", t.machine),
                priority: pri.task[i],
                kind: if dag.stage_of(id).parents.is_empty() { "map" } else { "reduce" },
                duration_ms: duration_ms(dag, id, units),
                vcores: cap.vcores,
                memory_mb: cap.memory_mb,
            }
        })
        .collect();
    let makespan = schedule.tasks.iter().map(|t| t.end).fold(0.0, f64::max);
    let job = Job {
        am_type: "mapreduce",
        id: format!("job_{}", schedule.name()),
        user: "default",
        queue: queue.to_string(),
        start_ms: 0,
        end_ms: (makespan * units.time_ms).round() as u64,
        tasks,
    };
    Ok(super::to_json(&job))
}
