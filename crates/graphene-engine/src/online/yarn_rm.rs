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
//!
//! **`graphene-plan` in the ResourceManager** ([`RmState::plan`]; the simulator's policy is
//! [`super::plan`]). A ResourceManager knows the outstanding requests, not the DAGs behind them
//! (an AM asks for a task's container once the task can run) nor any durations, so its plan
//! covers the outstanding containers, each lasting one time unit, on a grid of [`PLAN_SLOTS`]
//! unit slots of the whole cluster's memory (the one resource YARN refuses) pooled:
//! * Slot 0 holds what the cluster has unallocated now (running containers end within the unit,
//!   as a unit-duration task would); later slots hold the cluster's whole memory.
//! * Applications are planned one after another in the objective's order: least remaining work
//!   first ([`RmPlan::Srpt`], the remaining work above; ties: earlier submission, lower id), or
//!   submission order ([`RmPlan::Fifo`]). An application's requests go in its own priority order
//!   (lower first), each container at the earliest slot where its memory fits what the
//!   applications before it left: a later application fills their holes without delaying them.
//! * The plan is built at every node update, from what the update sees: the simulator replans
//!   at job arrivals and completions because a plan of whole DAGs is costly, while this one is a
//!   pass over the outstanding containers, at most [`PLAN_BUDGET`] placements and slot steps
//!   (containers beyond the budget or the grid are unplanned), and new requests arrive between
//!   arrivals as stages become runnable.
//! * Following it: candidates are the requests that fit the node (as above), ordered by their
//!   next container's planned slot (unplanned last), then pScore (no priScore: the plan already
//!   holds each application's order), the application's place in the plan, its remaining work,
//!   submission, id and priority. One container per pass, then the candidates are ordered
//!   again; deficit counters, the look-ahead walk and the fall-back are as above; there is no
//!   eta (the averages are left as they are).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::graphene::{packing_score, relative_priority, update_averages};
use crate::fairness::{Deficits, FairnessMode};
use crate::model::{ResVec, CAPACITY_EPS};

/// Slots of `graphene-plan`'s grid in the ResourceManager (one time unit each).
pub const PLAN_SLOTS: usize = 1024;

/// Placements and slot steps one plan may spend in the ResourceManager.
pub const PLAN_BUDGET: u64 = 1_000_000;

/// `graphene-plan`'s order of applications in the ResourceManager. The simulator's `span`
/// objective is not offered: it needs durations, which a ResourceManager does not know.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RmPlan {
    /// Least remaining work first (mean JCT).
    Srpt,
    /// Submission order.
    Fifo,
}

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
    /// `graphene-plan`'s rules with this objective instead of `graphene`'s (module docs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<RmPlan>,
}

/// One node update's inputs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RmNodeUpdate {
    /// (memory, vcores) of the node, what of it is unallocated, and the cluster's total.
    pub capacity: [f64; 2],
    pub free: [f64; 2],
    pub cluster: [f64; 2],
    /// What of the cluster is unallocated (what `graphene-plan`'s first slot holds; None: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_free: Option<[f64; 2]>,
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
    /// `graphene-plan`: the planned slot of the request's next container, the app's place.
    slot: u32,
    rank: u32,
}

/// graphene's order: perfScore, then [`ties`].
fn order(a: &Cand, b: &Cand) -> std::cmp::Ordering {
    b.perf.total_cmp(&a.perf).then_with(|| ties(a, b))
}

/// Both orders' ties: less remaining work, earlier submission, lower id, lower priority.
fn ties(a: &Cand, b: &Cand) -> std::cmp::Ordering {
    a.srpt
        .total_cmp(&b.srpt)
        .then(a.arrival.total_cmp(&b.arrival))
        .then(a.app.cmp(&b.app))
        .then(a.priority.cmp(&b.priority))
}

/// `graphene-plan`'s order: planned slot, then packing, place in the plan, then [`ties`].
fn plan_order(a: &Cand, b: &Cand) -> std::cmp::Ordering {
    a.slot.cmp(&b.slot).then(b.p.total_cmp(&a.p)).then(a.rank.cmp(&b.rank)).then_with(|| ties(a, b))
}

