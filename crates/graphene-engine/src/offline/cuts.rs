//! Cuts: points where everything after waits for everything before.
//!
//! Any schedule of a DAG with a cut is a schedule of the part before it followed by one of the
//! part after it, so the constructor searches each part on its own and concatenates. The parts
//! are contiguous ranges of the stage order (a cut's "before" side is a prefix of every
//! topological order).

use std::ops::Range;

use bitvec::vec::BitVec;

use crate::model::{Dag, EdgeKind};

/// Up to this many stages condition (1) below is decided exactly with ancestor bitsets
/// (s^2 / 8 bytes: 50 MB at the limit); above, with a linear lower bound on each stage's first
/// missing ancestor (see [`first_missing_bounds`]), which finds a subset of the cuts: every cut it
/// reports is a cut, and on chains, series of barriers and every DAG whose stages' ancestor sets
/// are prefixes it finds them all.
const EXACT_STAGES: usize = 20_000;

/// Stage ranges between cuts, in order; a single range when the DAG has no cut.
///
/// Stage position k is a cut when (1) every stage before k is an ancestor of every stage from k
/// on: for every b >= k, the first stage missing from anc(b) is at or after k; and (2) the stages
/// from k on that have no parent at or after k depend on their parents only through all-to-all
/// edges (or one-to-one edges from single-task stages). Condition (2) lifts (1) to tasks: such a
/// stage's tasks wait for every task of every parent stage, and every task of an ancestor stage
/// reaches them, since one-to-one edges join equal-size stages. Every later task has a parent task
/// in a later stage, so it waits for everything before k too.
///
/// Linear in stages and edges but for the exact test of (1) on DAGs of up to [`EXACT_STAGES`]
/// stages: a chain of a million one-task stages is a million parts, each placed on its own
/// (before, DAGs over 20,000 stages were searched as one part).
pub fn parts(dag: &Dag) -> Vec<Range<usize>> {
    let s = dag.stages.len();
    if s < 2 {
        return vec![0..s];
    }
    let first_missing = if s <= EXACT_STAGES { first_missing_exact(dag) } else { first_missing_bounds(dag) };
    // Condition (2) fails at k exactly when some stage b >= k whose parents all lie before k
    // (k in maxp(b) + 1 ..= b) has a one-to-one edge from a stage of several tasks: a difference
    // array marks those ranges.
    let mut blocked = vec![0i64; s + 1];
    for (b, stage) in dag.stages.iter().enumerate() {
        let loose = stage.parents.iter().any(|e| e.kind != EdgeKind::AllToAll && dag.stages[e.stage as usize].len != 1);
        if loose {
            let from = stage.parents.iter().map(|e| e.stage as usize + 1).max().unwrap_or(0);
            blocked[from] += 1;
            blocked[b + 1] -= 1;
        }
    }
    let mut cuts = Vec::new();
    // suffix_min over b >= k of first_missing[b], walked from the end.
    let mut suffix_min = vec![usize::MAX; s + 1];
    for b in (0..s).rev() {
        suffix_min[b] = suffix_min[b + 1].min(first_missing[b]);
    }
    let mut blocking = 0i64;
    for k in 0..s {
        blocking += blocked[k];
        if k >= 1 && suffix_min[k] >= k && blocking == 0 {
            cuts.push(k);
        }
    }
    let mut out = Vec::with_capacity(cuts.len() + 1);
    let mut from = 0;
    for k in cuts {
        out.push(from..k);
        from = k;
    }
    out.push(from..s);
    out
}

/// For every stage, the first stage position missing from its ancestors (its own position when
/// every earlier stage is an ancestor), from ancestor bitsets.
fn first_missing_exact(dag: &Dag) -> Vec<usize> {
    let s = dag.stages.len();
    let mut first_missing = vec![0usize; s];
    let mut anc: Vec<BitVec> = Vec::with_capacity(s);
    for b in 0..s {
        let mut bits: BitVec = BitVec::repeat(false, s);
        for e in &dag.stages[b].parents {
            bits |= &anc[e.stage as usize];
            bits.set(e.stage as usize, true);
        }
        first_missing[b] = bits.first_zero().unwrap_or(s);
        anc.push(bits);
    }
    first_missing
}

