//! Cuts: points where everything after waits for everything before.
//!
//! Any schedule of a DAG with a cut is a schedule of the part before it followed by one of the
//! part after it, so the constructor searches each part on its own and concatenates. The parts
//! are contiguous ranges of the stage order (a cut's "before" side is a prefix of every
//! topological order).

use std::ops::Range;

use bitvec::vec::BitVec;

use crate::model::{Dag, EdgeKind};

/// Above this many stages the quadratic reachability bitsets are not worth their memory.
const MAX_STAGES: usize = 20_000;

/// Stage ranges between cuts, in order; a single range when the DAG has no cut.
///
/// Stage position k is a cut when (1) every stage before k is an ancestor of every stage from k
/// on, checked with ancestor bitsets: the first stage missing from anc(b) must be at or after k
/// for all b >= k; and (2) the stages from k on that have no parent at or after k depend on their
/// parents only through all-to-all edges (or one-to-one edges from single-task stages). Condition
/// (2) lifts (1) to tasks: such a stage's tasks wait for every task of every parent stage, and
/// every task of an ancestor stage reaches them, since one-to-one edges join equal-size stages.
/// Every later task has a parent task in a later stage, so it waits for everything before k too.
pub fn parts(dag: &Dag) -> Vec<Range<usize>> {
    let s = dag.stages.len();
    if !(2..=MAX_STAGES).contains(&s) {
        return vec![0..s];
    }
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
    // suffix_min[k] = min over b >= k of first_missing[b]
    let mut suffix_min = vec![usize::MAX; s + 1];
    for b in (0..s).rev() {
        suffix_min[b] = suffix_min[b + 1].min(first_missing[b]);
    }
    let mut cuts = Vec::new();
    for k in 1..s {
        if suffix_min[k] < k {
            continue;
        }
        // Stages from k on whose parents all lie before k.
        let ok = (k..s).filter(|&b| dag.stages[b].parents.iter().all(|e| (e.stage as usize) < k)).all(|b| {
            dag.stages[b].parents.iter().all(|e| e.kind == EdgeKind::AllToAll || dag.stages[e.stage as usize].len == 1)
        });
        if ok {
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
}