/// An application's remaining work: its outstanding containers' work.
fn app_work(app: u32, requests: &[RmRequest], counts: &[u32], cluster: &[f64; 2]) -> f64 {
    let mut w = 0.0;
    for (i, r) in requests.iter().enumerate() {
        if r.app == app && counts[i] > 0 {
            w += counts[i] as f64 * container_work(r.memory, r.vcores, cluster);
        }
    }
    w
}

/// `graphene-plan`'s plan of one node update (module docs).
struct Plan {
    /// Per request: runs of (slot, containers) in allocation order; containers past the runs
    /// are unplanned.
    runs: Vec<Vec<(u32, u32)>>,
    /// Per request: the run its next container is in.
    next: Vec<usize>,
    /// Each application's place in the objective's order.
    rank: HashMap<u32, u32>,
}

impl Plan {
    fn build(u: &RmNodeUpdate, objective: RmPlan) -> Plan {
        let cap = u.cluster[0].max(0.0);
        let mut used = vec![0.0f64; PLAN_SLOTS];
        let free0 = u.cluster_free.map_or(cap, |f| f[0]);
        used[0] = (cap - free0).clamp(0.0, cap);
        let counts: Vec<u32> = u.requests.iter().map(|r| r.count).collect();
        let mut order: Vec<(f64, f64, u32)> = u
            .apps
            .iter()
            .map(|a| {
                let key = match objective {
                    RmPlan::Srpt => app_work(a.app, &u.requests, &counts, &u.cluster),
                    RmPlan::Fifo => 0.0,
                };
                (key, a.arrival, a.app)
            })
            .collect();
        order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2)));
        let mut runs = vec![Vec::new(); u.requests.len()];
        let mut rank = HashMap::new();
        let mut units: u64 = 0;
        for (k, &(_, _, app)) in order.iter().enumerate() {
            if rank.contains_key(&app) {
                continue;
            }
            rank.insert(app, k as u32);
            let mut reqs: Vec<usize> = (0..u.requests.len()).filter(|&i| u.requests[i].app == app).collect();
            reqs.sort_by_key(|&i| (u.requests[i].priority, i));
            for i in reqs {
                let m = u.requests[i].memory.max(0.0).min(cap);
                let mut left = u.requests[i].count;
                let mut t = 0usize;
                while left > 0 && t < PLAN_SLOTS && units < PLAN_BUDGET {
                    let mut n = 0u32;
                    while left > 0 && units < PLAN_BUDGET && fits_memory(m, cap - used[t]) {
                        used[t] += m;
                        n += 1;
                        left -= 1;
                        units += 1;
                    }
                    if n > 0 {
                        runs[i].push((t as u32, n));
                    }
                    t += 1;
                    units += 1;
                }
            }
        }
        Plan { next: vec![0; runs.len()], runs, rank }
    }

    /// The planned slot of request `i`'s next container (u32::MAX: unplanned).
    fn slot(&self, i: usize) -> u32 {
        self.runs[i].get(self.next[i]).map_or(u32::MAX, |r| r.0)
    }

    /// Request `i`'s next container was allocated.
    fn take(&mut self, i: usize) {
        if let Some(r) = self.runs[i].get_mut(self.next[i]) {
            r.1 -= 1;
            if r.1 == 0 {
                self.next[i] += 1;
            }
        }
    }
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
    // graphene-plan: one container per pass (its next container may be planned later).
    let bundle = if state.plan.is_some() { 1 } else { state.bundle.max(1) };
    let mut plan = state.plan.map(|o| Plan::build(u, o));
    loop {
        // One scoring pass.
        let mut cands: Vec<Cand> = Vec::new();
        for a in &u.apps {
            let srpt = app_work(a.app, &u.requests, &counts, &u.cluster);
            let mut frontier = f64::NEG_INFINITY;
            for (i, r) in u.requests.iter().enumerate() {
                if r.app == a.app && counts[i] > 0 {
                    frontier = frontier.max(priority_score(r.priority));
                }
            }
            for (i, r) in u.requests.iter().enumerate() {
                if r.app != a.app || counts[i] == 0 || !fits_memory(r.memory, left[0]) || a.queue >= groups {
                    continue;
                }
                let p = packing_score(&[r.memory, r.vcores], &left, &u.capacity);
                let (p, slot, rank) = match &plan {
                    Some(plan) => (p, plan.slot(i), plan.rank.get(&a.app).copied().unwrap_or(u32::MAX)),
                    None => (p * relative_priority(priority_score(r.priority), frontier), 0, 0),
                };
                cands.push(Cand {
                    req: i,
                    group: a.queue,
                    arrival: a.arrival,
                    app: a.app,
                    priority: r.priority,
                    srpt,
                    p,
                    perf: 0.0,
                    slot,
                    rank,
                });
            }
        }
        if cands.is_empty() {
            break;
        }
        if plan.is_some() {
            cands.sort_by(plan_order);
        } else {
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
        }
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
                    if let Some(plan) = plan.as_mut() {
                        plan.take(c.req);
                        break;
                    }
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
/// the picks and the state after each; `cases` of `graphene`'s rules, then `plan_cases` of
/// `graphene-plan`'s.
pub fn parity_fixture(cases: usize, plan_cases: usize, seed: u64) -> String {
    let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move |n: u64| -> u64 {
        // xorshift64*
        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        (rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) % n.max(1)
    };
    let mut out = Vec::new();
    for case in 0..cases + plan_cases {
        let plan = match case.checked_sub(cases) {
            None => None,
            Some(k) if k % 2 == 0 => Some(RmPlan::Srpt),
            Some(_) => Some(RmPlan::Fifo),
        };
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
            plan,
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
            // graphene-plan: the cluster's unallocated memory, this node's and the other nodes'.
            let cluster_free = plan.map(|_| {
                let others = (nodes - 1) * node_mem as u64 / 256;
                [free[0] + (256 * next(1 + others)) as f64, free[1] + next(1 + (nodes - 1) * node_vc as u64) as f64]
            });
            let u = RmNodeUpdate {
                capacity: [node_mem, node_vc],
                free,
                cluster,
                cluster_free,
                apps: apps.clone(),
                requests,
            };
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
            plan: None,
        }
    }

    fn req(app: u32, priority: i32, memory: f64, vcores: f64, count: u32) -> RmRequest {
        RmRequest { app, priority, memory, vcores, count }
    }

    fn update(free: [f64; 2], apps: Vec<RmApp>, requests: Vec<RmRequest>) -> RmNodeUpdate {
        RmNodeUpdate { capacity: [8192.0, 8.0], free, cluster: [32768.0, 32.0], cluster_free: None, apps, requests }
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
    /// memory) share the node evenly, and no deficit passes the bound, under graphene's rules and
    /// graphene-plan's (where queue 0's application, with less work, is planned first).
    #[test]
    fn deficit_bound_alternates_queues() {
        for plan in [None, Some(RmPlan::Srpt)] {
            let mut s = RmState { plan, ..state(2, Some(0.05)) };
            let u = update(
                [8192.0, 8.0],
                vec![app(1, 0), app(2, 1)],
                vec![req(1, 0, 2048.0, 1.0, 4), req(2, 0, 2048.0, 1.0, 5)],
            );
            let picks = node_update(&mut s, &u);
            let apps: Vec<u32> = picks.iter().map(|p| p.app).collect();
            assert_eq!(apps.len(), 4);
            assert_eq!(apps.iter().filter(|&&a| a == 1).count(), 2, "{plan:?}: {apps:?}");
            for d in &s.deficits {
                assert!(*d <= 0.05 + 1e-12, "{plan:?}: {:?}", s.deficits);
            }
        }
    }

    /// graphene-plan against packing: the application with less work goes first though the
    /// other's container fills the node, which `graphene`'s rules (eta 0) pick.
    #[test]
    fn plan_serves_less_work_before_packing() {
        let apps = vec![app(1, 0), app(2, 0)];
        let reqs = vec![req(1, 0, 1024.0, 1.0, 1), req(2, 0, 4096.0, 4.0, 8)];
        let mut u = update([4096.0, 4.0], apps, reqs);
        u.cluster_free = Some([4096.0, 4.0]);
        let mut packing = RmState { eta_scale: 0.0, ..state(1, None) };
        assert_eq!(node_update(&mut packing, &u), vec![RmPick { app: 2, priority: 0 }]);
        // The plan: 28,672 MB of the cluster's 32,768 allocated; app 1's 1 GB in slot 0, app 2's
        // eight 4 GB containers in slot 1. Then app 2's no longer fits the node.
        let mut plan = RmState { plan: Some(RmPlan::Srpt), ..state(1, None) };
        assert_eq!(node_update(&mut plan, &u), vec![RmPick { app: 1, priority: 0 }]);
        assert!(!plan.seen, "graphene-plan keeps no eta averages");
    }

    /// graphene-plan fills a hole: app 1 (less work) has its 8 GB container planned in the
    /// cluster's free 10 GB (slot 0) and its 4 GB one in slot 1; app 2's first 2 GB container
    /// takes slot 0's last 2 GB. On a node with 4 GB free (where the 8 GB one does not fit),
    /// app 2's slot-0 container goes first, then its slot-1 one (2 GB left: app 1's 4 GB does not
    /// fit); least work first (graphene's rules with a large eta) would start app 1's 4 GB.
    #[test]
    fn plan_fills_the_hole_the_first_app_leaves() {
        let apps = vec![app(1, 0), app(2, 0)];
        let reqs = vec![req(1, 1, 8192.0, 1.0, 1), req(1, 2, 4096.0, 1.0, 1), req(2, 0, 2048.0, 1.0, 6)];
        let mut u = update([4096.0, 4.0], apps, reqs);
        u.cluster_free = Some([10240.0, 10.0]);
        let mut srpt = RmState { eta_scale: 1000.0, ..state(1, None) };
        assert_eq!(node_update(&mut srpt, &u)[0], RmPick { app: 1, priority: 2 });
        for objective in [RmPlan::Srpt, RmPlan::Fifo] {
            let mut plan = RmState { plan: Some(objective), ..state(1, None) };
            let picks = node_update(&mut plan, &u);
            assert_eq!(picks, vec![RmPick { app: 2, priority: 0 }; 2], "{objective:?}");
        }
    }

    /// The objective decides the applications' order: least work first, or submission order.
    #[test]
    fn plan_objective_orders_the_apps() {
        // App 1 (submitted first) has more work; each app's container fills the node.
        let apps = vec![app(1, 0), app(2, 0)];
        let reqs = vec![req(1, 0, 8192.0, 8.0, 3), req(2, 0, 8192.0, 8.0, 1)];
        let mut u = update([8192.0, 8.0], apps, reqs);
        u.cluster_free = Some([8192.0, 8.0]);
        let mut srpt = RmState { plan: Some(RmPlan::Srpt), ..state(1, None) };
        assert_eq!(node_update(&mut srpt, &u), vec![RmPick { app: 2, priority: 0 }]);
        let mut fifo = RmState { plan: Some(RmPlan::Fifo), ..state(1, None) };
        assert_eq!(node_update(&mut fifo, &u), vec![RmPick { app: 1, priority: 0 }]);
    }

    /// A huge request count plans within the budget and never allocates per container.
    #[test]
    fn plan_cost_is_bounded() {
        let mut s = RmState { plan: Some(RmPlan::Srpt), ..state(1, None) };
        let u =
            update([1024.0, 1.0], vec![app(1, 0)], vec![req(1, 0, 0.0, 0.0, u32::MAX), req(1, 1, 1.0, 0.0, u32::MAX)]);
        let plan = Plan::build(&u, RmPlan::Srpt);
        let planned: u64 = plan.runs.iter().flatten().map(|r| r.1 as u64).sum();
        assert!(planned <= PLAN_BUDGET, "{planned}");
        // The node update itself allocates what fits the node: zero-memory containers never
        // stop fitting, so it runs until they are all taken; here only the 1 MB ones are checked.
        let u = update([1024.0, 1.0], vec![app(1, 0)], vec![req(1, 1, 1.0, 0.0, u32::MAX)]);
        assert_eq!(node_update(&mut s, &u).len(), 1024);
    }

    /// The committed fixture of the Java port's parity test is what these rules give; set
    /// GRAPHENE_REGEN_PARITY=1 to rewrite it.
    #[test]
    fn yarn_scheduler_parity_fixture_is_current() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../integrations/yarn-scheduler/src/test/resources/parity-cases.json"
        );
        let text = parity_fixture(150, 100, 7);
        if std::env::var_os("GRAPHENE_REGEN_PARITY").is_some() {
            std::fs::write(path, &text).unwrap();
        }
        let on_disk = std::fs::read_to_string(path).unwrap_or_default();
        assert!(on_disk == text, "{path} is stale: rerun with GRAPHENE_REGEN_PARITY=1");
    }
}
