//! StripPart: DAG scheduling by strip packing, level by level.
//!
//! The StripPart the Graphene paper compares against comes from the strip-packing view of
//! scheduling with precedence (Augustine, Banerjee and Irani, "Strip packing with precedence
//! constraints and strip packing with release times"): tasks are rectangles (width = resource
//! demand, height = duration) in a strip whose width is the cluster. The DAG is partitioned into
//! levels that contain no edge inside them, each level is packed as an independent strip-packing
//! instance, and the packings are stacked, every level starting once the previous one is done.
//! The stacking is what keeps it correct without looking at individual edges, and it is also its
//! weakness: a level waits for the longest task of the level before it, even when its own parents
//! finished long ago.
//!
//! Adaptation to this model:
//! * Levels are longest-path depths in edges from the sources (`bfs_levels`): every edge goes
//!   from a lower to a higher level, so a barrier between consecutive levels implies every
//!   dependency, all-to-all and one-to-one alike.
//! * The strip is not one width but machines with a demand vector each. A rectangle cannot be
//!   split across machines, and several resources must fit at once, so the one-dimensional
//!   strip packers (NFDH, FFDH and their guarantees) do not carry over. Instead each level is
//!   packed by first-fit decreasing by duration on the shared resource-time space: longest task
//!   first (ties by id), each at the earliest instant from the level's start at which some
//!   machine holds its whole demand vector for its whole duration (lowest machine on a tie).
//!   Longest-first is the choice strip packers make (decreasing height) for the same reason: the
//!   tall items fix the strip's height, and the short ones fill the holes beside them.

use super::list::bfs_levels;
use crate::model::{Cluster, Dag, Placement, Schedule, TaskId};
use crate::space::Space;

pub fn schedule(dag: &Dag, cluster: &Cluster) -> Schedule {
    let level = bfs_levels(dag);
    let depth = level.iter().copied().max().map_or(0, |l| l as usize + 1);
    let mut strips: Vec<Vec<TaskId>> = vec![Vec::new(); depth];
    for (t, &l) in level.iter().enumerate() {
        strips[l as usize].push(t as TaskId);
    }
    let mut space = Space::new(&cluster.machines);
    let mut placements = vec![Placement { task: 0, machine: 0, start: 0.0, end: 0.0 }; dag.len()];
    let mut strip_start = 0.0f64;
    for strip in &mut strips {
        strip.sort_by(|&a, &b| {
            dag.tasks[b as usize].duration.total_cmp(&dag.tasks[a as usize].duration).then(a.cmp(&b))
        });
        let mut strip_end = strip_start;
        for &t in strip.iter() {
            let task = &dag.tasks[t as usize];
            let (m, s) = space.earliest(strip_start, task.duration, &task.demand);
            let end = s + task.duration;
            space.insert(m, s, end, &task.demand);
            placements[t as usize] = Placement { task: t, machine: m as u32, start: s, end };
            strip_end = strip_end.max(end);
        }
        strip_start = strip_end;
    }
    Schedule { placements }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baselines::tetris::tests::{assert_valid, cluster, mixed_cluster, motivating, random_dag, stage};
    use crate::model::{DagBuilder, EdgeKind};

    #[test]
    fn level_barrier_costs_time() {
        // One machine, 2 cpu. Level 0: a (10) and b (1); level 1: c (5) after b only.
        // c could run beside a from time 1 (makespan 10), but its strip starts when a ends.
        let mut bld = DagBuilder::new("d", vec!["cpu".into()]);
        bld.stage(stage("a", &[(10.0, &[1.0])], &[]));
        bld.stage(stage("b", &[(1.0, &[1.0])], &[]));
        bld.stage(stage("c", &[(5.0, &[1.0])], &[("b", EdgeKind::AllToAll)]));
        let dag = bld.build().unwrap();
        let c = cluster(&dag, 1, &[("cpu", 2.0)]);
        let s = schedule(&dag, &c);
        assert_valid(&dag, &c, &s);
        let st: Vec<(f64, f64)> = s.placements.iter().map(|p| (p.start, p.end)).collect();
        assert_eq!(st, vec![(0.0, 10.0), (0.0, 1.0), (10.0, 15.0)]);
        assert_eq!(s.makespan(), 15.0);
    }

    #[test]
    fn first_fit_decreasing_inside_a_strip() {
        // One machine, 2 cpu, one level of three 1-cpu tasks lasting 3, 5, 4 (ids 0, 1, 2).
        // Decreasing: 5 at 0, 4 at 0, then 3 fits first when the 4 ends: [4, 7).
        // Then one-to-one children (level 1), all start at 7 or later.
        let mut bld = DagBuilder::new("d", vec!["cpu".into()]);
        bld.stage(stage("x", &[(3.0, &[1.0]), (5.0, &[1.0]), (4.0, &[1.0])], &[]));
        bld.stage(stage("y", &[(1.0, &[1.0]), (1.0, &[1.0]), (2.0, &[1.0])], &[("x", EdgeKind::OneToOne)]));
        let dag = bld.build().unwrap();
        let c = cluster(&dag, 1, &[("cpu", 2.0)]);
        let s = schedule(&dag, &c);
        assert_valid(&dag, &c, &s);
        let st: Vec<f64> = s.placements.iter().map(|p| p.start).collect();
        // Level 1 by decreasing duration: y[2] (2) at 7, y[0] (1) at 7 (tie with y[1], lower id),
        // y[1] at 8 when y[0] ends.
        assert_eq!(st, vec![4.0, 0.0, 0.0, 7.0, 8.0, 7.0]);
        assert_eq!(s.makespan(), 9.0);
    }

    #[test]
    fn motivating_example_packs_the_short_tasks_together() {
        // Level 0 holds s1..s3 (9 cpu each: one at a time), level 1 holds L1..L3 (all fit at
        // once): 3 + 100 = 103, the optimum here.
        let (dag, c) = motivating();
        let s = schedule(&dag, &c);
        assert_valid(&dag, &c, &s);
        assert_eq!(s.makespan(), 103.0);
    }

    #[test]
    fn random_dags_are_valid() {
        for seed in 0..40 {
            let dag = random_dag(seed, 14, 7);
            let c = mixed_cluster(&dag);
            let s = schedule(&dag, &c);
            assert_valid(&dag, &c, &s);
            // Strips never overlap: every task of level k ends before any of level k+1 starts.
            let level = bfs_levels(&dag);
            for (a, pa) in s.placements.iter().enumerate() {
                for (b, pb) in s.placements.iter().enumerate() {
                    if level[a] < level[b] {
                        assert!(pa.end <= pb.start, "seed {seed}: {a} and {b}");
                    }
                }
            }
        }
    }
}
