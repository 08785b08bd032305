//! Deficit counters for Graphene's bounded unfairness across groups (queues).
//!
//! Every group `g` has a fair share `s(g)` and a deficit `d(g)`: how much it is owed. When a
//! task of group `g` is scheduled with weight `f` (the *factor*), `d(g) += f * (s(g) - 1)` and
//! every other group gets `d(g') += f * s(g')`. The factor is 1 for slot fairness and the task's
//! dominant share of the cluster (max over resources of demand / total capacity) for DRF.
//!
//! Shares are renormalised over the *active* groups of each allocation (groups that have work to
//! run right now), so the active deficits always sum to the same value and a group with nothing
//! to run is neither charged nor credited: like deficit round robin, an idle queue cannot bank
//! credit it never asked for. Its counter is frozen until it has work again.
//!
//! **Unit of C.** The bound `kappa * C` is measured in the factor's unit. In DRF mode the factor
//! is a fraction of the whole cluster, so the cluster is `C = 1`. In slot mode the factor counts
//! tasks, and the simulator has no slots; callers pass `C` explicitly (Graphene uses the machine
//! count: `kappa * C` is then "kappa machines' worth" of one task per machine).
//!
//! **Strict invariant (what Graphene's online scheduler does).** Let `K = kappa * C` and `F` the
//! largest factor of any single allocation. Serve group `g` only if the charge keeps every other
//! active deficit at most `K` ([`Deficits::would_exceed`] is false); only when every active
//! group's allocation would lift some other group over `K` is the most-owed group served anyway.
//! * Two groups, `F <= K`: every deficit stays at most `K`, at all times (proved, and tested).
//!   Proof: deficits start at 0. With both active they are `d` and `-d` (renormalised shares
//!   `s1 + s2 = 1`), and only a charge to the *other* group raises one. Suppose both were
//!   blocked: `d2 + f1 s2 > K` and `d1 + f2 s1 > K`; adding, `f1 s2 + f2 s1 > 2K`, but the left
//!   side is at most `F (s1 + s2) = F <= K`. So some group may always be served, and no charge
//!   that is made lifts anyone over `K`. With one group active nothing changes.
//! * More groups: the fall-back can fire (three groups near `K` with one far below); every
//!   deficit then stays within `K + 2F` in the property test over up to five groups (the same
//!   observed bound as without look-ahead; not proved).
//!
//! **Invariant without look-ahead.** Let every allocation obey only
//! [`Deficits::must_serve_among`] (when it names a group, the task comes from that group).
//! Deficits start at zero.
//! * Two groups (proved, and tested): every deficit stays at most `K + F`. Proof: with both
//!   active the deficits are `d` and `-d`; a group's deficit rises only when the other group is
//!   served, which happens either freely (then every deficit was below `K`, and it rises by at
//!   most `F`) or because the other one is the most owed (then this one was `<= 0`, and rises to
//!   at most `F`). With one group active its renormalised share is 1 and nothing changes.
//! * More groups: `K + F` can be exceeded (serving the most-owed group credits a runner-up by up
//!   to `F` times its share, and varying factors can ratchet that); the tested bound is `K + 2F`
//!   (property test over up to five groups, random shares, factors and active sets; not proved).
//!
//! The extra `F` is unavoidable: a group just below `K` is credited by the very allocation a
//! less-owed group receives. [`Deficits::max_seen`] records the largest deficit ever reached so
//! callers and tests can check the bound.

/// What one allocation is charged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FairnessMode {
    /// Every task counts 1.
    Slot,
    /// Every task counts its dominant share of the cluster's total capacity.
    Drf,
}

impl FairnessMode {
    /// The factor of a task with `demand` on a cluster of `total` capacity over `dims` resources.
    pub fn factor(&self, demand: &crate::model::ResVec, total: &crate::model::ResVec, dims: usize) -> f64 {
        match self {
            FairnessMode::Slot => 1.0,
            FairnessMode::Drf => {
                (0..dims).filter(|&r| total.0[r] > 0.0).map(|r| demand.0[r].max(0.0) / total.0[r]).fold(0.0, f64::max)
            }
        }
    }
}

