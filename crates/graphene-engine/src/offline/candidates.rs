//! Candidate troublesome sets from discriminative LongScore / FragScore thresholds, and (with
//! `pairing`) from tasks that cannot share a machine.

use std::collections::HashSet;

use bitvec::vec::BitVec;

use super::scores::Scores;
use super::subsets::{split, Split};
use crate::model::{Dag, ResVec};

pub struct Candidate {
    /// LongScore threshold l (tasks with LongScore >= l are troublesome); None = unused.
    pub long: Option<f64>,
    /// FragScore threshold f (tasks with FragScore <= f are troublesome); None = unused.
    pub frag: Option<f64>,
    /// Pairing family: the resource (index) in which every seed task takes over half of the
    /// largest machine, or `usize::MAX` for "some resource"; None = a threshold candidate.
    pub pairing: Option<usize>,
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
    /// Threshold pairs never split into a set because the work budget could not place more
    /// candidates than those made before them (`--search-work`); absent when none.
    #[serde(skip_serializing_if = "super::search::is_zero")]
    pub unexamined: usize,
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
/// Seeds of the pairing family (`pairing` on): for each resource r, the tasks whose demand in r
/// is above half of the largest machine's r (no two of them can ever run side by side on one
/// machine, so they form a bin-packing block whatever else is placed), and the union over the
/// resources; each of those also cut to its longest tasks at every discriminative LongScore
/// threshold. Why: LongScore picks the same long tasks the longest-first greedy already places
/// first, and FragScore is a property of a whole stage (for a one-task stage it is peak demand
/// over the cluster, so it flags the lightest tasks), so tasks that pack badly *with each other*
/// were never a candidate set in their own right.
fn pairing_seeds(dag: &Dag, scores: &Scores, caps: &[ResVec], longs: &[f64]) -> Vec<(usize, Option<f64>, Vec<bool>)> {
    let dims = dag.dims();
    let mut max_cap = ResVec::ZERO;
    for c in caps {
        for r in 0..dims {
            max_cap.0[r] = max_cap.0[r].max(c.0[r]);
        }
    }
    let big = |t: usize, r: usize| max_cap.0[r] > 0.0 && dag.tasks[t].demand.0[r] > 0.5 * max_cap.0[r];
    let n = dag.len();
    let mut blocks: Vec<(usize, Vec<bool>)> = (0..dims).map(|r| (r, (0..n).map(|t| big(t, r)).collect())).collect();
    if dims > 1 {
        blocks.push((usize::MAX, (0..n).map(|t| (0..dims).any(|r| big(t, r))).collect()));
    }
    let mut out = Vec::new();
    for (r, block) in blocks {
        // A block of fewer than two tasks has nothing to pair.
        if block.iter().filter(|&&b| b).count() < 2 {
            continue;
        }
        for &l in longs {
            let cut: Vec<bool> = (0..n).map(|t| block[t] && scores.long[t] >= l).collect();
            if cut.iter().filter(|&&b| b).count() >= 2 {
                out.push((r, Some(l), cut));
            }
        }
        out.push((r, None, block));
    }
    out
}

/// At most `max` candidates are made (the empty set counts); the pairs after them are only
/// counted (`unexamined`): splitting a pair costs two sweeps of the part, and on a part of a
/// million tasks the budget places the empty set alone.
#[allow(clippy::too_many_arguments)]
pub fn candidates(
    dag: &Dag,
    scores: &Scores,
    caps: &[ResVec],
    step: f64,
    max_fraction: f64,
    pairing: bool,
    max: usize,
    deadline: &crate::Deadline,
) -> (Vec<Candidate>, CandidateStats, bool) {
    let steps = (1.0 / step).round().max(1.0) as usize;
    let grid = |from: usize, to: usize| (from..=to).map(move |k| (k as f64 * step).min(1.0));
    let longs = discriminative(&scores.long, grid(1, steps).rev(), |s, l| s >= l);
    let frags = discriminative(&scores.frag, grid(0, steps.saturating_sub(1)), |s, f| s <= f);
    let n = dag.len();
    // (LongScore threshold, FragScore threshold, pairing resource, explicit seed).
    type Pair = (Option<f64>, Option<f64>, Option<usize>, Option<Vec<bool>>);
    let mut pairs: Vec<Pair> = vec![(None, None, None, None)];
    for &l in &longs {
        pairs.push((Some(l), None, None, None));
    }
    for &f in &frags {
        pairs.push((None, Some(f), None, None));
        for &l in &longs {
            pairs.push((Some(l), Some(f), None, None));
        }
    }
    if pairing {
        for (r, l, seed) in pairing_seeds(dag, scores, caps, &longs) {
            pairs.push((l, None, Some(r), Some(seed)));
        }
    }
    let limit = ((n as f64) * max_fraction).floor() as usize;
    let mut stats = CandidateStats { threshold_pairs: pairs.len(), ..Default::default() };
    let mut seen: HashSet<BitVec> = HashSet::new();
    let mut out = Vec::new();
    let mut stopped = false;
    let total = pairs.len();
    for (i, (long, frag, pair, seed)) in pairs.into_iter().enumerate() {
        if out.len() >= max.max(1) {
            stats.unexamined = total - i;
            break;
        }
        if !out.is_empty() && deadline.expired() {
            stopped = true;
            break;
        }
        let seed: Vec<bool> = seed.unwrap_or_else(|| {
            (0..n)
                .map(|t| long.is_some_and(|l| scores.long[t] >= l) || frag.is_some_and(|f| scores.frag[t] <= f))
                .collect()
        });
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
        out.push(Candidate { long, frag, pairing: pair, split: sp });
    }
    (out, stats, stopped)
}
