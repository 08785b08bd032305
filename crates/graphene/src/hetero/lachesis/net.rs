//! LACHESIS's network: the graph neural network of section IV-A (node embedding by message
//! passing over the DAG, per-job and global summaries) and the policy network that scores every
//! candidate stage, forward and hand-written backward (the MLPs, softmax and score gradient come
//! from [`crate::learn`], shared with Decima).
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
use crate::learn::{score_grad, softmax, Mlp};

/// Embedding width.
pub const D: usize = 8;
/// Hidden width of the GNN's MLPs.
pub const H: usize = 16;
/// Hidden widths of the policy network (the paper's 32, 16, 8).
pub const POLICY: [usize; 3] = [32, 16, 8];

/// Where each MLP sits in the parameter vector.
#[derive(Clone, Debug)]
pub struct Arch {
    prep: Mlp,
    f_node: Mlp,
    g_node: Mlp,
    h_edge: Mlp,
    f_job: Mlp,
    g_job: Mlp,
    f_glob: Mlp,
    g_glob: Mlp,
    q: Mlp,
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
        let prep = Mlp::new(&mut off, &[F, H, D]);
        let f_node = Mlp::new(&mut off, &[D, H, D]);
        let g_node = Mlp::new(&mut off, &[D, H, D]);
        let h_edge = Mlp::new(&mut off, &[A, H, D]);
        let f_job = Mlp::new(&mut off, &[F + D, H, D]);
        let g_job = Mlp::new(&mut off, &[D, H, D]);
        let f_glob = Mlp::new(&mut off, &[D, H, D]);
        let g_glob = Mlp::new(&mut off, &[D, H, D]);
        let q = Mlp::new(&mut off, &[F + 3 * D, POLICY[0], POLICY[1], POLICY[2], 1]);
        Arch { prep, f_node, g_node, h_edge, f_job, g_job, f_glob, g_glob, q, len: off }
    }

    fn mlps(&self) -> [&Mlp; 9] {
        [
            &self.prep,
            &self.f_node,
            &self.g_node,
            &self.h_edge,
            &self.f_job,
            &self.g_job,
            &self.f_glob,
            &self.g_glob,
            &self.q,
        ]
    }

    /// Glorot-uniform weights and zero biases, from `seed`.
    pub fn init(&self, seed: u64) -> Vec<f64> {
        crate::learn::glorot_init(&self.mlps(), self.len, seed)
    }
}

fn to_arr(s: &[f64]) -> [f64; D] {
    let mut out = [0.0; D];
    out.copy_from_slice(s);
    out
}

fn add(dst: &mut [f64; D], src: &[f64]) {
    for (x, y) in dst.iter_mut().zip(src) {
        *x += y;
    }
}

/// Everything the forward pass computed for one observation, kept for the backward pass.
pub struct Pass {
    a: Vec<f64>,
    prep_at: Vec<usize>,
    fn_at: Vec<usize>,
    gn_at: Vec<usize>,
    h_at: Vec<usize>,
    fj_at: Vec<usize>,
    gj_at: Vec<usize>,
    fg_at: Vec<usize>,
    gg_at: usize,
    q_at: Vec<usize>,
    /// One score per candidate of the observation.
    pub q: Vec<f64>,
}

