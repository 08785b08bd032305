//! Integer priorities from the precedence order, lower served first, as YARN and Tez count them.
//!
//! A task's priority is its rank in the order plus one; a stage's is the rank of its first task
//! among the stages' first tasks. With `levels = N` the ranks are cut into N bands of (nearly)
//! equal size: `rank * N / n + 1`. The map is monotone, so a band never puts a later task ahead of
//! an earlier one; ties appear only inside a band, and only when N is smaller than the count.

use std::collections::HashMap;

use super::schedule::ScheduleIn;

#[derive(Clone, Debug)]
pub struct Priorities {
    /// Per task of the schedule file (same index as `ScheduleIn::tasks`).
    pub task: Vec<u32>,
    /// Stages in precedence order (by their first task), with their priority and task count.
    pub stages: Vec<StagePriority>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StagePriority {
    pub name: String,
    pub priority: u32,
    pub tasks: usize,
}

/// Rank `rank` of `n` (0-based) folded into at most `levels` values, 1-based.
pub fn band(rank: usize, n: usize, levels: Option<u32>) -> u32 {
    match levels {
        Some(k) if (k as usize) < n => (rank as u64 * k as u64 / n as u64) as u32 + 1,
        _ => rank as u32 + 1,
    }
}

impl Priorities {
    pub fn new(schedule: &ScheduleIn, order: &[usize], levels: Option<u32>) -> Priorities {
        let n = order.len();
        let mut task = vec![0; schedule.tasks.len()];
        let mut first: Vec<&str> = Vec::new();
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for (rank, &i) in order.iter().enumerate() {
            task[i] = band(rank, n, levels);
            let stage = schedule.tasks[i].stage_name();
            let c = counts.entry(stage).or_insert(0);
            if *c == 0 {
                first.push(stage);
            }
            *c += 1;
        }
        let s = first.len();
        let stages = first
            .iter()
            .enumerate()
            .map(|(rank, name)| StagePriority {
                name: name.to_string(),
                priority: band(rank, s, levels),
                tasks: counts[name],
            })
            .collect();
        Priorities { task, stages }
    }

    /// Like [`Priorities::new`], but a band never holds two container sizes: where consecutive
    /// tasks of one band differ in `size`, the band is cut there, so each run of one size gets
    /// its own priority (still monotone in the order; more than `levels` values can result).
    /// Why: before YARN's `allocationRequestId` (YARN-4889), the RM keeps one request table per
    /// priority and cannot tell two sizes at one priority apart (FLINK-19556). A stage's priority
    /// is then its first task's.
    pub fn new_sized(
        schedule: &ScheduleIn,
        order: &[usize],
        levels: Option<u32>,
        size: impl Fn(usize) -> (u64, u64),
    ) -> Priorities {
        let mut p = Priorities::new(schedule, order, levels);
        let mut current = 0u32;
        let mut last: Option<(u32, (u64, u64))> = None;
        for &i in order {
            let here = (p.task[i], size(i));
            if last != Some(here) {
                current += 1;
                last = Some(here);
            }
            p.task[i] = current;
        }
        let mut first: HashMap<&str, u32> = HashMap::new();
        for &i in order {
            first.entry(schedule.tasks[i].stage_name()).or_insert(p.task[i]);
        }
        for s in &mut p.stages {
            s.priority = first[s.name.as_str()];
        }
        p
    }

    pub fn stage(&self, name: &str) -> u32 {
        self.stages.iter().find(|s| s.name == name).map_or(0, |s| s.priority)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_are_monotone_and_use_exactly_min_levels_values() {
        for n in 1..40 {
            for k in 1..45u32 {
                let v: Vec<u32> = (0..n).map(|r| band(r, n, Some(k))).collect();
                assert!(v.windows(2).all(|w| w[0] <= w[1]), "n={n} k={k}: {v:?}");
                let mut d = v.clone();
                d.dedup();
                assert_eq!(d, (1..=(k as usize).min(n) as u32).collect::<Vec<_>>(), "n={n} k={k}");
            }
        }
    }

    #[test]
    fn ten_tasks_in_three_levels() {
        let v: Vec<u32> = (0..10).map(|r| band(r, 10, Some(3))).collect();
        assert_eq!(v, [1, 1, 1, 1, 2, 2, 2, 3, 3, 3]);
        let v: Vec<u32> = (0..4).map(|r| band(r, 4, None)).collect();
        assert_eq!(v, [1, 2, 3, 4]);
    }

    #[test]
    fn sized_bands_cut_where_the_size_changes_and_stay_monotone() {
        let text = r#"{"tasks": [
            {"id": "a[0]", "machine": 0, "start": 0, "end": 1},
            {"id": "b[0]", "machine": 0, "start": 1, "end": 2},
            {"id": "a[1]", "machine": 0, "start": 2, "end": 3},
            {"id": "c[0]", "machine": 0, "start": 3, "end": 4}]}"#;
        let s = ScheduleIn::parse(text).unwrap();
        let order = s.order().unwrap();
        // One band of four; sizes a a-b-a-c differ: b and c small, a big.
        let size = |i: usize| if s.tasks[i].id.starts_with('a') { (2, 2048) } else { (1, 1024) };
        let p = Priorities::new_sized(&s, &order, Some(1), size);
        assert_eq!(p.task, [1, 2, 3, 4]);
        // Bands of two: a[0] and b[0] share band 1 and a size; a[1] opens band 2; c[0] is
        // another size within band 2, so it gets a priority of its own.
        let p =
            Priorities::new_sized(
                &s,
                &order,
                Some(2),
                |i| if s.tasks[i].id.starts_with('c') { (1, 1) } else { (2, 2) },
            );
        assert_eq!(p.task, [1, 1, 2, 3]);
        assert_eq!(
            p.stages.iter().map(|x| (x.name.as_str(), x.priority)).collect::<Vec<_>>(),
            [("a", 1), ("b", 1), ("c", 3)]
        );
    }

    #[test]
    fn stages_ranked_by_their_first_task() {
        let text = r#"{"tasks": [
            {"id": "a[0]", "machine": 0, "start": 0, "end": 1},
            {"id": "a[1]", "machine": 0, "start": 5, "end": 6},
            {"id": "b[0]", "machine": 1, "start": 1, "end": 2},
            {"id": "c[0]", "machine": 1, "start": 0, "end": 3}]}"#;
        let s = ScheduleIn::parse(text).unwrap();
        let order = s.order().unwrap();
        assert_eq!(order, [0, 3, 2, 1]);
        let p = Priorities::new(&s, &order, None);
        assert_eq!(p.task, [1, 4, 3, 2]);
        let names: Vec<(&str, u32, usize)> = p.stages.iter().map(|s| (s.name.as_str(), s.priority, s.tasks)).collect();
        assert_eq!(names, [("a", 1, 2), ("c", 2, 1), ("b", 3, 1)]);
        let p = Priorities::new(&s, &order, Some(2));
        assert_eq!(p.task, [1, 2, 2, 1]);
        assert_eq!(p.stages.iter().map(|s| s.priority).collect::<Vec<_>>(), [1, 1, 2]);
    }
}
