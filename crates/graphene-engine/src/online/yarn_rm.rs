//! Graphene's online rules on one node update of a YARN ResourceManager: the definition the
//! scheduler in `integrations/yarn-scheduler` ports to Java, checked against it by a parity
//! fixture (`yarn_scheduler_parity_fixture_is_current` below writes and checks it).
//!
//! The inputs are what a ResourceManager knows at a node heartbeat: the node's capacity and
//! unallocated resources (memory, vcores), the cluster's total, every application's
//! outstanding requests (priority, size, count) with its queue and submission order, and the
//! scheduler's own state (deficit per queue, the eta averages). The rules are the simulator's
//! `graphene` policy ([`super::Graphene`]) with YARN's units:
//! * A request fits when its memory fits what is unallocated (the only resource YARN's
//!   FifoScheduler accounts); vcores are never refused, as in YARN, but they count in pScore
//!   (what is left below 0 counts 0).
//! * pScore is [`super::graphene::packing_score`]; priScore comes from the request's YARN
//!   priority p (the AM sets it from graphene's export; lower runs first):
//!   `1 / (1 + max(p, 0))`, divided by the application's frontier (the largest priScore among
//!   its outstanding requests, [`super::graphene::relative_priority`]).
//! * Remaining work of an application: the sum over its outstanding containers of
//!   memory / cluster memory + vcores / cluster vcores (each container's estimated duration is
//!   1: a ResourceManager knows no durations).
//! * perfScore = pScore x priScore' - eta x work, eta = K x avg(pScore x priScore') /
//!   avg(work) with the averages as the simulator keeps them; ties: less work, earlier
//!   submission, lower application id, lower priority.
//! * Deficit counters per queue ([`Deficits`], DRF unit, charged per container as the paper
//!   writes them, among the queues contending for this node), the strict look-ahead walk and
//!   the fall-back to the most-owed contending queue, `bundle` candidates per walk, a new
//!   scoring pass after every pass that allocated. A pass that allocates nothing ends the node
//!   update: then no outstanding request fits the node's unallocated memory.

use serde::{Deserialize, Serialize};

use super::graphene::{packing_score, relative_priority, update_averages};
use crate::fairness::{Deficits, FairnessMode};
use crate::model::{ResVec, CAPACITY_EPS};

/// An application's outstanding containers at one priority (YARN's scheduler key).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RmRequest {
    pub app: u32,
    pub priority: i32,
    pub memory: f64,
    pub vcores: f64,
    pub count: u32,
}

/// An application: its queue's index and its submission order (smaller first).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RmApp {
    pub app: u32,
    pub queue: usize,
    pub arrival: f64,
}

/// What the scheduler keeps between node updates.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RmState {
    /// Share per queue (renormalised over the contending queues).
    pub shares: Vec<f64>,
    pub deficits: Vec<f64>,
    /// Unfairness bound, a fraction of the cluster (None: no fairness).
    pub kappa: Option<f64>,
    /// K of eta = K x avg(packing) / avg(work).
    pub eta_scale: f64,
    pub avg_p: f64,
    pub avg_s: f64,
    pub seen: bool,
    pub bundle: usize,
}

/// One node update's inputs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RmNodeUpdate {
    /// (memory, vcores) of the node, what of it is unallocated, and the cluster's total.
    pub capacity: [f64; 2],
    pub free: [f64; 2],
    pub cluster: [f64; 2],
    pub apps: Vec<RmApp>,
    pub requests: Vec<RmRequest>,
}

/// One container to allocate: the application and the priority of the request it serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RmPick {
    pub app: u32,
    pub priority: i32,
}

/// priScore of a YARN priority (lower runs first).
pub fn priority_score(priority: i32) -> f64 {
    1.0 / (1.0 + priority.max(0) as f64)
}

/// A container's work: memory and vcores over the cluster's.
pub fn container_work(memory: f64, vcores: f64, cluster: &[f64; 2]) -> f64 {
    let mut w = 0.0;
    if cluster[0] > 0.0 {
        w += memory.max(0.0) / cluster[0];
    }
    if cluster[1] > 0.0 {
        w += vcores.max(0.0) / cluster[1];
    }
    if w.is_finite() {
        w
    } else {
        0.0
    }
}

