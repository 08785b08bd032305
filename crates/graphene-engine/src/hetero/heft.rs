//! HEFT (Topcuoglu, Hariri, Wu 2002): tasks by decreasing upward rank, each on the machine of
//! earliest finish with insertion.

use super::instance::Instance;
use super::plan::Plan;
use super::rank;

pub fn heft(inst: &Instance) -> Plan {
    let rank = rank::upward(inst);
    let mut order: Vec<u32> = (0..inst.len() as u32).collect();
    // A parent's rank is never below its child's, and ids are topological, so this order
    // respects every dependency.
    order.sort_by(|&a, &b| rank[b as usize].total_cmp(&rank[a as usize]).then(a.cmp(&b)));
    let mut plan = Plan::new(inst);
    for t in order {
        let c = plan.eft(inst, t);
        plan.commit(inst, t, c);
    }
    plan
}