/// Embeddings and candidate scores of `obs`.
pub fn forward(arch: &Arch, p: &[f64], obs: &Obs) -> Pass {
    let n = obs.x.len();
    let mut a = Vec::with_capacity(n * 160);
    let prep_at: Vec<usize> = obs.x.iter().map(|x| arch.prep.forward(p, x, &mut a)).collect();
    let mut e = vec![[0.0; D]; n];
    let mut fn_at = vec![usize::MAX; n];
    let mut gn_at = vec![usize::MAX; n];
    let mut h_at = vec![usize::MAX; n];
    // Nodes are in topological order within each job and jobs do not share edges, so a reverse
    // sweep sees every child before its parents.
    for v in (0..n).rev() {
        let kids = obs.children(v);
        let mut ev = to_arr(arch.prep.output(&a, prep_at[v]));
        if !kids.is_empty() {
            let mut s = [0.0; D];
            let mut ea = [0.0; A];
            for &(u, au) in kids {
                add(&mut s, arch.f_node.output(&a, fn_at[u as usize]));
                for (x, y) in ea.iter_mut().zip(au) {
                    *x += y;
                }
            }
            gn_at[v] = arch.g_node.forward(p, &s, &mut a);
            add(&mut ev, arch.g_node.output(&a, gn_at[v]));
            h_at[v] = arch.h_edge.forward(p, &ea, &mut a);
            add(&mut ev, arch.h_edge.output(&a, h_at[v]));
        }
        e[v] = ev;
        if obs.has_parent[v] {
            fn_at[v] = arch.f_node.forward(p, &ev, &mut a);
        }
    }
    let jobs = obs.jobs();
    let mut fj_at = vec![0; n];
    let mut gj_at = Vec::with_capacity(jobs);
    let mut y = Vec::with_capacity(jobs);
    let mut fg_at = Vec::with_capacity(jobs);
    let mut zs = [0.0; D];
    for i in 0..jobs {
        let mut s = [0.0; D];
        for v in obs.nodes_of(i) {
            let mut inp = [0.0; F + D];
            inp[..F].copy_from_slice(&obs.x[v]);
            inp[F..].copy_from_slice(&e[v]);
            fj_at[v] = arch.f_job.forward(p, &inp, &mut a);
            add(&mut s, arch.f_job.output(&a, fj_at[v]));
        }
        let at = arch.g_job.forward(p, &s, &mut a);
        gj_at.push(at);
        let yi = to_arr(arch.g_job.output(&a, at));
        y.push(yi);
        let at = arch.f_glob.forward(p, &yi, &mut a);
        fg_at.push(at);
        add(&mut zs, arch.f_glob.output(&a, at));
    }
    let gg_at = arch.g_glob.forward(p, &zs, &mut a);
    let z = to_arr(arch.g_glob.output(&a, gg_at));
    let mut q_at = Vec::with_capacity(obs.cand.len());
    let mut q = Vec::with_capacity(obs.cand.len());
    for &c in &obs.cand {
        let v = c as usize;
        let mut inp = [0.0; F + 3 * D];
        inp[..F].copy_from_slice(&obs.x[v]);
        inp[F..F + D].copy_from_slice(&e[v]);
        inp[F + D..F + 2 * D].copy_from_slice(&y[obs.job_of[v] as usize]);
        inp[F + 2 * D..].copy_from_slice(&z);
        let at = arch.q.forward(p, &inp, &mut a);
        q.push(arch.q.output(&a, at)[0]);
        q_at.push(at);
    }
    Pass { a, prep_at, fn_at, gn_at, h_at, fj_at, gj_at, fg_at, gg_at, q_at, q }
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
    backward(arch, p, obs, &pass, &dq, g);
    (pr[act].ln(), crate::learn::entropy(&pr))
}

/// Back-propagates the candidate-score gradient `dq` into `g`.
fn backward(arch: &Arch, p: &[f64], obs: &Obs, pass: &Pass, dq: &[f64], g: &mut [f64]) {
    let n = obs.x.len();
    let a = &pass.a;
    let mut de = vec![[0.0; D]; n];
    let mut dy = vec![[0.0; D]; obs.jobs()];
    let mut dz = [0.0; D];
    for (c, &d) in dq.iter().enumerate() {
        if d == 0.0 {
            continue;
        }
        let v = obs.cand[c] as usize;
        let mut din = [0.0; F + 3 * D];
        arch.q.backward(p, a, pass.q_at[c], &[d], g, &mut din);
        add(&mut de[v], &din[F..F + D]);
        add(&mut dy[obs.job_of[v] as usize], &din[F + D..F + 2 * D]);
        add(&mut dz, &din[F + 2 * D..]);
    }
    let mut dsum = [0.0; D];
    arch.g_glob.backward(p, a, pass.gg_at, &dz, g, &mut dsum);
    for i in 0..obs.jobs() {
        let mut din = [0.0; D];
        arch.f_glob.backward(p, a, pass.fg_at[i], &dsum, g, &mut din);
        add(&mut dy[i], &din);
        let mut ds = [0.0; D];
        arch.g_job.backward(p, a, pass.gj_at[i], &dy[i], g, &mut ds);
        for v in obs.nodes_of(i) {
            let mut din = [0.0; F + D];
            arch.f_job.backward(p, a, pass.fj_at[v], &ds, g, &mut din);
            add(&mut de[v], &din[F..]);
        }
    }
    // Parents before children: when node v is reached, every parent has sent its share.
    let mut dfn = vec![[0.0; D]; n];
    for v in 0..n {
        if pass.fn_at[v] != usize::MAX && dfn[v].iter().any(|&x| x != 0.0) {
            let mut din = [0.0; D];
            arch.f_node.backward(p, a, pass.fn_at[v], &dfn[v], g, &mut din);
            add(&mut de[v], &din);
        }
        let dev = de[v];
        let mut sink = [0.0; F];
        arch.prep.backward(p, a, pass.prep_at[v], &dev, g, &mut sink);
        if pass.gn_at[v] != usize::MAX {
            let mut ds = [0.0; D];
            arch.g_node.backward(p, a, pass.gn_at[v], &dev, g, &mut ds);
            let mut sink = [0.0; A];
            arch.h_edge.backward(p, a, pass.h_at[v], &dev, g, &mut sink);
            for &(u, _) in obs.children(v) {
                add(&mut dfn[u as usize], &ds);
            }
        }
    }
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
