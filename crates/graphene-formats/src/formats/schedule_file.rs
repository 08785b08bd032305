//! Reading a schedule file back: whole for `validate`, and the task fields that exports and
//! charts share.

use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::validate::Entry;

#[derive(Debug, Deserialize)]
pub struct ScheduleFile {
    #[serde(default)]
    pub dag: Option<String>,
    #[serde(default)]
    pub scheduler: Option<String>,
    /// The figures a report states besides its tasks: each, when present, must agree with the
    /// tasks, the DAG and the cluster (`validate` checks them).
    #[serde(default)]
    pub makespan: Option<f64>,
    #[serde(default)]
    pub lower_bounds: Option<StatedBounds>,
    #[serde(default)]
    pub ratio: Option<f64>,
    #[serde(default)]
    pub machines: Option<f64>,
    #[serde(default)]
    pub resources: Option<Vec<String>>,
    #[serde(default)]
    pub speedup: Option<f64>,
    #[serde(default)]
    pub slr: Option<f64>,
    pub tasks: Vec<Entry>,
    #[serde(default)]
    pub order: Vec<String>,
    /// Duplicated runs of tasks (schedules made with task duplication, e.g. DEFT).
    #[serde(default)]
    pub copies: Vec<Entry>,
}

/// A report's `lower_bounds`, each optional.
#[derive(Debug, Default, Deserialize)]
pub struct StatedBounds {
    #[serde(default)]
    pub critical_path: Option<f64>,
    #[serde(default)]
    pub total_work: Option<f64>,
    #[serde(default)]
    pub stage_aware: Option<f64>,
}

pub fn parse(text: &str) -> Result<ScheduleFile> {
    serde_json::from_str(text).map_err(|e| Error::from_json(&e))
}

pub fn load(path: &Path) -> Result<ScheduleFile> {
    let text = super::read_text(path)?;
    parse(&text).map_err(|e| e.in_file(path))
}

/// One task of a schedule file as the readers that draw or export a schedule see it: machines
/// and times as written (checked by [`check_tasks`]), the stage optional so that hand-written
/// files work too.
#[derive(Clone, Debug, Deserialize)]
pub struct TaskIn {
    pub id: String,
    /// Absent in hand-written files: then the part of `id` before its last `[`.
    #[serde(default)]
    pub stage: Option<String>,
    pub machine: i64,
    pub start: f64,
    pub end: f64,
    /// Flagged by Graphene's search; absent (false) in other schedulers' reports.
    #[serde(default)]
    pub troublesome: bool,
}

impl TaskIn {
    pub fn stage_name(&self) -> &str {
        match &self.stage {
            Some(s) => s,
            None => self.id.rfind('[').map_or(&self.id[..], |i| &self.id[..i]),
        }
    }
}

/// Rejects, naming the task's field, a machine outside `0..machines` (or negative when the
/// count is unknown) and times that are not finite with 0 <= start <= end. The validator
/// reports such tasks among its violations instead; charts and exports cannot use them at all.
pub fn check_tasks(tasks: &[TaskIn], machines: Option<usize>) -> Result<()> {
    for (i, t) in tasks.iter().enumerate() {
        crate::deadline::poll()?;
        if t.machine < 0 || machines.is_some_and(|m| t.machine as usize >= m) {
            let m = machines.map_or("machines >= 0".to_string(), |m| format!("{m} machines (0..{})", m.max(1) - 1));
            return Err(Error::field(format!("tasks[{i}].machine"), format!("{} is not one of {m}", t.machine)));
        }
        if !(t.start.is_finite() && t.end.is_finite() && 0.0 <= t.start && t.start <= t.end) {
            return Err(Error::field(
                format!("tasks[{i}]"),
                format!(
                    "task '{}' has start {} and end {}; need finite times, 0 <= start <= end",
                    t.id, t.start, t.end
                ),
            ));
        }
    }
    Ok(())
}
