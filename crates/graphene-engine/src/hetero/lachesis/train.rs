//! Training LACHESIS's selection policy by policy gradient on batches of jobs.
//!
//! One iteration:
//! 1. Draw a batch (seeded by the seed and the iteration): a job count uniform in
//!    [`TrainConfig::jobs_min`, `jobs_max`], that many jobs drawn uniformly (with replacement)
//!    from the DAGs, one communication-to-computation ratio from [`TrainConfig::ccr`]; the jobs'
//!    disjoint union with [`super::super::batch::with_transfer_rule`]'s edge data, on the fixed
//!    executors of the setting.
//! 2. Run K rollouts of the sampling policy on that batch, in parallel (rayon), each with its own
//!    seed.
//! 3. Reward. The paper penalizes action k with r_k = -(t_k - t_{k-1}), t_k the schedule's
//!    length after it, so an episode's undiscounted return is minus its makespan. Every action
//!    of a rollout is credited with that whole return: the reward-to-go from action k differs
//!    from it by t_{k-1}, which action k cannot change. Baseline: the mean makespan of the K
//!    rollouts of the same batch (an input-dependent baseline as in Decima; the paper trains a
//!    critic instead). Advantage of rollout r: 100 x (mean makespan - makespan_r) / mean makespan,
//!    i.e. how many percent shorter than its siblings it was, so that batches of 1 and of 20 jobs
//!    weigh alike.
//! 4. Loss: -(1/N) sum over all N recorded decisions of (adv x log pi(a | s) + beta x H(pi(. | s))),
//!    gradients summed per rollout and the rollouts combined in rollout order (so the parallel
//!    runs give the same bits), one Adam step. beta decays linearly to 0 over the run.
//!
//! Model selection: every `eval_every` iterations (and before the first) the greedy policy is
//! scored on held-out batches (seeds no training iteration draws) as its mean makespan relative
//! to RankUp-DEFT's on the same batch; the best-scoring weights are kept (the first of equal
//! scores).
//!
//! Determinism: every random draw comes from ChaCha8 seeded by [`mix`] of the seed and the
//! iteration or rollout, and floating-point sums run in a fixed order: same inputs and seed,
//! same weights file.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::Serialize;

use super::super::instance::Instance;
use super::super::{batch, select, Policy};
use super::model::Model;
use super::net::{self, Arch};
use super::{run_episode, Decision, Mode};
use crate::error::{Error, Result};
use crate::learn::reinforce::{self, Best};
use crate::learn::{mix, Adam};
use crate::model::{Cluster, ClusterSpec, Dag, Network};

#[derive(Clone, Debug, Serialize)]
pub struct TrainConfig {
    pub iterations: usize,
    /// Rollouts per batch (the baseline averages over them).
    pub rollouts: usize,
    pub seed: u64,
    /// Adam's step size.
    pub lr: f64,
    /// Initial entropy weight (decays linearly to 0).
    pub entropy: f64,
    /// Jobs per training batch: uniform in [jobs_min, jobs_max].
    pub jobs_min: usize,
    pub jobs_max: usize,
    /// Communication-to-computation ratios a batch's edge data is drawn with (one per batch).
    pub ccr: Vec<f64>,
    /// What one decision places. Left out of the recorded config when it is the default
    /// (stage), so that the bundled recipe still writes the bundled file's bytes.
    #[serde(skip_serializing_if = "is_stage")]
    pub decision: Decision,
}

fn is_stage(d: &Decision) -> bool {
    *d == Decision::Stage
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            iterations: 100,
            rollouts: 8,
            seed: 0,
            lr: 3e-3,
            entropy: 0.01,
            jobs_min: 1,
            jobs_max: 10,
            ccr: vec![0.5, 5.0],
            decision: Decision::Stage,
        }
    }
}

/// The executors of a batch setting: speeds given, each running one task at a time (cpu 1 of
/// 1, the benchmark's tasks demanding none or one), one bandwidth between every pair.
pub fn executors(speeds: &[f64], bandwidth: f64) -> ClusterSpec {
    let capacity = [("cpu".to_string(), 1.0)].into_iter().collect();
    let mut spec = ClusterSpec::with_speeds(speeds, capacity, bandwidth);
    spec.overbook.clear();
    spec
}

