//! Per-job progress during a replay: which tasks wait, may run, run, or are done.
//!
//! Readiness is tracked per stage, as in the offline constructor: a task waits on a count of
//! unfinished "units" (each all-to-all parent stage is one unit, each one-to-one parent task is
//! one), so finishing the last task of a stage releases its children in one sweep and no
//! all-to-all edge is ever expanded into task pairs.

use smallvec::SmallVec;

use super::fit_index::FitIndex;
use crate::model::{Dag, EdgeKind, TaskId};

/// A stage's runnable tasks. Up to four are kept inline: on DAGs of one-task stages every
/// stage's list held one task in an allocation of its own, a `malloc` and a cache miss per task,
/// and the inline list is no larger than a `Vec`.
type RunnableList = SmallVec<[TaskId; 4]>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskState {
    Waiting,
    Runnable,
    Running,
    Done,
}

pub struct JobState {
    pub state: Vec<TaskState>,
    pending: Vec<u32>,
    stage_left: Vec<u32>,
    /// Runnable task ids per stage, highest id at the bottom so `pop` yields the lowest.
    runnable: Vec<RunnableList>,
    /// Stages with at least one runnable task, kept sorted (stage order is topological).
    pub runnable_stages: Vec<u32>,
    /// The lowest runnable task id of each stage of `runnable_stages`, at the same index. A
    /// policy that looks at one task per runnable stage reads it from here, in one sequential
    /// sweep, instead of following one pointer per stage into `runnable` (on DAGs of thousands
    /// of one-task stages that pointer chase was most of a heartbeat's cost).
    pub runnable_heads: Vec<TaskId>,
    pub runnable_count: usize,
    pub left: usize,
    pub finish: Option<f64>,
    /// While the job is active in a replay: its runnable stages by the requested demand of
    /// their lowest runnable task ([`JobState::index_fits`]), with the demand factor of each
    /// stage that the policies see.
    fit: Option<(FitIndex, Vec<f64>)>,
}

impl JobState {
    pub fn new(dag: &Dag) -> JobState {
        let mut pending = vec![0u32; dag.len()];
        for stage in &dag.stages {
            for t in stage.tasks() {
                pending[t as usize] = stage.parents.len() as u32;
            }
        }
        let mut js = JobState {
            state: vec![TaskState::Waiting; dag.len()],
            pending,
            stage_left: dag.stages.iter().map(|s| s.len).collect(),
            runnable: vec![RunnableList::new(); dag.stages.len()],
            runnable_stages: Vec::new(),
            runnable_heads: Vec::new(),
            runnable_count: 0,
            left: dag.len(),
            finish: None,
            fit: None,
        };
        for (s, stage) in dag.stages.iter().enumerate() {
            if stage.parents.is_empty() {
                for t in stage.tasks().rev() {
                    js.make_runnable(dag, t);
                }
                let _ = s;
            }
        }
        js
    }

    fn make_runnable(&mut self, dag: &Dag, t: TaskId) {
        let s = dag.tasks[t as usize].stage;
        self.state[t as usize] = TaskState::Runnable;
        let list = &mut self.runnable[s as usize];
        let pos = match self.runnable_stages.binary_search(&s) {
            Ok(pos) => pos,
            Err(pos) => {
                self.runnable_stages.insert(pos, s);
                self.runnable_heads.insert(pos, t);
                pos
            }
        };
        // Keep descending order so pop() gives the lowest id; releases come in ascending order
        // from stage sweeps, so insert at the right place (usually the front for sweeps, which
        // we avoid by pushing sweeps in reverse).
        match list.last() {
            Some(&last) if last < t => {
                let pos = list.partition_point(|&x| x > t);
                list.insert(pos, t);
            }
            _ => {
                list.push(t);
                self.runnable_heads[pos] = t;
                self.refresh_fit(dag, s);
            }
        }
        self.runnable_count += 1;
    }

    /// Keeps the runnable stages indexed by the requested demand of their lowest runnable task
    /// (`demand_factors[s]` scales stage `s`'s demands, as the policies see them; none when
    /// they are exact), over the
    /// resources `dims`, until the job finishes. See [`FitIndex`].
    pub fn index_fits(&mut self, dag: &Dag, demand_factors: Vec<f64>, dims: Vec<usize>) {
        self.fit = Some((FitIndex::new(dag.stages.len(), dims), demand_factors));
        for i in 0..self.runnable_stages.len() {
            self.refresh_fit(dag, self.runnable_stages[i]);
        }
    }

    /// The index of [`JobState::index_fits`], while the job has one.
    pub fn fit_index(&self) -> Option<&FitIndex> {
        self.fit.as_ref().map(|(f, _)| f).filter(|f| f.is_useful())
    }

    /// The componentwise minimum of the runnable stages' lowest demands ([`FitIndex::root`]),
    /// while the job keeps an index; NaN throughout when it keeps none (finished).
    pub fn fit_root(&self) -> crate::model::ResVec {
        match &self.fit {
            Some((f, _)) => f.root(),
            None => {
                let mut v = crate::model::ResVec::ZERO;
                v.0.iter_mut().for_each(|x| *x = f64::NAN);
                v
            }
        }
    }

