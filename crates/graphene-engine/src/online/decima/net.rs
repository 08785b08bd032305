//! Decima's networks: the graph neural network (node, job and global levels) and the two score
//! functions, with a hand-written backward pass. The GNN, the stage score and their backward
//! pass are [`crate::learn::gnn`]'s, shared with LACHESIS; the limit score is Decima's own.
//!
//! Why by hand rather than an autodiff crate: the whole model is nine small MLPs (about 4,900
//! parameters) applied along a DAG, so the backward pass is one reverse sweep over the same
//! records the forward pass keeps, about 150 lines. An autodiff crate (burn, candle, dfdx) would
//! add minutes of compile time and hundreds of dependencies for that, and a tape allocated per
//! node would be slower than these flat buffers. The finite-difference test in `tests` checks
//! every parameter's gradient.
//!
//! Shapes (F node features, J job features, D = 8 embedding, H = 16 hidden units; every MLP has
//! tanh hidden layers and a linear output):
//! * prep: F -> H -> D lifts x_v into the embedding space (decima-sim does the same, so that the
//!   paper's "+ x_v" adds vectors of one size);
//! * node level: e_v = g_n(sum over children u of f_n(e_u)) + prep(x_v), and e_v = prep(x_v) for
//!   a node without (unfinished) children; f_n, g_n: D -> H -> D;
//! * job level: y_i = g_j(sum over v in job i of f_j([x_v, e_v])); f_j: F + D -> H -> D,
//!   g_j: D -> H -> D;
//! * global level: z = g_g(sum over jobs i of f_g(y_i)); f_g, g_g: D -> H -> D;
//! * stage score q([x_v, e_v, y_i, z]): F + 3D -> 2H -> H -> 1;
//! * limit score w([y_i, z, job features, l]): 2D + J + 1 -> 2H -> H -> 1, one function for
//!   every limit level l, as the paper insists.
//!
//! tanh instead of decima-sim's leaky ReLU: smooth everywhere, so the gradient check never sits
//! on a kink; with features scaled to about [0, 1] it does not saturate.

use super::features::{Obs, F, J};
use crate::learn::gnn::{add, Gnn, Graph};
pub use crate::learn::gnn::{to_arr, D, H};
pub use crate::learn::softmax;
use crate::learn::{score_grad, Mlp};

/// Parallelism-limit levels: level k (0-based) lets a job hold (k + 1) / LEVELS of the cluster;
/// the last level is no limit at all.
pub const LEVELS: usize = 20;

/// Where each of the nine MLPs sits in the parameter vector: the GNN and stage score (in
/// [`Gnn::new`]'s order), then the limit score.
#[derive(Clone, Debug)]
pub struct Arch {
    pub(super) gnn: Gnn,
    pub(super) w: Mlp,
    /// Total parameter count.
    pub len: usize,
}

impl Default for Arch {
    fn default() -> Self {
        Arch::new()
    }
}

impl Arch {
    pub fn new() -> Arch {
        let mut off = 0;
        let gnn = Gnn::new(&mut off, F, None, &[2 * H, H]);
        let w = Mlp::new(&mut off, &[2 * D + J + 1, 2 * H, H, 1]);
        Arch { gnn, w, len: off }
    }

    fn mlps(&self) -> Vec<&Mlp> {
        let mut m = self.gnn.mlps();
        m.push(&self.w);
        m
    }

    /// Glorot-uniform weights and zero biases, from `seed`.
    pub fn init(&self, seed: u64) -> Vec<f64> {
        crate::learn::glorot_init(&self.mlps(), self.len, seed)
    }
}

/// The observation as the shared encoder reads it (no edge features).
impl Graph for Obs {
    crate::learn::gnn::graph_accessors!();

    fn children(&self, v: usize) -> impl ExactSizeIterator<Item = usize> + '_ {
        Obs::children(self, v).iter().map(|&u| u as usize)
    }
}

/// The value of limit level `k` as a share of the cluster (the last is unlimited).
pub fn level_value(k: usize) -> f64 {
    if k + 1 >= LEVELS {
        f64::INFINITY
    } else {
        (k + 1) as f64 / LEVELS as f64
    }
}

/// Levels a job holding `share` of the cluster may be given: those above its share (the paper's
/// rule that makes every action launch a task), and always the unlimited one.
pub fn allowed_levels(share: f64) -> Vec<usize> {
    (0..LEVELS).filter(|&k| level_value(k) > share).collect()
}

/// The limit score's input for level k: its share, and 1 for the unlimited level.
fn level_input(k: usize) -> f64 {
    (k + 1) as f64 / LEVELS as f64
}

/// Everything the forward pass computed for one observation, kept for the backward pass: the
/// encoder's records and stage scores, and the limit scores of one job.
pub struct Pass {
    pub gnn: crate::learn::gnn::Pass,
    w_at: Vec<usize>,
    /// The job whose limits were scored, the levels allowed and their scores.
    pub limit_job: usize,
    pub levels: Vec<usize>,
    pub w: Vec<f64>,
}

impl Pass {
    /// A pass of the encoder's, before any limit is scored.
    pub(super) fn new(gnn: crate::learn::gnn::Pass) -> Pass {
        Pass { gnn, w_at: Vec::new(), limit_job: usize::MAX, levels: Vec::new(), w: Vec::new() }
    }
}

