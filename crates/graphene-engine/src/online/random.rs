//! `random`: a uniformly random runnable task that fits, repeatedly, until nothing fits; the
//! lower anchor of the comparisons. The generator is seeded once (`OnlineSettings::seed`) and
//! advances across heartbeats, so a replay is deterministic for a seed while different seeds
//! make different choices.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{fits, Policy, TaskRef};
use crate::model::ResVec;
use crate::sim::View;

pub struct RandomPolicy {
    rng: ChaCha8Rng,
    pool: Vec<TaskRef>,
}

impl RandomPolicy {
    pub fn new(seed: u64) -> RandomPolicy {
        RandomPolicy { rng: ChaCha8Rng::seed_from_u64(seed), pool: Vec::new() }
    }
}

impl Policy for RandomPolicy {
    fn name(&self) -> String {
        "random".into()
    }

    /// Gathers every runnable task once (in job, stage, id order, so the draw depends only on
    /// the seed and the state), then draws from the pool; a drawn task leaves the pool whether
    /// it fits or not, as what is left of `free` only shrinks within a heartbeat.
    fn assign(&mut self, view: &View, _machine: usize, free: &ResVec, out: &mut Vec<TaskRef>) {
        let mut pool = std::mem::take(&mut self.pool);
        pool.clear();
        for &job in view.active() {
            let st = view.job_state(job);
            for &s in &st.runnable_stages {
                pool.extend(st.runnable_in(s).iter().rev().map(|&task| TaskRef { job, task }));
            }
        }
        let mut left = *free;
        while !pool.is_empty() {
            let i = self.rng.gen_range(0..pool.len());
            let t = pool.swap_remove(i);
            let d = view.requested(t.job, t.task);
            if fits(view, &d, &left) {
                left.sub_assign(&d);
                out.push(t);
            }
        }
        self.pool = pool;
    }
}
