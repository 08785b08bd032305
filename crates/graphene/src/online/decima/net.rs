//! Decima's networks: the graph neural network (node, job and global levels) and the two score
//! functions, with a hand-written backward pass.
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
pub use crate::learn::softmax;
use crate::learn::{score_grad, Mlp};

/// Embedding width.
pub const D: usize = 8;
/// Hidden width.
pub const H: usize = 16;
/// Parallelism-limit levels: level k (0-based) lets a job hold (k + 1) / LEVELS of the cluster;
/// the last level is no limit at all.
pub const LEVELS: usize = 20;

/// Where each of the nine MLPs sits in the parameter vector.
#[derive(Clone, Debug)]
pub struct Arch {
    pub(super) prep: Mlp,
    pub(super) f_node: Mlp,
    pub(super) g_node: Mlp,
    pub(super) f_job: Mlp,
    pub(super) g_job: Mlp,
    pub(super) f_glob: Mlp,
    pub(super) g_glob: Mlp,
    pub(super) q: Mlp,
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
        let prep = Mlp::new(&mut off, &[F, H, D]);
        let f_node = Mlp::new(&mut off, &[D, H, D]);
        let g_node = Mlp::new(&mut off, &[D, H, D]);
        let f_job = Mlp::new(&mut off, &[F + D, H, D]);
        let g_job = Mlp::new(&mut off, &[D, H, D]);
        let f_glob = Mlp::new(&mut off, &[D, H, D]);
        let g_glob = Mlp::new(&mut off, &[D, H, D]);
        let q = Mlp::new(&mut off, &[F + 3 * D, 2 * H, H, 1]);
        let w = Mlp::new(&mut off, &[2 * D + J + 1, 2 * H, H, 1]);
        Arch { prep, f_node, g_node, f_job, g_job, f_glob, g_glob, q, w, len: off }
    }

    fn mlps(&self) -> [&Mlp; 9] {
        [&self.prep, &self.f_node, &self.g_node, &self.f_job, &self.g_job, &self.f_glob, &self.g_glob, &self.q, &self.w]
    }

    /// Glorot-uniform weights and zero biases, from `seed`.
    pub fn init(&self, seed: u64) -> Vec<f64> {
        crate::learn::glorot_init(&self.mlps(), self.len, seed)
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

/// Everything the forward pass computed for one observation, kept for the backward pass.
pub struct Pass {
    a: Vec<f64>,
    prep_at: Vec<usize>,
    fn_at: Vec<usize>,
    gn_at: Vec<usize>,
    e: Vec<[f64; D]>,
    fj_at: Vec<usize>,
    gj_at: Vec<usize>,
    y: Vec<[f64; D]>,
    fg_at: Vec<usize>,
    gg_at: usize,
    z: [f64; D],
    q_at: Vec<usize>,
    /// Stage scores, one per candidate of the observation.
    pub q: Vec<f64>,
    w_at: Vec<usize>,
    /// The job whose limits were scored, the levels allowed and their scores.
    pub limit_job: usize,
    pub levels: Vec<usize>,
    pub w: Vec<f64>,
}

pub(super) fn to_arr(s: &[f64]) -> [f64; D] {
    let mut out = [0.0; D];
    out.copy_from_slice(s);
    out
}

/// Embeddings and stage scores of `obs` (limit scores come later, once the stage is chosen).
pub fn forward(arch: &Arch, p: &[f64], obs: &Obs) -> Pass {
    let n = obs.x.len();
    let mut a = Vec::with_capacity(n * 200);
    let prep_at: Vec<usize> = obs.x.iter().map(|x| arch.prep.forward(p, x, &mut a)).collect();
    let mut e = vec![[0.0; D]; n];
    let mut fn_at = vec![usize::MAX; n];
    let mut gn_at = vec![usize::MAX; n];
    // Children have higher indices than their parents (stages are in topological order).
    for v in (0..n).rev() {
        let kids = obs.children(v);
        let mut ev = to_arr(arch.prep.output(&a, prep_at[v]));
        if !kids.is_empty() {
            let mut s = [0.0; D];
            for &u in kids {
                let out = arch.f_node.output(&a, fn_at[u as usize]);
                for (x, y) in s.iter_mut().zip(out) {
                    *x += y;
                }
            }
            gn_at[v] = arch.g_node.forward(p, &s, &mut a);
            for (x, y) in ev.iter_mut().zip(arch.g_node.output(&a, gn_at[v])) {
                *x += y;
            }
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
            for (x, o) in s.iter_mut().zip(arch.f_job.output(&a, fj_at[v])) {
                *x += o;
            }
        }
        let at = arch.g_job.forward(p, &s, &mut a);
        gj_at.push(at);
        let yi = to_arr(arch.g_job.output(&a, at));
        y.push(yi);
        let at = arch.f_glob.forward(p, &yi, &mut a);
        fg_at.push(at);
        for (x, o) in zs.iter_mut().zip(arch.f_glob.output(&a, at)) {
            *x += o;
        }
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
    Pass {
        a,
        prep_at,
        fn_at,
        gn_at,
        e,
        fj_at,
        gj_at,
        y,
        fg_at,
        gg_at,
        z,
        q_at,
        q,
        w_at: Vec::new(),
        limit_job: usize::MAX,
        levels: Vec::new(),
        w: Vec::new(),
    }
}

impl Pass {
    /// A pass that carries only what the policy reads (stage scores, job embeddings, the global
    /// summary) and what [`score_limits`] appends to: from [`super::cache`], which computes
    /// them without keeping the records a backward pass would need.
    pub(super) fn scores_only(a: Vec<f64>, y: Vec<[f64; D]>, z: [f64; D], q: Vec<f64>) -> Pass {
        Pass {
            a,
            prep_at: Vec::new(),
            fn_at: Vec::new(),
            gn_at: Vec::new(),
            e: Vec::new(),
            fj_at: Vec::new(),
            gj_at: Vec::new(),
            y,
            fg_at: Vec::new(),
            gg_at: usize::MAX,
            z,
            q_at: Vec::new(),
            q,
            w_at: Vec::new(),
            limit_job: usize::MAX,
            levels: Vec::new(),
            w: Vec::new(),
        }
    }
}

/// Scores the allowed limit levels of job `i` (index into the observation's jobs).
pub fn score_limits(arch: &Arch, p: &[f64], obs: &Obs, pass: &mut Pass, i: usize) {
    pass.limit_job = i;
    pass.levels = allowed_levels(obs.share[i]);
    pass.w.clear();
    pass.w_at.clear();
    for &k in &pass.levels {
        let mut inp = [0.0; 2 * D + J + 1];
        inp[..D].copy_from_slice(&pass.y[i]);
        inp[D..2 * D].copy_from_slice(&pass.z);
        inp[2 * D..2 * D + J].copy_from_slice(&obs.job_x[i]);
        inp[2 * D + J] = level_input(k);
        let at = arch.w.forward(p, &inp, &mut pass.a);
        pass.w.push(arch.w.output(&pass.a, at)[0]);
        pass.w_at.push(at);
    }
}

/// Loss of one recorded action (stage candidate `a_stage`, position `a_level` among the allowed
/// levels) for policy-gradient step: -(adv x log pi(a | s) + beta x (H(stage) + H(limit))).
pub fn loss(arch: &Arch, p: &[f64], obs: &Obs, a_stage: usize, a_level: usize, adv: f64, beta: f64) -> f64 {
    let mut pass = forward(arch, p, obs);
    let job = obs.job_of[obs.cand[a_stage] as usize] as usize;
    score_limits(arch, p, obs, &mut pass, job);
    crate::learn::score_loss(&pass.q, a_stage, adv, beta) + crate::learn::score_loss(&pass.w, a_level, adv, beta)
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
    let pq = softmax(&pass.q);
    let pw = softmax(&pass.w);
    let logp = pq[a_stage].ln() + pw[a_level].ln();
    let dq = score_grad(&pq, a_stage, adv, beta);
    let dw = score_grad(&pw, a_level, adv, beta);
    backward(arch, p, obs, &pass, &dq, &dw, g);
    logp
}

/// Back-propagates score gradients `dq` (per candidate) and `dw` (per allowed level) into `g`.
fn backward(arch: &Arch, p: &[f64], obs: &Obs, pass: &Pass, dq: &[f64], dw: &[f64], g: &mut [f64]) {
    let n = obs.x.len();
    let a = &pass.a;
    let mut de = vec![[0.0; D]; n];
    let mut dy = vec![[0.0; D]; obs.jobs()];
    let mut dz = [0.0; D];
    let add = |dst: &mut [f64; D], src: &[f64]| {
        for (x, y) in dst.iter_mut().zip(src) {
            *x += y;
        }
    };
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
    for (k, &d) in dw.iter().enumerate() {
        if d == 0.0 {
            continue;
        }
        let mut din = [0.0; 2 * D + J + 1];
        arch.w.backward(p, a, pass.w_at[k], &[d], g, &mut din);
        add(&mut dy[pass.limit_job], &din[..D]);
        add(&mut dz, &din[D..2 * D]);
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
            for &u in obs.children(v) {
                add(&mut dfn[u as usize], &ds);
            }
        }
    }
    let _ = &pass.e;
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
