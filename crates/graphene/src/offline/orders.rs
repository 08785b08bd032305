//! Placing one candidate split: T first, then the four dead-end-free subset orders.

use super::plan::{Direction, Keys, Plan};
use super::subsets::{Part, Split};
use crate::model::{Dag, ResVec};

/// The subset orders that start with T and cannot dead-end, with the direction each subset may
/// be placed in: P only backward (its descendants may already be placed), C only forward, S in
/// whichever direction its placed neighbours allow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Order {
    #[serde(rename = "TSCP")]
    Tscp,
    #[serde(rename = "TSPC")]
    Tspc,
    #[serde(rename = "TPSC")]
    Tpsc,
    #[serde(rename = "TCSP")]
    Tcsp,
}

impl Order {
    pub fn as_str(&self) -> &'static str {
        match self {
            Order::Tscp => "TSCP",
            Order::Tspc => "TSPC",
            Order::Tpsc => "TPSC",
            Order::Tcsp => "TCSP",
        }
    }
}

pub struct Placed<'a> {
    pub plan: Plan<'a>,
    pub order: Order,
    pub t_direction: Direction,
}

/// Of two plans the more compact, preferring the first on ties.
fn better<'a, T>(a: (Plan<'a>, T), b: (Plan<'a>, T)) -> (Plan<'a>, T) {
    if b.0.makespan() < a.0.makespan() {
        b
    } else {
        a
    }
}

fn placed<'a>(mut plan: Plan<'a>, subset: &[u32], mask: &[bool], dir: Direction, keys: &Keys) -> Plan<'a> {
    plan.place(subset, mask, dir, keys);
    plan
}

/// Places `split` and returns the most compact of the four orders; with `compact`, each order's
/// plan is re-compacted forward ([`Plan::compacted`]) before they are compared, so that an
/// order whose backward passes left idle gaps is judged by what it becomes.
pub fn place_split<'a>(dag: &'a Dag, caps: &[ResVec], split: &Split, keys: &Keys, compact: bool) -> Placed<'a> {
    use Direction::{Backward as B, Forward as F};
    let masks = [Part::T, Part::S, Part::P, Part::C].map(|p| split.mask(p));
    let [mt, ms, mp, mc] = &masks;
    let empty = Plan::new(dag, caps);
    let (base, t_direction) = if split.t.is_empty() {
        (empty, F)
    } else {
        better((placed(empty.clone(), &split.t, mt, F, keys), F), (placed(empty, &split.t, mt, B, keys), B))
    };
    // S next, in either direction: nothing adjacent to S is placed yet.
    let fin = |p: Plan<'a>| if compact { p.compacted() } else { p };
    let (ts, _) =
        better((placed(base.clone(), &split.s, ms, F, keys), F), (placed(base.clone(), &split.s, ms, B, keys), B));
    let mut best = (fin(placed(placed(ts.clone(), &split.c, mc, F, keys), &split.p, mp, B, keys)), Order::Tscp);
    if !split.p.is_empty() && !split.c.is_empty() {
        best = better(best, (fin(placed(placed(ts, &split.p, mp, B, keys), &split.c, mc, F, keys)), Order::Tspc));
    }
    if !split.t.is_empty() && !split.s.is_empty() && (!split.p.is_empty() || !split.c.is_empty()) {
        let tp = placed(base.clone(), &split.p, mp, B, keys);
        best = better(best, (fin(placed(placed(tp, &split.s, ms, F, keys), &split.c, mc, F, keys)), Order::Tpsc));
        let tc = placed(base, &split.c, mc, F, keys);
        best = better(best, (fin(placed(placed(tc, &split.s, ms, B, keys), &split.p, mp, B, keys)), Order::Tcsp));
    }
    Placed { plan: best.0, order: best.1, t_direction }
}