#[derive(Clone, Debug)]
pub struct Deficits {
    shares: Vec<f64>,
    deficit: Vec<f64>,
    kappa: Option<f64>,
    mode: FairnessMode,
    capacity: f64,
    max_seen: f64,
}

impl Deficits {
    /// One counter per entry of `shares` (negative or non-finite shares count as 0; the shares
    /// need not sum to 1, they are renormalised per allocation). `C` defaults to 1, the right
    /// value for DRF; set it with [`Deficits::with_capacity`] for slot mode.
    pub fn new(shares: Vec<f64>, kappa: Option<f64>, mode: FairnessMode) -> Deficits {
        let shares: Vec<f64> = shares.into_iter().map(|s| if s.is_finite() && s > 0.0 { s } else { 0.0 }).collect();
        let n = shares.len();
        Deficits {
            shares,
            deficit: vec![0.0; n],
            kappa: kappa.filter(|k| k.is_finite()),
            mode,
            capacity: 1.0,
            max_seen: 0.0,
        }
    }

    /// Sets `C`, the cluster capacity in the factor's unit.
    pub fn with_capacity(mut self, c: f64) -> Deficits {
        self.capacity = if c.is_finite() && c > 0.0 { c } else { 1.0 };
        self
    }

    /// Starts the counters at `deficits` (missing groups at 0, extra values ignored): for a
    /// scheduler that keeps them outside this type, as the ResourceManager's does.
    pub fn with_deficits(mut self, deficits: &[f64]) -> Deficits {
        for (d, &v) in self.deficit.iter_mut().zip(deficits) {
            *d = if v.is_finite() { v } else { 0.0 };
        }
        self
    }

    pub fn mode(&self) -> FairnessMode {
        self.mode
    }

    pub fn len(&self) -> usize {
        self.shares.len()
    }

    pub fn is_empty(&self) -> bool {
        self.shares.is_empty()
    }

    /// Adds groups up to `n` with `share` each (for queues that show up late).
    pub fn grow(&mut self, n: usize, share: f64) {
        while self.shares.len() < n {
            self.shares.push(if share.is_finite() && share > 0.0 { share } else { 0.0 });
            self.deficit.push(0.0);
        }
    }

    pub fn deficit(&self, g: usize) -> f64 {
        self.deficit.get(g).copied().unwrap_or(0.0)
    }

    pub fn deficits(&self) -> &[f64] {
        &self.deficit
    }

    /// The largest deficit any group ever reached.
    pub fn max_seen(&self) -> f64 {
        self.max_seen
    }

    /// `kappa * C`, when kappa is set.
    pub fn limit(&self) -> Option<f64> {
        self.kappa.map(|k| k * self.capacity)
    }

    /// Charges an allocation of factor `factor` to group `g`, every group being active.
    pub fn charge(&mut self, g: usize, factor: f64) {
        let all = vec![true; self.shares.len()];
        self.charge_among(g, factor, &all);
    }

    /// Charges an allocation to group `g` with shares renormalised over the groups marked in
    /// `active` (`g` always counts as active). If the active shares sum to 0, they count as
    /// equal. Groups out of range are ignored.
    pub fn charge_among(&mut self, g: usize, factor: f64, active: &[bool]) {
        if g >= self.shares.len() || !factor.is_finite() || factor <= 0.0 {
            return;
        }
        let is_active = |i: usize| i == g || active.get(i).copied().unwrap_or(false);
        let n_active = (0..self.shares.len()).filter(|&i| is_active(i)).count() as f64;
        let sum: f64 = (0..self.shares.len()).filter(|&i| is_active(i)).map(|i| self.shares[i]).sum();
        for i in 0..self.shares.len() {
            if !is_active(i) {
                continue;
            }
            let s = if sum > 0.0 { self.shares[i] / sum } else { 1.0 / n_active };
            if i == g {
                self.deficit[i] += factor * (s - 1.0);
            } else {
                self.deficit[i] += factor * s;
            }
            self.max_seen = self.max_seen.max(self.deficit[i]);
        }
    }

    /// The group with the largest deficit (ties: lowest index), if there is any group.
    pub fn most_owed(&self) -> Option<usize> {
        self.most_owed_among(&vec![true; self.shares.len()])
    }

