//! `tetris`: Tetris's packing score plus shortest remaining work, over runnable tasks only (no
//! DAG awareness beyond which tasks are runnable), from one queue-agnostic pool by default
//! (Tetris's fairness knob off). With `--tetris-kappa K` the picks pass through the same
//! deficit-counter bound as Graphene's (`fair_gate`): among the queues contending for the
//! machine, a pick may not lift another queue over K x C, and a queue at the bound is served
//! first, so the two can be compared at equal fairness. Tetris packs every resource, disk and network included, and never
//! overbooks: a task is a candidate only if it fits the machine's free vector in every dimension.
//!
//! For machine m with what is left of its free vector A after the tasks chosen so far:
//! * alignment(t) = dot(req(t) / cap(m), max(A, 0) / cap(m)), req the requested demand;
//! * rem(j) = the job's remaining work: sum over its not-yet-launched tasks of estimated
//!   duration x sum over resources of req / cluster total, kept incrementally;
//! * score(t) = alignment(t) - eps x rem(j) / mean rem over the jobs that have a candidate,
//!   with eps = the mean alignment of this pass's candidates.
//!
//! That is the Tetris paper's (SIGCOMM'14) combination as we read it: eps is a multiple m of the
//! mean alignment over the mean remaining-work score, so the two terms have comparable magnitude
//! whatever the units of the trace; here m = 1 (the paper tunes m). The paper's text is not
//! among `../shared/papers`, so the reading is not checked against the source; public
//! reimplementations we read compute the weight from the current batch's average scores too.
//! Equal alignments resolve to the job with less work left (SRPT); very different alignments
//! still win. This is the default ([`SrptScale::Mean`]).
//!
//! [`SrptScale::Max`] (`--tetris-srpt-scale max`) scales the term by the *largest* remaining work among the
//! candidates' jobs instead: the job with the most work left loses one average alignment. Why
//! the mean is the stronger baseline: with the maximum, a queue of heavy-tailed jobs (one job
//! with 1,000x the work of the rest) squeezes every other job's term to about 0 and alignment
//! alone decides among them; with the mean the big jobs are pushed far down and the small ones
//! compete by work left and alignment (on held-out TPC-H workloads graphene's median gain over
//! Tetris is about 14% against the maximum's scale and about 8% against the mean's).
//!
//! Candidates are stage-level: in every runnable stage, the lowest-id runnable task not chosen
//! yet in this heartbeat stands for the stage (tasks of a stage share their demand in the
//! traces we replay). Ties: earlier job (arrival order), then lower stage. One pass per
//! launched task; the heartbeat ends when nothing fits.
//!
//! Cost: the fitting stages are found once per heartbeat, in the jobs the replay's index of
//! jobs gives and by those jobs' fit indexes (not by asking every active job and trying every
//! runnable stage), and after each pick the list is only filtered (what is left of the machine
//! shrinks, so nothing that did not fit comes back) and the picked stage's next task takes its
//! place. A pass still reads every candidate, in two sweeps (one sets and sums their remaining
//! work and alignments, one scores them): eps and the remaining-work scale are means over all
//! of them, so the pick depends on each, and any shortcut that summed them in another order
//! would change picks by rounding.

use std::collections::HashMap;

use super::fair_gate::FairGate;
use super::{fit_query, fits_all, fitting_stages, work, Charge, Policy, TaskRef};
use crate::fairness::FairnessMode;
use crate::model::ResVec;
use crate::sim::View;

/// A stage-level candidate: the job, its stage and the task standing for it.
#[derive(Clone, Copy)]
pub(crate) struct Cand {
    pub job: u32,
    pub stage: u32,
    pub task: u32,
    pub align: f64,
    /// The task's requested demand, and that over the machine's capacity (what its alignment
    /// is the dot product of): kept here because every pass after a pick recomputes each
    /// candidate's alignment and fit, and reading them from the job's DAG again was a load from
    /// memory per candidate per pass.
    pub demand: ResVec,
    pub share: ResVec,
    /// The job's remaining work less what this heartbeat already took from it (Tetris's
    /// SRPT term; set by [`Tetris`] before it picks, once per pass instead of per comparison).
    pub rem: f64,
}

