//! The simulator-event side of [`Charge::Accrue`], shared by Graphene and Tetris's fairness
//! gate so that the two keep identical counters when compared at equal fairness.
//!
//! Every arrival, launch and finish first charges the deficits for the time since the last
//! event ([`Accrual::advance`]), then records what changed: the task now accruing or stopped,
//! and the queues with runnable work until the next event (the ones a running task's charge
//! credits).

use super::{Charge, TaskRef};
use crate::fairness::{Accrual, Deficits};
use crate::sim::View;

#[derive(Clone, Debug)]
pub(crate) struct Accruing {
    on: bool,
    acc: Accrual,
}

impl Accruing {
    pub fn new(charge: Charge) -> Accruing {
        Accruing { on: charge == Charge::Accrue, acc: Accrual::new() }
    }

    /// The counters as they stand at `view.now`, on a copy (for a scheduling pass).
    pub fn project(&self, deficits: &mut Deficits, view: &View) {
        if self.on {
            self.acc.project(deficits, view.now);
        }
    }

    /// A job arrived (its queue has runnable work from now on).
    pub fn arrived(&mut self, deficits: &mut Deficits, view: &View) {
        if self.on {
            self.acc.advance(deficits, view.now);
            self.acc.set_active(runnable_groups(view, deficits.len()));
        }
    }

    /// Task `t` of queue `g` started; its unit is `factor` (the fairness mode's).
    pub fn launched(&mut self, deficits: &mut Deficits, view: &View, t: TaskRef, g: usize, factor: f64) {
        if self.on {
            self.acc.advance(deficits, view.now);
            self.acc.start((t.job, t.task), g, Charge::Accrue.rate(factor));
            self.acc.set_active(runnable_groups(view, deficits.len()));
        }
    }

    /// Task `t` finished.
    pub fn finished(&mut self, deficits: &mut Deficits, view: &View, t: TaskRef) {
        if self.on {
            self.acc.advance(deficits, view.now);
            self.acc.stop((t.job, t.task));
            self.acc.set_active(runnable_groups(view, deficits.len()));
        }
    }
}

