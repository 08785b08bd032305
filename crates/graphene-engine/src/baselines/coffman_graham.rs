//! Coffman-Graham: lexicographic labelling from the sinks up, then list scheduling by label.
//!
//! The classic algorithm (Coffman and Graham, 1972) is optimal for unit-time tasks on two
//! identical processors: it labels tasks so that a task whose successors carry the smallest
//! labels gets the smallest label itself, i.e. the label order is a topological order that
//! breaks ties by how soon a task's successors become critical, and a list scheduler then always
//! runs the highest-labelled ready task.
//!
//! Adaptation to this model: the labelling is kept exactly (it only looks at the graph), and
//! the list phase is the same serial list scheduler as the other baselines (`Plan::place_by`
//! forward): the ready task with the highest label goes to the earliest slot after its parents
//! on any machine where its whole demand vector fits for its whole duration. Durations and
//! multi-resource demands are thus handled by the placement, not by the labels, so none of the
//! two-processor guarantee survives; what the baseline shows is how a purely structural priority
//! fares against packing-aware ones.
//!
//! Labelling cost. Comparing decreasing label lists naively is quadratic in the edges, and an
//! all-to-all edge between stages of hundreds of tasks gives every parent task the same long
//! list. Two facts keep it near linear in the stage edges:
//! * a task becomes labellable the moment its last child is labelled, and that label is the
//!   largest so far, so its list starts with a label larger than the first element of every list
//!   still waiting: tasks released by one labelling step sort after everything already waiting.
//!   The waiting tasks therefore form a queue of batches, and only a batch needs sorting;
//! * the all-to-all part of a list is the same for every task of a stage, so it is built once
//!   per stage; a task's own part holds only its one-to-one children (one per such edge), and
//!   the two are merged lazily while comparing.

use std::cmp::Ordering;
use std::collections::VecDeque;

use super::list::by_key;
use crate::model::{Cluster, Dag, EdgeKind, Schedule, TaskId};

pub fn schedule(dag: &Dag, cluster: &Cluster) -> Schedule {
    let key: Vec<f64> = labels(dag).iter().map(|&l| l as f64).collect();
    by_key(dag, cluster, &key)
}

/// First element where the merge of the two decreasing lists `a1 + a2` and `b1 + b2` differ,
/// compared lexicographically (a proper prefix is smaller).
fn cmp_merged(a1: &[u32], a2: &[u32], b1: &[u32], b2: &[u32]) -> Ordering {
    fn next<'a>(x: &mut &'a [u32], y: &mut &'a [u32]) -> Option<u32> {
        let take_x = match (x.first(), y.first()) {
            (Some(a), Some(b)) => a > b,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return None,
        };
        let s = if take_x { x } else { y };
        let v = s[0];
        *s = &s[1..];
        Some(v)
    }
    let (mut a1, mut a2, mut b1, mut b2) = (a1, a2, b1, b2);
    loop {
        match (next(&mut a1, &mut a2), next(&mut b1, &mut b2)) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x != y => return x.cmp(&y),
            _ => {}
        }
    }
}

