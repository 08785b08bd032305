//! Online schedulers: given a machine's free resources at a heartbeat, which tasks to launch.
//!
//! A policy only answers questions; the simulator (`crate::sim`) owns time, resources and task
//! state, and checks every launch against the machine's capacity.

mod accruing;
mod capacity;
mod cp;
pub mod decima;
mod drf;
pub mod external;
mod fair_gate;
mod fifo;
mod graphene;
mod head_max;
mod heft;
mod hybrid;
pub mod plan;
mod priority_cache;
mod random;
mod slearn;
mod sticky;
mod tetris;
pub mod yarn_rm;

pub use capacity::{CapacityScheduler, CsAccounting, CsYarn};
pub use fifo::Fifo;
pub use graphene::{Charge, Eta, Graphene, GrapheneOnline, SrptTerm, CHARGE_WINDOW_S};
pub use plan::{GraphenePlan, PlanOptions};
pub use priority_cache::{yarn_priorities, PriorityCache};
pub use slearn::{pilots_for, Estimate, SLearn, THIN_LIMIT};
pub use sticky::{kept_if, Sticky};
pub use tetris::{SrptScale as TetrisSrptScale, Tetris};

use crate::model::ResVec;
use crate::sim::View;
pub use crate::sim::{Policy, TaskRef};

/// Settings shared by the online schedulers that `by_name` builds.
#[derive(Clone, Debug)]
pub struct OnlineSettings {
    /// Entitled share per queue, in `Workload::queues()` order.
    pub shares: Vec<f64>,
    /// Graphene's online knobs (kappa, eta, rp, fairness; its `shares` are replaced by the
    /// ones above).
    pub graphene: GrapheneOnline,
    pub seed: u64,
    /// tetris: the deficit-counter bound of Graphene's online part (kappa of the cluster,
    /// charged as `graphene`'s settings say), `None` for Tetris without fairness.
    pub tetris_kappa: Option<f64>,
    /// tetris: overbookable resources up to this multiple of capacity (1: never, the default).
    pub tetris_overbook: f64,
    /// tetris: what its remaining-work term is scaled by (`--tetris-srpt-scale`).
    pub tetris_srpt_scale: TetrisSrptScale,
    /// cs: how queues are measured, and YARN's user-limit-factor (None: elastic).
    pub cs_accounting: CsAccounting,
    pub cs_user_limit: Option<f64>,
    /// cs (and cp, graphene+cs, which share its queues): YARN's AM containers and containers
    /// per node heartbeat (default: neither).
    pub cs_yarn: CsYarn,
    /// decima: weights file to load instead of a bundled model.
    pub decima_model: Option<std::path::PathBuf>,
    /// decima without a weights file: the bundled model to use (a name of
    /// [`decima::model::BUNDLED_MODELS`]; the replay setup picks the one closest to the run),
    /// the default model when None.
    pub decima_bundled: Option<&'static str>,
    /// Every scheduler: each machine keeps serving the job of its last task first
    /// (`--sticky`, [`sticky`]).
    pub sticky: bool,
}

/// Online scheduler names `by_name` accepts.
pub const NAMES: &[&str] = &[
    "graphene",
    "cs",
    "fifo",
    "tetris",
    "cp",
    "drf",
    "random",
    "slearn",
    "graphene+cs",
    "graphene+tetris",
    "heft",
    "decima",
    "graphene-plan",
];

/// Builds the online scheduler called `name` (kept on each machine's job with `s.sticky`).
pub fn by_name(name: &str, s: &OnlineSettings) -> crate::Result<Box<dyn Policy>> {
    let g = &s.graphene;
    if name != "graphene" && (g.rm_work || g.rm_priority || g.rm_fit.is_some()) {
        // The cluster was made to let every resource but memory be overbooked for it.
        return Err(crate::Error::Usage(format!(
            "--graphene-rm models graphene's scheduler in YARN's ResourceManager: it applies to the \
             graphene scheduler only, not to '{name}'"
        )));
    }
    let policy = unwrapped(name, s)?;
    Ok(if s.sticky { Box::new(sticky::Sticky::new(policy)) } else { policy })
}

