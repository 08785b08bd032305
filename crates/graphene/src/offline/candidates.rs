//! Candidate troublesome sets from discriminative LongScore / FragScore thresholds.

use std::collections::HashSet;

use bitvec::vec::BitVec;

use super::scores::Scores;
use super::subsets::{split, Split};
use crate::model::Dag;

pub struct Candidate {
    /// LongScore threshold l (tasks with LongScore >= l are troublesome); None = unused.
    pub long: Option<f64>,
    /// FragScore threshold f (tasks with FragScore <= f are troublesome); None = unused.
    pub frag: Option<f64>,
    pub split: Split,
}

#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct CandidateStats {
    /// Threshold pairs tried after dropping non-discriminative values.
    pub threshold_pairs: usize,
    /// Pairs whose closed set T had already been seen.
    pub duplicates: usize,
    /// Sets T larger than the pruning limit.
    pub pruned: usize,
}

/// Threshold values on a grid of step `step` in (0, 1], keeping only values that change the
/// selected set. The sets are nested in the threshold, so a value is discriminative exactly when
/// it selects a different number of tasks than the previous one.
fn discriminative(scores: &[f64], grid: impl Iterator<Item = f64>, select: impl Fn(f64, f64) -> bool) -> Vec<f64> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for th in grid {
        let count = scores.iter().filter(|&&s| select(s, th)).count();
        if count > 0 && seen.insert(count) {
            out.push(th);
        }
    }
    out
}

/// Every distinct closed troublesome set the threshold grids produce, plus the empty set (which
/// degenerates to plain greedy placement and guarantees a result even when all sets are pruned).
/// Sets with more than `max_fraction` of the tasks are pruned: placing nearly everything first is
/// just greedy placement again.
///
/// When `deadline` expires the candidates made so far are returned (the empty set is made
/// first, so there is always one) and the second value is true.
pub fn candidates(
    dag: &Dag,
    scores: &Scores,
    step: f64,
    max_fraction: f64,
    deadline: &crate::Deadline,
) -> (Vec<Candidate>, CandidateStats, bool) {
    let steps = (1.0 / step).round().max(1.0) as usize;
    let grid = |from: usize, to: usize| (from..=to).map(move |k| (k as f64 * step).min(1.0));
    let longs = discriminative(&scores.long, grid(1, steps).rev(), |s, l| s >= l);
    let frags = discriminative(&scores.frag, grid(0, steps.saturating_sub(1)), |s, f| s <= f);
    let mut pairs: Vec<(Option<f64>, Option<f64>)> = vec![(None, None)];
    for &l in &longs {
        pairs.push((Some(l), None));
    }
    for &f in &frags {
        pairs.push((None, Some(f)));
        for &l in &longs {
            pairs.push((Some(l), Some(f)));
        }
    }
    let n = dag.len();
    let limit = ((n as f64) * max_fraction).floor() as usize;
    let mut stats = CandidateStats { threshold_pairs: pairs.len(), ..Default::default() };
    let mut seen: HashSet<BitVec> = HashSet::new();
    let mut out = Vec::new();
    let mut stopped = false;
    for (long, frag) in pairs {
        if !out.is_empty() && deadline.expired() {
            stopped = true;
            break;
        }
        let seed: Vec<bool> = (0..n)
            .map(|t| long.is_some_and(|l| scores.long[t] >= l) || frag.is_some_and(|f| scores.frag[t] <= f))
            .collect();
        let sp = split(dag, &seed);
        if !sp.t.is_empty() && sp.t.len() > limit {
            stats.pruned += 1;
            continue;
        }
        let key: BitVec = sp.label.iter().map(|&p| p == super::subsets::Part::T).collect();
        if !seen.insert(key) {
            stats.duplicates += 1;
            continue;
        }
        out.push(Candidate { long, frag, split: sp });
    }
    (out, stats, stopped)
}