/// How many tasks of each stage this heartbeat took so far (not launched yet): a stage's chosen
/// tasks are always its lowest runnable ones, as each pass offers the lowest one not chosen.
#[derive(Default)]
pub(crate) struct Chosen {
    per_stage: HashMap<(u32, u32), usize>,
}

impl Chosen {
    fn in_stage(&self, job: u32, stage: u32) -> usize {
        self.per_stage.get(&(job, stage)).copied().unwrap_or(0)
    }
}

/// What is free of the machine as alignment reads it: `left` within `[0, cap]`, over `cap`.
fn free_share(left: &ResVec, cap: &ResVec) -> ResVec {
    let mut a = *left;
    for x in a.0.iter_mut() {
        *x = x.max(0.0);
    }
    // With an overbooking allowance `left` can exceed the machine; alignment counts at most the
    // machine's capacity as free.
    for (x, c) in a.0.iter_mut().zip(cap.0.iter()) {
        *x = x.min(*c);
    }
    a.normalized_by(cap)
}

/// The candidates at the start of a heartbeat (nothing chosen yet): every runnable stage's
/// lowest runnable task that fits `left`, with its alignment on machine capacity `cap`; in job
/// (arrival) then stage order. Only the jobs the replay's index of jobs gives and the stages
/// their fit indexes give for Tetris's test ([`fit_query::all`]) are visited, so the cost is
/// the jobs and stages that fit, not every active job and runnable stage. `stages` is scratch.
pub(crate) fn candidates(view: &View, cap: &ResVec, left: &ResVec, stages: &mut Vec<u32>, cands: &mut Vec<Cand>) {
    cands.clear();
    let a = free_share(left, cap);
    let query = fit_query::all(view, left, cap);
    // Only the jobs that may have a fitting stage, by the replay's index of jobs: on a busy
    // machine most active jobs have none, and looking at each was most of a heartbeat.
    let mut from = 0;
    while let Some(job) = view.next_job_may_fit(from, &query) {
        from = job + 1;
        let st = view.job_state(job);
        stages.clear();
        fitting_stages(view, job, &query, stages);
        for &s in stages.iter() {
            let Some(&t) = st.runnable_in(s).last() else { continue };
            let d = view.requested(job, t);
            if fits_all(view, &d, left, cap) {
                let share = d.normalized_by(cap);
                cands.push(Cand { job, stage: s, task: t, align: share.dot(&a), demand: d, share, rem: 0.0 });
            }
        }
    }
}

/// The candidates after `cands[i]` was taken ([`take`], which took its demand off `left`): the
/// taken stage is represented by its next runnable task not chosen, every candidate that no
/// longer fits `left` leaves, and the alignments are recomputed. Exactly what [`candidates`]
/// would find again: what is left only shrinks within a heartbeat, so no stage that did not
/// fit before fits now, and only the taken stage's representative changed.
pub(crate) fn after_take(view: &View, cap: &ResVec, left: &ResVec, chosen: &Chosen, cands: &mut Vec<Cand>, i: usize) {
    let c = cands[i];
    let next = view.job_state(c.job).runnable_in(c.stage).iter().rev().nth(chosen.in_stage(c.job, c.stage));
    match next {
        Some(&t) => {
            let d = view.requested(c.job, t);
            cands[i] = Cand { task: t, demand: d, share: d.normalized_by(cap), ..c };
        }
        None => {
            cands.remove(i);
        }
    }
    let a = free_share(left, cap);
    cands.retain_mut(|c| {
        c.align = c.share.dot(&a);
        fits_all(view, &c.demand, left, cap)
    });
}

/// The index of the highest-scoring candidate; the first one wins ties (candidates come in job
/// then stage order, so ties go to the earlier job).
pub(crate) fn best(cands: &[Cand], score: impl Fn(&Cand) -> f64) -> usize {
    let Some(first) = cands.first() else { return 0 };
    let (mut best, mut top) = (0, score(first));
    for (i, c) in cands.iter().enumerate().skip(1) {
        let s = score(c);
        if s > top {
            (best, top) = (i, s);
        }
    }
    best
}

