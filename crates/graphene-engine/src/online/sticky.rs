//! `--sticky`: any online scheduler, with each machine kept on the job of its last task.
//!
//! Why: under Decima's duration model (`replay --waves`) a machine that moves to another job
//! pays a moving delay and a fresh, slower first task, and one that continues its stage runs
//! a faster rest-wave task. Spark itself keeps an executor with its application, and Decima
//! learns to keep machines where they are; the heuristics here choose afresh at every
//! heartbeat and move machines 30-40% more often (BENCHMARKS.md, waves). Comparing Decima only
//! with heuristics that ignore where a machine is would credit it with a gain that a one-line
//! rule also gets; this wrapper is that rule, so the comparison can include it. (Decima's own
//! `trained.freed = own-job` is the policy-internal form of the idea, for its committed stages
//! only; this wrapper applies to any scheduler, Decima included.)
//!
//! The rule: when machine `m` reports free capacity and the job of the last task launched on
//! it still has runnable work, `m` takes that job's tasks first: the lowest runnable task of
//! the same stage while there is one (a rest wave), else of the job's first runnable stage,
//! as long as they fit every resource without overbooking. Whatever capacity is left goes to
//! the wrapped scheduler as usual. A machine whose job has nothing runnable is the wrapped
//! scheduler's, and it stays with whatever job that picks.

use std::collections::VecDeque;

use super::{fits_all, Policy, TaskRef};
use crate::model::ResVec;
use crate::sim::View;

pub struct Sticky<P> {
    inner: P,
    /// Per machine: the job and stage of the last task launched there.
    last: Vec<Option<(u32, u32)>>,
    /// Tasks handed out by the last `assign` with their machine, confirmed by `launched`.
    pending: VecDeque<(TaskRef, usize)>,
    scratch: Vec<TaskRef>,
}

impl<P: Policy> Sticky<P> {
    pub fn new(inner: P) -> Sticky<P> {
        Sticky { inner, last: Vec::new(), pending: VecDeque::new(), scratch: Vec::new() }
    }

    /// The wrapped scheduler (a trainer reads its recorded decisions after a run).
    pub fn into_inner(self) -> P {
        self.inner
    }

    /// The tasks machine `machine` keeps for its job, pushed into `out`; returns what is left.
    fn keep(&self, view: &View, machine: usize, free: &ResVec, out: &mut Vec<TaskRef>) -> ResVec {
        let mut left = *free;
        let Some((job, stage)) = self.last.get(machine).copied().flatten() else { return left };
        if !view.active().contains(&job) {
            return left;
        }
        let st = view.job_state(job);
        let cap = view.caps[machine];
        // The same stage first, then the job's runnable stages in order.
        let same = (!st.runnable_in(stage).is_empty()).then_some(stage);
        for s in same.into_iter().chain(st.runnable_stages.iter().copied().filter(|&s| s != stage)) {
            for &t in st.runnable_in(s).iter().rev() {
                let d = view.requested(job, t);
                if !fits_all(view, &d, &left, &cap) {
                    return left;
                }
                left.sub_assign(&d);
                out.push(TaskRef { job, task: t });
            }
        }
        left
    }
}

/// Runs `f` on `policy`, wrapped in [`Sticky`] when `sticky`, and hands the policy back with
/// what `f` returned (a trainer or an environment reads the policy's records after a run).
pub fn kept_if<P: Policy, R>(policy: P, sticky: bool, f: impl FnOnce(&mut dyn Policy) -> R) -> (P, R) {
    if sticky {
        let mut kept = Sticky::new(policy);
        let r = f(&mut kept);
        (kept.into_inner(), r)
    } else {
        let mut policy = policy;
        let r = f(&mut policy);
        (policy, r)
    }
}

impl<P: Policy> Policy for Sticky<P> {
    fn name(&self) -> String {
        format!("{} (sticky)", self.inner.name())
    }

    fn job_arrived(&mut self, view: &View, job: u32) {
        self.inner.job_arrived(view, job);
    }