    /// The most owed among the groups marked in `active` (ties: lowest index).
    pub fn most_owed_among(&self, active: &[bool]) -> Option<usize> {
        let mut best: Option<usize> = None;
        for i in 0..self.deficit.len() {
            if !active.get(i).copied().unwrap_or(false) {
                continue;
            }
            if best.is_none_or(|b| self.deficit[i] > self.deficit[b]) {
                best = Some(i);
            }
        }
        best
    }

    /// The group that must get the next allocation: the most owed one, when its deficit has
    /// reached `kappa * C`. `None` when kappa is unset or no group is that far behind.
    pub fn must_serve(&self) -> Option<usize> {
        self.must_serve_among(&vec![true; self.shares.len()])
    }

    /// As [`Deficits::must_serve`], considering only the groups marked in `active` (a group with
    /// nothing to run cannot be served).
    pub fn must_serve_among(&self, active: &[bool]) -> Option<usize> {
        let limit = self.limit()?;
        let g = self.most_owed_among(active)?;
        (self.deficit[g] >= limit).then_some(g)
    }

    /// The look-ahead rule: whether charging `factor` to `g` (shares renormalised over `active`,
    /// as [`Deficits::charge_among`] does) would lift another active group above `kappa * C`.
    /// A scheduler that skips such allocations keeps every deficit within the bound itself,
    /// not just within one allocation of it (see the module docs). False when kappa is unset.
    pub fn would_exceed(&self, g: usize, factor: f64, active: &[bool]) -> bool {
        let Some(limit) = self.limit() else { return false };
        if g >= self.shares.len() || !factor.is_finite() || factor <= 0.0 {
            return false;
        }
        let is_active = |i: usize| i == g || active.get(i).copied().unwrap_or(false);
        let n_active = (0..self.shares.len()).filter(|&i| is_active(i)).count() as f64;
        let sum: f64 = (0..self.shares.len()).filter(|&i| is_active(i)).map(|i| self.shares[i]).sum();
        (0..self.shares.len()).any(|i| {
            i != g && is_active(i) && {
                let s = if sum > 0.0 { self.shares[i] / sum } else { 1.0 / n_active };
                self.deficit[i] + factor * s > limit
            }
        })
    }
}

/// Deficit charges that accrue while tasks run, instead of all at launch.
///
/// Why: a launch charged its whole estimated resource-time up front makes one 2,000 s task
/// look like half an hour of unfairness the moment it starts, so the look-ahead rule either
/// never lets it pass or, once it has, leaves its queue deep in debt for half an hour while
/// the other queue is served ahead of it. Charging a running task's unit per second of its
/// *actual* run tracks what the counters are meant to track (resource-time held, as fairness
/// over a window and Jain's index measure it). A task may start accruing some seconds after
/// its launch: the caller charged that first part at launch, where the look-ahead rule can
/// still weigh it (nothing charged at launch lets a queue take every free machine for long
/// tasks before anyone is owed anything).
///
/// Between two events (an arrival, launch or finish) the groups with runnable work are
/// fixed, so [`Accrual::advance`] charges each group what its tasks accrued over the interval
/// among the groups that had runnable work: a group holding resources is charged, the groups
/// waiting for some are credited, and a group with nothing to run is neither. Charges are
/// applied at events only; a scheduler that looks between events uses [`Accrual::project`] on
/// a copy, so asking at any time changes nothing. Rates are in the charge's unit per second.
///
/// The bound then holds in the *without look-ahead* sense of the module docs, in time rather
/// than per allocation: a queue over `kappa x C` is served first as soon as capacity frees,
/// but running tasks are never preempted, so how far over the bound a deficit goes depends on
/// how long the others' tasks run.
#[derive(Clone, Debug, Default)]
pub struct Accrual {
    /// Running tasks: (job, task) -> (group, rate, when accrual starts).
    running: std::collections::HashMap<(u32, u32), (usize, f64, f64)>,
    /// Tasks whose accrual starts later (their first part was charged at launch), by start
    /// time: (start bits, job, task) -> (group, rate). Start times are non-negative, so their
    /// bits order as the numbers do.
    pending: std::collections::BTreeMap<(u64, u32, u32), (usize, f64)>,
    /// Per group: the summed rate of its accruing tasks, and how many there are (so that a
    /// group with none is exactly 0, whatever rounding the sum picked up).
    rate: Vec<(f64, usize)>,
    /// Groups with runnable work since the last event.
    active: Vec<bool>,
    /// Time of the last event.
    last: f64,
}