/// One batch: `jobs` drawn uniformly with replacement from `dags` by `seed`, made one DAG with
/// `ccr` x the parent stage's mean work on every task-to-task edge, every task one executor slot
/// ([`batch::one_slot`]).
/// Fails on more than `--limit-jobs` jobs, or more than `--limit-tasks` tasks in the batch
/// (counted before anything is built).
pub fn draw_batch(dags: &[Dag], jobs: usize, ccr: f64, seed: u64) -> Result<Dag> {
    if dags.is_empty() {
        return Err(Error::Usage("no DAGs to draw batches from".into()));
    }
    let limits = crate::limits::current();
    limits.check_jobs(jobs as u64, "jobs of a batch")?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let picked: Vec<&Dag> = (0..jobs).map(|_| &dags[rng.gen_range(0..dags.len())]).collect();
    let tasks = picked.iter().fold(0u64, |n, d| crate::limits::add(n, d.len() as u64));
    limits.check_tasks(tasks, "tasks of a batch")?;
    // Every task one executor slot: executors run one task at a time, whatever the jobs demand.
    batch::with_transfer_rule(&batch::one_slot(&batch::union("batch", &picked)?)?, ccr)
}

/// Checks the held-out batches before any is drawn: `batches` of them, batch `i` of
/// `jobs[i % jobs.len()]` jobs (of `jobs_max` when `jobs` is empty), all kept in memory, so
/// their jobs together are held to `--limit-jobs`.
pub fn check_held_out(batches: usize, jobs: &[usize], jobs_max: usize) -> Result<()> {
    if jobs.contains(&0) {
        return Err(Error::Usage("--eval-jobs takes job counts of at least 1".into()));
    }
    let total: u128 = if jobs.is_empty() {
        batches as u128 * jobs_max as u128
    } else {
        let cycle: u128 = jobs.iter().map(|&j| j as u128).sum();
        let partial: u128 = jobs[..batches % jobs.len()].iter().map(|&j| j as u128).sum();
        (batches / jobs.len()) as u128 * cycle + partial
    };
    crate::limits::current()
        .check_jobs(u64::try_from(total).unwrap_or(u64::MAX), "held-out jobs (--eval-batches x --eval-jobs)")
}

/// A batch ready to schedule: the DAG, its task-level view and RankUp-DEFT's makespan on it
/// (the yardstick of the held-out score and of the training curve).
pub struct Batch {
    pub dag: Dag,
    pub inst: Instance,
    pub rankup: f64,
}

impl Batch {
    pub fn new(dag: Dag, spec: &ClusterSpec, net: &Network) -> Result<Batch> {
        let cluster: Cluster = spec.resolve(&dag.resources)?;
        cluster.check_fits(&dag)?;
        let inst = Instance::new(&dag, &cluster, net);
        let rankup = select::schedule(&inst, Policy::RankUp).finish().0.makespan();
        Ok(Batch { dag, inst, rankup })
    }

    fn ratio(&self, makespan: f64) -> f64 {
        if self.rankup > 0.0 {
            makespan / self.rankup
        } else {
            1.0
        }
    }
}

/// What one iteration did.
#[derive(Clone, Debug, Serialize)]
pub struct IterStats {
    pub iteration: usize,
    pub jobs: usize,
    pub ccr: f64,
    pub tasks: usize,
    /// Recorded decisions (more than one candidate) over all rollouts.
    pub decisions: usize,
    /// Mean over rollouts of the sampled policy's makespan, and of it / RankUp-DEFT's.
    pub sample_makespan: f64,
    pub sample_ratio: f64,
    /// The surrogate loss before the step, and the mean policy entropy over decisions.
    pub loss: f64,
    pub entropy: f64,
    pub entropy_weight: f64,
    /// Greedy mean makespan / RankUp-DEFT's over the held-out batches, when evaluated.
    pub eval_ratio: Option<f64>,
}

/// Greedy mean of makespan / RankUp-DEFT makespan over `batches`, deciding as `decision` says.
pub fn evaluate(model: &Model, batches: &[Batch], decision: Decision) -> f64 {
    let ratios: Vec<f64> = batches
        .par_iter()
        .map(|b| b.ratio(run_episode(&b.dag, &b.inst, &model.params, Mode::Greedy, decision).makespan))
        .collect();
    ratios.iter().sum::<f64>() / ratios.len().max(1) as f64
}