    fn assign(&mut self, view: &View, machine: usize, free: &ResVec, out: &mut Vec<TaskRef>) {
        if self.last.len() < view.caps.len() {
            self.last.resize(view.caps.len(), None);
        }
        self.pending.clear();
        let first = out.len();
        let mut kept = std::mem::take(&mut self.scratch);
        kept.clear();
        let left = self.keep(view, machine, free, &mut kept);
        self.inner.assign(view, machine, &left, out);
        // The wrapped scheduler saw the same runnable lists, so it may name a task kept above;
        // its own picks go first (it matches its launches against them in order), then the
        // kept ones. Together they fit `free`: the wrapped scheduler only had `left`.
        if !kept.is_empty() {
            let mut i = first;
            while i < out.len() {
                if kept.contains(&out[i]) {
                    out.remove(i);
                } else {
                    i += 1;
                }
            }
            out.extend(kept.iter().copied());
        }
        self.scratch = kept;
        for &t in &out[first..] {
            self.pending.push_back((t, machine));
        }
    }

    /// Stable when the wrapped scheduler is: an empty call kept nothing (nothing of the
    /// machine's job fitted) and changes nothing here.
    fn idle_is_stable(&self) -> bool {
        self.inner.idle_is_stable()
    }

    fn launched(&mut self, view: &View, t: TaskRef) {
        while self.pending.front().is_some_and(|&(p, _)| p != t) {
            self.pending.pop_front();
        }
        if let Some((_, m)) = self.pending.pop_front() {
            if let Some(slot) = self.last.get_mut(m) {
                *slot = Some((t.job, view.dag(t.job).tasks[t.task as usize].stage));
            }
        }
        self.inner.launched(view, t);
    }

    fn finished(&mut self, view: &View, t: TaskRef) {
        self.inner.finished(view, t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::{parse_dags, LoadOptions};
    use crate::model::{ClusterSpec, Job, Workload};
    use crate::online::Tetris;
    use crate::sim::{run, SimConfig};

    /// One-stage jobs of one-slot tasks: (arrival, tasks, duration).
    fn workload(jobs: &[(f64, u32, f64)]) -> Workload {
        let jobs = jobs
            .iter()
            .enumerate()
            .map(|(i, &(arrival, tasks, duration))| {
                let text = format!(
                    r#"{{"name": "j{i}", "resources": ["cpu"], "stages": [{{"id": "s", "tasks": {tasks},
                    "duration": {duration}, "demands": {{"cpu": 1}}}}]}}"#
                );
                let dag = parse_dags(&text, "test.json", &LoadOptions::default()).unwrap().remove(0);
                Job { name: format!("j{i}"), arrival, queue: "q".into(), dag }
            })
            .collect();
        Workload { jobs }
    }

    /// One one-slot machine. A: two 10 s tasks at 0; B: one 1 s task at 5. Tetris (least
    /// remaining work first) moves the machine to B when A's first task ends at 10: B ends at
    /// 11, A at 21. Sticky, the machine stays with A: A ends at 20, B runs 20-21 (JCT 16).
    #[test]
    fn a_machine_stays_with_its_job() {
        let w = workload(&[(0.0, 2, 10.0), (5.0, 1, 1.0)]);
        let mut spec = ClusterSpec::uniform(1, [("cpu".to_string(), 1.0)].into_iter().collect());
        spec.overbook = vec![];
        let c = spec.resolve(&["cpu".to_string()]).unwrap();
        let jcts = |p: &mut dyn Policy| {
            let r = run(&w, &c, p, &SimConfig::default()).unwrap();
            assert!(crate::validate::validate_replay(&w, &c, &r).is_empty());
            r.jobs.iter().map(|j| j.jct()).collect::<Vec<f64>>()
        };
        assert_eq!(jcts(&mut Tetris::new()), vec![21.0, 6.0]);
        let mut sticky = Sticky::new(Tetris::new());
        assert_eq!(jcts(&mut sticky), vec![20.0, 16.0]);
        assert_eq!(sticky.name(), "tetris (sticky)");
    }
}