/// Coffman-Graham labels, 1 for the first task labelled (a sink) up to `dag.len()`.
pub(super) fn labels(dag: &Dag) -> Vec<u32> {
    let n = dag.len();
    let mut label = vec![0u32; n];
    // Unlabelled tasks per stage; all-to-all child stages still unfinished per stage; unlabelled
    // one-to-one children per task.
    let mut left: Vec<u32> = dag.stages.iter().map(|s| s.len).collect();
    let mut barriers: Vec<u32> = dag
        .stages
        .iter()
        .map(|s| {
            s.children.iter().filter(|e| e.kind == EdgeKind::AllToAll && dag.stages[e.stage as usize].len > 0).count()
                as u32
        })
        .collect();
    let mut pairs = vec![0u32; n];
    for stage in &dag.stages {
        let k = stage.children.iter().filter(|e| e.kind == EdgeKind::OneToOne).count() as u32;
        for t in stage.tasks() {
            pairs[t as usize] = k;
        }
    }
    // The decreasing all-to-all part of the lists of each stage's tasks, once its barriers clear.
    let mut shared: Vec<Vec<u32>> = vec![Vec::new(); dag.stages.len()];
    let mut own: Vec<Vec<u32>> = vec![Vec::new(); n];

    let mut queue: VecDeque<TaskId> = (0..n as TaskId)
        .filter(|&t| barriers[dag.tasks[t as usize].stage as usize] == 0 && pairs[t as usize] == 0)
        .collect();
    let mut batch: Vec<TaskId> = Vec::new();
    let mut next_label = 1u32;
    while let Some(t) = queue.pop_front() {
        label[t as usize] = next_label;
        next_label += 1;
        let task = &dag.tasks[t as usize];
        let s = task.stage as usize;
        left[s] -= 1;
        let stage_done = left[s] == 0;
        for e in &dag.stages[s].parents {
            let p = e.stage as usize;
            let parent = &dag.stages[p];
            match e.kind {
                EdgeKind::AllToAll if stage_done => {
                    barriers[p] -= 1;
                    if barriers[p] == 0 {
                        let mut list: Vec<u32> = Vec::new();
                        for c in parent.children.iter().filter(|c| c.kind == EdgeKind::AllToAll) {
                            list.extend(dag.stages[c.stage as usize].tasks().map(|x| label[x as usize]));
                        }
                        list.sort_unstable_by(|a, b| b.cmp(a));
                        shared[p] = list;
                        batch.extend(parent.tasks().filter(|&x| pairs[x as usize] == 0));
                    }
                }
                EdgeKind::AllToAll => {}
                EdgeKind::OneToOne => {
                    let x = parent.first + task.index;
                    pairs[x as usize] -= 1;
                    if pairs[x as usize] == 0 && barriers[p] == 0 {
                        batch.push(x);
                    }
                }
            }
        }
        if batch.is_empty() {
            continue;
        }
        for &x in &batch {
            let st = &dag.stages[dag.tasks[x as usize].stage as usize];
            let idx = dag.tasks[x as usize].index;
            let mut mine: Vec<u32> = st
                .children
                .iter()
                .filter(|c| c.kind == EdgeKind::OneToOne)
                .map(|c| label[(dag.stages[c.stage as usize].first + idx) as usize])
                .collect();
            mine.sort_unstable_by(|a, b| b.cmp(a));
            own[x as usize] = mine;
        }
        let stage_of = |x: TaskId| dag.tasks[x as usize].stage as usize;
        batch.sort_by(|&a, &b| {
            let (sa, sb) = (stage_of(a), stage_of(b));
            let (oa, ob) = (&own[a as usize], &own[b as usize]);
            let lists = if sa == sb && oa.is_empty() && ob.is_empty() {
                Ordering::Equal
            } else {
                cmp_merged(&shared[sa], oa, &shared[sb], ob)
            };
            lists.then(a.cmp(&b))
        });
        queue.extend(batch.drain(..));
    }
    debug_assert!(label.iter().all(|&l| l > 0), "every task is labelled");
    label
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baselines::tetris::tests::{assert_valid, cluster, mixed_cluster, motivating, random_dag, stage};
    use crate::model::DagBuilder;

    fn single_tasks(edges: &[(&str, &[&str])]) -> Dag {
        let mut b = DagBuilder::new("d", vec!["cpu".into()]);
        for (name, parents) in edges {
            let ps: Vec<(&str, EdgeKind)> = parents.iter().map(|p| (*p, EdgeKind::AllToAll)).collect();
            b.stage(stage(name, &[(1.0, &[1.0])], &ps));
        }
        b.build().unwrap()
    }

    fn by_name(dag: &Dag, l: &[u32]) -> Vec<(String, u32)> {
        (0..dag.len()).map(|t| (dag.stages[dag.tasks[t].stage as usize].name.clone(), l[t])).collect()
    }

    #[test]
    fn labels_a_small_dag_by_hand() {
        // a -> c, a -> d, b -> d, b -> e, c -> f, d -> f, e -> g.
        // Step by step (ready tasks and their decreasing child-label lists):
        //   {f [], g []}            -> f = 1 (tie, lower id)
        //   {g [], c [1], d [1]}    -> g = 2
        //   {c [1], d [1], e [2]}   -> c = 3 (tie, lower id)
        //   {d [1], e [2]}          -> d = 4
        //   {e [2], a [4, 3]}       -> e = 5
        //   {a [4, 3], b [5, 4]}    -> a = 6, then b = 7
        let dag = single_tasks(&[
            ("a", &[]),
            ("b", &[]),
            ("c", &["a"]),
            ("d", &["a", "b"]),
            ("e", &["b"]),
            ("f", &["c", "d"]),
            ("g", &["e"]),
        ]);
        let got = by_name(&dag, &labels(&dag));
        let want: Vec<(String, u32)> = [("a", 6), ("b", 7), ("c", 3), ("d", 4), ("e", 5), ("f", 1), ("g", 2)]
            .iter()
            .map(|(n, l)| (n.to_string(), *l))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn ties_on_the_first_label_go_to_the_smaller_rest() {
        // Sinks p, r, q get 1, 2, 3 (ids in that order). x has children {r, q}: [3, 2];
        // y has {p, q}: [3, 1]. y's list is smaller, so y = 4 although x has the lower id.
        let dag = single_tasks(&[("x", &[]), ("y", &[]), ("p", &["y"]), ("r", &["x"]), ("q", &["x", "y"])]);
        let got = by_name(&dag, &labels(&dag));
        let want: Vec<(String, u32)> =
            [("x", 5), ("y", 4), ("p", 1), ("r", 2), ("q", 3)].iter().map(|(n, l)| (n.to_string(), *l)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn motivating_example_runs_short_tasks_first() {
        // Labels: L1, L2, L3 = 1, 2, 3 (sinks by id), then s1, s2, s3 = 4, 5, 6.
        // Highest first: s3 [0,1), s2 [1,2), s1 [2,3) on the one machine; the three long tasks
        // all fit together from 3: makespan 3 + 100 = 103.
        let (dag, c) = motivating();
        let l = labels(&dag);
        let at = |n: &str| l[dag.task_by_name(n).unwrap() as usize];
        assert_eq!([at("L1[0]"), at("L2[0]"), at("L3[0]"), at("s1[0]"), at("s2[0]"), at("s3[0]")], [1, 2, 3, 4, 5, 6]);
        let s = schedule(&dag, &c);
        assert_valid(&dag, &c, &s);
        assert_eq!(s.makespan(), 103.0);
    }

    /// The definition by brute force: expand every list and scan all candidates at each step.
    fn naive_labels(dag: &Dag) -> Vec<u32> {
        let n = dag.len();
        let mut label = vec![0u32; n];
        for next in 1..=n as u32 {
            let mut best: Option<(Vec<u32>, TaskId)> = None;
            for t in 0..n as TaskId {
                if label[t as usize] > 0 {
                    continue;
                }
                let mut list = Vec::new();
                let mut ready = true;
                dag.for_each_child(t, |c| {
                    ready &= label[c as usize] > 0;
                    list.push(label[c as usize]);
                });
                if !ready {
                    continue;
                }
                list.sort_unstable_by(|a, b| b.cmp(a));
                if best.as_ref().is_none_or(|(bl, _)| list < *bl) {
                    best = Some((list, t));
                }
            }
            label[best.expect("a DAG always has a labellable task").1 as usize] = next;
        }
        label
    }

    #[test]
    fn labels_match_brute_force_definition() {
        for seed in 0..60 {
            let dag = random_dag(seed, 14, 6);
            assert_eq!(labels(&dag), naive_labels(&dag), "seed {seed}");
        }
    }

    #[test]
    fn labels_are_a_reverse_topological_order() {
        let dag = random_dag(3, 30, 20);
        let l = labels(&dag);
        let mut seen: Vec<u32> = l.clone();
        seen.sort_unstable();
        assert_eq!(seen, (1..=dag.len() as u32).collect::<Vec<_>>());
        for t in 0..dag.len() as TaskId {
            dag.for_each_child(t, |c| assert!(l[t as usize] > l[c as usize]));
        }
    }

    #[test]
    fn random_dags_are_valid() {
        for seed in 0..40 {
            let dag = random_dag(seed, 14, 7);
            let c = mixed_cluster(&dag);
            let s = schedule(&dag, &c);
            assert_valid(&dag, &c, &s);
        }
        let dag = random_dag(5, 6, 4);
        let c = cluster(&dag, 1, &[("cpu", 4.0), ("mem", 8.0)]);
        assert_valid(&dag, &c, &schedule(&dag, &c));
    }
}
