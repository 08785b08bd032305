//! The largest value over a job's runnable stages, kept as stages open and close, so that a
//! policy that needs "the best next task of this job" (Graphene's frontier: the highest
//! priScore among the tasks the job would launch next) reads it in constant time instead of
//! sweeping every runnable stage at every heartbeat.
//!
//! A segment tree of maxima over the DAG's stages: a leaf holds the value of its stage's lowest
//! runnable task, or -inf when the stage has none. Maxima are exact whatever the grouping, so
//! the root equals the sweep's running maximum bit for bit.

/// See the module documentation.
pub(crate) struct HeadMax {
    /// Leaves (a power of two, at least the stage count).
    width: usize,
    /// `2 * width` nodes; node 1 is the root, node `width + s` the leaf of stage `s`.
    max: Vec<f64>,
}

impl HeadMax {
    /// A tree of `stages` stages, none runnable.
    pub(crate) fn new(stages: usize) -> HeadMax {
        let width = stages.max(1).next_power_of_two();
        HeadMax { width, max: vec![f64::NEG_INFINITY; 2 * width] }
    }

    /// Sets stage `s`'s value (`None`: no runnable task).
    pub(crate) fn set(&mut self, s: u32, value: Option<f64>) {
        let mut node = self.width + s as usize;
        if node >= self.max.len() {
            return;
        }
        self.max[node] = value.unwrap_or(f64::NEG_INFINITY);
        while node > 1 {
            node /= 2;
            self.max[node] = self.max[2 * node].max(self.max[2 * node + 1]);
        }
    }

    /// The largest value of all stages (-inf when none is runnable).
    pub(crate) fn max(&self) -> f64 {
        self.max[1]
    }

    /// The largest value over the stages not in `skip` (ascending, distinct).
    pub(crate) fn max_excluding(&self, skip: &[u32]) -> f64 {
        let mut best = f64::NEG_INFINITY;
        let mut lo = 0usize;
        for &s in skip.iter().chain(std::iter::once(&(self.width as u32))) {
            let s = (s as usize).min(self.width);
            if lo < s {
                best = best.max(self.range_max(lo, s));
            }
            lo = s + 1;
        }
        best
    }

    /// The largest value over stages `lo..hi`.
    fn range_max(&self, lo: usize, hi: usize) -> f64 {
        let (mut l, mut r) = (lo + self.width, hi + self.width);
        let mut best = f64::NEG_INFINITY;
        while l < r {
            if l & 1 == 1 {
                best = best.max(self.max[l]);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                best = best.max(self.max[r]);
            }
            l /= 2;
            r /= 2;
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Against a sweep of the leaves, on random updates and exclusion sets.
    #[test]
    fn maxima_are_the_sweeps() {
        for seed in 0..100u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let n = rng.gen_range(1..90usize);
            let mut t = HeadMax::new(n);
            let mut leaves: Vec<Option<f64>> = vec![None; n];
            for _ in 0..100 {
                let s = rng.gen_range(0..n);
                let v = rng.gen_bool(0.7).then(|| rng.gen_range(-5.0..5.0));
                t.set(s as u32, v);
                leaves[s] = v;
                let sweep = |keep: &dyn Fn(usize) -> bool| {
                    (0..n).filter(|&i| keep(i)).filter_map(|i| leaves[i]).fold(f64::NEG_INFINITY, f64::max)
                };
                assert_eq!(t.max(), sweep(&|_| true), "seed {seed}");
                let mut skip: Vec<u32> = (0..n as u32).filter(|_| rng.gen_bool(0.2)).collect();
                skip.dedup();
                assert_eq!(t.max_excluding(&skip), sweep(&|i| !skip.contains(&(i as u32))), "seed {seed}");
            }
        }
    }
}
