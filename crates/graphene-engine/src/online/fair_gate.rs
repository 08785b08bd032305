//! Graphene's bounded unfairness (deficit counters with the look-ahead rule) as a gate that any
//! one-task-at-a-time picker can sit behind.
//!
//! Why: comparing Graphene's online part with Tetris is only meaningful at equal fairness.
//! Graphene pays for keeping queues within kappa x C of their shares; Tetris's baseline pays
//! nothing. With the gate, `tetris --tetris-kappa K` keeps exactly the same counters, charged
//! the same way ([`Charge`], [`FairnessMode`] of Graphene's settings), among the same
//! *contending* queues (those with a candidate that fits what is left of the machine), with the
//! same strict-then-fallback rule, so the two can be compared with the same bound as well as
//! both without.
//!
//! Use: [`FairGate::begin`] at the start of a heartbeat; per pick, [`FairGate::allowed`] over the
//! candidates' groups (a strict pass, then a fallback pass if the strict one allowed nothing);
//! [`FairGate::chose`] for the task picked; the simulator's `launched` callback then calls
//! [`FairGate::launched`], which charges the real counters with the contending set the choice was
//! made under.

use std::collections::VecDeque;

use super::accruing::Accruing;
use super::{Charge, TaskRef};
use crate::fairness::{Deficits, FairnessMode};
use crate::model::ResVec;
use crate::sim::View;

pub(crate) struct FairGate {
    deficits: Deficits,
    tentative: Deficits,
    fairness: FairnessMode,
    charge: Charge,
    equal_shares: bool,
    capacity_set: bool,
    pending: VecDeque<(TaskRef, usize)>,
    sets: Vec<Vec<bool>>,
    accruing: Accruing,
}

impl FairGate {
    /// `shares` per queue index (empty: equal shares for every queue seen); `kappa` as
    /// Graphene's `--kappa` (None: the gate lets everything through).
    pub fn new(shares: Vec<f64>, kappa: Option<f64>, fairness: FairnessMode, charge: Charge) -> FairGate {
        let equal_shares = shares.is_empty();
        let deficits = Deficits::new(shares, kappa, fairness);
        FairGate {
            tentative: deficits.clone(),
            deficits,
            fairness,
            charge,
            equal_shares,
            capacity_set: false,
            pending: VecDeque::new(),
            sets: Vec::new(),
            accruing: Accruing::new(charge),
        }
    }

    pub fn enabled(&self) -> bool {
        self.deficits.limit().is_some()
    }

    pub fn deficits(&self) -> &Deficits {
        &self.deficits
    }

    /// Makes room for queue `g` (a queue first seen in the trace after the start).
    pub fn ensure_group(&mut self, view: &View, g: usize) {
        if g >= self.deficits.len() {
            let share = if self.equal_shares { 1.0 } else { 0.0 };
            self.deficits.grow(g + 1, share);
        }
        if self.fairness == FairnessMode::Slot && !self.capacity_set {
            // Slot mode measures C in tasks: one task per machine, as Graphene does.
            self.deficits = self.deficits.clone().with_capacity(view.caps.len() as f64);
            self.capacity_set = true;
        }
    }

    /// What launching task `t` of `job` charges (the same as Graphene's counters).
    pub fn charge_of(&self, view: &View, total: &ResVec, job: u32, t: u32) -> f64 {
        let f = self.fairness.factor(&view.requested(job, t), total, view.dims);
        self.charge.amount(f, view.estimated_duration(job, t), self.deficits.limit())
    }

    /// Starts a heartbeat: the tentative counters follow this heartbeat's picks.
    pub fn begin(&mut self, view: &View) {
        self.tentative = self.deficits.clone();
        self.accruing.project(&mut self.tentative, view);
        self.pending.clear();
        self.sets.clear();
    }

    /// Records the contending groups for the next pick; returns its index for [`FairGate::chose`].
    pub fn contending(&mut self, groups: Vec<bool>) -> usize {
        self.sets.push(groups);
        self.sets.len() - 1
    }

    /// Whether a task of group `g` charging `charge` may be picked under contending set `set`:
    /// in the strict pass, only if no queue must be served first and no other contending queue
    /// would be lifted over the bound; in the fallback pass, only the most-owed contending queue.
    pub fn allowed(&self, set: usize, g: usize, charge: f64, strict: bool) -> bool {
        if !self.enabled() {
            return true;
        }
        let active = &self.sets[set];
        if strict {
            if self.tentative.must_serve_among(active).is_some_and(|m| m != g) {
                return false;
            }
            !self.tentative.would_exceed(g, charge, active)
        } else {
            self.tentative.most_owed_among(active).is_none_or(|m| m == g)
        }
    }

    /// Task `t` of group `g` was picked under contending set `set`.
    pub fn chose(&mut self, t: TaskRef, g: usize, charge: f64, set: usize) {
        if self.enabled() {
            self.tentative.charge_among(g, charge, &self.sets[set]);
            self.pending.push_back((t, set));
        }
    }

    /// A job arrived (call after [`FairGate::ensure_group`]).
    pub fn arrived(&mut self, view: &View) {
        if self.enabled() {
            self.accruing.arrived(&mut self.deficits, view);
        }
    }

    /// A task finished.
    pub fn finished(&mut self, view: &View, t: TaskRef) {
        if self.enabled() {
            self.accruing.finished(&mut self.deficits, view, t);
        }
    }

    /// The simulator launched `t` (of queue `g`, charging `charge`; `total`: the cluster's
    /// capacity, for the accruing unit).
    pub fn launched(&mut self, view: &View, total: &ResVec, t: TaskRef, g: usize, charge: f64) {
        if !self.enabled() {
            return;
        }
        let unit = self.fairness.factor(&view.requested(t.job, t.task), total, view.dims);
        while self.pending.front().is_some_and(|&(p, _)| p != t) {
            self.pending.pop_front();
        }
        match self.pending.pop_front() {
            Some((_, set)) => self.deficits.charge_among(g, charge, &self.sets[set]),
            None => self.deficits.charge(g, charge),
        }
        self.accruing.launched(&mut self.deficits, view, t, g, unit);
    }
}
