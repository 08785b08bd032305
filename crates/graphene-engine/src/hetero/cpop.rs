//! CPOP (Topcuoglu et al. 2002): the critical-path tasks all run on the one machine that runs
//! them fastest; the others are placed by earliest finish, taken from a ready queue in
//! decreasing rank_u + rank_d.

use std::collections::BinaryHeap;

use super::instance::Instance;
use super::plan::Plan;
use super::rank;
use super::select::ByKey;

/// numpy's `isclose` defaults, which the reference uses to find critical-path tasks.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-8 + 1e-5 * b.abs()
}

pub fn cpop(inst: &Instance) -> Plan {
    let n = inst.len();
    let entries: Vec<u32> = (0..n as u32).filter(|&t| inst.parents(t).is_empty()).collect();
    let up = rank::upward(inst);
    let down = rank::downward(inst, entries.len() > 1);
    let priority: Vec<f64> = (0..n).map(|t| up[t] + down[t]).collect();
    // With several entries the reference's zero-cost source is the entry: its priority is the
    // largest upward rank among the real entries.
    let entry_priority = if entries.len() == 1 {
        priority[entries[0] as usize]
    } else {
        entries.iter().map(|&t| up[t as usize]).fold(f64::NEG_INFINITY, f64::max)
    };
    let critical: Vec<bool> = priority.iter().map(|&p| close(p, entry_priority)).collect();
    let cp_machine = (0..inst.machines() as u32)
        .filter(|&m| (0..n as u32).all(|t| !critical[t as usize] || inst.fits(t, m)))
        .map(|m| (m, (0..n).filter(|&t| critical[t]).map(|t| inst.run_time(t as u32, m)).sum::<f64>()))
        .fold(None, |best: Option<(u32, f64)>, (m, s)| match best {
            Some((_, bs)) if bs <= s => best,
            _ => Some((m, s)),
        })
        .map(|(m, _)| m);
    let mut plan = Plan::new(inst);
    let mut waiting: Vec<usize> = (0..n as u32).map(|t| inst.parents(t).len()).collect();
    // The ready queue: highest priority first, then the smaller id.
    let mut heap: BinaryHeap<ByKey> = entries.iter().map(|&t| ByKey { key: priority[t as usize], task: t }).collect();
    while let Some(ByKey { task: t, .. }) = heap.pop() {
        let choice = match cp_machine {
            Some(m) if critical[t as usize] => plan.eft_on(inst, t, m),
            _ => plan.eft(inst, t),
        };
        plan.commit(inst, t, choice);
        for &(c, _) in inst.children(t) {
            waiting[c as usize] -= 1;
            if waiting[c as usize] == 0 {
                heap.push(ByKey { key: priority[c as usize], task: c });
            }
        }
    }
    plan
}