    /// False when no runnable stage's lowest task fits the query `free` (by the index's root;
    /// true without an index): a policy has nothing to take from this job for a machine with
    /// `free`, unless it already chose one of its tasks.
    pub fn may_fit(&self, free: &crate::model::ResVec) -> bool {
        self.fit.as_ref().is_none_or(|(f, _)| f.any_fits(free))
    }

    fn refresh_fit(&mut self, dag: &Dag, s: u32) {
        if let Some((fit, factors)) = &mut self.fit {
            let head = self.runnable[s as usize].last();
            // As `View::requested`: the task's demand scaled by its stage's factor.
            // (No factors: exact estimates, the demand as is.)
            let demand = head.map(|&t| match factors.get(s as usize) {
                Some(&f) => dag.tasks[t as usize].demand.scale(f),
                None => dag.tasks[t as usize].demand,
            });
            fit.set(s, demand.as_ref());
        }
    }

    /// True when every task of stage `s` has finished (its all-to-all children are released).
    pub fn stage_done(&self, s: u32) -> bool {
        self.stage_left.get(s as usize).is_some_and(|&n| n == 0)
    }

    /// Runnable tasks of stage `s`, lowest id last.
    pub fn runnable_in(&self, s: u32) -> &[TaskId] {
        &self.runnable[s as usize]
    }

    /// Marks a runnable task as started.
    pub fn start(&mut self, dag: &Dag, t: TaskId) {
        debug_assert_eq!(self.state[t as usize], TaskState::Runnable);
        let s = dag.tasks[t as usize].stage as usize;
        let list = &mut self.runnable[s];
        if let Some(pos) = list.iter().rposition(|&x| x == t) {
            list.remove(pos);
        }
        if let Ok(pos) = self.runnable_stages.binary_search(&(s as u32)) {
            match list.last() {
                Some(&lowest) => self.runnable_heads[pos] = lowest,
                None => {
                    self.runnable_stages.remove(pos);
                    self.runnable_heads.remove(pos);
                }
            }
        }
        self.refresh_fit(dag, s as u32);
        self.runnable_count -= 1;
        self.state[t as usize] = TaskState::Running;
    }

    /// Marks a running task done and releases the tasks that waited only on it.
    pub fn finish(&mut self, dag: &Dag, t: TaskId, now: f64) {
        self.state[t as usize] = TaskState::Done;
        self.left -= 1;
        if self.left == 0 {
            self.finish = Some(now);
            self.fit = None;
        }
        let task = &dag.tasks[t as usize];
        let stage = &dag.stages[task.stage as usize];
        self.stage_left[task.stage as usize] -= 1;
        let stage_done = self.stage_left[task.stage as usize] == 0;
        for e in &stage.children {
            let child = &dag.stages[e.stage as usize];
            match e.kind {
                EdgeKind::AllToAll if stage_done => {
                    for c in child.tasks().rev() {
                        self.release(dag, c);
                    }
                }
                EdgeKind::AllToAll => {}
                EdgeKind::OneToOne => self.release(dag, child.first + task.index),
            }
        }
    }

    fn release(&mut self, dag: &Dag, c: TaskId) {
        let p = &mut self.pending[c as usize];
        *p -= 1;
        if *p == 0 {
            self.make_runnable(dag, c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baselines::tetris::tests::random_dag;
    use proptest::prelude::*;

    /// `runnable_heads` is a cache of the lowest id in each runnable stage's list: it must match
    /// the lists after every release and start, in any order.
    fn heads_match(js: &JobState) -> Result<(), TestCaseError> {
        prop_assert_eq!(js.runnable_stages.len(), js.runnable_heads.len());
        for (i, &s) in js.runnable_stages.iter().enumerate() {
            prop_assert_eq!(Some(&js.runnable_heads[i]), js.runnable_in(s).last());
        }
        prop_assert_eq!(js.runnable_count, js.runnable_stages.iter().map(|&s| js.runnable_in(s).len()).sum::<usize>());
        Ok(())
    }

    proptest! {
        #[test]
        fn runnable_heads_follow_the_lists(seed in 0u64..10_000, picks in proptest::collection::vec(0usize..1000, 0..400)) {
            let dag = random_dag(seed, 10, 6);
            let mut js = JobState::new(&dag);
            heads_match(&js)?;
            let mut running: Vec<TaskId> = Vec::new();
            let mut now = 0.0;
            for p in picks {
                // Even picks start a runnable task (any of them, not only the lowest), odd ones
                // finish a running task.
                let runnable: Vec<TaskId> =
                    js.runnable_stages.iter().flat_map(|&s| js.runnable_in(s).iter().copied()).collect();
                if p % 2 == 0 && !runnable.is_empty() {
                    let t = runnable[p / 2 % runnable.len()];
                    js.start(&dag, t);
                    running.push(t);
                } else if !running.is_empty() {
                    let t = running.swap_remove(p / 2 % running.len());
                    now += 1.0;
                    js.finish(&dag, t, now);
                }
                heads_match(&js)?;
            }
        }
    }
}