/// What [`train`] returns.
#[derive(Clone, Debug)]
pub struct Trained {
    /// The weights with the best held-out score (`init` itself is a candidate, as iteration 0);
    /// the last weights when nothing was scored.
    pub best: Model,
    pub best_at: Option<(usize, f64)>,
    pub last: Model,
    pub stats: Vec<IterStats>,
}

/// Checks the settings before any work (the CLI runs it on its flags before reading a file).
pub fn check(cfg: &TrainConfig) -> Result<()> {
    reinforce::check_common(cfg.rollouts, cfg.lr, cfg.entropy)?;
    let bad = |m: String| Err(Error::Usage(m));
    if cfg.jobs_min == 0 || cfg.jobs_max < cfg.jobs_min {
        return bad(format!("jobs per batch {}..{} must be a range of at least 1", cfg.jobs_min, cfg.jobs_max));
    }
    crate::limits::current().check_jobs(cfg.jobs_max as u64, "--jobs-max (jobs of a batch)")?;
    if cfg.ccr.is_empty() || cfg.ccr.iter().any(|c| !(c.is_finite() && *c >= 0.0)) {
        return bad(format!("--ccr {:?} must be one or more finite numbers >= 0", cfg.ccr));
    }
    Ok(())
}

/// The batch of iteration `it`: (jobs, ccr, seed).
pub fn iteration_batch(cfg: &TrainConfig, it: usize) -> (usize, f64, u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(mix(cfg.seed, 2 * it as u64));
    let jobs = rng.gen_range(cfg.jobs_min..=cfg.jobs_max);
    let ccr = *cfg.ccr.choose(&mut rng).expect("checked non-empty");
    (jobs, ccr, mix(cfg.seed, 2 * it as u64 + 1))
}

