//! `graphene_sched._core.PolicyView`: one heartbeat's [`Snapshot`] handed to a policy written in
//! Python. The view owns the snapshot and builds Python objects only for what the policy reads:
//! the machine's numbers at once, one row per runnable stage when it asks for the stages, a
//! stage's tasks when it asks for that stage, every task only when it asks for them all. Building
//! every runnable task as Python objects on every call was most of a call's cost on traces with
//! thousands of runnable tasks.

use pyo3::prelude::*;

use graphene::online::external::{Runnable, Snapshot};

/// A task as the Python side builds its `Task`: (job, task, stage, demand, duration).
type TaskRow = (u32, u32, u32, Vec<f64>, f64);

#[pyclass(module = "graphene_sched._core", frozen)]
pub struct PolicyView {
    snap: Snapshot,
}

impl PolicyView {
    pub fn new(snap: Snapshot) -> PolicyView {
        PolicyView { snap }
    }

    fn row(&self, r: &Runnable) -> TaskRow {
        (r.job, r.task, r.stage, r.demand.0[..self.snap.hard.len()].to_vec(), r.duration)
    }
}

#[pymethods]
impl PolicyView {
    /// (now, machine, free, capacity, hard).
    fn head(&self) -> (f64, usize, Vec<f64>, Vec<f64>, Vec<bool>) {
        let s = &self.snap;
        let dims = s.hard.len();
        (s.now, s.machine, s.free.0[..dims].to_vec(), s.capacity.0[..dims].to_vec(), s.hard.clone())
    }

    /// One row per runnable stage: (job, stage, runnable tasks, the next task's demand and
    /// estimated duration, the next task's id).
    fn stage_rows(&self) -> Vec<(u32, u32, usize, Vec<f64>, f64, u32)> {
        let dims = self.snap.hard.len();
        self.snap
            .stages
            .iter()
            .map(|sp| {
                let r = &self.snap.runnable[sp.start];
                (sp.job, sp.stage, sp.len, r.demand.0[..dims].to_vec(), r.duration, r.task)
            })
            .collect()
    }

    /// The runnable tasks of the `i`-th runnable stage, lowest id first.
    fn stage_tasks(&self, i: usize) -> PyResult<Vec<TaskRow>> {
        let sp = self.snap.stages.get(i).ok_or_else(|| {
            crate::usage(format!("stage {i}: the view has {} runnable stages", self.snap.stages.len()))
        })?;
        Ok(self.snap.runnable[sp.start..sp.start + sp.len].iter().map(|r| self.row(r)).collect())
    }

    /// Every runnable task.
    fn task_rows(&self) -> Vec<TaskRow> {
        self.snap.runnable.iter().map(|r| self.row(r)).collect()
    }
}
