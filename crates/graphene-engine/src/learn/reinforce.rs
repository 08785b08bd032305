//! The parts of a REINFORCE run that Decima's and LACHESIS's trainers share: the checks of the
//! common settings, the entropy weight's schedule, the step (per-rollout gradients summed in
//! rollout order, averaged over the decisions, one Adam step) and model selection on held-out
//! scores. Kept in one place so that the two trainers cannot drift apart in how they step; every
//! sum runs in the order the trainers always used, so their weights files keep their bits.

use super::Adam;
use crate::error::{Error, Result};

/// Most rollouts per iteration. Every rollout's decisions (each with its observation of the
/// cluster) are kept until the iteration's step, since the baseline and the normalization of
/// the advantages need all of them: memory grows with the rollouts (about 1 MB each on the
/// TPC-H defaults, more for longer episodes). Decima trains with 16 and LACHESIS with 8.
pub const MAX_ROLLOUTS: usize = 256;

/// The largest learning rate accepted. Adam moves every weight by about the rate at each step,
/// so a rate above 1 throws the weights far past any useful scale within a few steps and, large
/// enough, to infinity and NaN; the trainers use 1e-3.
pub const MAX_LR: f64 = 1.0;

/// Refuses fewer than 2 rollouts (the baseline averages over them) or more than
/// [`MAX_ROLLOUTS`], a learning rate that is not a finite number in (0, [`MAX_LR`]] and an
/// entropy weight that is not a finite number >= 0.
pub fn check_common(rollouts: usize, lr: f64, entropy: f64) -> Result<()> {
    let bad = |m: String| Err(Error::Usage(m));
    if rollouts < 2 {
        return bad(format!("--rollouts {rollouts} must be at least 2 (the baseline averages over them)"));
    }
    if rollouts > MAX_ROLLOUTS {
        return Err(Error::too_large(
            "--rollouts",
            rollouts,
            MAX_ROLLOUTS,
            "every rollout's decisions are kept in memory until the iteration's step",
        ));
    }
    if !(lr.is_finite() && lr > 0.0) {
        return bad(format!("learning rate {lr} must be a finite number > 0"));
    }
    if lr > MAX_LR {
        return bad(format!(
            "--lr {}: learning rate above the limit of {MAX_LR} (Adam moves each weight by about the rate per step)",
            crate::limits::show(lr)
        ));
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
///
/// Fails when the step (iteration `it`, 1-based) meets a gradient or leaves a weight that is
/// not a finite number: training has diverged, and no model of NaNs is ever written.
pub fn step<'a>(
    adam: &mut Adam,
    params: &mut [f64],
    grads: impl IntoIterator<Item = &'a [f64]>,
    n: usize,
    lr: f64,
    it: usize,
) -> Result<()> {
    let mut g = vec![0.0; params.len()];
    for gr in grads {
        for (x, y) in g.iter_mut().zip(gr) {
            *x += y;
        }
    }
    for x in &mut g {
        *x /= n as f64;
    }
    let diverged = |what: &str, i: usize| {
        Err(Error::Usage(format!(
            "training diverged at iteration {it}: {what} {i} is not a finite number; nothing was written (lower --lr              from {})",
            crate::limits::show(lr)
        )))
    };
    if let Some(i) = g.iter().position(|x| !x.is_finite()) {
        return diverged("the gradient of weight", i);
    }
    adam.step(params, &g, lr);
    if let Some(i) = params.iter().position(|x| !x.is_finite()) {
        return diverged("weight", i);
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Rollouts are bounded: each is kept in memory until the step.
    #[test]
    fn rollouts_are_between_2_and_the_limit() {
        assert!(check_common(2, 1e-3, 0.0).is_ok());
        assert!(check_common(MAX_ROLLOUTS, 1e-3, 0.0).is_ok());
        assert_eq!(
            check_common(1_000_000, 1e-3, 0.0).unwrap_err().to_string(),
            "--rollouts: 1000000 exceeds the limit of 256 (every rollout's decisions are kept in memory until the \
             iteration's step)"
        );
        assert!(check_common(1, 1e-3, 0.0).unwrap_err().to_string().contains("at least 2"));
    }

    /// A learning rate above 1 is refused; a step that meets a non-finite gradient or leaves a
    /// non-finite weight fails and says where.
    #[test]
    fn a_diverging_step_fails_instead_of_keeping_nans() {
        assert!(check_common(2, MAX_LR, 0.0).is_ok());
        let e = check_common(2, 1e300, 0.0).unwrap_err().to_string();
        assert_eq!(
            e,
            "--lr 1e300: learning rate above the limit of 1 (Adam moves each weight by about the rate per step)"
        );
        let mut adam = Adam::new(2);
        let mut p = vec![0.5, 0.5];
        assert!(step(&mut adam, &mut p, [&[1.0, -1.0][..]], 1, 1e-3, 1).is_ok());
        let e = step(&mut adam, &mut p, [&[f64::NAN, 1.0][..]], 1, 1e-3, 2).unwrap_err().to_string();
        assert!(e.contains("training diverged at iteration 2: the gradient of weight 0 is not a finite number"), "{e}");
        let mut p = vec![f64::NAN, 0.5];
        let e = step(&mut adam, &mut p, [&[-1.0, 1.0][..]], 1, 1.0, 3).unwrap_err().to_string();
        assert!(e.contains("weight 0 is not a finite number"), "{e}");
    }
}
