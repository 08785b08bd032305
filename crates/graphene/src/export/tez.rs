//! Priorities for Tez: one per vertex (stage) and one per task, lower served first.
//!
//! Tasks are listed in precedence order, so a reader that keeps file order within a priority
//! recovers the exact order even when `--levels` folded several tasks into one priority.

use serde::{Deserialize, Serialize};

use super::levels::Priorities;
use super::schedule::ScheduleIn;
use crate::error::{Error, Result};

pub const FORMAT: &str = "graphene-tez/1";

#[derive(Debug, Serialize, Deserialize)]
pub struct TezExport {
    pub format: String,
    pub dag: String,
    pub scheduler: Option<String>,
    /// The `--levels` asked for (None: one priority per task).
    pub levels: Option<u32>,
    /// In precedence order.
    pub vertices: Vec<Vertex>,
    /// In precedence order.
    pub tasks: Vec<TezTask>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Vertex {
    pub name: String,
    pub priority: u32,
    pub tasks: usize,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct TezTask {
    pub id: String,
    pub vertex: String,
    /// The task's index within its vertex (Tez's task index), when the id has the `stage[i]` form.
    pub index: Option<u32>,
    pub priority: u32,
}

/// `stage[i]` -> i.
pub(crate) fn task_index(id: &str) -> Option<u32> {
    let open = id.rfind('[')?;
    id.strip_suffix(']')?.get(open + 1..)?.parse().ok()
}

pub fn write(schedule: &ScheduleIn, order: &[usize], pri: &Priorities, levels: Option<u32>) -> Vec<u8> {
    let out = TezExport {
        format: FORMAT.into(),
        dag: schedule.name().to_string(),
        scheduler: schedule.scheduler.clone(),
        levels,
        vertices: pri
            .stages
            .iter()
            .map(|s| Vertex { name: s.name.clone(), priority: s.priority, tasks: s.tasks })
            .collect(),
        tasks: order
            .iter()
            .map(|&i| {
                let t = &schedule.tasks[i];
                TezTask {
                    id: t.id.clone(),
                    vertex: t.stage_name().to_string(),
                    index: task_index(&t.id),
                    priority: pri.task[i],
                }
            })
            .collect(),
    };
    super::to_json(&out)
}

/// Reads a Tez export back into the precedence order it encodes: by priority, and by position in
/// the file among equal priorities.
pub fn read_order(text: &str) -> Result<Vec<String>> {
    let e: TezExport = serde_json::from_str(text).map_err(|e| Error::from_json(&e))?;
    if e.format != FORMAT {
        return Err(Error::field("format", format!("'{}' is not {FORMAT}", e.format)));
    }
    Ok(by_priority(e.tasks.into_iter().map(|t| (t.priority, t.id))))
}

/// Ids sorted by priority, stably (file position breaks ties).
pub(crate) fn by_priority(items: impl Iterator<Item = (u32, String)>) -> Vec<String> {
    let mut v: Vec<(u32, String)> = items.collect();
    v.sort_by_key(|(p, _)| *p);
    v.into_iter().map(|(_, id)| id).collect()
}
