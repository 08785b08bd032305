//! The parts of a schedule file (`build-schedule`'s output) that an export needs.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::formats::schedule_file::check_tasks;
pub use crate::formats::schedule_file::TaskIn;
use crate::model::Dag;

#[derive(Clone, Debug, Deserialize)]
pub struct ScheduleIn {
    #[serde(default)]
    pub dag: Option<String>,
    #[serde(default)]
    pub scheduler: Option<String>,
    pub tasks: Vec<TaskIn>,
    /// Task ids by decreasing priority; derived from start times when absent.
    #[serde(default)]
    pub order: Vec<String>,
}

impl ScheduleIn {
    pub fn parse(text: &str) -> Result<ScheduleIn> {
        let s: ScheduleIn = serde_json::from_str(text).map_err(|e| Error::from_json(&e))?;
        if s.tasks.is_empty() {
            return Err(Error::field("tasks", "the schedule has no tasks"));
        }
        check_tasks(&s.tasks, None)?;
        Ok(s)
    }

    pub fn load(path: &Path) -> Result<ScheduleIn> {
        let text = crate::formats::read_text(path)?;
        ScheduleIn::parse(&text).map_err(|e| e.in_file(path))
    }

    pub fn name(&self) -> &str {
        self.dag.as_deref().unwrap_or("dag")
    }

    /// Indices into `tasks` in precedence order: the file's `order` when present (it must list
    /// every task once), else by start, then end, then position in the file (the position is the
    /// task number, a topological order, which is how `build-schedule` breaks the same ties).
    pub fn order(&self) -> Result<Vec<usize>> {
        let mut index: HashMap<&str, usize> = HashMap::with_capacity(self.tasks.len());
        for (i, t) in self.tasks.iter().enumerate() {
            if index.insert(&t.id, i).is_some() {
                return Err(Error::field(format!("tasks[{i}].id"), format!("task '{}' appears twice", t.id)));
            }
        }
        if self.order.is_empty() {
            let mut ids: Vec<usize> = (0..self.tasks.len()).collect();
            ids.sort_by(|&a, &b| {
                let (x, y) = (&self.tasks[a], &self.tasks[b]);
                x.start.total_cmp(&y.start).then(x.end.total_cmp(&y.end)).then(a.cmp(&b))
            });
            return Ok(ids);
        }
        let mut seen = vec![false; self.tasks.len()];
        let mut out = Vec::with_capacity(self.tasks.len());
        for (k, id) in self.order.iter().enumerate() {
            let i = *index
                .get(id.as_str())
                .ok_or_else(|| Error::field(format!("order[{k}]"), format!("task '{id}' is not in \"tasks\"")))?;
            if std::mem::replace(&mut seen[i], true) {
                return Err(Error::field(format!("order[{k}]"), format!("task '{id}' is listed twice")));
            }
            out.push(i);
        }
        if let Some(i) = seen.iter().position(|s| !s) {
            return Err(Error::field("order", format!("task '{}' is missing", self.tasks[i].id)));
        }
        Ok(out)
    }

    /// Checks that the schedule is for `dag` and that no task is ordered before one of its
    /// parents, so that the priorities derived from the order can never invert a dependency.
    pub fn check_against(&self, dag: &Dag, order: &[usize]) -> Result<()> {
        let mut rank = vec![usize::MAX; dag.len()];
        for (r, &i) in order.iter().enumerate() {
            let id = &self.tasks[i].id;
            let t = dag.task_by_name(id).ok_or_else(|| {
                Error::field(format!("tasks[{i}].id"), format!("task '{id}' is not in DAG '{}'", dag.name))
            })?;
            rank[t as usize] = r;
        }
        if let Some(t) = rank.iter().position(|&r| r == usize::MAX) {
            return Err(Error::field(
                "tasks",
                format!("task '{}' of the DAG is not scheduled", dag.task_name(t as u32)),
            ));
        }
        for t in 0..dag.len() as u32 {
            let mut bad = None;
            dag.for_each_parent(t, |p| {
                if bad.is_none() && rank[p as usize] > rank[t as usize] {
                    bad = Some(p);
                }
            });
            if let Some(p) = bad {
                return Err(Error::field(
                    "order",
                    format!("task '{}' comes before its parent '{}'", dag.task_name(t), dag.task_name(p)),
                ));
            }
        }
        Ok(())
    }
}
