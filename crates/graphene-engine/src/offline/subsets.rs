//! Splitting a DAG around a troublesome set: T (closed), its parents P, children C, the rest S.

use crate::model::{Dag, EdgeKind, TaskId};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    T,
    S,
    P,
    C,
}

/// The four subsets, as task lists and membership masks.
#[derive(Clone, Debug)]
pub struct Split {
    pub t: Vec<TaskId>,
    pub s: Vec<TaskId>,
    pub p: Vec<TaskId>,
    pub c: Vec<TaskId>,
    pub label: Vec<Part>,
}

impl Split {
    pub fn mask(&self, part: Part) -> Vec<bool> {
        self.label.iter().map(|&l| l == part).collect()
    }
}

/// Strict ancestors (`up`) or descendants of the seed tasks. An all-to-all edge reaches a whole
/// stage, so each stage is swept at most once per direction: O(tasks + stage edges).
pub fn reach(dag: &Dag, seeds: &[TaskId], up: bool) -> Vec<bool> {
    let n = dag.len();
    let mut hit = vec![false; n];
    let mut expanded = vec![false; n];
    let mut swept = vec![false; dag.stages.len()];
    let mut stack: Vec<TaskId> = seeds.to_vec();
    while let Some(t) = stack.pop() {
        if std::mem::replace(&mut expanded[t as usize], true) {
            continue;
        }
        let task = &dag.tasks[t as usize];
        let stage = &dag.stages[task.stage as usize];
        let edges = if up { &stage.parents } else { &stage.children };
        for e in edges {
            let other = &dag.stages[e.stage as usize];
            match e.kind {
                EdgeKind::AllToAll => {
                    if !std::mem::replace(&mut swept[e.stage as usize], true) {
                        for x in other.tasks() {
                            hit[x as usize] = true;
                            if !expanded[x as usize] {
                                stack.push(x);
                            }
                        }
                    }
                }
                EdgeKind::OneToOne => {
                    let x = other.first + task.index;
                    hit[x as usize] = true;
                    if !expanded[x as usize] {
                        stack.push(x);
                    }
                }
            }
        }
    }
    hit
}

/// T = closure of `seed` (the seed plus every task on a path between two seed tasks); P = other
/// ancestors of T; C = other descendants of T; S = everything else. Because T is closed, no task
/// is both an ancestor and a descendant of T outside T, so P and C are disjoint.
pub fn split(dag: &Dag, seed: &[bool]) -> Split {
    let seeds: Vec<TaskId> = (0..dag.len() as TaskId).filter(|&t| seed[t as usize]).collect();
    let anc = reach(dag, &seeds, true);
    let desc = reach(dag, &seeds, false);
    let mut out =
        Split { t: Vec::new(), s: Vec::new(), p: Vec::new(), c: Vec::new(), label: Vec::with_capacity(dag.len()) };
    for t in 0..dag.len() {
        let i = t as TaskId;
        let part = if seed[t] || (anc[t] && desc[t]) {
            out.t.push(i);
            Part::T
        } else if anc[t] {
            out.p.push(i);
            Part::P
        } else if desc[t] {
            out.c.push(i);
            Part::C
        } else {
            out.s.push(i);
            Part::S
        };
        out.label.push(part);
    }
    out
}