/// What a heartbeat may give out on a machine of capacity `cap` with `free` unused: `free`,
/// plus `(overbook - 1) x cap` of every soft resource when overbooking is allowed (`overbook` >
/// 1).
pub(crate) fn with_allowance(view: &View, free: &ResVec, cap: &ResVec, overbook: f64) -> ResVec {
    let mut left = *free;
    if overbook > 1.0 {
        for r in 0..view.dims {
            if !view.hard[r] {
                left.0[r] += (overbook - 1.0) * cap.0[r];
            }
        }
    }
    left
}

/// The fairness bound on one pass's candidates: `kept` gets the candidates `gate` allows
/// strictly, else (none) those it allows as a fallback. Returns the contending set the choice
/// is charged to; `kept` empty means no candidate may run.
pub(crate) fn gate_filter(
    gate: &mut FairGate,
    view: &View,
    total: &ResVec,
    cands: &[Cand],
    kept: &mut Vec<Cand>,
) -> usize {
    let mut groups = vec![false; gate.deficits().len()];
    for c in cands {
        if let Some(g) = groups.get_mut(view.queue(c.job) as usize) {
            *g = true;
        }
    }
    let set = gate.contending(groups);
    let charge = |c: &Cand| gate.charge_of(view, total, c.job, c.task);
    let ok = |c: &Cand, strict| gate.allowed(set, view.queue(c.job) as usize, charge(c), strict);
    kept.clear();
    kept.extend(cands.iter().copied().filter(|c| ok(c, true)));
    if kept.is_empty() {
        kept.extend(cands.iter().copied().filter(|c| ok(c, false)));
    }
    set
}

/// Launches `cands[i]` from this heartbeat's bookkeeping: records it, takes its demand off
/// `left` and updates the candidates ([`after_take`]).
pub(crate) fn take(
    view: &View,
    cap: &ResVec,
    cands: &mut Vec<Cand>,
    i: usize,
    left: &mut ResVec,
    chosen: &mut Chosen,
    out: &mut Vec<TaskRef>,
) {
    let c = cands[i];
    left.sub_assign(&c.demand);
    *chosen.per_stage.entry((c.job, c.stage)).or_insert(0) += 1;
    out.push(TaskRef { job: c.job, task: c.task });
    after_take(view, cap, left, chosen, cands, i);
}

pub struct Tetris {
    /// Remaining (not yet launched) work per job, by job id (0 once it finished).
    rem: Vec<f64>,
    total: Option<ResVec>,
    /// Scratch: this heartbeat's candidates, those the fairness gate keeps, a job's stages.
    cands: Vec<Cand>,
    kept: Vec<Cand>,
    stages: Vec<u32>,
    taken: Taken,
    gate: FairGate,
    /// Overbookable resources may be allocated up to this multiple of a machine's capacity
    /// (1: never, Tetris as its paper and the Graphene paper's Tez + Tetris runs).
    overbook: f64,
    scale: SrptScale,
}

/// What the remaining-work term is scaled by (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SrptScale {
    /// The largest remaining work among the candidates' jobs.
    Max,
    /// The mean remaining work among the candidates' jobs (the Tetris paper's eps, m = 1).
    #[default]
    Mean,
}

impl Default for Tetris {
    fn default() -> Self {
        Tetris::new()
    }
}

impl Tetris {
    /// Tetris as its baseline runs: one pool, no fairness.
    pub fn new() -> Tetris {
        Tetris::fair(Vec::new(), None, FairnessMode::Drf, Charge::Time)
    }

