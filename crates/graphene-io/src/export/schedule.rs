//! The parts of a schedule file (`build-schedule`'s output) that an export needs.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::formats::schedule_file::check_tasks;
pub use crate::formats::schedule_file::TaskIn;
use crate::model::{Dag, EdgeKind};

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
        // Per stage, the latest rank of its tasks: a task comes after every task of an
        // all-to-all parent stage exactly when it comes after that stage's latest, so the check
        // is one comparison per stage edge and task, not one per pair of tasks (two all-to-all
        // stages of 300,000 tasks are 9e10 pairs). One-to-one parents are one task each.
        let latest: Vec<usize> =
            dag.stages.iter().map(|s| s.tasks().map(|t| rank[t as usize]).max().unwrap_or(0)).collect();
        for s in &dag.stages {
            let after =
                s.parents.iter().filter(|e| e.kind == EdgeKind::AllToAll).map(|e| latest[e.stage as usize]).max();
            let one_to_one: Vec<u32> = s
                .parents
                .iter()
                .filter(|e| e.kind == EdgeKind::OneToOne)
                .map(|e| dag.stages[e.stage as usize].first)
                .collect();
            for t in s.tasks() {
                let r = rank[t as usize];
                let late = after.is_some_and(|a| a > r)
                    || one_to_one.iter().any(|&first| rank[(first + t - s.first) as usize] > r);
                if late {
                    // The first parent in the DAG's order that comes after it, for the message.
                    let mut bad = None;
                    dag.for_each_parent(t, |p| {
                        if bad.is_none() && rank[p as usize] > r {
                            bad = Some(p);
                        }
                    });
                    let p = bad.expect("a parent comes after the task");
                    return Err(Error::field(
                        "order",
                        format!("task '{}' comes before its parent '{}'", dag.task_name(t), dag.task_name(p)),
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::model::{DagBuilder, ResVec, StageSpec, TaskSpec};

    fn stage(name: &str, tasks: usize, parents: Vec<(String, EdgeKind)>) -> StageSpec {
        let t = TaskSpec { duration: 1.0, demand: ResVec::from_slice(&[1.0]) };
        StageSpec { name: name.into(), group: None, tasks: vec![t; tasks], parents }
    }

    /// A schedule listing the DAG's tasks in `order` (task ids), every task at time 0.
    fn schedule(dag: &Dag, order: &[u32]) -> ScheduleIn {
        let tasks = (0..dag.len() as u32)
            .map(|t| TaskIn { id: dag.task_name(t), stage: None, machine: 0, start: 0.0, end: 0.0, troublesome: false })
            .collect();
        ScheduleIn { dag: None, scheduler: None, tasks, order: order.iter().map(|&t| dag.task_name(t)).collect() }
    }

    /// The check by its definition: every parent task of every task, in the DAG's order.
    fn by_definition(dag: &Dag, rank: &[usize]) -> Result<()> {
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

    #[test]
    fn the_stage_level_check_agrees_with_the_definition() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let (mut fine, mut refused) = (0, 0);
        for _ in 0..3000 {
            let n = rng.gen_range(1..7);
            let sizes: Vec<usize> = (0..n).map(|_| rng.gen_range(1..4)).collect();
            let mut b = DagBuilder::new("d", vec!["cpu".into()]);
            for (i, &len) in sizes.iter().enumerate() {
                let mut parents = Vec::new();
                for p in 0..i {
                    if rng.gen_bool(0.4) {
                        let one = sizes[p] == len && rng.gen_bool(0.5);
                        parents.push((format!("s{p}"), if one { EdgeKind::OneToOne } else { EdgeKind::AllToAll }));
                    }
                }
                b.stage(stage(&format!("s{i}"), len, parents));
            }
            let dag = b.build().unwrap();
            // A topological order (task ids), then a few random swaps: some orders stay valid.
            let mut order: Vec<u32> = (0..dag.len() as u32).collect();
            for _ in 0..rng.gen_range(0..3) {
                let (i, j) = (rng.gen_range(0..order.len()), rng.gen_range(0..order.len()));
                order.swap(i, j);
            }
            let s = schedule(&dag, &order);
            let idx = s.order().unwrap();
            let mut rank = vec![0; dag.len()];
            for (r, &t) in order.iter().enumerate() {
                rank[t as usize] = r;
            }
            let got = s.check_against(&dag, &idx).map_err(|e| e.to_string());
            assert_eq!(got, by_definition(&dag, &rank).map_err(|e| e.to_string()), "{dag:?} {order:?}");
            if got.is_ok() {
                fine += 1;
            } else {
                refused += 1;
            }
        }
        assert!(fine > 500 && refused > 500, "both outcomes are exercised: {fine} valid, {refused} refused");
    }

    #[test]
    fn two_all_to_all_stages_of_100000_tasks_are_checked_per_stage() {
        let n = 100_000;
        let mut b = DagBuilder::new("d", vec!["cpu".into()]);
        b.stage(stage("a", n, vec![]));
        b.stage(stage("b", n, vec![("a".into(), EdgeKind::AllToAll)]));
        let dag = b.build().unwrap();
        let n = n as u32;
        let order: Vec<u32> = (0..2 * n).collect();
        let s = schedule(&dag, &order);
        s.check_against(&dag, &s.order().unwrap()).unwrap();
        // a[99999] moved after b[0]..b[2]: b[0] is the first task before one of its parents.
        let order: Vec<u32> = (0..n - 1).chain(n..n + 3).chain([n - 1]).chain(n + 3..2 * n).collect();
        assert_eq!(order.len(), 2 * n as usize);
        let s = schedule(&dag, &order);
        let e = s.check_against(&dag, &s.order().unwrap()).unwrap_err().to_string();
        assert_eq!(e, "order: task 'b[0]' comes before its parent 'a[99999]'");
    }
}
