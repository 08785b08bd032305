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
    /// With recursion: the size of T's own troublesome set when a recursive placement of T won.
    pub inner_trouble: Option<usize>,
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
/// order whose backward passes left idle gaps is judged by what it becomes. With `recurse`, a
/// large T is also placed by the construction itself (see [`inner_bases`]), and each such
/// placement of T is carried through the four orders like the plain one; the most compact
/// result wins, the plain placement on ties. With `forward_only`, S is placed forward only
/// (see [`PartReport::forward_only`](super::PartReport::forward_only)).
pub fn place_split<'a>(
    dag: &'a Dag,
    caps: &[ResVec],
    split: &Split,
    keys: &Keys,
    compact: bool,
    recurse: bool,
    forward_only: bool,
) -> Placed<'a> {
    use Direction::{Backward as B, Forward as F};
    let masks = [Part::T, Part::S, Part::P, Part::C].map(|p| split.mask(p));
    let [mt, ms, mp, mc] = &masks;
    let empty = Plan::new(dag, caps);
    let fin = |p: Plan<'a>| if compact { p.compacted() } else { p };
    // Everything after T, from a plan holding T alone.
    let rest = |base: Plan<'a>| -> (Plan<'a>, Order) {
        // S next, in either direction: nothing adjacent to S is placed yet.
        let forward = (placed(base.clone(), &split.s, ms, F, keys), F);
        let (ts, _) =
            if forward_only { forward } else { better(forward, (placed(base.clone(), &split.s, ms, B, keys), B)) };
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
        best
    };
    let inner = if recurse { inner_bases(dag, &empty, split, keys) } else { Vec::new() };
    let (base, t_direction) = if split.t.is_empty() {
        (empty, F)
    } else {
        better((placed(empty.clone(), &split.t, mt, F, keys), F), (placed(empty, &split.t, mt, B, keys), B))
    };
    let (mut plan, mut order) = rest(base);
    let mut inner_trouble = None;
    for (inner, t_dir, size) in inner {
        let (p, o) = rest(inner);
        if p.makespan() < plan.makespan() {
            (plan, order, inner_trouble) = (p, o, Some((size, t_dir)));
        }
    }
    let t_direction = inner_trouble.map_or(t_direction, |(_, d)| d);
    Placed { plan, order, t_direction, inner_trouble: inner_trouble.map(|(n, _)| n) }
}

/// T's own troublesome sets below which recursion does not pay its cost (a T of a few tasks is
/// ordered well enough by the placement key).
pub const RECURSE_MIN_T: usize = 6;
/// Thresholds tried inside T: the longest distinct durations of T, at most this many.
const RECURSE_THRESHOLDS: usize = 4;

/// The paper's future work, one level deep: T placed by the construction itself. Inner seeds are
/// T's tasks at least as long as each of T's longest distinct durations (LongScore within T);
/// each seed's closure T' and, within T, its ancestors P', descendants C' and the rest S' are
/// placed T' (forward or backward), S', C' forward, P' backward. T is closed (every path between
/// two of its tasks stays in it), so these relations are all the constraints among T's tasks and
/// the order is dead-end free for the same reason the outer TSCP order is. Returns each
/// placement of T with its direction and the size of T'.
fn inner_bases<'a>(dag: &'a Dag, empty: &Plan<'a>, split: &Split, keys: &Keys) -> Vec<(Plan<'a>, Direction, usize)> {
    use Direction::{Backward as B, Forward as F};
    if split.t.len() < RECURSE_MIN_T {
        return Vec::new();
    }
    let mut lengths: Vec<f64> = split.t.iter().map(|&t| dag.tasks[t as usize].duration).collect();
    lengths.sort_by(|a, b| b.total_cmp(a));
    lengths.dedup();
    let mut out = Vec::new();
    for &cut in lengths.iter().take(RECURSE_THRESHOLDS) {
        let mut seed = vec![false; dag.len()];
        for &t in &split.t {
            seed[t as usize] = dag.tasks[t as usize].duration >= cut;
        }
        let inner = super::subsets::split(dag, &seed);
        let within = |part: Part| -> (Vec<u32>, Vec<bool>) {
            let mut mask = vec![false; dag.len()];
            let mut list = Vec::new();
            for &t in &split.t {
                if inner.label[t as usize] == part {
                    mask[t as usize] = true;
                    list.push(t);
                }
            }
            (list, mask)
        };
        let (t2, m_t2) = within(Part::T);
        if t2.len() == split.t.len() || t2.is_empty() {
            continue;
        }
        let (s2, m_s2) = within(Part::S);
        let (p2, m_p2) = within(Part::P);
        let (c2, m_c2) = within(Part::C);
        for dir in [F, B] {
            let base = placed(empty.clone(), &t2, &m_t2, dir, keys);
            let ts = better((placed(base.clone(), &s2, &m_s2, F, keys), ()), (placed(base, &s2, &m_s2, B, keys), ())).0;
            out.push((placed(placed(ts, &c2, &m_c2, F, keys), &p2, &m_p2, B, keys), dir, t2.len()));
        }
    }
    out
}
