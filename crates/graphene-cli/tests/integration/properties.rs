//! Properties every scheduler must have on random stage DAGs and clusters: its schedule passes
//! the independent validator, places every task exactly once, and is never shorter than any
//! lower bound (a schedule below a sound lower bound means either the schedule or the bound is
//! wrong). And the stage-aware bound is never weaker than the two classic ones.

use graphene::lowerbound;
use graphene::validate::validate_schedule;
use graphene::{OfflineConfig, Scheduler};
use proptest::prelude::*;

use crate::gen::{arb_case, config, Sizes};
use crate::util::geq;

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn every_scheduler_is_valid_and_never_below_a_lower_bound(case in arb_case(Sizes::PROPERTY)) {
        let dag = case.dag();
        let cluster = case.cluster(&dag);
        let lb = lowerbound::compute(&dag, &cluster);
        // A small improver budget: its own property test below covers it at other budgets.
        let cfg = OfflineConfig { improve_budget: 20_000, ..OfflineConfig::default() };
        for s in Scheduler::all() {
            let built = graphene::build(s, &dag, &cluster, &cfg, 11);
            let sched = &built.schedule;
            prop_assert_eq!(sched.placements.len(), dag.len(), "{} must place every task", s.name());
            for (t, p) in sched.placements.iter().enumerate() {
                prop_assert_eq!(p.task as usize, t, "{}: placements are indexed by task id", s.name());
            }
            let violations = validate_schedule(&dag, &cluster, sched);
            prop_assert!(violations.is_empty(), "{}: {} violations, first: {}", s.name(), violations.len(), violations[0]);
            let ms = sched.makespan();
            for (name, v) in [("critical_path", lb.critical_path), ("total_work", lb.total_work), ("stage_aware", lb.stage_aware)] {
                prop_assert!(geq(ms, v), "{} makespan {ms} is below the {name} bound {v}", s.name());
            }
        }
    }
}

proptest! {
    // Bounds alone are cheap, so more cases.
    #![proptest_config(config(256))]

    #[test]
    fn stage_aware_bound_dominates_critical_path_and_total_work(case in arb_case(Sizes::PROPERTY)) {
        let dag = case.dag();
        let cluster = case.cluster(&dag);
        let lb = lowerbound::compute(&dag, &cluster);
        for v in [lb.critical_path, lb.total_work, lb.stage_aware] {
            prop_assert!(v.is_finite() && v >= 0.0, "bounds must be finite and non-negative: {lb:?}");
        }
        prop_assert!(geq(lb.stage_aware, lb.critical_path.max(lb.total_work)), "{lb:?}");
        prop_assert_eq!(lb.best(), lb.stage_aware.max(lb.critical_path).max(lb.total_work));
    }
}

proptest! {
    #![proptest_config(config(64))]

    /// The improver never returns a longer schedule than the constructor's, its schedule is
    /// valid, and the same seed and budget give the same schedule.
    #[test]
    fn the_improver_never_loses_and_repeats_itself(case in arb_case(Sizes::PROPERTY), budget in 0u64..20_000, seed in 0u64..4) {
        let dag = case.dag();
        let cluster = case.cluster(&dag);
        let plain = OfflineConfig { improve_budget: 0, ..OfflineConfig::default() };
        let base = graphene::build(Scheduler::Graphene, &dag, &cluster, &plain, 0).schedule.makespan();
        let cfg = OfflineConfig { improve_budget: budget, improve_seed: seed, ..OfflineConfig::default() };
        let a = graphene::build(Scheduler::Graphene, &dag, &cluster, &cfg, 0).schedule;
        let b = graphene::build(Scheduler::Graphene, &dag, &cluster, &cfg, 0).schedule;
        prop_assert!(a.makespan() <= base, "improved {} > constructor {base}", a.makespan());
        let violations = validate_schedule(&dag, &cluster, &a);
        prop_assert!(violations.is_empty(), "{} violations, first: {}", violations.len(), violations[0]);
        let key = |s: &graphene::model::Schedule| s.placements.iter().map(|p| (p.task, p.machine, p.start.to_bits())).collect::<Vec<_>>();
        prop_assert_eq!(key(&a), key(&b));
    }
}