impl Accrual {
    pub fn new() -> Accrual {
        Accrual::default()
    }

    /// Per group, what the running tasks accrue from the last event to `now`.
    fn amounts(&self, now: f64) -> Vec<f64> {
        let mut out: Vec<f64> = self.rate.iter().map(|&(r, n)| if n > 0 { r } else { 0.0 }).collect();
        let dt = now - self.last;
        if dt.is_nan() || dt <= 0.0 {
            return vec![0.0; out.len()];
        }
        for a in &mut out {
            *a *= dt;
        }
        for (&(bits, _, _), &(g, rate)) in self.pending.range(..(now.to_bits(), 0, 0)) {
            let from = f64::from_bits(bits).max(self.last);
            if now > from {
                out[g] += rate * (now - from);
            }
        }
        out
    }

    /// Charges `deficits` for the running tasks from the last event to `now` and moves the
    /// clock there.
    pub fn advance(&mut self, deficits: &mut Deficits, now: f64) {
        self.project(deficits, now);
        if now > self.last {
            let due: Vec<_> = self.pending.range(..(now.to_bits(), 0, 0)).map(|(&k, &v)| (k, v)).collect();
            for (k, (g, rate)) in due {
                self.pending.remove(&k);
                self.rate[g].0 += rate;
                self.rate[g].1 += 1;
            }
            self.last = now;
        }
    }

    /// What [`Accrual::advance`] would charge, applied to `deficits` (a copy) only.
    pub fn project(&self, deficits: &mut Deficits, now: f64) {
        for (g, a) in self.amounts(now).into_iter().enumerate() {
            if a > 0.0 {
                deficits.charge_among(g, a, &self.active);
            }
        }
    }

    /// Task `key` of group `g` started at `now`, accruing `rate` per second from `delay`
    /// seconds on (the part before was charged at launch). Call [`Accrual::advance`] first.
    pub fn start(&mut self, key: (u32, u32), g: usize, rate: f64, now: f64, delay: f64) {
        if !(rate.is_finite() && rate > 0.0) {
            return;
        }
        self.stop(key);
        if self.rate.len() <= g {
            self.rate.resize(g + 1, (0.0, 0));
        }
        let from = if delay.is_finite() && delay > 0.0 { now + delay } else { now };
        self.running.insert(key, (g, rate, from));
        if from > now {
            self.pending.insert((from.to_bits(), key.0, key.1), (g, rate));
        } else {
            self.rate[g].0 += rate;
            self.rate[g].1 += 1;
        }
    }

    /// Task `key` stopped (unknown keys are ignored). Call [`Accrual::advance`] first.
    pub fn stop(&mut self, key: (u32, u32)) {
        let Some((g, rate, from)) = self.running.remove(&key) else { return };
        if self.pending.remove(&(from.to_bits(), key.0, key.1)).is_none() {
            let r = &mut self.rate[g];
            r.1 -= 1;
            r.0 = if r.1 == 0 { 0.0 } else { (r.0 - rate).max(0.0) };
        }
    }

    /// The groups with runnable work from now until the next event.
    pub fn set_active(&mut self, active: Vec<bool>) {
        self.active = active;
    }

    /// Tasks accruing now or later.
    pub fn running(&self) -> usize {
        self.running.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ResVec;
    use proptest::prelude::*;

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
    }

