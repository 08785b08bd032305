//! An index of a job's runnable stages by the demand of their first runnable task, so that a
//! policy can find the next stage (in stage order) whose first task fits a machine's free
//! resources in logarithmic time instead of trying every runnable stage.
//!
//! Every resource is indexed; the caller says what fits by the query vector it passes: the
//! free amount of each resource its fit test reads, +inf for one it does not (a stage-order
//! policy that checks only the hard resources passes +inf for the overbookable ones; Tetris,
//! which checks every resource, passes what is free of each). See `crate::online::FitQuery`.
//!
//! Why: policies that take tasks in stage order (FIFO, DRF, the Capacity Scheduler) stop at the
//! first task of a stage that does not fit and go on to the next stage. On a DAG of thousands
//! of one-task stages nearly all of them are tried, and fail, at every heartbeat of a busy
//! machine: the replay's cost grew with the runnable set instead of with the tasks launched.
//!
//! A segment tree over the DAG's stages: a leaf holds the requested demand of its stage's
//! lowest runnable task, or NaN when the stage has no
//! runnable task (NaN, not +inf: it fits nothing, not even an unbounded free amount, and
//! `f64::min` passes over it); an inner node the componentwise minimum of its leaves. A subtree whose
//! minimum does not fit holds no stage whose first task fits (the fit test is a per-resource
//! comparison, monotone in the demand), so the search for the leftmost fitting leaf prunes it
//! whole. The leaf values are computed exactly as [`super::View::requested`] computes the
//! demand, so the index's answer is the one the linear scan gives.

use crate::model::{ResVec, CAPACITY_EPS, MAX_RESOURCES};

/// Jobs with at most this many runnable stages are scanned, not searched: the search pays only
/// where a heartbeat would try many stages (the root still tells at once whether any fits).
pub const SCAN_AT_MOST: usize = 16;

/// See the module documentation.
pub struct FitIndex {
    /// The indexed resources, in order.
    dims: Vec<usize>,
    /// Leaves (a power of two, at least the stage count).
    width: usize,
    /// `2 * width` nodes of `dims.len()` values each; node 1 is the root, node `width + s` the
    /// leaf of stage `s`.
    min: Vec<f64>,
}

impl FitIndex {
    /// An index of `stages` stages, none runnable, over the resources `dims`.
    pub fn new(stages: usize, dims: Vec<usize>) -> FitIndex {
        let width = stages.max(1).next_power_of_two();
        let min = vec![f64::NAN; 2 * width * dims.len()];
        FitIndex { dims, width, min }
    }

    /// Sets stage `s`'s leaf: the requested demand of its lowest runnable task, or `None` when
    /// it has none.
    pub fn set(&mut self, s: u32, demand: Option<&ResVec>) {
        let k = self.dims.len();
        if k == 0 {
            return;
        }
        let mut node = self.width + s as usize;
        let leaf = &mut self.min[node * k..node * k + k];
        let same = self.dims.iter().zip(leaf.iter()).all(|(&r, &v)| {
            let new = demand.map_or(f64::NAN, |d| d.0[r]);
            new.to_bits() == v.to_bits()
        });
        if same {
            // The next task of a stage usually has its predecessor's demand: no minimum above
            // the leaf can change.
            return;
        }
        for (x, &r) in leaf.iter_mut().zip(&self.dims) {
            *x = demand.map_or(f64::NAN, |d| d.0[r]);
        }
        while node > 1 {
            node /= 2;
            let (l, r) = (2 * node * k, (2 * node + 1) * k);
            let mut moved = false;
            for i in 0..k {
                let m = self.min[l + i].min(self.min[r + i]);
                moved |= m.to_bits() != self.min[node * k + i].to_bits();
                self.min[node * k + i] = m;
            }
            if !moved {
                // Every minimum above is made of the same values as before.
                break;
            }
        }
    }

    /// The lowest stage `>= from` whose leaf fits `free` (every indexed resource within its
    /// free amount, as [`crate::online::fits`] tests a demand; +inf fits anything), if any.
    pub fn next_fitting(&self, from: u32, free: &ResVec) -> Option<u32> {
        if self.dims.is_empty() {
            // No resource: every runnable stage fits; the caller scans them in order.
            return None;
        }
        let from = from as usize;
        if from >= self.width {
            return None;
        }
        self.find(1, 0, self.width, from, &self.limits(free)).map(|s| s as u32)
    }

    /// The root: the componentwise minimum of the runnable stages' leaves (NaN on a resource
    /// when no stage is runnable, or the resource is not indexed).
    pub fn root(&self) -> ResVec {
        let mut v = ResVec::ZERO;
        v.0.iter_mut().for_each(|x| *x = f64::NAN);
        let k = self.dims.len();
        for (i, &r) in self.dims.iter().enumerate() {
            v.0[r] = self.min[k + i];
        }
        v
    }

    /// False when no stage's leaf fits `free` (by the root's componentwise minimum alone, so
    /// with two or more resources it may say true although none fits): a policy passes over a
    /// job at once when it says false.
    pub fn any_fits(&self, free: &ResVec) -> bool {
        self.dims.is_empty() || self.fits(1, free)
    }