/// Per queue index below `n`: whether one of its active jobs has a runnable task.
fn runnable_groups(view: &View, n: usize) -> Vec<bool> {
    let mut out = vec![false; n];
    for &job in view.active() {
        let g = view.queue(job) as usize;
        if g < n && view.job_state(job).runnable_count > 0 {
            out[g] = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fairness::FairnessMode;
    use crate::formats::{parse_dags, LoadOptions};
    use crate::model::{ClusterSpec, Job, Workload};
    use crate::online::{Graphene, GrapheneOnline, Tetris, CHARGE_WINDOW_S};
    use crate::sim::{run, SimConfig, SimResult};
    use proptest::prelude::*;

    /// Jobs of one stage each: (queue, arrival, tasks, duration, cpu, mem).
    fn workload(jobs: &[(usize, f64, u32, f64, f64, f64)]) -> Workload {
        let jobs = jobs
            .iter()
            .enumerate()
            .map(|(i, &(q, arrival, tasks, duration, cpu, mem))| {
                let text = format!(
                    r#"{{"name": "j{i}", "resources": ["cpu", "mem"], "stages": [{{"id": "s", "tasks": {tasks},
                    "duration": {duration}, "demands": {{"cpu": {cpu}, "mem": {mem}}}}}]}}"#
                );
                let dag = parse_dags(&text, "test.json", &LoadOptions::default()).unwrap().remove(0);
                Job { name: format!("j{i}"), arrival, queue: format!("q{q}"), dag }
            })
            .collect();
        Workload { jobs }
    }

    /// The oracle: the deficits recomputed from the finished schedule alone. Between any two
    /// consecutive instants at which something arrives, starts or ends, every running task of
    /// queue g charges its DRF share / 60 s per second among the queues that have a task
    /// waiting (arrived, not started) over that interval.
    fn oracle(w: &Workload, r: &SimResult, total: [f64; 2], queues: usize) -> Vec<f64> {
        let names = w.queues();
        let queue = |j: u32| names.iter().position(|q| q == &w.jobs[j as usize].queue).unwrap();
        let mut times: Vec<f64> = w.jobs.iter().map(|j| j.arrival).collect();
        for t in &r.runs {
            times.push(t.start);
            times.push(t.end);
        }
        times.sort_by(f64::total_cmp);
        times.dedup();
        let mut d = Deficits::new(vec![1.0; queues], None, FairnessMode::Drf);
        for win in times.windows(2) {
            let (a, b) = (win[0], win[1]);
            let mid = (a + b) / 2.0;
            let mut active = vec![false; queues];
            let mut rate = vec![0.0; queues];
            for t in &r.runs {
                let job = &w.jobs[t.job as usize];
                if job.arrival <= mid && mid < t.start {
                    active[queue(t.job)] = true;
                }
                if t.start <= mid && mid < t.end {
                    let dem = &job.dag.tasks[t.task as usize].demand.0;
                    rate[queue(t.job)] += (dem[0] / total[0]).max(dem[1] / total[1]) / CHARGE_WINDOW_S;
                }
            }
            for (g, &rt) in rate.iter().enumerate() {
                d.charge_among(g, rt * (b - a), &active);
            }
        }
        d.deficits().to_vec()
    }

    fn cluster(machines: usize) -> crate::model::Cluster {
        let cap = [("cpu".to_string(), 8.0), ("mem".to_string(), 8.0)].into_iter().collect();
        let mut spec = ClusterSpec::uniform(machines, cap);
        spec.overbook = vec![];
        spec.resolve(&["cpu".to_string(), "mem".to_string()]).unwrap()
    }

    /// Hand-checked: one 8-cpu machine; q0's job (one task, the whole machine, 60 s) arrives at
    /// 0, q1's (the same) at 30. Over [30, 60) q0 runs with q1 waiting: q0's deficit falls by
    /// 1/60 x 30 x 1/2 = 0.25 and q1's rises as much. Over [60, 120) q1 runs with nobody
    /// waiting: nothing changes. Graphene and Tetris's gate both end at (-0.25, +0.25).
    #[test]
    fn accrued_deficits_by_hand() {
        let w = workload(&[(0, 0.0, 1, 60.0, 8.0, 1.0), (1, 30.0, 1, 60.0, 8.0, 1.0)]);
        let c = cluster(1);
        let mut g = Graphene::new(GrapheneOnline { charge: Charge::Accrue, bypass_tasks: 0, ..Default::default() });
        run(&w, &c, &mut g, &SimConfig::default()).unwrap();
        let mut t = Tetris::fair(Vec::new(), Some(0.1), FairnessMode::Drf, Charge::Accrue);
        run(&w, &c, &mut t, &SimConfig::default()).unwrap();
        for d in [g.deficits().deficits(), t.deficits().deficits()] {
            assert!((d[0] + 0.25).abs() < 1e-12 && (d[1] - 0.25).abs() < 1e-12, "{d:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// On random two- and three-queue workloads, the counters both schedulers keep under
        /// `Charge::Accrue` equal the oracle's, recomputed from the schedule alone.
        #[test]
        fn accrued_deficits_match_the_schedule(
            jobs in proptest::collection::vec(
                (0usize..3, 0u32..200, 1u32..5, 1u32..90, 1u32..9, 1u32..9), 1..12),
            machines in 1usize..4,
            kappa in prop_oneof![Just(None), Just(Some(0.01)), Just(Some(0.1))],
        ) {
            let mut jobs: Vec<_> = jobs
                .into_iter()
                .map(|(q, a, n, d, cpu, mem)| (q, a as f64 / 2.0, n, d as f64 / 3.0, cpu as f64, mem as f64))
                .collect();
            // The simulator takes jobs in arrival order.
            jobs.sort_by(|a, b| a.1.total_cmp(&b.1));
                        let w = workload(&jobs);
            let queues = w.queues().len();
            let c = cluster(machines);
            let total = [8.0 * machines as f64, 8.0 * machines as f64];
            let shares = vec![1.0; queues];
            let mut g = Graphene::new(GrapheneOnline {
                charge: Charge::Accrue,
                kappa,
                shares: shares.clone(),
                bypass_tasks: 0,
                ..Default::default()
            });
            let r = run(&w, &c, &mut g, &SimConfig::default()).unwrap();
            let want = oracle(&w, &r, total, queues);
            let got = g.deficits().deficits();
            prop_assert!(want.iter().zip(got).all(|(a, b)| (a - b).abs() < 1e-9), "graphene {got:?} oracle {want:?}");
            if kappa.is_some() {
                let mut t = Tetris::fair(shares, kappa, FairnessMode::Drf, Charge::Accrue);
                let r = run(&w, &c, &mut t, &SimConfig::default()).unwrap();
                let want = oracle(&w, &r, total, queues);
                let got = t.deficits().deficits();
                prop_assert!(want.iter().zip(got).all(|(a, b)| (a - b).abs() < 1e-9), "tetris {got:?} oracle {want:?}");
            }
        }
    }
}