fn fits_memory(memory: f64, left: f64) -> bool {
    memory <= left * (1.0 + CAPACITY_EPS) + CAPACITY_EPS
}

#[derive(Clone, Copy)]
struct Cand {
    req: usize,
    group: usize,
    arrival: f64,
    app: u32,
    priority: i32,
    srpt: f64,
    p: f64,
    perf: f64,
}

fn order(a: &Cand, b: &Cand) -> std::cmp::Ordering {
    b.perf
        .total_cmp(&a.perf)
        .then(a.srpt.total_cmp(&b.srpt))
        .then(a.arrival.total_cmp(&b.arrival))
        .then(a.app.cmp(&b.app))
        .then(a.priority.cmp(&b.priority))
}

/// Runs one node update: the containers to allocate, in order. `state` is updated (deficits
/// charged, eta averages moved); requests of applications missing from `u.apps` are ignored.
pub fn node_update(state: &mut RmState, u: &RmNodeUpdate) -> Vec<RmPick> {
    let groups = state.shares.len();
    let mut deficits =
        Deficits::new(state.shares.clone(), state.kappa, FairnessMode::Drf).with_deficits(&state.deficits);
    let mut total = ResVec::ZERO;
    total.0[0] = u.cluster[0];
    total.0[1] = u.cluster[1];
    let factor = |r: &RmRequest| {
        let mut d = ResVec::ZERO;
        d.0[0] = r.memory;
        d.0[1] = r.vcores;
        FairnessMode::Drf.factor(&d, &total, 2)
    };
    let mut counts: Vec<u32> = u.requests.iter().map(|r| r.count).collect();
    let mut left = u.free;
    let mut out = Vec::new();
    let bundle = state.bundle.max(1);
    loop {
        // One scoring pass.
        let mut cands: Vec<Cand> = Vec::new();
        for a in &u.apps {
            let mut srpt = 0.0;
            let mut frontier = f64::NEG_INFINITY;
            for (i, r) in u.requests.iter().enumerate() {
                if r.app == a.app && counts[i] > 0 {
                    srpt += counts[i] as f64 * container_work(r.memory, r.vcores, &u.cluster);
                    frontier = frontier.max(priority_score(r.priority));
                }
            }
            for (i, r) in u.requests.iter().enumerate() {
                if r.app != a.app || counts[i] == 0 || !fits_memory(r.memory, left[0]) || a.queue >= groups {
                    continue;
                }
                let p = packing_score(&[r.memory, r.vcores], &left, &u.capacity);
                let pri = relative_priority(priority_score(r.priority), frontier);
                cands.push(Cand {
                    req: i,
                    group: a.queue,
                    arrival: a.arrival,
                    app: a.app,
                    priority: r.priority,
                    srpt,
                    p: p * pri,
                    perf: 0.0,
                });
            }
        }
        if cands.is_empty() {
            break;
        }
        let n = cands.len() as f64;
        let mp = cands.iter().map(|c| c.p).sum::<f64>() / n;
        let ms = cands.iter().map(|c| c.srpt).sum::<f64>() / n;
        update_averages(&mut state.avg_p, &mut state.avg_s, &mut state.seen, mp, ms);
        let eta = if state.avg_s > 0.0 && state.eta_scale.is_finite() {
            state.eta_scale * state.avg_p / state.avg_s
        } else {
            0.0
        };
        for c in cands.iter_mut() {
            c.perf = c.p - eta * c.srpt;
        }
        cands.sort_by(order);
        let contending_now = |counts: &[u32], left: &[f64; 2]| -> Vec<bool> {
            let mut v = vec![groups <= 1; groups];
            if groups > 1 {
                for c in &cands {
                    if counts[c.req] > 0 && fits_memory(u.requests[c.req].memory, left[0]) {
                        v[c.group] = true;
                    }
                }
            }
            v
        };
        let mut allocated = 0;
        let mut current: Option<Vec<bool>> = None;
        for strict in [true, false] {
            let mut walked = 0;
            let mut blocked = false;
            for c in &cands {
                if walked == bundle {
                    break;
                }
                let contending = current.get_or_insert_with(|| contending_now(&counts, &left)).clone();
                if !contending[c.group] {
                    continue;
                }
                let r = &u.requests[c.req];
                let f = factor(r);
                let forced =
                    if strict { deficits.must_serve_among(&contending) } else { deficits.most_owed_among(&contending) };
                if forced.is_some_and(|g| g != c.group) {
                    continue;
                }
                if strict && deficits.would_exceed(c.group, f, &contending) {
                    blocked = true;
                    continue;
                }
                walked += 1;
                while counts[c.req] > 0 {
                    if !fits_memory(r.memory, left[0]) {
                        break;
                    }
                    if strict && deficits.would_exceed(c.group, f, &contending) {
                        blocked = true;
                        break;
                    }
                    deficits.charge_among(c.group, f, &contending);
                    left[0] -= r.memory;
                    left[1] -= r.vcores;
                    counts[c.req] -= 1;
                    out.push(RmPick { app: c.app, priority: c.priority });
                    allocated += 1;
                    current = None;
                    if !strict || deficits.must_serve_among(&contending).is_some_and(|g| g != c.group) {
                        break;
                    }
                }
            }
            if allocated > 0 || !blocked {
                break;
            }
        }
        if allocated == 0 {
            break;
        }
    }
    state.deficits = deficits.deficits().to_vec();
    out
}

