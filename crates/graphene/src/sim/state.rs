//! Per-job progress during a replay: which tasks wait, may run, run, or are done.
//!
//! Readiness is tracked per stage, as in the offline constructor: a task waits on a count of
//! unfinished "units" (each all-to-all parent stage is one unit, each one-to-one parent task is
//! one), so finishing the last task of a stage releases its children in one sweep and no
//! all-to-all edge is ever expanded into task pairs.

use crate::model::{Dag, EdgeKind, TaskId};

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
    runnable: Vec<Vec<TaskId>>,
    /// Stages with at least one runnable task, kept sorted (stage order is topological).
    pub runnable_stages: Vec<u32>,
    pub runnable_count: usize,
    pub left: usize,
    pub finish: Option<f64>,
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
            runnable: vec![Vec::new(); dag.stages.len()],
            runnable_stages: Vec::new(),
            runnable_count: 0,
            left: dag.len(),
            finish: None,
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
        if list.is_empty() {
            if let Err(pos) = self.runnable_stages.binary_search(&s) {
                self.runnable_stages.insert(pos, s);
            }
        }
        // Keep descending order so pop() gives the lowest id; releases come in ascending order
        // from stage sweeps, so insert at the right place (usually the front for sweeps, which
        // we avoid by pushing sweeps in reverse).
        match list.last() {
            Some(&last) if last < t => {
                let pos = list.partition_point(|&x| x > t);
                list.insert(pos, t);
            }
            _ => list.push(t),
        }
        self.runnable_count += 1;
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
        if list.is_empty() {
            if let Ok(pos) = self.runnable_stages.binary_search(&(s as u32)) {
                self.runnable_stages.remove(pos);
            }
        }
        self.runnable_count -= 1;
        self.state[t as usize] = TaskState::Running;
    }

    /// Marks a running task done and releases the tasks that waited only on it.
    pub fn finish(&mut self, dag: &Dag, t: TaskId, now: f64) {
        self.state[t as usize] = TaskState::Done;
        self.left -= 1;
        if self.left == 0 {
            self.finish = Some(now);
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