fn unwrapped(name: &str, s: &OnlineSettings) -> crate::Result<Box<dyn Policy>> {
    Ok(match name {
        "graphene" => Box::new(Graphene::new(GrapheneOnline { shares: s.shares.clone(), ..s.graphene.clone() })),
        "cs" => Box::new(
            CapacityScheduler::new(s.shares.clone())
                .with_accounting(s.cs_accounting, s.cs_user_limit)
                .with_yarn(&s.cs_yarn),
        ),
        "fifo" => Box::new(Fifo),
        "tetris" => Box::new(
            tetris::Tetris::fair(s.shares.clone(), s.tetris_kappa, s.graphene.fairness, s.graphene.charge)
                .with_overbook(s.tetris_overbook)
                .with_srpt_scale(s.tetris_srpt_scale),
        ),
        "cp" => Box::new(
            cp::CriticalPath::new(s.shares.clone())
                .with_queues(|q| q.configured(s.cs_accounting, s.cs_user_limit, &s.cs_yarn)),
        ),
        "drf" => Box::new(drf::Drf::new(s.shares.clone())),
        "random" => Box::new(random::RandomPolicy::new(s.seed)),
        "slearn" => Box::new(SLearn::new(s.seed)),
        "graphene+cs" => Box::new(
            hybrid::GrapheneCs::new(s.shares.clone(), &s.graphene)
                .with_queues(|q| q.configured(s.cs_accounting, s.cs_user_limit, &s.cs_yarn)),
        ),
        "graphene+tetris" => Box::new(hybrid::GrapheneTetris::new(&s.graphene)),
        "heft" => Box::new(heft::HeftOnline::new()),
        "graphene-plan" => Box::new(plan::GraphenePlan::new(
            &GrapheneOnline { shares: s.shares.clone(), ..s.graphene.clone() },
            PlanOptions::default(),
        )),
        other if other.starts_with("graphene-plan:") => Box::new(plan::GraphenePlan::new(
            &GrapheneOnline { shares: s.shares.clone(), ..s.graphene.clone() },
            PlanOptions::parse(&other["graphene-plan:".len()..])?,
        )),
        "decima" => {
            let model = match (&s.decima_model, s.decima_bundled) {
                (Some(path), _) => decima::Model::load(path)?,
                (None, Some(name)) => decima::Model::bundled_named(name)?,
                (None, None) => decima::Model::bundled()?,
            };
            Box::new(decima::Decima::new(&model))
        }
        other => {
            return Err(crate::Error::Usage(format!(
                "unknown online scheduler '{other}' (known: {})",
                NAMES.join(", ")
            )))
        }
    })
}

/// Task `t`'s work: estimated duration x sum over resources of its request over the cluster
/// total (0 when not finite).
pub(crate) fn work(view: &View, total: &ResVec, job: u32, t: u32) -> f64 {
    let d = view.requested(job, t);
    let norm: f64 = (0..view.dims).filter(|&r| total.0[r] > 0.0).map(|r| d.0[r].max(0.0) / total.0[r]).sum();
    let w = view.estimated_duration(job, t) * norm;
    if w.is_finite() {
        w
    } else {
        0.0
    }
}

/// One task at a time to the neediest queue, as YARN's queue-based schedulers hand out
/// containers: repeatedly the unblocked queue with the lowest `need(state, q)` (ties: lower
/// index) gets `take(state, q)`; a queue that cannot take a task is blocked for the rest of the
/// heartbeat.
pub(crate) fn serve_queues<S>(
    queues: usize,
    state: &mut S,
    need: impl Fn(&S, usize) -> f64,
    mut take: impl FnMut(&mut S, usize) -> bool,
) {
    // Inline for up to 16 queues: this runs at every heartbeat that may take something.
    let mut blocked: smallvec::SmallVec<[bool; 16]> = smallvec::smallvec![false; queues];
    while let Some(q) =
        (0..queues).filter(|&q| !blocked[q]).min_by(|&a, &b| need(state, a).total_cmp(&need(state, b)).then(a.cmp(&b)))
    {
        if !take(state, q) {
            blocked[q] = true;
        }
    }
}