/// Deterministic generated cases for the Java port's parity test, as JSON: each case is a
/// sequence of node updates over one state (so deficits and eta averages carry over), with
/// the picks and the state after each.
pub fn parity_fixture(cases: usize, seed: u64) -> String {
    let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move |n: u64| -> u64 {
        // xorshift64*
        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        (rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) % n.max(1)
    };
    let mut out = Vec::new();
    for case in 0..cases {
        let queues = 1 + next(3) as usize;
        let kappa = match next(3) {
            0 => None,
            1 => Some(0.05),
            _ => Some(0.2),
        };
        let mut state = RmState {
            shares: (0..queues).map(|_| 1.0 + next(3) as f64).collect(),
            deficits: vec![0.0; queues],
            kappa,
            eta_scale: [0.0, 1.0, 4.0][next(3) as usize],
            avg_p: 0.0,
            avg_s: 0.0,
            seen: false,
            bundle: 1 + next(16) as usize,
        };
        let nodes = 2 + next(6);
        let node_mem = [4096.0, 8192.0, 16384.0][next(3) as usize];
        let node_vc = [4.0, 8.0, 16.0][next(3) as usize];
        let cluster = [node_mem * nodes as f64, node_vc * nodes as f64];
        let napps = 1 + next(5) as u32;
        let apps: Vec<RmApp> = (0..napps)
            .map(|a| RmApp { app: a + 1, queue: next(queues as u64) as usize, arrival: (a * 10) as f64 })
            .collect();
        let mut steps = Vec::new();
        for _ in 0..(1 + next(4)) {
            let mut requests = Vec::new();
            for a in &apps {
                for _ in 0..next(4) {
                    let priority = next(8) as i32;
                    if requests.iter().any(|r: &RmRequest| r.app == a.app && r.priority == priority) {
                        continue;
                    }
                    requests.push(RmRequest {
                        app: a.app,
                        priority,
                        memory: (256 * (1 + next(16))) as f64,
                        vcores: (1 + next(4)) as f64,
                        count: 1 + next(6) as u32,
                    });
                }
            }
            let free = [(256 * next(1 + node_mem as u64 / 256)) as f64, next(1 + node_vc as u64) as f64];
            let u = RmNodeUpdate { capacity: [node_mem, node_vc], free, cluster, apps: apps.clone(), requests };
            let before = state.clone();
            let picks = node_update(&mut state, &u);
            steps
                .push(serde_json::json!({ "update": u, "state_before": before, "picks": picks, "state_after": state }));
        }
        out.push(serde_json::json!({ "case": case, "steps": steps }));
    }
    // One case per line, so that a change shows as the cases it changed.
    let mut text = String::from("{\"about\": \"generated by crates/graphene-engine/src/online/yarn_rm.rs (parity_fixture); rewrite with GRAPHENE_REGEN_PARITY=1 cargo test --release -p graphene-engine yarn_scheduler_parity\",\n\"cases\": [\n");
    for (i, c) in out.iter().enumerate() {
        text.push_str(&serde_json::to_string(c).unwrap_or_default());
        text.push_str(if i + 1 < out.len() { ",\n" } else { "\n" });
    }
    text.push_str("]}\n");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(queues: usize, kappa: Option<f64>) -> RmState {
        RmState {
            shares: vec![1.0; queues],
            deficits: vec![0.0; queues],
            kappa,
            eta_scale: 1.0,
            avg_p: 0.0,
            avg_s: 0.0,
            seen: false,
            bundle: 16,
        }
    }

    fn req(app: u32, priority: i32, memory: f64, vcores: f64, count: u32) -> RmRequest {
        RmRequest { app, priority, memory, vcores, count }
    }

    fn update(free: [f64; 2], apps: Vec<RmApp>, requests: Vec<RmRequest>) -> RmNodeUpdate {
        RmNodeUpdate { capacity: [8192.0, 8.0], free, cluster: [32768.0, 32.0], apps, requests }
    }

    fn app(app: u32, queue: usize) -> RmApp {
        RmApp { app, queue, arrival: app as f64 }
    }

    /// Packing (eta 0): the request that fills more of the node goes first.
    #[test]
    fn packing_picks_the_bigger_fit() {
        let mut s = RmState { eta_scale: 0.0, ..state(1, None) };
        let u = update(
            [4096.0, 4.0],
            vec![app(1, 0), app(2, 0)],
            vec![req(1, 0, 1024.0, 1.0, 1), req(2, 0, 4096.0, 4.0, 1)],
        );
        let picks = node_update(&mut s, &u);
        assert_eq!(picks[0], RmPick { app: 2, priority: 0 });
        assert_eq!(picks.len(), 1, "nothing fits after the 4 GB container");
    }

    /// SRPT: of two applications with the same request, the one with less outstanding work
    /// goes first, though it was submitted later.
    #[test]
    fn srpt_picks_the_smaller_app() {
        let mut s = state(1, None);
        let apps = vec![RmApp { app: 1, queue: 0, arrival: 5.0 }, RmApp { app: 2, queue: 0, arrival: 0.0 }];
        let u = update([2048.0, 2.0], apps, vec![req(1, 0, 2048.0, 2.0, 1), req(2, 0, 2048.0, 2.0, 6)]);
        assert_eq!(node_update(&mut s, &u), vec![RmPick { app: 1, priority: 0 }]);
    }

    /// The AM's priorities: within one application the lower YARN priority goes first though
    /// a later one packs twice as well (priScore 1/6 over the frontier's 1/2: a third).
    #[test]
    fn preferred_order_within_an_app() {
        let mut s = state(1, None);
        let u = update([8192.0, 8.0], vec![app(1, 0)], vec![req(1, 5, 2048.0, 2.0, 1), req(1, 1, 1024.0, 1.0, 1)]);
        let picks = node_update(&mut s, &u);
        assert_eq!(picks, vec![RmPick { app: 1, priority: 1 }, RmPick { app: 1, priority: 5 }]);
    }

    /// Deficits: two queues with equal shares and kappa 0.05 (a container is 1/16 of the cluster's
    /// memory) share the node evenly, and no deficit passes the bound.
    #[test]
    fn deficit_bound_alternates_queues() {
        let mut s = state(2, Some(0.05));
        let u = update(
            [8192.0, 8.0],
            vec![app(1, 0), app(2, 1)],
            vec![req(1, 0, 2048.0, 1.0, 4), req(2, 0, 2048.0, 1.0, 4)],
        );
        let picks = node_update(&mut s, &u);
        let apps: Vec<u32> = picks.iter().map(|p| p.app).collect();
        assert_eq!(apps.len(), 4);
        assert_eq!(apps.iter().filter(|&&a| a == 1).count(), 2, "{apps:?}");
        for d in &s.deficits {
            assert!(*d <= 0.05 + 1e-12, "{:?}", s.deficits);
        }
    }

    /// The committed fixture of the Java port's parity test is what these rules give; set
    /// GRAPHENE_REGEN_PARITY=1 to rewrite it.
    #[test]
    fn yarn_scheduler_parity_fixture_is_current() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../integrations/yarn-scheduler/src/test/resources/parity-cases.json"
        );
        let text = parity_fixture(150, 7);
        if std::env::var_os("GRAPHENE_REGEN_PARITY").is_some() {
            std::fs::write(path, &text).unwrap();
        }
        let on_disk = std::fs::read_to_string(path).unwrap_or_default();
        assert!(on_disk == text, "{path} is stale: rerun with GRAPHENE_REGEN_PARITY=1");
    }
}