    /// Tetris behind Graphene's deficit-counter bound: `shares` per queue, `kappa` of the
    /// cluster (None: off), counters charged as Graphene's are (`fairness`, `charge`).
    pub fn fair(shares: Vec<f64>, kappa: Option<f64>, fairness: FairnessMode, charge: Charge) -> Tetris {
        Tetris {
            rem: Vec::new(),
            total: None,
            cands: Vec::new(),
            kept: Vec::new(),
            stages: Vec::new(),
            taken: Taken::default(),
            gate: FairGate::new(shares, kappa, fairness, charge),
            overbook: 1.0,
            scale: SrptScale::default(),
        }
    }

    /// Scales the remaining-work term by the candidates' largest or mean remaining work.
    pub fn with_srpt_scale(mut self, scale: SrptScale) -> Tetris {
        self.scale = scale;
        self
    }

    /// Lets overbookable resources be allocated up to `x` x capacity, as Graphene's
    /// `--overbook-limit` does, so that the two can be compared at equal overbooking.
    pub fn with_overbook(mut self, x: f64) -> Tetris {
        self.overbook = if x.is_finite() { x.max(1.0) } else { 1.0 };
        self
    }

    /// The deficit counters (all zero when the bound is off).
    pub fn deficits(&self) -> &crate::fairness::Deficits {
        self.gate.deficits()
    }

    fn total(&mut self, view: &View) -> ResVec {
        *self.total.get_or_insert_with(|| view.caps.iter().fold(ResVec::ZERO, |a, c| a.add(c)))
    }

    /// Tetris's choice among `cands`: alignment minus eps x remaining work over its mean (or
    /// max). Sets each candidate's remaining work first (its job's, less what `taken`, this
    /// heartbeat's choices so far, already took from it). One sweep sets them and sums them and
    /// the alignments (each sum as `Iterator::sum` adds, from -0.0 in candidate order, so the
    /// same bits as summing each separately), a second scores: a pass reads each candidate twice.
    fn pick(&self, cands: &mut [Cand], taken: &Taken) -> usize {
        let (mut rem_sum, mut rem_max, mut align_sum) = (-0.0f64, 0.0f64, -0.0f64);
        for c in cands.iter_mut() {
            c.rem = (self.rem.get(c.job as usize).copied().unwrap_or(0.0) - taken.of(c.job)).max(0.0);
            rem_sum += c.rem;
            rem_max = f64::max(rem_max, c.rem);
            align_sum += c.align;
        }
        let norm = match self.scale {
            SrptScale::Max => rem_max,
            SrptScale::Mean => rem_sum / cands.len() as f64,
        };
        let eps = align_sum / cands.len() as f64;
        best(cands, |c: &Cand| {
            let r = if norm > 0.0 { c.rem / norm } else { 0.0 };
            c.align - eps * r
        })
    }
}

/// Work of the tasks a heartbeat chose so far, by job id, looked up for every candidate of
/// every pass (an index, not a hash); kept across heartbeats, with only the jobs a heartbeat
/// touched set back to zero when it ends.
#[derive(Default)]
struct Taken {
    by_job: Vec<f64>,
    touched: Vec<u32>,
}

impl Taken {
    fn of(&self, job: u32) -> f64 {
        self.by_job.get(job as usize).copied().unwrap_or(0.0)
    }

    fn add(&mut self, job: u32, w: f64) {
        let j = job as usize;
        if self.by_job.len() <= j {
            self.by_job.resize(j + 1, 0.0);
        }
        self.by_job[j] += w;
        self.touched.push(job);
    }

    fn clear(&mut self) {
        for &j in &self.touched {
            self.by_job[j as usize] = 0.0;
        }
        self.touched.clear();
    }
}

impl Policy for Tetris {
    fn name(&self) -> String {
        "tetris".into()
    }

    fn job_arrived(&mut self, view: &View, job: u32) {
        let total = self.total(view);
        let w = (0..view.dag(job).len() as u32).map(|t| work(view, &total, job, t)).sum();
        if self.rem.len() <= job as usize {
            self.rem.resize(job as usize + 1, 0.0);
        }
        self.rem[job as usize] = w;
        self.gate.ensure_group(view, view.queue(job) as usize);
        self.gate.arrived(view);
    }

    /// An empty heartbeat changes only the gate's per-heartbeat scratch (`begin` resets it).
    fn idle_is_stable(&self) -> bool {
        true
    }