/// Usage relative to an entitled share; a queue without a share is never below it.
pub(crate) fn relative(used: f64, share: f64) -> f64 {
    if share > 0.0 {
        used / share
    } else {
        f64::INFINITY
    }
}

/// Per queue index below `n`: whether one of its active jobs has a runnable task (the queues
/// with pending work, which deficit counters credit when another is served).
pub(crate) fn queues_with_runnable_work(view: &View, n: usize) -> Vec<bool> {
    let mut out = vec![false; n];
    for &job in view.active() {
        let g = view.queue(job) as usize;
        if g < n && view.job_state(job).runnable_count > 0 {
            out[g] = true;
        }
    }
    out
}

/// What a policy's fit test reads, as the query vector of the jobs' fit indexes
/// ([`crate::sim::fit_index::FitIndex`]): per resource, the amount a demand must stay within, or
/// +inf where the test lets any demand through. A stage whose lowest runnable task passes the
/// policy's test passes the query, and no other, so a search by the query finds exactly the
/// stages a scan with the test would.
pub(crate) mod fit_query {
    use super::fits_in;
    use crate::model::ResVec;
    use crate::sim::View;

    /// [`super::fits`]: the hard resources within `left`; overbookable ones are not checked.
    pub(crate) fn hard(view: &View, left: &ResVec) -> ResVec {
        let mut q = *left;
        for r in 0..view.dims {
            if !view.hard[r] {
                q.0[r] = f64::INFINITY;
            }
        }
        q
    }

    /// [`super::fits_all`]: every resource within `left`, an overbookable demand counted at most
    /// as the machine's capacity `cap`; so where the whole capacity fits `left`, every demand
    /// does, and elsewhere a demand fits exactly when it does uncapped.
    pub(crate) fn all(view: &View, left: &ResVec, cap: &ResVec) -> ResVec {
        let mut q = *left;
        for r in 0..view.dims {
            if !view.hard[r] && fits_in(cap.0[r], left.0[r]) {
                q.0[r] = f64::INFINITY;
            }
        }
        q
    }

    /// Graphene's test: every resource within `left`, except that an overbookable resource
    /// nothing on the machine uses yet (`empty_soft`) takes any demand.
    pub(crate) fn allowance(view: &View, left: &ResVec, empty_soft: &[bool]) -> ResVec {
        let mut q = *left;
        for r in 0..view.dims {
            if !view.hard[r] && empty_soft[r] {
                q.0[r] = f64::INFINITY;
            }
        }
        q
    }
}

/// The runnable stages of one job, in stage order, that a policy must try for a machine whose
/// fit test reads `query` ([`fit_query`]): those whose lowest runnable task fits (found by the
/// job's [`crate::sim::fit_index::FitIndex`], so a heartbeat costs the stages it takes from, not
/// every runnable stage), and every stage holding a task chosen earlier in the same heartbeat
/// (tried task by task by the caller, as there the first task it may take is not the lowest).
/// Without an index every runnable stage, in order.
pub(crate) struct FittingStages {
    job: u32,
    /// The next stage to consider; `None` once none is left.
    from: Option<u32>,
    /// Every runnable stage is tried, in order: the job has few (a scan of their heads is
    /// cheaper than the search), or no index.
    scan: bool,
    /// Stages of this job holding an already chosen task, ascending (only when not `scan`).
    chosen: Vec<u32>,
}

impl FittingStages {
    pub(crate) fn new(view: &View, job: u32, chosen: &[TaskRef], query: &ResVec) -> FittingStages {
        let st = view.job_state(job);
        let has_chosen = chosen.iter().any(|r| r.job == job);
        if !has_chosen && !st.may_fit(query) {
            // No stage's first task fits: nothing to try (the common case on a busy machine).
            return FittingStages { job, from: None, scan: true, chosen: Vec::new() };
        }
        let scan = st.runnable_stages.len() <= crate::sim::fit_index::SCAN_AT_MOST || st.fit_index().is_none();
        let mut stages = Vec::new();
        if !scan && has_chosen {
            let dag = view.dag(job);
            stages.extend(chosen.iter().filter(|r| r.job == job).map(|r| dag.tasks[r.task as usize].stage));
            stages.sort_unstable();
            stages.dedup();
        }
        FittingStages { job, from: Some(0), scan, chosen: stages }
    }