    /// Shares 0.5 / 0.25 / 0.25, slot mode, all active.
    /// 1. g0 scheduled: d = (-0.5, 0.25, 0.25)
    /// 2. g0 again:     d = (-1.0, 0.5, 0.5)
    /// 3. g1:           d = (-0.5, -0.25, 0.75)
    /// 4. g2 with only g0 and g2 active (shares renormalised to 2/3, 1/3; g1 frozen):
    ///    d = (-0.5 + 2/3, -0.25, 0.75 - 2/3) = (1/6, -0.25, 1/12)
    #[test]
    fn deficit_arithmetic_by_hand() {
        let mut d = Deficits::new(vec![0.5, 0.25, 0.25], Some(0.5), FairnessMode::Slot).with_capacity(2.0);
        d.charge(0, 1.0);
        assert!(close(d.deficits(), &[-0.5, 0.25, 0.25]));
        d.charge(0, 1.0);
        assert!(close(d.deficits(), &[-1.0, 0.5, 0.5]));
        assert_eq!(d.most_owed(), Some(1), "ties go to the lowest index");
        assert_eq!(d.must_serve(), None, "0.5 < kappa * C = 1");
        d.charge(1, 1.0);
        assert!(close(d.deficits(), &[-0.5, -0.25, 0.75]));
        assert_eq!(d.most_owed(), Some(2));
        d.charge_among(2, 1.0, &[true, false, true]);
        assert!(close(d.deficits(), &[1.0 / 6.0, -0.25, 1.0 / 12.0]));
        assert!((d.max_seen() - 0.75).abs() < 1e-12);
        // Three more g1 allocations (all active) push g2 to 1/12 + 0.75 = 0.8333 and g0 to
        // 1/6 + 1.5 = 1.6667 >= 1: g0 must be served.
        for _ in 0..3 {
            d.charge(1, 1.0);
        }
        assert_eq!(d.must_serve(), Some(0));
        assert_eq!(d.must_serve_among(&[false, true, true]), None, "g2 at 0.8333 is below 1");
    }

    #[test]
    fn drf_factor_is_the_dominant_share() {
        let total = ResVec::from_slice(&[100.0, 400.0]);
        let f = FairnessMode::Drf.factor(&ResVec::from_slice(&[2.0, 40.0]), &total, 2);
        assert!((f - 0.1).abs() < 1e-12);
        assert_eq!(FairnessMode::Slot.factor(&ResVec::from_slice(&[2.0, 40.0]), &total, 2), 1.0);
    }

    #[test]
    fn no_kappa_never_forces() {
        let mut d = Deficits::new(vec![1.0, 1.0], None, FairnessMode::Slot);
        for _ in 0..100 {
            d.charge(0, 1.0);
        }
        assert_eq!(d.must_serve(), None);
        assert_eq!(d.most_owed(), Some(1));
        assert!((d.deficit(1) - 50.0).abs() < 1e-9);
        // Out-of-range and degenerate input is ignored, never a panic.
        d.charge(7, 1.0);
        d.charge(0, f64::NAN);
        assert!(Deficits::new(vec![], Some(0.1), FairnessMode::Drf).must_serve().is_none());
    }

    /// Runs random allocations and returns (max deficit seen, kappa * C, largest factor used).
    /// Plain: obey `must_serve_among`, free choice otherwise. `strict` (the look-ahead rule):
    /// free choice among the groups whose charge keeps every other deficit within `K`, the
    /// most-owed group when there is none.
    fn adversary(shares: Vec<f64>, kappa: f64, cap: f64, steps: &[(usize, f64, u32)], strict: bool) -> (f64, f64, f64) {
        let n = shares.len();
        let mut d = Deficits::new(shares, Some(kappa), FairnessMode::Drf).with_capacity(cap);
        let mut fmax: f64 = 0.0;
        for &(pick, f, mask) in steps {
            let mut active: Vec<bool> = (0..n).map(|i| mask & (1 << i) != 0).collect();
            if !active.iter().any(|&a| a) {
                active[pick % n] = true;
            }
            let allowed: Vec<usize> =
                (0..n).filter(|&i| active[i] && !(strict && d.would_exceed(i, f, &active))).collect();
            let g = match d.must_serve_among(&active) {
                Some(g) if allowed.contains(&g) => g,
                _ if !allowed.is_empty() => allowed[pick % allowed.len()],
                _ => d.most_owed_among(&active).unwrap(),
            };
            d.charge_among(g, f, &active);
            fmax = fmax.max(f);
        }
        (d.max_seen(), kappa * cap, fmax)
    }

