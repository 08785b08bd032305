//! Priorities for Tez: a range per vertex (stage) and per task, lower served first.
//!
//! Tez's DAG schedulers hand each task attempt a priority *range* `[high, low]` (numerically
//! `high = low - 2`); Tez's `TaskAttemptImpl` requests a first attempt's container at the middle
//! (`(low + high) / 2`) and a re-executed attempt's at the high end, so that a retry is served
//! before first attempts of the same rank (TEZ-1665; `DAGSchedulerNaturalOrder` uses
//! `low = 3 x ((depth + 1) x vertices + vertex id)`). graphene keeps that shape: priority `p`
//! (the rank in the precedence order, 1 first, or its `--levels` band) becomes
//! `low = 3p`, `high = 3p - 2`, so first attempts ask at `3p - 1`, retries at `3p - 2`: a retry
//! goes ahead of first attempts of its own rank and later ones, never ahead of an earlier rank.
//!
//! Tasks are listed in precedence order, so a reader that keeps file order within a priority
//! recovers the exact order even when `--levels` folded several tasks into one priority.

use serde::{Deserialize, Serialize};

use super::levels::Priorities;
use super::schedule::ScheduleIn;
use crate::error::{Error, Result};

pub const FORMAT: &str = "graphene-tez/2";
/// The first version (one number per vertex and task, no ranges); still read.
pub const FORMAT_V1: &str = "graphene-tez/1";

/// Tez's range for priority `p`: (low, high), high the more urgent end.
pub fn range(p: u32) -> (u32, u32) {
    (3 * p, 3 * p - 2)
}

#[derive(Debug, Serialize, Deserialize)]
pub struct TezExport {
    pub format: String,
    pub dag: String,
    /// The DAG's `graphene-tez-signature/1` (lowercase hex SHA-256 of its vertex names and
    /// edges), when known: the name of the file in an export directory, checked by the plugin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    pub scheduler: Option<String>,
    /// The `--levels` asked for (None: one priority per task).
    pub levels: Option<u32>,
    /// Whether one priority may hold several container sizes: only when the user says the
    /// YARN version has `allocationRequestId` (YARN-4889); otherwise `--levels` bands were cut
    /// where the size changes. Absent in version 1.
    #[serde(default)]
    pub mixed_sizes_per_priority: bool,
    /// In precedence order.
    pub vertices: Vec<Vertex>,
    /// In precedence order.
    pub tasks: Vec<TezTask>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Vertex {
    pub name: String,
    pub priority: u32,
    /// Tez's range for the vertex: first attempts at (low + high) / 2, retries at high.
    #[serde(default)]
    pub low: u32,
    #[serde(default)]
    pub high: u32,
    pub tasks: usize,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct TezTask {
    pub id: String,
    pub vertex: String,
    /// The task's index within its vertex (Tez's task index), when the id has the `stage[i]` form.
    pub index: Option<u32>,
    pub priority: u32,
    #[serde(default)]
    pub low: u32,
    #[serde(default)]
    pub high: u32,
}

/// `stage[i]` -> i.
pub(crate) fn task_index(id: &str) -> Option<u32> {
    let open = id.rfind('[')?;
    id.strip_suffix(']')?.get(open + 1..)?.parse().ok()
}

pub fn write(
    schedule: &ScheduleIn,
    order: &[usize],
    pri: &Priorities,
    levels: Option<u32>,
    mixed_sizes_per_priority: bool,
    signature: Option<&str>,
) -> Vec<u8> {
    let out = TezExport {
        format: FORMAT.into(),
        dag: schedule.name().to_string(),
        signature: signature.map(str::to_string),
        scheduler: schedule.scheduler.clone(),
        levels,
        mixed_sizes_per_priority,
        vertices: pri
            .stages
            .iter()
            .map(|s| {
                let (low, high) = range(s.priority);
                Vertex { name: s.name.clone(), priority: s.priority, low, high, tasks: s.tasks }
            })
            .collect(),
        tasks: order
            .iter()
            .map(|&i| {
                let t = &schedule.tasks[i];
                let (low, high) = range(pri.task[i]);
                TezTask {
                    id: t.id.clone(),
                    vertex: t.stage_name().to_string(),
                    index: task_index(&t.id),
                    priority: pri.task[i],
                    low,
                    high,
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
    if e.format != FORMAT && e.format != FORMAT_V1 {
        return Err(Error::field("format", format!("'{}' is not {FORMAT} (or {FORMAT_V1})", e.format)));
    }
    Ok(by_priority(e.tasks.into_iter().map(|t| (t.priority, t.id))))
}

/// Ids sorted by priority, stably (file position breaks ties).
pub(crate) fn by_priority(items: impl Iterator<Item = (u32, String)>) -> Vec<String> {
    let mut v: Vec<(u32, String)> = items.collect();
    v.sort_by_key(|(p, _)| *p);
    v.into_iter().map(|(_, id)| id).collect()
}