    /// The next stage to try for the fit query `query`, after the one returned last.
    pub(crate) fn next(&mut self, view: &View, query: &ResVec) -> Option<u32> {
        let from = self.from?;
        let next = if self.scan {
            let st = view.job_state(self.job);
            let i = st.runnable_stages.partition_point(|&s| s < from);
            st.runnable_stages.get(i).copied()
        } else {
            let by_index = view.next_fitting_stage(self.job, from, query);
            let i = self.chosen.partition_point(|&s| s < from);
            match (by_index, self.chosen.get(i).copied()) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        };
        self.from = next.and_then(|n| n.checked_add(1));
        next
    }
}

/// The next active job `>= from`, in arrival order, that a stage-order policy must try for a
/// machine with `left` free (hard resources, [`fits`]): one the index of jobs says may have a
/// stage that fits, or one holding a task in `chosen` (taken earlier in this heartbeat, so its
/// next task is not what the index holds). Every other job would give nothing.
pub(crate) fn next_job_to_try(view: &View, from: u32, left: &ResVec, chosen: &[TaskRef]) -> Option<u32> {
    next_job_may_fit_or(view, from, &fit_query::hard(view, left), chosen.iter().map(|t| t.job))
}

/// The lowest active job `>= from` that the index of jobs says may have a runnable stage whose
/// lowest task fits the fit query `query` ([`View::next_job_may_fit`]), or the lowest of
/// `also` `>= from` (jobs a policy must look at whatever the index says, such as those it took
/// tasks from in this heartbeat), whichever is lower.
pub(crate) fn next_job_may_fit_or(
    view: &View,
    from: u32,
    query: &ResVec,
    also: impl IntoIterator<Item = u32>,
) -> Option<u32> {
    let by_index = view.next_job_may_fit(from, query);
    let by_also = also.into_iter().filter(|&j| j >= from).min();
    match (by_index, by_also) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Appends to `out`, in stage order, the runnable stages of `job` whose lowest runnable task
/// fits the fit query `query` ([`fit_query`]): by one walk of the job's fit index, or every
/// runnable stage when the job has few (or no index), for the caller to test. For a policy that
/// scores every fitting stage (Tetris, Graphene) at the start of a heartbeat, before it chose
/// any of the job's tasks.
pub(crate) fn fitting_stages(view: &View, job: u32, query: &ResVec, out: &mut Vec<u32>) {
    let st = view.job_state(job);
    if !st.may_fit(query) {
        return;
    }
    match st.fit_index() {
        Some(idx) if st.runnable_stages.len() > crate::sim::fit_index::SCAN_AT_MOST => idx.all_fitting(query, out),
        _ => out.extend_from_slice(&st.runnable_stages),
    }
}

/// True when `demand` fits `free` on every resource that cannot be overbooked: what YARN's
/// schedulers check (they account for cores and memory only, so disk and network overbook).
pub fn fits(view: &View, demand: &ResVec, free: &ResVec) -> bool {
    let hard = view.hard;
    (0..view.dims).all(|r| !hard[r] || fits_in(demand.0[r], free.0[r]))
}

/// True when `demand` fits `free` on every resource, overbookable ones included: Tetris packs
/// every resource it knows and never overbooks (as the Graphene paper's Tez + Tetris runs).
/// An overbookable demand above the machine's whole capacity `cap` counts as the capacity, so
/// such a task still runs on an idle machine instead of never.
pub fn fits_all(view: &View, demand: &ResVec, free: &ResVec, cap: &ResVec) -> bool {
    let hard = view.hard;
    (0..view.dims).all(|r| {
        let d = if hard[r] { demand.0[r] } else { demand.0[r].min(cap.0[r]) };
        fits_in(d, free.0[r])
    })
}

fn fits_in(demand: f64, free: f64) -> bool {
    demand <= free * (1.0 + crate::model::CAPACITY_EPS) + crate::model::CAPACITY_EPS
}
