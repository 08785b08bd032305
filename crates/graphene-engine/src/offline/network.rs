//! Graphene on machines of different speeds with data transfers.
//!
//! The troublesome-set search runs unchanged on the speed-1 model and yields Graphene's schedule
//! there; its start order is Graphene's preferred order (troublesome tasks and their packing
//! first). That order is then placed again on the real machines: each task, in turn, goes to the
//! machine where it finishes first, given the machine's speed, when each parent's data can reach
//! that machine (data / bandwidth from another machine, nothing on the same one), and the
//! machine's free capacity over time. On a uniform network with no data, `build_schedule` is
//! used as it is, so homogeneous results do not change and its hot loops carry no extra cost.

use super::{build_schedule, OfflineConfig, OfflineResult};
use crate::hetero::Instance;
use crate::model::{Cluster, Dag, Network, Placement, Schedule};
use crate::space::Space;

pub fn build_on_network(dag: &Dag, cluster: &Cluster, net: &Network, cfg: &OfflineConfig) -> OfflineResult {
    if net.is_trivial_for(dag) {
        return build_schedule(dag, cluster, cfg);
    }
    // The improver judges orders by the makespan without transfers and speeds; on a real
    // network the order is re-timed below, so it would optimise the wrong thing: off here.
    let base = build_schedule(dag, cluster, &OfflineConfig { improve_budget: 0, exact: None, ..cfg.clone() });
    let order = base.schedule.order_by_start();
    let inst = Instance::new(dag, cluster, net);
    let mut space = Space::new(&cluster.machines);
    let mut placed: Vec<Placement> = vec![Placement { task: 0, machine: 0, start: 0.0, end: 0.0 }; dag.len()];
    for t in order {
        let demand = &dag.tasks[t as usize].demand;
        let mut best: Option<Placement> = None;
        for m in 0..cluster.len() {
            let ready = inst
                .parents(t)
                .iter()
                .map(|&(p, d)| {
                    let pp = &placed[p as usize];
                    pp.end + inst.transfer(d, pp.machine, m as u32)
                })
                .fold(0.0, f64::max);
            let dur = inst.run_time(t, m as u32);
            let Some(start) = space.earliest_on(m, ready, dur, demand) else { continue };
            let end = start + dur;
            if best.is_none_or(|b| end < b.end) {
                best = Some(Placement { task: t, machine: m as u32, start, end });
            }
        }
        let p = best.expect("every task fits some machine (checked when the cluster was resolved)");
        space.insert(p.machine as usize, p.start, p.end, demand);
        placed[t as usize] = p;
    }
    OfflineResult { schedule: Schedule { placements: placed }, search: base.search }
}