    /// Whether `node`'s minimum fits `free`, for a single test: it stops at the first resource
    /// that does not fit (usually the first), where [`FitIndex::limits`] would compute them all.
    fn fits(&self, node: usize, free: &ResVec) -> bool {
        let k = self.dims.len();
        let vals = &self.min[node * k..node * k + k];
        self.dims.iter().zip(vals).all(|(&r, &d)| d <= limit(free, r))
    }

    /// The largest demand that fits `free` on each indexed resource (in `dims` order), computed
    /// once per query instead of at every node a walk enters.
    fn limits(&self, free: &ResVec) -> [f64; MAX_RESOURCES] {
        let mut lim = [0.0; MAX_RESOURCES];
        for (l, &r) in lim.iter_mut().zip(&self.dims) {
            *l = limit(free, r);
        }
        lim
    }

    /// Whether `node`'s minimum is within `lim` ([`FitIndex::limits`]) on every indexed resource.
    fn within(&self, node: usize, lim: &[f64; MAX_RESOURCES]) -> bool {
        let k = self.dims.len();
        self.min[node * k..node * k + k].iter().zip(lim).all(|(&d, &l)| d <= l)
    }

    /// The leftmost leaf `>= from` under `node` (covering `lo..hi`) that fits.
    fn find(&self, node: usize, lo: usize, hi: usize, from: usize, lim: &[f64; MAX_RESOURCES]) -> Option<usize> {
        if hi <= from || !self.within(node, lim) {
            return None;
        }
        if hi - lo == 1 {
            return Some(lo);
        }
        let mid = (lo + hi) / 2;
        self.find(2 * node, lo, mid, from, lim).or_else(|| self.find(2 * node + 1, mid, hi, from, lim))
    }

    /// Appends to `out`, in stage order, every stage whose leaf fits `free`: one walk of the
    /// tree that enters only subtrees whose minimum fits, so a policy that wants every fitting
    /// stage pays for them once instead of one search from the root each.
    pub fn all_fitting(&self, free: &ResVec, out: &mut Vec<u32>) {
        if self.dims.is_empty() {
            return;
        }
        // An explicit stack (right child pushed first, so leaves come out in order): at most
        // one pending right sibling per level, so 64 entries hold any tree.
        let lim = self.limits(free);
        let mut stack = [0usize; 65];
        stack[0] = 1;
        let mut len = 1;
        while len > 0 {
            len -= 1;
            let node = stack[len];
            if !self.within(node, &lim) {
                continue;
            }
            if node >= self.width {
                out.push((node - self.width) as u32);
            } else {
                stack[len] = 2 * node + 1;
                stack[len + 1] = 2 * node;
                len += 2;
            }
        }
    }

    /// True when the index has resources to search by (else every stage "fits").
    pub fn is_useful(&self) -> bool {
        !self.dims.is_empty()
    }
}

/// The largest demand on resource `r` that fits `free` (the fit test's tolerance included).
fn limit(free: &ResVec, r: usize) -> f64 {
    free.0[r] * (1.0 + CAPACITY_EPS) + CAPACITY_EPS
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn fits(d: &ResVec, free: &ResVec, dims: &[usize]) -> bool {
        dims.iter().all(|&r| d.0[r] <= free.0[r] * (1.0 + CAPACITY_EPS) + CAPACITY_EPS)
    }

    /// Against a linear scan, on random leaves, updates and free vectors.
    #[test]
    fn next_fitting_is_the_first_fitting_stage_of_a_scan() {
        for seed in 0..200u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let n = rng.gen_range(1..70usize);
            let dims = match seed % 3 {
                0 => vec![0, 2],
                1 => vec![1],
                _ => vec![0, 1, 2],
            };
            let mut idx = FitIndex::new(n, dims.clone());
            let mut leaves: Vec<Option<ResVec>> = vec![None; n];
            for _ in 0..200 {
                let s = rng.gen_range(0..n);
                let v = (rng.gen_range(0..4) > 0).then(|| {
                    ResVec::from_slice(&[rng.gen_range(0.0..8.0), rng.gen_range(0.0..8.0), rng.gen_range(0.0..8.0)])
                });
                idx.set(s as u32, v.as_ref());
                leaves[s] = v;
                let free =
                    ResVec::from_slice(&[rng.gen_range(0.0..9.0), rng.gen_range(0.0..9.0), rng.gen_range(0.0..9.0)]);
                let from = rng.gen_range(0..n + 2);
                let want =
                    (from..n).find(|&i| leaves[i].as_ref().is_some_and(|d| fits(d, &free, &dims))).map(|i| i as u32);
                assert_eq!(idx.next_fitting(from as u32, &free), want, "seed {seed}");
                let any = leaves.iter().any(|l| l.as_ref().is_some_and(|d| fits(d, &free, &dims)));
                assert!(idx.any_fits(&free) || !any, "seed {seed}: a stage fits, the root says none");
                if dims.len() == 1 {
                    assert_eq!(idx.any_fits(&free), any, "seed {seed}");
                }
                let mut all = Vec::new();
                idx.all_fitting(&free, &mut all);
                let want: Vec<u32> = (0..n)
                    .filter(|&i| leaves[i].as_ref().is_some_and(|d| fits(d, &free, &dims)))
                    .map(|i| i as u32)
                    .collect();
                assert_eq!(all, want, "seed {seed}: every fitting stage, in order");
            }
        }
    }
}
