//! DEFT, LACHESIS's executor allocation (eqs. 9-11): for the selected task, the smallest of the
//! earliest finish time on every machine (EFT) and of the finish time after duplicating one
//! parent onto that machine first (CPEFT).
//!
//! CPEFT's formula, max(AFTC(dup), max over other parents of AFTC) + w/v, can beat EFT only
//! when the duplicated parent is the one whose data arrives last on that machine: duplicating
//! any other leaves the maximum where it was. So per machine only that critical parent is tried,
//! which keeps a step at O(parents x machines) as the paper's complexity analysis states. Unlike
//! the formula, the duplicate and the task are fitted where their demands fit beside what already
//! runs on the machine (insertion), so a machine is never booked past its capacity.

use super::instance::Instance;
use super::plan::{Choice, Plan};

/// DEFT's decision for one task: where it runs and, if a parent is duplicated for it, where
/// that copy runs.
pub struct Allocation {
    pub task: Choice,
    pub duplicate: Option<(u32, Choice)>,
}

pub fn allocate(inst: &Instance, plan: &Plan, t: u32) -> Allocation {
    let mut best: Option<Allocation> = None;
    for m in 0..inst.machines() as u32 {
        if !inst.fits(t, m) {
            continue;
        }
        let dur = inst.run_time(t, m);
        // Arrival of each parent's data on m; keep the latest and the second latest.
        let (mut crit, mut latest, mut second) = (None, 0.0f64, 0.0f64);
        for &(p, d) in inst.parents(t) {
            let at = plan.data_at(inst, p, d, m);
            if crit.is_none() || at > latest {
                second = second.max(if crit.is_some() { latest } else { 0.0 });
                latest = at;
                crit = Some(p);
            } else {
                second = second.max(at);
            }
        }
        let tl = &plan.timelines[m as usize];
        let demand = inst.demand(t);
        let start = tl.earliest(latest, dur, demand);
        let eft = Allocation { task: Choice { machine: m, start, end: start + dur }, duplicate: None };
        let mut here = eft;
        if let Some(p) = crit.filter(|&p| inst.fits(p, m) && plan.runs[p as usize].iter().all(|r| r.0 != m)) {
            let pdur = inst.run_time(p, m);
            let pstart = tl.earliest(plan.ready_at(inst, p, m), pdur, inst.demand(p));
            let pend = pstart + pdur;
            if pend < latest {
                // The task starts once the copy has ended, so the copy's run never overlaps
                // the task's and takes none of the capacity the task needs.
                let s = tl.earliest(pend.max(second), dur, demand);
                if s + dur < here.task.end {
                    here = Allocation {
                        task: Choice { machine: m, start: s, end: s + dur },
                        duplicate: Some((p, Choice { machine: m, start: pstart, end: pend })),
                    };
                }
            }
        }
        if best.as_ref().is_none_or(|b| here.task.end < b.task.end) {
            best = Some(here);
        }
    }
    best.expect("every task fits some machine (checked when the cluster was resolved)")
}

pub fn commit(inst: &Instance, plan: &mut Plan, t: u32, a: &Allocation) {
    if let Some((p, c)) = a.duplicate {
        plan.commit(inst, p, c);
    }
    plan.commit(inst, t, a.task);
}
