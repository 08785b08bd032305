//! The parts of a REINFORCE run that Decima's and LACHESIS's trainers share: the checks of the
//! common settings, the entropy weight's schedule, the step (per-rollout gradients summed in
//! rollout order, averaged over the decisions, one Adam step) and model selection on held-out
//! scores. Kept in one place so that the two trainers cannot drift apart in how they step; every
//! sum runs in the order the trainers always used, so their weights files keep their bits.

use super::Adam;
use crate::error::{Error, Result};

/// Refuses fewer than 2 rollouts (the baseline averages over them), a learning rate that is not
/// a finite number > 0 and an entropy weight that is not a finite number >= 0.
pub fn check_common(rollouts: usize, lr: f64, entropy: f64) -> Result<()> {
    let bad = |m: String| Err(Error::Usage(m));
    if rollouts < 2 {
        return bad(format!("--rollouts {rollouts} must be at least 2 (the baseline averages over them)"));
    }
    if !(lr.is_finite() && lr > 0.0) {
        return bad(format!("learning rate {lr} must be a finite number > 0"));
    }
    if !(entropy.is_finite() && entropy >= 0.0) {
        return bad(format!("entropy weight {entropy} must be a finite number >= 0"));
    }
    Ok(())
}

/// The entropy weight at iteration `it` of `iterations`: `initial`, decaying linearly to 0.
pub fn entropy_weight(initial: f64, it: usize, iterations: usize) -> f64 {
    initial * (1.0 - it as f64 / iterations.max(1) as f64)
}

/// Whether the held-out score is due after iteration `it` (0-based): every `every` iterations
/// and after the last.
pub fn eval_due(every: usize, it: usize, iterations: usize) -> bool {
    (it + 1).is_multiple_of(every) || it + 1 == iterations
}

/// One descent step on `params`: the per-rollout gradient sums `grads`, added in order and
/// divided by the `n` decisions they cover, then one Adam step with rate `lr`.
pub fn step<'a>(adam: &mut Adam, params: &mut [f64], grads: impl IntoIterator<Item = &'a [f64]>, n: usize, lr: f64) {
    let mut g = vec![0.0; params.len()];
    for gr in grads {
        for (x, y) in g.iter_mut().zip(gr) {
            *x += y;
        }
    }
    for x in &mut g {
        *x /= n as f64;
    }
    adam.step(params, &g, lr);
}

/// The best-scoring weights seen so far (lower scores are better). Model selection on held-out
/// inputs: the learning curve is not monotone (REINFORCE at these budgets improves, then
/// drifts), so the last weights are not the best ones.
pub struct Best<M> {
    model: Option<M>,
    at: Option<(usize, f64)>,
}

impl<M: Clone> Best<M> {
    pub fn new() -> Best<M> {
        Best { model: None, at: None }
    }

    /// Offers `model`, scored `score` after iteration `it`. NaN never wins; equal scores keep
    /// the earlier weights.
    pub fn offer(&mut self, it: usize, score: f64, model: &M) {
        if score.is_finite() && self.at.is_none_or(|(_, b)| score < b) {
            self.model = Some(model.clone());
            self.at = Some((it, score));
        }
    }

    /// The best weights and (iteration, score); `last` and None when nothing was scored.
    pub fn finish(self, last: &M) -> (M, Option<(usize, f64)>) {
        (self.model.unwrap_or_else(|| last.clone()), self.at)
    }
}

impl<M: Clone> Default for Best<M> {
    fn default() -> Self {
        Best::new()
    }
}