/// Embeddings and stage scores of `obs` (limit scores come later, once the stage is chosen).
pub fn forward(arch: &Arch, p: &[f64], obs: &Obs) -> Pass {
    Pass::new(arch.gnn.forward(p, obs))
}

/// Scores the allowed limit levels of job `i` (index into the observation's jobs).
pub fn score_limits(arch: &Arch, p: &[f64], obs: &Obs, pass: &mut Pass, i: usize) {
    pass.limit_job = i;
    pass.levels = allowed_levels(obs.share[i]);
    pass.w.clear();
    pass.w_at.clear();
    for &k in &pass.levels {
        let mut inp = [0.0; 2 * D + J + 1];
        inp[..D].copy_from_slice(&pass.gnn.y[i]);
        inp[D..2 * D].copy_from_slice(&pass.gnn.z);
        inp[2 * D..2 * D + J].copy_from_slice(&obs.job_x[i]);
        inp[2 * D + J] = level_input(k);
        let at = arch.w.forward(p, &inp, &mut pass.gnn.a);
        pass.w.push(arch.w.output(&pass.gnn.a, at)[0]);
        pass.w_at.push(at);
    }
}

/// Loss of one recorded action (stage candidate `a_stage`, position `a_level` among the allowed
/// levels) for policy-gradient step: -(adv x log pi(a | s) + beta x (H(stage) + H(limit))).
pub fn loss(arch: &Arch, p: &[f64], obs: &Obs, a_stage: usize, a_level: usize, adv: f64, beta: f64) -> f64 {
    let mut pass = forward(arch, p, obs);
    let job = obs.job_of[obs.cand[a_stage] as usize] as usize;
    score_limits(arch, p, obs, &mut pass, job);
    crate::learn::score_loss(&pass.gnn.q, a_stage, adv, beta) + crate::learn::score_loss(&pass.w, a_level, adv, beta)
}

/// Adds the gradient of [`loss`] to `g`; returns log pi(a | s).
#[allow(clippy::too_many_arguments)]
pub fn accumulate_grad(
    arch: &Arch,
    p: &[f64],
    obs: &Obs,
    a_stage: usize,
    a_level: usize,
    adv: f64,
    beta: f64,
    g: &mut [f64],
) -> f64 {
    let mut pass = forward(arch, p, obs);
    let job = obs.job_of[obs.cand[a_stage] as usize] as usize;
    score_limits(arch, p, obs, &mut pass, job);
    let pq = softmax(&pass.gnn.q);
    let pw = softmax(&pass.w);
    let logp = pq[a_stage].ln() + pw[a_level].ln();
    let dq = score_grad(&pq, a_stage, adv, beta);
    let dw = score_grad(&pw, a_level, adv, beta);
    backward(arch, p, obs, &pass, &dq, &dw, g);
    logp
}

/// Back-propagates score gradients `dq` (per candidate) and `dw` (per allowed level) into `g`:
/// the stage score's share first, then the limit score's, then the encoder's levels.
fn backward(arch: &Arch, p: &[f64], obs: &Obs, pass: &Pass, dq: &[f64], dw: &[f64], g: &mut [f64]) {
    let mut d = arch.gnn.backward_scores(p, obs, &pass.gnn, dq, g);
    for (k, &dk) in dw.iter().enumerate() {
        if dk == 0.0 {
            continue;
        }
        let mut din = [0.0; 2 * D + J + 1];
        arch.w.backward(p, &pass.gnn.a, pass.w_at[k], &[dk], g, &mut din);
        add(&mut d.dy[pass.limit_job], &din[..D]);
        add(&mut d.dz, &din[D..2 * D]);
    }
    arch.gnn.backward_embed(p, obs, &pass.gnn, d, g);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two jobs: a diamond 0 -> {1, 2} -> 4 with a second root 3 -> 4, and a chain 0 -> 1;
    /// candidates in both; job 0 holds 12% of the cluster.
    fn obs() -> Obs {
        let x = |k: f64| -> [f64; F] { std::array::from_fn(|i| ((i as f64 + 1.0) * 0.37 * k).sin().abs()) };
        Obs::from_parts(&[
            (
                vec![x(1.0), x(2.0), x(3.0), x(4.0), x(5.0)],
                vec![(0, 1), (0, 2), (1, 4), (2, 4), (3, 4)],
                vec![0, 3],
                [0.12, 0.5],
                0.12,
            ),
            (vec![x(6.0), x(7.0)], vec![(0, 1)], vec![0], [0.3, 0.2], 0.3),
        ])
    }

    /// The hand-written gradient of the policy-gradient loss (log-probabilities of both
    /// choices and the entropy bonus) matches central finite differences on every parameter.
    #[test]
    fn backward_matches_finite_differences() {
        let arch = Arch::new();
        let p = arch.init(3);
        let o = obs();
        for (stage, level, adv, beta) in [(1, 3, 1.7, 0.1), (2, 0, -0.8, 0.0)] {
            let mut g = vec![0.0; arch.len];
            accumulate_grad(&arch, &p, &o, stage, level, adv, beta, &mut g);
            let worst =
                crate::learn::finite_difference_error(&p, &g, 1e-6, |pp| loss(&arch, pp, &o, stage, level, adv, beta));
            assert!(worst < 1e-4, "worst relative gradient error {worst}");
            assert!(g.iter().filter(|x| **x != 0.0).count() > arch.len / 2, "most parameters get a gradient");
        }
    }
}