    #[test]
    fn look_ahead_sees_the_charge_coming() {
        let mut d = Deficits::new(vec![1.0, 1.0], Some(0.1), FairnessMode::Drf);
        d.charge(0, 0.15);
        // d = (-0.075, 0.075): another 0.06 to g0 would give g1 0.105 > 0.1, 0.04 gives 0.095.
        assert!(d.would_exceed(0, 0.06, &[true, true]));
        assert!(!d.would_exceed(0, 0.04, &[true, true]));
        // Serving the owed g1 lifts g0 by half the factor: 0.3 takes it to 0.075, 0.5 to 0.175.
        assert!(!d.would_exceed(1, 0.3, &[true, true]));
        assert!(d.would_exceed(1, 0.5, &[true, true]));
        assert!(!d.would_exceed(0, 0.06, &[true, false]), "g1 inactive: frozen, never lifted");
        assert!(!Deficits::new(vec![1.0, 1.0], None, FairnessMode::Drf).would_exceed(0, 5.0, &[true, true]));
    }

    proptest! {
        /// Two groups under the look-ahead rule with no allocation bigger than `K`: the deficit
        /// never exceeds `K` at all, the bound the module docs prove.
        #[test]
        fn look_ahead_keeps_two_queues_within_kappa_c(
            shares in proptest::collection::vec(0.0f64..1.0, 2..=2),
            kappa in 0.01f64..0.9,
            cap in 0.5f64..20.0,
            steps in proptest::collection::vec((0usize..6, 0.0f64..1.0, 0u32..4), 1..400),
        ) {
            let k = kappa * cap;
            let steps: Vec<(usize, f64, u32)> = steps.into_iter().map(|(p, f, m)| (p, 0.001 + f * k, m)).collect();
            let (max, limit, _) = adversary(shares, kappa, cap, &steps, true);
            prop_assert!(max <= limit + 1e-9, "max seen {} limit {}", max, limit);
        }

        /// Up to five groups under the look-ahead rule: the observed bound kappa * C + 2F.
        #[test]
        fn look_ahead_keeps_many_queues_within_kappa_c_plus_twice_max_factor(
            shares in proptest::collection::vec(0.0f64..1.0, 1..6),
            kappa in 0.0f64..0.9,
            cap in 0.5f64..20.0,
            steps in proptest::collection::vec((0usize..6, 0.001f64..1.0, 0u32..64), 1..400),
        ) {
            let (max, limit, f) = adversary(shares, kappa, cap, &steps, true);
            prop_assert!(max <= limit + 2.0 * f + 1e-9, "max seen {} limit {} + 2 x {}", max, limit, f);
        }

        /// Two groups (the benchmarks' two queues): no deficit ever exceeds kappa * C + F, the
        /// bound proved in the module docs, whatever the factors and active sets.
        #[test]
        fn two_queues_stay_within_kappa_c_plus_max_factor(
            shares in proptest::collection::vec(0.0f64..1.0, 2..=2),
            kappa in 0.0f64..0.9,
            cap in 0.5f64..20.0,
            steps in proptest::collection::vec((0usize..6, 0.001f64..1.0, 0u32..4), 1..400),
        ) {
            let (max, limit, f) = adversary(shares, kappa, cap, &steps, false);
            prop_assert!(max <= limit + f + 1e-9, "max seen {} limit {} + {}", max, limit, f);
        }

        /// Up to five groups with changing active sets: the observed bound kappa * C + 2F.
        #[test]
        fn many_queues_stay_within_kappa_c_plus_twice_max_factor(
            shares in proptest::collection::vec(0.0f64..1.0, 1..6),
            kappa in 0.0f64..0.9,
            cap in 0.5f64..20.0,
            steps in proptest::collection::vec((0usize..6, 0.001f64..1.0, 0u32..64), 1..400),
        ) {
            let (max, limit, f) = adversary(shares, kappa, cap, &steps, false);
            prop_assert!(max <= limit + 2.0 * f + 1e-9, "max seen {} limit {} + 2 x {}", max, limit, f);
        }
    }
}
