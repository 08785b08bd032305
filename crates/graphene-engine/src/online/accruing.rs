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
            self.acc.set_active(super::queues_with_runnable_work(view, deficits.len()));
        }
    }

    /// Task `t` of queue `g` started; its unit is `factor` (the fairness mode's).
    pub fn launched(&mut self, deficits: &mut Deficits, view: &View, t: TaskRef, g: usize, factor: f64) {
        if self.on {
            self.acc.advance(deficits, view.now);
            let (rate, delay) = Charge::Accrue.rate(factor, view.estimated_duration(t.job, t.task));
            self.acc.start((t.job, t.task), g, rate, view.now, delay);
            self.acc.set_active(super::queues_with_runnable_work(view, deficits.len()));
        }
    }

    /// Task `t` finished.
    pub fn finished(&mut self, deficits: &mut Deficits, view: &View, t: TaskRef) {
        if self.on {
            self.acc.advance(deficits, view.now);
            self.acc.stop((t.job, t.task));
            self.acc.set_active(super::queues_with_runnable_work(view, deficits.len()));
        }
    }
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

    /// Jobs of one stage each, every task the whole 8-cpu machine: (queue, arrival, tasks,
    /// duration, mem).
    fn workload(jobs: &[(usize, f64, u32, f64, f64)]) -> Workload {
        let jobs = jobs
            .iter()
            .enumerate()
            .map(|(i, &(q, arrival, tasks, duration, mem))| {
                let text = format!(
                    r#"{{"name": "j{i}", "resources": ["cpu", "mem"], "stages": [{{"id": "s", "tasks": {tasks},
                    "duration": {duration}, "demands": {{"cpu": 8, "mem": {mem}}}}}]}}"#
                );
                let dag = parse_dags(&text, "test.json", &LoadOptions::default()).unwrap().remove(0);
                Job { name: format!("j{i}"), arrival, queue: format!("q{q}"), dag }
            })
            .collect();
        Workload { jobs }
    }

    /// One machine of 8 cpus and 8 mem.
    fn cluster() -> crate::model::Cluster {
        let cap = [("cpu".to_string(), 8.0), ("mem".to_string(), 8.0)].into_iter().collect();
        let mut spec = ClusterSpec::uniform(1, cap);
        spec.overbook = vec![];
        spec.resolve(&["cpu".to_string(), "mem".to_string()]).unwrap()
    }

    /// The oracle: the deficits recomputed from the finished schedule alone. Every task takes
    /// the whole (single) machine, so its DRF unit is 1 and, when it is chosen, the queues
    /// contending for the machine are exactly those with a task waiting (arrived, not yet
    /// started) at that instant, its own included. A launch charges min(duration, 60 s) / 60
    /// among them; from then until the task ends it charges 1/60 per second among the queues
    /// with a task waiting over each interval between consecutive instants at which anything
    /// arrives, starts, ends or starts accruing. Charges add up whatever their order.
    fn oracle(w: &Workload, r: &SimResult) -> Vec<f64> {
        let names = w.queues();
        let queue = |j: u32| names.iter().position(|q| q == &w.jobs[j as usize].queue).unwrap();
        let waiting = |t0: f64, t1: f64| {
            let mut active = vec![false; names.len()];
            for t in &r.runs {
                if w.jobs[t.job as usize].arrival <= t0 && t1 <= t.start {
                    active[queue(t.job)] = true;
                }
            }
            active
        };
        let mut d = Deficits::new(vec![1.0; names.len()], None, FairnessMode::Drf);
        let mut times: Vec<f64> = w.jobs.iter().map(|j| j.arrival).collect();
        for t in &r.runs {
            let first = (t.end - t.start).min(CHARGE_WINDOW_S);
            d.charge_among(queue(t.job), first / CHARGE_WINDOW_S, &waiting(t.start, t.start));
            times.extend([t.start, t.start + first, t.end]);
        }
        times.sort_by(f64::total_cmp);
        times.dedup();
        for win in times.windows(2) {
            let (a, b) = (win[0], win[1]);
            let active = waiting(a, b);
            let mut amount = vec![0.0; names.len()];
            for t in &r.runs {
                if t.start + (t.end - t.start).min(CHARGE_WINDOW_S) <= a && b <= t.end {
                    amount[queue(t.job)] += (b - a) / CHARGE_WINDOW_S;
                }
            }
            for (g, &x) in amount.iter().enumerate() {
                d.charge_among(g, x, &active);
            }
        }
        d.deficits().to_vec()
    }

    /// Hand-checked: q0's job (one task, the whole machine, 120 s) arrives at 0, q1's (the
    /// same) at 30. q0 launches alone (its first minute charges nobody else), then accrues over
    /// [60, 120) with q1 waiting: 1/60 x 60 = 1 split by the equal shares, so q0 -0.5, q1 +0.5.
    /// q1 then launches and accrues with nobody waiting: no change. Graphene and Tetris's gate
    /// both end at (-0.5, +0.5); under `Charge::Time` q0's launch charged nobody else either,
    /// so both queues would end at 0.
    #[test]
    fn accrued_deficits_by_hand() {
        let w = workload(&[(0, 0.0, 1, 120.0, 1.0), (1, 30.0, 1, 120.0, 1.0)]);
        let c = cluster();
        let mut g = Graphene::new(GrapheneOnline { charge: Charge::Accrue, bypass_tasks: 0, ..Default::default() });
        run(&w, &c, &mut g, &SimConfig::default()).unwrap();
        let mut t = Tetris::fair(Vec::new(), Some(0.1), FairnessMode::Drf, Charge::Accrue);
        run(&w, &c, &mut t, &SimConfig::default()).unwrap();
        for d in [g.deficits().deficits(), t.deficits().deficits()] {
            assert!((d[0] + 0.5).abs() < 1e-12 && (d[1] - 0.5).abs() < 1e-12, "{d:?}");
        }
        let mut g = Graphene::new(GrapheneOnline { charge: Charge::Time, bypass_tasks: 0, ..Default::default() });
        run(&w, &c, &mut g, &SimConfig::default()).unwrap();
        assert!(g.deficits().deficits().iter().all(|d| d.abs() < 1e-12), "{:?}", g.deficits().deficits());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// On random workloads of up to three queues, the counters both schedulers keep under
        /// `Charge::Accrue` equal the oracle's, recomputed from the schedule alone.
        #[test]
        fn accrued_deficits_match_the_schedule(
            jobs in proptest::collection::vec((0usize..3, 0u32..400, 1u32..4, 1u32..600, 1u32..9), 1..10),
            kappa in prop_oneof![Just(None), Just(Some(0.05)), Just(Some(1.0))],
        ) {
            // Arrivals off the heartbeat grid, so that no arrival ties with a launch.
            let mut jobs: Vec<_> = jobs
                .into_iter()
                .map(|(q, a, n, d, mem)| (q, a as f64 / 2.0 + 0.1234, n, d as f64 / 3.0, mem as f64))
                .collect();
            // The simulator takes jobs in arrival order.
            jobs.sort_by(|a, b| a.1.total_cmp(&b.1));
            let w = workload(&jobs);
            let shares = vec![1.0; w.queues().len()];
            let c = cluster();
            let mut g = Graphene::new(GrapheneOnline {
                charge: Charge::Accrue,
                kappa,
                shares: shares.clone(),
                bypass_tasks: 0,
                ..Default::default()
            });
            let r = run(&w, &c, &mut g, &SimConfig::default()).unwrap();
            let want = oracle(&w, &r);
            let got = g.deficits().deficits();
            prop_assert!(want.iter().zip(got).all(|(a, b)| (a - b).abs() < 1e-9), "graphene {got:?} oracle {want:?}");
            if kappa.is_some() {
                let mut t = Tetris::fair(shares, kappa, FairnessMode::Drf, Charge::Accrue);
                let r = run(&w, &c, &mut t, &SimConfig::default()).unwrap();
                let want = oracle(&w, &r);
                let got = t.deficits().deficits();
                prop_assert!(want.iter().zip(got).all(|(a, b)| (a - b).abs() < 1e-9), "tetris {got:?} oracle {want:?}");
            }
        }
    }
}
