//! Upward and downward ranks (Topcuoglu et al.), with the averaging conventions documented in
//! `reference/hetero/README.md` so that our HEFT and CPOP agree with the reference exactly.

use super::instance::Instance;

/// Mean run time over machines, summed per machine so it rounds as the reference does.
pub fn mean_costs(inst: &Instance) -> Vec<f64> {
    let m = inst.machines() as f64;
    inst.work.iter().map(|&w| inst.speeds().iter().map(|&s| w / s).sum::<f64>() / m).collect()
}

/// rank_u(t) = mean cost(t) + max over children c of (rank_u(c) + mean transfer of the edge).
/// Task ids are a topological order, so one backward sweep suffices.
pub fn upward(inst: &Instance) -> Vec<f64> {
    let cost = mean_costs(inst);
    let mut rank = vec![0.0; inst.len()];
    for t in (0..inst.len()).rev() {
        let tail =
            inst.children(t as u32).iter().map(|&(c, d)| rank[c as usize] + inst.mean_transfer(d)).fold(0.0, f64::max);
        rank[t] = cost[t] + tail;
    }
    rank
}

/// rank_d(t) = max over parents p of (rank_d(p) + mean transfer + work(t) / mean speed), 0 for
/// entry tasks. When the DAG has several entry tasks the reference hangs them below a zero-cost
/// source, which makes each entry's rank its own work / mean speed; `virtual_source` says
/// whether that happened.
pub fn downward(inst: &Instance, virtual_source: bool) -> Vec<f64> {
    let mean_speed = inst.mean_speed();
    let mut rank = vec![0.0; inst.len()];
    for t in 0..inst.len() {
        let own = inst.work[t] / mean_speed;
        let ps = inst.parents(t as u32);
        rank[t] = if ps.is_empty() {
            if virtual_source {
                own
            } else {
                0.0
            }
        } else {
            ps.iter().map(|&(p, d)| rank[p as usize] + inst.mean_transfer(d) + own).fold(f64::NEG_INFINITY, f64::max)
        };
    }
    rank
}

/// Longest path with every task at its fastest run time and no transfers: the denominator of
/// SLR (LACHESIS eq. 14).
pub fn fastest_critical_path(inst: &Instance) -> f64 {
    let top = inst.speeds().iter().copied().fold(0.0, f64::max);
    let mut finish = vec![0.0f64; inst.len()];
    let mut best = 0.0f64;
    for t in 0..inst.len() {
        let start = inst.parents(t as u32).iter().map(|&(p, _)| finish[p as usize]).fold(0.0, f64::max);
        finish[t] = start + inst.work[t] / top;
        best = best.max(finish[t]);
    }
    best
}
