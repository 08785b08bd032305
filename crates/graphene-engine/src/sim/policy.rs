//! The contract between the simulator and the online schedulers. It lives on the simulator's
//! side so that data flows one way: `online` implements [`Policy`] against [`View`], and the
//! simulator never names a scheduler.

use super::View;
use crate::model::{ResVec, TaskId};

/// A task of a job in the workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TaskRef {
    pub job: u32,
    pub task: TaskId,
}

pub trait Policy {
    fn name(&self) -> String;

    /// A job arrived (its source tasks are runnable). Policies precompute per-job data here.
    fn job_arrived(&mut self, _view: &View, _job: u32) {}

    /// Machine `machine` reports `free` resources (capacity minus what running tasks were
    /// allocated). Push the tasks to launch there, in order, into `out`. Each must be runnable
    /// and fit what is left of `free` on the resources that cannot be overbooked; the
    /// simulator launches them in order and stops at the first that does not fit.
    fn assign(&mut self, view: &View, machine: usize, free: &ResVec, out: &mut Vec<TaskRef>);

    /// Asked right after an [`Policy::assign`] that pushed nothing: true when that call changed
    /// none of the policy's state and read nothing but the jobs' and machines' state and `free`
    /// (not the clock, not a random stream), so that asking again before any arrival, launch or
    /// finish would push nothing again. The simulator then skips that machine's heartbeats until
    /// something changes, which is what keeps long saturated replays (hours of simulated time
    /// with every machine full) fast; the outcome is the same, byte for byte. An empty call
    /// answered with false counts as a change itself (its state may have moved), so every
    /// machine is asked again. The default, false, is always correct.
    fn idle_is_stable(&self) -> bool {
        false
    }

    /// A task this policy chose was launched.
    fn launched(&mut self, _view: &View, _t: TaskRef) {}

    /// A task finished.
    fn finished(&mut self, _view: &View, _t: TaskRef) {}
}

/// A boxed scheduler is a scheduler (so wrappers such as `online::Sticky` take either).
impl<P: Policy + ?Sized> Policy for Box<P> {
    fn name(&self) -> String {
        (**self).name()
    }
    fn job_arrived(&mut self, view: &View, job: u32) {
        (**self).job_arrived(view, job)
    }
    fn assign(&mut self, view: &View, machine: usize, free: &ResVec, out: &mut Vec<TaskRef>) {
        (**self).assign(view, machine, free, out)
    }
    fn idle_is_stable(&self) -> bool {
        (**self).idle_is_stable()
    }
    fn launched(&mut self, view: &View, t: TaskRef) {
        (**self).launched(view, t)
    }
    fn finished(&mut self, view: &View, t: TaskRef) {
        (**self).finished(view, t)
    }
}
