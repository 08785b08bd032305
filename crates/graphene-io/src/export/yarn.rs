//! One YARN container request per task: priority from the precedence order, capability from the
//! task's demands. Requests are listed in precedence order.

use serde::{Deserialize, Serialize};

use super::levels::Priorities;
use super::schedule::ScheduleIn;
use super::Units;
use crate::error::{Error, Result};
use crate::model::Dag;

pub const FORMAT: &str = "graphene-yarn/1";

#[derive(Debug, Serialize, Deserialize)]
pub struct YarnExport {
    pub format: String,
    pub dag: String,
    pub scheduler: Option<String>,
    pub levels: Option<u32>,
    pub requests: Vec<Request>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Request {
    pub task: String,
    pub stage: String,
    pub priority: u32,
    /// `*`: any host (Graphene's order says when, not where).
    pub resource_name: String,
    pub num_containers: u32,
    pub capability: Capability,
    /// How long the container runs (the task's duration).
    pub duration_ms: u64,
}

#[derive(Debug, Serialize, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub struct Capability {
    pub memory_mb: u64,
    pub vcores: u32,
}

/// Where to find vcores and memory among the DAG's resources.
pub(crate) struct Columns {
    cpu: usize,
    mem: usize,
}

impl Columns {
    pub(crate) fn find(dag: &Dag, units: &Units) -> Result<Columns> {
        let find = |name: &str, flag: &str| {
            dag.resources.iter().position(|r| r == name).ok_or_else(|| {
                Error::Usage(format!(
                    "DAG '{}' has no resource '{name}' (it has {}); name the one to use with {flag}",
                    dag.name,
                    dag.resources.join(", ")
                ))
            })
        };
        Ok(Columns { cpu: find(&units.cpu, "--cpu-resource")?, mem: find(&units.mem, "--mem-resource")? })
    }

    /// Rounded up, at least 1 vcore and 1 MB: YARN never hands out an empty container. Fails,
    /// naming the task, on sizes beyond what YARN holds (a Java int of vcores, a long of MB).
    pub(crate) fn capability(&self, dag: &Dag, task: u32, units: &Units) -> Result<Capability> {
        let d = &dag.tasks[task as usize].demand.0;
        let field = || format!("task {}", dag.task_name(task));
        let memory_mb =
            super::whole(d[self.mem], units.mem_mb, f64::ceil, super::MAX_LONG, field, "memory", "--mem-mb")?;
        let vcores = super::whole(d[self.cpu], 1.0, f64::ceil, super::MAX_INT, field, "vcores", "")?;
        Ok(Capability { memory_mb: memory_mb.max(1), vcores: (vcores as u32).max(1) })
    }
}

/// The task's duration in milliseconds; fails, naming the task, beyond a Java long.
pub(crate) fn duration_ms(dag: &Dag, task: u32, units: &Units) -> Result<u64> {
    super::whole(
        dag.tasks[task as usize].duration,
        units.time_ms,
        f64::round,
        super::MAX_LONG,
        || format!("task {}", dag.task_name(task)),
        "duration",
        "--time-ms",
    )
}

pub fn write(
    schedule: &ScheduleIn,
    dag: &Dag,
    order: &[usize],
    pri: &Priorities,
    levels: Option<u32>,
    units: &Units,
) -> Result<Vec<u8>> {
    let cols = Columns::find(dag, units)?;
    let requests = order
        .iter()
        .map(|&i| {
            let t = &schedule.tasks[i];
            // check_against has resolved every id already.
            let id = dag.task_by_name(&t.id).expect("schedule checked against the DAG");
            Ok(Request {
                task: t.id.clone(),
                stage: t.stage_name().to_string(),
                priority: pri.task[i],
                resource_name: "*".into(),
                num_containers: 1,
                capability: cols.capability(dag, id, units)?,
                duration_ms: duration_ms(dag, id, units)?,
            })
        })
        .collect::<Result<_>>()?;
    let out = YarnExport {
        format: FORMAT.into(),
        dag: schedule.name().to_string(),
        scheduler: schedule.scheduler.clone(),
        levels,
        requests,
    };
    Ok(super::to_json(&out))
}

/// Reads a YARN export back into the precedence order: by priority, file position among equals.
pub fn read_order(text: &str) -> Result<Vec<String>> {
    let e: YarnExport = serde_json::from_str(text).map_err(|e| Error::from_json(&e))?;
    if e.format != FORMAT {
        return Err(Error::field("format", format!("'{}' is not {FORMAT}", e.format)));
    }
    Ok(super::tez::by_priority(e.requests.into_iter().map(|r| (r.priority, r.task))))
}