/// Trains from `init` on batches drawn from `dags` on the executors `spec` / `net`. `fixed`, when
/// given, replaces every drawn batch (tests train on one fixed batch); `eval` are the held-out
/// batches scored every `eval_every` iterations; `progress` sees every iteration.
#[allow(clippy::too_many_arguments)]
pub fn train(
    dags: &[Dag],
    spec: &ClusterSpec,
    net: &Network,
    cfg: &TrainConfig,
    init: &Model,
    fixed: Option<&Batch>,
    eval: &[Batch],
    eval_every: usize,
    progress: &mut dyn FnMut(&IterStats),
) -> Result<Trained> {
    check(cfg)?;
    let arch = Arch::new();
    if init.params.len() != arch.len {
        return Err(Error::Usage(format!(
            "initial weights have {} parameters, the network {}",
            init.params.len(),
            arch.len
        )));
    }
    let mut model = init.clone();
    let mut adam = Adam::new(arch.len);
    // Grown per iteration (not reserved: --iterations bounds time, not memory up front).
    let mut stats = Vec::new();
    let mut best = Best::new();
    let scoring = eval_every > 0 && !eval.is_empty();
    if scoring {
        let r = evaluate(&model, eval, cfg.decision);
        best.offer(0, r, &model);
        let s = IterStats {
            iteration: 0,
            jobs: 0,
            ccr: 0.0,
            tasks: 0,
            decisions: 0,
            sample_makespan: f64::NAN,
            sample_ratio: f64::NAN,
            loss: f64::NAN,
            entropy: f64::NAN,
            entropy_weight: cfg.entropy,
            eval_ratio: Some(r),
        };
        progress(&s);
        stats.push(s);
    }
    for it in 0..cfg.iterations {
        let (jobs, ccr, bseed) = iteration_batch(cfg, it);
        let drawn;
        let b = match fixed {
            Some(b) => b,
            None => {
                drawn = Batch::new(draw_batch(dags, jobs, ccr, bseed)?, spec, net)?;
                &drawn
            }
        };
        let beta = reinforce::entropy_weight(cfg.entropy, it, cfg.iterations);
        let rseed = mix(cfg.seed, (1 << 43) + it as u64);
        let params = &model.params;
        let eps: Vec<super::Episode> = (0..cfg.rollouts)
            .into_par_iter()
            .map(|r| run_episode(&b.dag, &b.inst, params, Mode::sample(mix(rseed, r as u64)), cfg.decision))
            .collect();
        let k = cfg.rollouts as f64;
        let mean = eps.iter().map(|e| e.makespan).sum::<f64>() / k;
        let adv: Vec<f64> =
            eps.iter().map(|e| if mean > 0.0 { 100.0 * (mean - e.makespan) / mean } else { 0.0 }).collect();
        let n: usize = eps.iter().map(|e| e.steps.len()).sum();
        // Only the steps cross threads (a plan's usage profiles keep their query memos in cells).
        let steps: Vec<&[super::Step]> = eps.iter().map(|e| e.steps.as_slice()).collect();
        let per: Vec<(Vec<f64>, f64, f64)> = steps
            .par_iter()
            .zip(adv.par_iter())
            .map(|(steps, &a)| {
                let mut g = vec![0.0; arch.len];
                let (mut loss, mut ent) = (0.0, 0.0);
                for s in steps.iter() {
                    let (logp, h) = net::accumulate_grad(&arch, params, &s.obs, s.act, a, beta, &mut g);
                    loss -= a * logp + beta * h;
                    ent += h;
                }
                (g, loss, ent)
            })
            .collect();
        let (mut loss, mut ent) = (0.0, 0.0);
        if n > 0 {
            for (_, l, h) in &per {
                loss += l;
                ent += h;
            }
            loss /= n as f64;
            ent /= n as f64;
            reinforce::step(&mut adam, &mut model.params, per.iter().map(|(g, _, _)| g.as_slice()), n, cfg.lr, it + 1)?;
        }
        let eval_ratio = if scoring && reinforce::eval_due(eval_every, it, cfg.iterations) {
            let r = evaluate(&model, eval, cfg.decision);
            best.offer(it + 1, r, &model);
            Some(r)
        } else {
            None
        };
        let s = IterStats {
            iteration: it + 1,
            jobs: if fixed.is_some() { 0 } else { jobs },
            ccr: if fixed.is_some() { f64::NAN } else { ccr },
            tasks: b.dag.len(),
            decisions: n,
            sample_makespan: mean,
            sample_ratio: b.ratio(mean),
            loss,
            entropy: ent,
            entropy_weight: beta,
            eval_ratio,
        };
        progress(&s);
        stats.push(s);
    }
    let (best, best_at) = best.finish(&model);
    Ok(Trained { best, best_at, last: model, stats })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DagBuilder, EdgeKind, ResVec, StageSpec, TaskSpec};
    use crate::validate::validate_schedule_on;

    /// A job of `stages` stages in layers of two, each with 1-4 tasks of work 1-10 (seeded),
    /// every stage fed by one or two stages of the layer above.
    fn job(name: &str, stages: usize, seed: u64) -> Dag {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut b = DagBuilder::new(name, vec!["cpu".into()]);
        for s in 0..stages {
            let mut parents = Vec::new();
            if s >= 2 {
                let layer = s / 2 - 1;
                for p in [2 * layer, 2 * layer + 1] {
                    if p < s && (parents.is_empty() || rng.gen_bool(0.5)) {
                        parents.push((format!("s{p}"), EdgeKind::AllToAll));
                    }
                }
            }
            let tasks = (0..rng.gen_range(1..=4))
                .map(|_| TaskSpec { duration: rng.gen_range(1.0..10.0), demand: ResVec::ZERO })
                .collect();
            b.stage(StageSpec { name: format!("s{s}"), group: None, tasks, parents });
        }
        b.build().unwrap()
    }

    /// Twelve small jobs on six executors of LACHESIS speeds, transfers at ccr 1.
    fn setting() -> (Vec<Dag>, ClusterSpec, Network) {
        let dags: Vec<Dag> = (0..12).map(|i| job(&format!("job{i}"), 3 + i % 5, 100 + i as u64)).collect();
        let spec = executors(&batch::lachesis_speeds(6, 1).unwrap(), 1.0);
        let net = spec.network();
        (dags, spec, net)
    }

    fn tiny(seed: u64, iterations: usize) -> TrainConfig {
        TrainConfig {
            iterations,
            rollouts: 8,
            seed,
            lr: 1e-2,
            entropy: 0.0,
            jobs_min: 4,
            jobs_max: 6,
            ccr: vec![1.0],
            decision: Decision::Stage,
        }
    }

    #[test]
    fn training_is_deterministic_for_a_seed() {
        let (dags, spec, net) = setting();
        let cfg = tiny(5, 6);
        let init = Model::init(9);
        let eval = [Batch::new(draw_batch(&dags, 5, 1.0, 77).unwrap(), &spec, &net).unwrap()];
        let run = || train(&dags, &spec, &net, &cfg, &init, None, &eval, 3, &mut |_| {}).unwrap();
        let (a, b) = (run(), run());
        assert_eq!(a.last.to_json(), b.last.to_json());
        assert_eq!(a.best.to_json(), b.best.to_json());
        assert_ne!(a.last.params, init.params, "the weights moved");
        let other = train(&dags, &spec, &net, &tiny(6, 6), &init, None, &eval, 3, &mut |_| {}).unwrap();
        assert_ne!(other.last.params, a.last.params, "another seed, other batches, other weights");
    }

    /// On one fixed batch, 30 iterations lower both the sampling policy's mean makespan (what
    /// the policy-gradient loss is the gradient of) and the greedy policy's makespan. Measured:
    /// greedy 52.52 -> 30.35 (RankUp-DEFT: 30.08), mean sampled makespan over the first and last
    /// five iterations 41.32 -> 33.36, mean entropy per decision 2.00 -> 1.67.
    #[test]
    fn a_tiny_training_run_improves_the_policy_on_a_fixed_batch() {
        let (dags, spec, net) = setting();
        let fixed = Batch::new(draw_batch(&dags, 6, 1.0, 3).unwrap(), &spec, &net).unwrap();
        let init = Model::init(1);
        let before = run_episode(&fixed.dag, &fixed.inst, &init.params, Mode::Greedy, Decision::Stage).makespan;
        let t = train(&dags, &spec, &net, &tiny(2, 30), &init, Some(&fixed), &[], 0, &mut |_| {}).unwrap();
        let after = run_episode(&fixed.dag, &fixed.inst, &t.last.params, Mode::Greedy, Decision::Stage).makespan;
        let sampled: Vec<f64> = t.stats.iter().map(|s| s.sample_makespan).collect();
        let first = sampled[..5].iter().sum::<f64>() / 5.0;
        let last = sampled[sampled.len() - 5..].iter().sum::<f64>() / 5.0;
        let ent_first = t.stats[..5].iter().map(|s| s.entropy).sum::<f64>() / 5.0;
        let ent_last = t.stats[t.stats.len() - 5..].iter().map(|s| s.entropy).sum::<f64>() / 5.0;
        eprintln!(
            "greedy {before:.3} -> {after:.3}, sampled {first:.3} -> {last:.3}, entropy {ent_first:.3} -> {ent_last:.3}, rankup-deft {:.3}",
            fixed.rankup
        );
        assert!(after < 0.7 * before, "greedy makespan {before} -> {after}");
        assert!(last < 0.9 * first, "mean sampled makespan {first} -> {last}");
        assert!(ent_last < ent_first, "the policy grows more certain: entropy {ent_first} -> {ent_last}");
    }

    #[test]
    fn lachesis_schedules_pass_the_validator_and_the_bundled_model_loads() {
        let (dags, spec, net) = setting();
        let bundled = Model::bundled().unwrap();
        for (jobs, ccr, seed) in [(1, 0.0, 1), (4, 1.0, 2), (12, 5.0, 3)] {
            let dag = draw_batch(&dags, jobs, ccr, seed).unwrap();
            let cluster = spec.resolve(&dag.resources).unwrap();
            for m in [bundled, &Model::init(seed)] {
                let s = super::super::super::run_with(
                    super::super::super::HeteroAlgo::Lachesis,
                    &dag,
                    &cluster,
                    &net,
                    Some(m),
                );
                assert_eq!(s.schedule.placements.len(), dag.len());
                let v = validate_schedule_on(&dag, &cluster, &net, &s.schedule, &s.copies);
                assert!(v.is_empty(), "{jobs} jobs ccr {ccr}: {:?}", &v[..v.len().min(3)]);
            }
        }
    }

    /// Per-task decisions: one task per decision (as many decisions as tasks, greedy or
    /// sampled), every schedule valid; the RankUp rule at task granularity is RankUp-DEFT to the
    /// placement, and at stage granularity still a valid schedule.
    #[test]
    fn per_task_decisions_place_one_task_each_and_the_rank_rule_is_rankup_deft() {
        let (dags, spec, net) = setting();
        let model = Model::init(4);
        for (jobs, ccr, seed) in [(1, 0.0, 1), (4, 1.0, 2), (12, 5.0, 3)] {
            let dag = draw_batch(&dags, jobs, ccr, seed).unwrap();
            let cluster = spec.resolve(&dag.resources).unwrap();
            let inst = Instance::new(&dag, &cluster, &net);
            let check = |plan: super::super::super::plan::Plan, what: &str| {
                let (s, copies) = plan.finish();
                assert_eq!(s.placements.len(), dag.len());
                let v = validate_schedule_on(&dag, &cluster, &net, &s, &copies);
                assert!(v.is_empty(), "{what}, {jobs} jobs ccr {ccr}: {:?}", &v[..v.len().min(3)]);
                s
            };
            for mode in [Mode::Greedy, Mode::sample(seed)] {
                let sampled = matches!(mode, Mode::Sample(_));
                let e = run_episode(&dag, &inst, &model.params, mode, Decision::Task);
                assert_eq!(e.decisions, dag.len(), "one task per decision");
                assert!(e.steps.len() <= dag.len());
                if sampled && jobs > 1 {
                    assert!(!e.steps.is_empty(), "decisions with a choice are recorded");
                }
                check(e.plan, "lachesis per task");
                let e = run_episode(&dag, &inst, &model.params, Mode::Greedy, Decision::Stage);
                assert!(e.decisions <= dag.stages.len(), "a stage's ready tasks in one decision");
            }
            let rankup = check(select::schedule(&inst, Policy::RankUp), "rankup-deft");
            let per_task = check(super::super::rank_rule(&dag, &inst, Decision::Task), "rank rule per task");
            assert_eq!(format!("{:?}", per_task.placements), format!("{:?}", rankup.placements));
            check(super::super::rank_rule(&dag, &inst, Decision::Stage), "rank rule per stage");
        }
    }

    /// With per-task decisions training is deterministic for a seed, records the option in its
    /// config, and moves the weights.
    #[test]
    fn per_task_training_is_deterministic_for_a_seed() {
        let (dags, spec, net) = setting();
        let cfg = TrainConfig { decision: Decision::Task, ..tiny(5, 3) };
        let init = Model::init(9);
        let eval = [Batch::new(draw_batch(&dags, 4, 1.0, 77).unwrap(), &spec, &net).unwrap()];
        let run = || train(&dags, &spec, &net, &cfg, &init, None, &eval, 2, &mut |_| {}).unwrap();
        let (a, b) = (run(), run());
        assert_eq!(a.last.to_json(), b.last.to_json());
        assert_eq!(a.best.to_json(), b.best.to_json());
        assert_ne!(a.last.params, init.params, "the weights moved");
        let stage = train(&dags, &spec, &net, &tiny(5, 3), &init, None, &eval, 2, &mut |_| {}).unwrap();
        assert_ne!(stage.last.params, a.last.params, "per-task decisions train other weights");
        assert_eq!(serde_json::to_value(&cfg).unwrap()["decision"], "task");
        assert!(serde_json::to_value(tiny(5, 3)).unwrap().get("decision").is_none(), "the default is not recorded");
    }

    #[test]
    fn bad_settings_are_refused_with_the_reason() {
        let (dags, spec, net) = setting();
        let init = Model::init(1);
        let mut cfg = tiny(1, 1);
        cfg.rollouts = 1;
        let err = train(&dags, &spec, &net, &cfg, &init, None, &[], 0, &mut |_| {}).unwrap_err().to_string();
        assert!(err.contains("rollouts"), "{err}");
        let mut cfg = tiny(1, 1);
        cfg.jobs_min = 0;
        assert!(train(&dags, &spec, &net, &cfg, &init, None, &[], 0, &mut |_| {}).is_err());
        let mut cfg = tiny(1, 1);
        cfg.ccr = vec![f64::NAN];
        assert!(train(&dags, &spec, &net, &cfg, &init, None, &[], 0, &mut |_| {}).is_err());
        assert!(draw_batch(&[], 3, 1.0, 1).is_err());
    }
}