/// A lower bound on [`first_missing_exact`] in one pass over the edges. anc(b) is the union over
/// b's parents p of {p} and anc(p). When p's bound is p itself, anc(p) is all of 0..p, so {p} and
/// anc(p) cover 0..=p; otherwise they cover at least 0..bound(p). The union covers the largest of
/// those prefixes, extended by every parent that sits exactly at its end.
fn first_missing_bounds(dag: &Dag) -> Vec<usize> {
    let s = dag.stages.len();
    let mut g = vec![0usize; s];
    let mut parents: Vec<usize> = Vec::new();
    for b in 0..s {
        parents.clear();
        parents.extend(dag.stages[b].parents.iter().map(|e| e.stage as usize));
        parents.sort_unstable();
        let covered = |p: usize| if g[p] == p { p + 1 } else { g[p] };
        let mut bound = parents.iter().map(|&p| covered(p)).max().unwrap_or(0);
        for &p in &parents {
            if p == bound {
                bound = bound.max(p + 1).max(covered(p));
            }
        }
        g[b] = bound;
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DagBuilder, ResVec, StageSpec, TaskSpec};

    fn stage(name: &str, n: usize, parents: &[(&str, EdgeKind)]) -> StageSpec {
        StageSpec {
            name: name.into(),
            group: None,
            tasks: vec![TaskSpec { duration: 1.0, demand: ResVec::from_slice(&[1.0]) }; n],
            parents: parents.iter().map(|(p, k)| (p.to_string(), *k)).collect(),
        }
    }

    #[test]
    fn finds_barrier_cuts_and_ignores_one_to_one() {
        use EdgeKind::*;
        let mut b = DagBuilder::new("d", vec!["cpu".into()]);
        b.stage(stage("a", 2, &[]))
            .stage(stage("b", 2, &[]))
            .stage(stage("c", 3, &[("a", AllToAll), ("b", AllToAll)]))
            .stage(stage("d", 3, &[("c", OneToOne)]))
            .stage(stage("e", 1, &[("d", AllToAll)]));
        let dag = b.build().unwrap();
        // a,b | c,d | e : c waits for all of a and b; d waits c only one-to-one so no cut before d.
        assert_eq!(parts(&dag), vec![0..2, 2..4, 4..5]);
    }

    #[test]
    fn side_branch_prevents_cut() {
        use EdgeKind::*;
        let mut b = DagBuilder::new("d", vec!["cpu".into()]);
        b.stage(stage("a", 1, &[]))
            .stage(stage("b", 1, &[("a", AllToAll)]))
            .stage(stage("x", 1, &[("a", AllToAll)]))
            .stage(stage("c", 1, &[("b", AllToAll)]));
        let dag = b.build().unwrap();
        // x runs beside b and c, so only the cut after a exists.
        assert_eq!(parts(&dag), vec![0..1, 1..4]);
    }

    #[test]
    fn a_long_chain_is_cut_at_every_stage() {
        use EdgeKind::*;
        let n = EXACT_STAGES + 5;
        let names: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
        let mut b = DagBuilder::new("chain", vec!["cpu".into()]);
        for i in 0..n {
            let parents: Vec<(&str, EdgeKind)> = if i == 0 { vec![] } else { vec![(names[i - 1].as_str(), AllToAll)] };
            b.stage(stage(&names[i], 1, &parents));
        }
        let dag = b.build().unwrap();
        let got = parts(&dag);
        assert_eq!(got.len(), n);
        assert!(got.iter().enumerate().all(|(i, r)| *r == (i..i + 1)));
    }

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
        /// The linear bound never exceeds the exact first missing ancestor, so every cut found
        /// with it is a cut; on DAGs built as series of layers (the shape cuts exist in) it is
        /// exact.
        #[test]
        fn the_linear_bound_is_a_lower_bound(
            edges in proptest::collection::vec((0usize..30, 0usize..30, any::<bool>()), 0..60),
            layers in proptest::collection::vec(1usize..4, 1..8),
        ) {
            use EdgeKind::*;
            // Random DAG: stage j's parents are the i < j of the pairs (i, j).
            let n = 30;
            let names: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
            let mut b = DagBuilder::new("r", vec!["cpu".into()]);
            for j in 0..n {
                let mut ps: Vec<usize> = edges.iter().filter(|e| e.0 < e.1 && e.1 == j).map(|e| e.0).collect();
                ps.sort_unstable();
                ps.dedup();
                let parents: Vec<(&str, EdgeKind)> = ps.iter().map(|&p| (names[p].as_str(), AllToAll)).collect();
                b.stage(stage(&names[j], 1 + j % 2, &parents));
            }
            let dag = b.build().unwrap();
            let (exact, bound) = (first_missing_exact(&dag), first_missing_bounds(&dag));
            for (b, (&e, &g)) in exact.iter().zip(&bound).enumerate() {
                prop_assert!(g <= e, "stage {b}: bound {g} over exact {e}");
            }
            // Layers in series, each stage of a layer a child of every stage of the previous one.
            let mut b = DagBuilder::new("l", vec!["cpu".into()]);
            let mut prev: Vec<String> = Vec::new();
            for (k, &w) in layers.iter().enumerate() {
                let this: Vec<String> = (0..w).map(|i| format!("l{k}_{i}")).collect();
                for name in &this {
                    let parents: Vec<(&str, EdgeKind)> = prev.iter().map(|p| (p.as_str(), AllToAll)).collect();
                    b.stage(stage(name, 2, &parents));
                }
                prev = this;
            }
            let dag = b.build().unwrap();
            prop_assert_eq!(first_missing_exact(&dag), first_missing_bounds(&dag));
        }
    }
}
