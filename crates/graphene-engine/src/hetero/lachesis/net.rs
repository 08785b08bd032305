//! LACHESIS's network: the graph neural network of section IV-A (node embedding by message
//! passing over the DAG, per-job and global summaries) and the policy network that scores every
//! candidate stage. The GNN, the policy network and their backward pass are
//! [`crate::learn::gnn`]'s, shared with Decima; this module gives them LACHESIS's widths and
//! its edge term.
//!
//! Shapes (F node features, A edge features, D = 8 embedding, H = 16 hidden units; tanh hidden
//! layers, linear outputs):
//! * prep: F -> H -> D lifts x_v to the embedding width, so that eq. 7's "+ x_v" adds vectors of
//!   one size;
//! * node level (eq. 7): e_v = g_n(sum over children u of f_n(e_u)) + h(sum over v's out-edges of
//!   a_vu) + prep(x_v), and e_v = prep(x_v) for a node without open children. The paper writes
//!   g[sum of e_u]; the f inside the sum is the "two-level neural network" of its Figure 2 (and
//!   Decima's form); f_n, g_n: D -> H -> D, h: A -> H -> D;
//! * job level: y_i = g_j(sum over nodes v of job i of f_j([x_v, e_v])); f_j: F + D -> H -> D,
//!   g_j: D -> H -> D;
//! * global level: z = g_g(sum over jobs i of f_g(y_i)); f_g, g_g: D -> H -> D;
//! * policy: q([x_v, e_v, y_i, z]) with hidden layers of 32, 16 and 8 units (section V-A), one
//!   score per candidate, softmax over the candidates (eq. 8).

use super::features::{Obs, A, F};
use crate::learn::gnn::{Gnn, Graph};
pub use crate::learn::gnn::{Pass, D, H};
use crate::learn::{score_grad, softmax};

/// Hidden widths of the policy network (the paper's 32, 16, 8).
pub const POLICY: [usize; 3] = [32, 16, 8];

/// Where each MLP sits in the parameter vector: the GNN with its edge term and the policy
/// network, in [`Gnn::new`]'s order.
#[derive(Clone, Debug)]
pub struct Arch {
    gnn: Gnn,
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
        let gnn = Gnn::new(&mut off, F, Some(A), &POLICY);
        Arch { gnn, len: off }
    }

    /// Glorot-uniform weights and zero biases, from `seed`.
    pub fn init(&self, seed: u64) -> Vec<f64> {
        crate::learn::glorot_init(&self.gnn.mlps(), self.len, seed)
    }
}

/// The observation as the shared encoder reads it; edges carry LACHESIS's edge features.
impl Graph for Obs {
    crate::learn::gnn::graph_accessors!();

    fn children(&self, v: usize) -> impl ExactSizeIterator<Item = usize> + '_ {
        Obs::children(self, v).iter().map(|&(u, _)| u as usize)
    }

    fn add_edge_features(&self, v: usize, sum: &mut [f64]) {
        for (_, au) in Obs::children(self, v) {
            for (x, y) in sum.iter_mut().zip(au) {
                *x += y;
            }
        }
    }
}

/// Embeddings and candidate scores of `obs`.
pub fn forward(arch: &Arch, p: &[f64], obs: &Obs) -> Pass {
    arch.gnn.forward(p, obs)
}

/// The policy-gradient loss of one recorded choice (candidate `act`):
/// -(adv x log pi(act | s) + beta x H(pi(. | s))).
pub fn loss(arch: &Arch, p: &[f64], obs: &Obs, act: usize, adv: f64, beta: f64) -> f64 {
    crate::learn::score_loss(&forward(arch, p, obs).q, act, adv, beta)
}

/// Adds the gradient of [`loss`] to `g`; returns (log pi(act | s), the policy's entropy at s).
pub fn accumulate_grad(
    arch: &Arch,
    p: &[f64],
    obs: &Obs,
    act: usize,
    adv: f64,
    beta: f64,
    g: &mut [f64],
) -> (f64, f64) {
    let pass = forward(arch, p, obs);
    let pr = softmax(&pass.q);
    let dq = score_grad(&pr, act, adv, beta);
    let d = arch.gnn.backward_scores(p, obs, &pass, &dq, g);
    arch.gnn.backward_embed(p, obs, &pass, d, g);
    (pr[act].ln(), crate::learn::entropy(&pr))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two jobs: a diamond 0 -> {1, 2} -> 4 with a second root 3 -> 4, and a chain 0 -> 1;
    /// candidates in both.
    fn obs() -> Obs {
        let x = |k: f64| -> [f64; F] { std::array::from_fn(|i| ((i as f64 + 1.0) * 0.37 * k).sin().abs()) };
        Obs::from_parts(&[
            (
                vec![x(1.0), x(2.0), x(3.0), x(4.0), x(5.0)],
                vec![(0, 1, [0.3]), (0, 2, [0.1]), (1, 4, [0.7]), (2, 4, [0.2]), (3, 4, [0.5])],
                vec![0, 3],
            ),
            (vec![x(6.0), x(7.0)], vec![(0, 1, [0.4])], vec![0]),
        ])
    }

    /// The hand-written gradient of the policy-gradient loss (log-probability of the choice and
    /// the entropy bonus) matches central finite differences on every parameter.
    #[test]
    fn backward_matches_finite_differences() {
        let arch = Arch::new();
        let p = arch.init(3);
        let o = obs();
        for (act, adv, beta) in [(1, 1.7, 0.1), (2, -0.8, 0.0), (0, 0.5, 0.3)] {
            let mut g = vec![0.0; arch.len];
            accumulate_grad(&arch, &p, &o, act, adv, beta, &mut g);
            let worst = crate::learn::finite_difference_error(&p, &g, 1e-6, |pp| loss(&arch, pp, &o, act, adv, beta));
            assert!(worst < 1e-4, "worst relative gradient error {worst}");
            assert!(g.iter().filter(|x| **x != 0.0).count() > arch.len / 2, "most parameters get a gradient");
        }
    }
}