    fn assign(&mut self, view: &View, machine: usize, free: &ResVec, out: &mut Vec<TaskRef>) {
        let total = self.total(view);
        let Some(cap) = view.caps.get(machine).copied() else { return };
        let mut left = with_allowance(view, free, &cap, self.overbook);
        let mut chosen = Chosen::default();
        // Work of the tasks chosen in this heartbeat, not launched yet.
        let mut taken = std::mem::take(&mut self.taken);
        let mut cands = std::mem::take(&mut self.cands);
        let mut kept = std::mem::take(&mut self.kept);
        candidates(view, &cap, &left, &mut self.stages, &mut cands);
        self.gate.begin(view);
        while !cands.is_empty() {
            let i = if self.gate.enabled() {
                // The bound: keep only the candidates the gate allows (strict, else fallback).
                let set = gate_filter(&mut self.gate, view, &total, &cands, &mut kept);
                if kept.is_empty() {
                    break;
                }
                let k = self.pick(&mut kept, &taken);
                let c = kept[k];
                let f = self.gate.charge_of(view, &total, c.job, c.task);
                self.gate.chose(TaskRef { job: c.job, task: c.task }, view.queue(c.job) as usize, f, set);
                cands.iter().position(|x| x.job == c.job && x.task == c.task).expect("a kept candidate is a candidate")
            } else {
                self.pick(&mut cands, &taken)
            };
            let c = cands[i];
            taken.add(c.job, work(view, &total, c.job, c.task));
            take(view, &cap, &mut cands, i, &mut left, &mut chosen, out);
        }
        taken.clear();
        self.taken = taken;
        self.kept = kept;
        self.cands = cands;
    }

    fn launched(&mut self, view: &View, t: TaskRef) {
        let total = self.total(view);
        if self.gate.enabled() {
            let f = self.gate.charge_of(view, &total, t.job, t.task);
            self.gate.launched(view, &total, t, view.queue(t.job) as usize, f);
        }
        if let Some(r) = self.rem.get_mut(t.job as usize) {
            *r = (*r - work(view, &total, t.job, t.task)).max(0.0);
        }
    }

    fn finished(&mut self, view: &View, t: TaskRef) {
        self.gate.finished(view, t);
        if view.job_state(t.job).left == 0 {
            if let Some(r) = self.rem.get_mut(t.job as usize) {
                *r = 0.0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two candidates: job 1 aligns four times better but has 1,000x the work left of job 2.
    /// Scaled by the largest remaining work (eps = 2.5, terms 1 and 0.001) job 1 wins by
    /// 4 - 2.5 = 1.5 against 1 - 0.0025; scaled by the mean (terms 1.998 and 0.002) it loses,
    /// 4 - 4.995 against 1 - 0.005: the paper's scaling lets the short job through.
    #[test]
    fn the_srpt_scale_decides_between_alignment_and_work_left() {
        let mut cands = [
            Cand { job: 1, stage: 0, task: 0, align: 4.0, demand: ResVec::ZERO, share: ResVec::ZERO, rem: 0.0 },
            Cand { job: 2, stage: 0, task: 0, align: 1.0, demand: ResVec::ZERO, share: ResVec::ZERO, rem: 0.0 },
        ];
        let mut t = Tetris::new().with_srpt_scale(SrptScale::Max);
        t.rem = vec![0.0, 1000.0, 1.0];
        assert_eq!(t.pick(&mut cands, &Taken::default()), 0);
        let t = Tetris { scale: SrptScale::Mean, ..t };
        assert_eq!(t.pick(&mut cands, &Taken::default()), 1);
        // The default is the paper's scaling.
        assert_eq!(Tetris::new().scale, SrptScale::Mean);
        // What this heartbeat already took from job 1 counts as done: with 999.5 of its work
        // taken, job 1 has less left than job 2 and wins under either scale.
        let mut taken = Taken::default();
        taken.add(1, 999.5);
        assert_eq!(t.pick(&mut cands, &taken), 0);
    }
}
