//! Building blocks shared by the learned schedulers (Decima in `online::decima`, LACHESIS in
//! `hetero::lachesis`): small tanh MLPs living in one flat parameter vector with a hand-written
//! backward pass, the graph neural network both embed their observations with ([`gnn`]),
//! softmax and the policy-gradient score gradient, Adam, seed mixing, the weights file
//! conventions and a finite-difference gradient check.
//!
//! Why by hand rather than an autodiff crate: both models are a handful of small MLPs (a few
//! thousand parameters) applied along a DAG, so the backward pass is one reverse sweep over the
//! records the forward pass keeps. An autodiff crate would add minutes of compile time and
//! hundreds of dependencies for that, and a tape per node would be slower than flat buffers.
//! Every model's tests compare its gradient with [`finite_difference_error`].

pub mod file;
pub mod gnn;
mod mlp;
pub mod reinforce;

pub use mlp::{glorot_init, Mlp};

/// Softmax of `s` (max-shifted).
pub fn softmax(s: &[f64]) -> Vec<f64> {
    let m = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let ex: Vec<f64> = s.iter().map(|x| (x - m).exp()).collect();
    let sum: f64 = ex.iter().sum();
    ex.into_iter().map(|x| x / sum).collect()
}

/// Entropy of a distribution (0 ln 0 = 0).
pub fn entropy(p: &[f64]) -> f64 {
    -p.iter().filter(|&&x| x > 0.0).map(|x| x * x.ln()).sum::<f64>()
}

/// Gradient, with respect to the scores behind the softmax `p`, of the policy-gradient loss
/// -(adv x log p[a] + beta x entropy(p)).
pub fn score_grad(p: &[f64], a: usize, adv: f64, beta: f64) -> Vec<f64> {
    let ent = entropy(p);
    p.iter()
        .enumerate()
        .map(|(c, &pc)| {
            let logp = if pc > 0.0 { pc.ln() } else { 0.0 };
            -adv * (f64::from(c == a) - pc) + beta * pc * (logp + ent)
        })
        .collect()
}

/// The loss whose gradient [`score_grad`] is: -(adv x log p[a] + beta x entropy(p)), p the
/// softmax of `scores`.
pub fn score_loss(scores: &[f64], a: usize, adv: f64, beta: f64) -> f64 {
    let p = softmax(scores);
    -(adv * p[a].ln() + beta * entropy(&p))
}

/// Index of the highest score; ties go to the first (deterministic greedy inference).
pub fn argmax(scores: &[f64]) -> usize {
    let mut best = 0;
    for i in 1..scores.len() {
        if scores[i] > scores[best] {
            best = i;
        }
    }
    best
}

/// Samples an index from the softmax of `scores` with the uniform draw `u` in [0, 1).
pub fn sample(scores: &[f64], u: f64) -> usize {
    let p = softmax(scores);
    let mut acc = 0.0;
    for (i, pi) in p.iter().enumerate() {
        acc += pi;
        if u < acc {
            return i;
        }
    }
    p.len() - 1
}

/// Adam (Kingma and Ba) with the usual constants.
pub struct Adam {
    m: Vec<f64>,
    v: Vec<f64>,
    t: i32,
}

impl Adam {
    pub fn new(len: usize) -> Adam {
        Adam { m: vec![0.0; len], v: vec![0.0; len], t: 0 }
    }

    /// One descent step on `p` along the gradient `g`.
    pub fn step(&mut self, p: &mut [f64], g: &[f64], lr: f64) {
        const B1: f64 = 0.9;
        const B2: f64 = 0.999;
        const EPS: f64 = 1e-8;
        self.t += 1;
        let (c1, c2) = (1.0 - B1.powi(self.t), 1.0 - B2.powi(self.t));
        for i in 0..p.len() {
            self.m[i] = B1 * self.m[i] + (1.0 - B1) * g[i];
            self.v[i] = B2 * self.v[i] + (1.0 - B2) * g[i] * g[i];
            p[i] -= lr * (self.m[i] / c1) / ((self.v[i] / c2).sqrt() + EPS);
        }
    }
}

/// A 64-bit mix of two numbers (SplitMix64's finalizer), for per-iteration and per-rollout
/// seeds that do not collide for nearby inputs.
pub fn mix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b.wrapping_add(0x9E37_79B9_7F4A_7C15).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The worst relative error, over every parameter, between `grad` and central finite
/// differences of `loss` around `p` (step `h`): |num - grad| / max(|num| + |grad|, 1e-3).
pub fn finite_difference_error(p: &[f64], grad: &[f64], h: f64, loss: impl Fn(&[f64]) -> f64) -> f64 {
    let mut worst: f64 = 0.0;
    let mut pp = p.to_vec();
    for i in 0..p.len() {
        pp[i] = p[i] + h;
        let up = loss(&pp);
        pp[i] = p[i] - h;
        let down = loss(&pp);
        pp[i] = p[i];
        let num = (up - down) / (2.0 * h);
        let err = (num - grad[i]).abs() / (num.abs() + grad[i].abs()).max(1e-3);
        worst = worst.max(err);
    }
    worst
}
