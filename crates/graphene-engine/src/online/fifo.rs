//! FIFO: jobs in arrival order, each job's tasks in stage (topological) order.

use super::{fit_query, fits, FittingStages, Policy, TaskRef};
use crate::model::ResVec;
use crate::sim::View;

#[derive(Default)]
pub struct Fifo;

impl Policy for Fifo {
    fn name(&self) -> String {
        "fifo".into()
    }

    /// Its heartbeat reads only the jobs and the machine and keeps no state of its own.
    fn idle_is_stable(&self) -> bool {
        true
    }

    /// Every active job in arrival order takes what fits; the index of jobs
    /// ([`View::next_job_may_fit`]) passes over those that have nothing that fits, so a
    /// heartbeat costs the jobs it takes from, not every active job. (A job visited once is
    /// never visited again, so none has a task in `out` when it is reached.)
    fn assign(&mut self, view: &View, _machine: usize, free: &ResVec, out: &mut Vec<TaskRef>) {
        let mut left = *free;
        let mut from = 0;
        while let Some(job) = view.next_job_may_fit(from, &fit_query::hard(view, &left)) {
            fill_from_job(view, job, &mut left, out, usize::MAX);
            from = job + 1;
        }
    }
}

/// Takes runnable tasks of `job` in stage order while they fit `left`, at most `limit` of
/// them, skipping tasks already in `out` (chosen earlier in this heartbeat but not launched
/// yet); returns how many were taken. Tasks of a stage share their requested demand in most
/// traces: a stage is left at its first task that does not fit rather than scanned to the end,
/// and a stage whose first task does not fit is not visited at all ([`FittingStages`]).
pub(crate) fn fill_from_job(view: &View, job: u32, left: &mut ResVec, out: &mut Vec<TaskRef>, limit: usize) -> usize {
    let st = view.job_state(job);
    let mut stages = FittingStages::new(view, job, out, &fit_query::hard(view, left));
    let mut taken = 0;
    while let Some(s) = stages.next(view, &fit_query::hard(view, left)) {
        for &t in st.runnable_in(s).iter().rev() {
            if taken == limit {
                return taken;
            }
            if out.contains(&TaskRef { job, task: t }) {
                continue;
            }
            let d = view.requested(job, t);
            if !fits(view, &d, left) {
                break;
            }
            left.sub_assign(&d);
            out.push(TaskRef { job, task: t });
            taken += 1;
        }
    }
    taken
}
