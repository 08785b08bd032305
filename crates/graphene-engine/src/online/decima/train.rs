//! Training: REINFORCE with Decima's reward, input-dependent baselines, a curriculum of
//! memoryless episode ends, Adam and an entropy bonus (§5.3 and Appendix C of the paper).
//!
//! One iteration:
//! 1. Draw an arrival sequence: jobs drawn uniformly from the DAGs with Poisson arrivals whose
//!    mean gap puts the cluster at the target load, and an episode end τ ~ Exp(mean), the mean
//!    growing by a fixed step per iteration up to a cap (the curriculum). Jobs arriving after
//!    τ are dropped; the simulation stops at τ. The end is random so that the agent cannot
//!    learn to starve large jobs near a known horizon.
//! 2. Run K rollouts of the sampling policy on that same sequence, in parallel (rayon), each
//!    with its own seed.
//! 3. Rewards. Decima penalizes action k with r_k = -(t_k - t_{k-1}) J_k, J_k the jobs in the
//!    system. Here the penalty is the exact integral of J(t) (arrivals and finishes are known
//!    from the replay), and action k is credited with the reward-to-go -∫_{t_k}^{τ} J(t) dt:
//!    the same sum as the paper's from k + 1 on, without the interval before the action,
//!    which the action cannot change (a constant shift the baseline would remove in
//!    expectation anyway).
//! 4. Input-dependent baseline: b(t) = the mean over the K rollouts of their reward-to-go at
//!    time t. Decima interpolates each rollout's reward-to-go between its action times; here
//!    the integral is exact at any t, so no interpolation error. Advantage = reward-to-go −
//!    b(t_k), divided by the iteration's standard deviation of advantages (a departure: with
//!    normalized advantages one entropy weight and learning rate suit every episode length).
//! 5. Gradient of −Σ_k adv_k log π(a_k | s_k) − β Σ_k H(π(· | s_k)), averaged over actions,
//!    summed over rollouts in rollout order (so parallel runs give the same bits), one Adam
//!    step. β decays linearly from its initial value to 0 over the run.
//!
//! Wave durations (`train-decima --waves`, [`TrainWaves`]): every episode and every held-out
//! workload simulates the tasks' realized durations as `replay --waves` does
//! ([`crate::sim::waves`]), from the sidecar [`WaveLibrary::sidecar`] makes in memory for the
//! drawn sequence (the code `gen-trace --waves-out` writes files with). The policy still sees
//! the trace's durations, as in a replay. An episode's rollouts share one draw seed (the
//! sequence's), so they differ by their actions and what those make the durations, not by
//! the seed; held-out workloads draw with seed 0.
//!
//! Determinism: every random draw (sequence, episode end, each rollout's actions, the initial
//! weights) comes from ChaCha8 seeded by a hash of the seed and the iteration / rollout, and
//! floating-point sums run in a fixed order; same inputs and seed, same weights file.

use rayon::prelude::*;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::model::Model;
use super::net::{self, Arch};
use super::policy::{Decima, Step};
use super::setting::{self, Arrival, DagSource, Setting};
use crate::error::{Error, Result};
use crate::learn::reinforce::{self, Best};
use crate::learn::Adam;
use crate::model::{Cluster, Dag, Workload};
use crate::online::kept_if;
use crate::sim::waves::Waves;
use crate::sim::{self, SimConfig, SimResult};
use crate::trace::spark_sched_sim::WaveLibrary;
use crate::trace::{generate, load, ArrivalProcess};

#[derive(Clone, Debug, serde::Serialize)]
pub struct TrainConfig {
    pub iterations: usize,
    /// Rollouts per arrival sequence (the baseline averages over them).
    pub rollouts: usize,
    pub seed: u64,
    /// Adam's step size.
    pub lr: f64,
    /// Initial entropy weight β (decays linearly to 0).
    pub entropy: f64,
    /// Mean episode length (seconds) at the first iteration, its growth per iteration, its cap.
    pub episode_start: f64,
    pub episode_growth: f64,
    pub episode_max: f64,
    /// Mean gap between arrivals (seconds); see [`mean_gap_for_load`].
    pub mean_gap: f64,
    /// At most this many jobs per episode.
    pub max_jobs: usize,
    pub heartbeat: f64,
    /// Every machine serves the job of its last task first (`--sticky`, [`crate::online::Sticky`]), in
    /// training and held-out scoring alike: the policy decides only for machines whose job
    /// has nothing runnable, as spark-sched-sim's executors continue their stage on their own.
    /// Not written when off, so files trained without it keep their bytes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sticky: bool,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            iterations: 100,
            rollouts: 4,
            seed: 0,
            lr: 1e-3,
            entropy: 0.05,
            episode_start: 300.0,
            episode_growth: 10.0,
            episode_max: 1500.0,
            mean_gap: 10.0,
            max_jobs: 200,
            heartbeat: 1.0,
            sticky: false,
        }
    }
}

/// What one iteration did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct IterStats {
    pub iteration: usize,
    /// Episode end τ (seconds) and jobs arriving before it.
    pub episode: f64,
    pub jobs: usize,
    /// Actions over all rollouts.
    pub actions: usize,
    /// Mean over rollouts of the time-average number of jobs in the system (what training
    /// minimizes; by Little's law, mean JCT x arrival rate).
    pub jobs_in_system: f64,
    pub entropy_weight: f64,
    /// Greedy mean JCT over the held-out workloads, when evaluated after this iteration.
    pub eval_jct: Option<f64>,
}

/// The Poisson mean gap that offers `load` of the cluster's bottleneck resource on average,
/// estimated from `sample` jobs drawn with `seed`.
pub fn mean_gap_for_load(dags: &[Dag], cluster: &Cluster, load: f64, sample: usize, seed: u64) -> Result<f64> {
    let mut w = generate::generate(dags, sample.max(2), ArrivalProcess::Poisson { mean: 10.0 }, 1, seed)?;
    let factor = load::calibrate(&mut w, cluster, load)?;
    Ok(10.0 * factor)
}

/// The offered load of the bottleneck resource that Poisson arrivals with `mean_gap` put on
/// `cluster`, estimated from `sample` jobs drawn with `seed` (the inverse of
/// [`mean_gap_for_load`], for a setting given by its arrival rate).
pub fn load_for_mean_gap(dags: &[Dag], cluster: &Cluster, mean_gap: f64, sample: usize, seed: u64) -> Result<f64> {
    let w = generate::generate(dags, sample.max(2), ArrivalProcess::Poisson { mean: mean_gap }, 1, seed)?;
    let (load, _) = load::bottleneck(&w, cluster);
    if !(load.is_finite() && load > 0.0) {
        return Err(Error::Usage("the jobs bring no work the cluster can do".into()));
    }
    Ok(load)
}

/// The setting a run of [`train`] on `cluster` with `cfg` is for, as the weights file records
/// it: `load` is the offered load the arrival rate gives (target or estimate), `dags` where
/// the jobs come from, `executors`, `demands` and `demand_seed` how their DAGs were read,
/// `waves` the wave durations of every episode, if any.
#[allow(clippy::too_many_arguments)]
pub fn setting(
    cluster: &Cluster,
    cfg: &TrainConfig,
    load: Option<f64>,
    dags: Vec<DagSource>,
    executors: u32,
    demands: &str,
    demand_seed: u64,
    waves: Option<&TrainWaves>,
) -> Setting {
    Setting {
        machines: setting::groups(cluster),
        overbook: setting::overbooked(cluster),
        // Training runs every machine at speed 1 (train-decima refuses --speeds).
        speeds: None,
        heartbeat: cfg.heartbeat,
        arrival: Arrival { poisson_mean: cfg.mean_gap, load },
        jobs: cfg.max_jobs,
        dags,
        executors,
        demands: demands.to_string(),
        demand_seed,
        waves: waves.map(|w| setting::WavesSetting { moving_delay: w.moving_delay }),
        sticky: cfg.sticky,
    }
}

/// Wave- and parallelism-dependent durations in training (module doc): the samples of every
/// DAG the sources hold, and the moving delay.
#[derive(Clone, Debug)]
pub struct TrainWaves {
    pub library: WaveLibrary,
    /// Seconds an executor travels when it moves to another job (`--moving-delay`).
    pub moving_delay: f64,
}

impl TrainWaves {
    /// spark-sched-sim's delays ([`crate::sim::waves::DEFAULT_MOVING_DELAY`]).
    pub fn new(library: WaveLibrary) -> TrainWaves {
        TrainWaves { library, moving_delay: crate::sim::waves::DEFAULT_MOVING_DELAY }
    }

    /// The simulator's option for `workload`, whose job `i` was drawn from DAG `drawn[i]`.
    pub fn for_workload(&self, workload: &Workload, drawn: &[String]) -> Result<Waves> {
        let mut w = Waves::new(self.library.model(workload, drawn)?);
        w.moving_delay = self.moving_delay;
        Ok(w)
    }
}

/// A held-out workload and, under wave durations, the simulator's option for it.
#[derive(Clone, Debug)]
pub struct HeldOut {
    pub workload: Workload,
    pub waves: Option<Waves>,
}

/// The held-out workloads: one per seed, `jobs` jobs drawn from `sources` as training draws
/// them ([`generate::generate_from_named`]) with Poisson gaps of mean `mean_gap`, each with its
/// wave durations when `waves` is given.
pub fn held_out(
    sources: &[&[Dag]],
    jobs: usize,
    mean_gap: f64,
    seeds: &[u64],
    waves: Option<&TrainWaves>,
) -> Result<Vec<HeldOut>> {
    check_held_out(seeds.len(), jobs)?;
    seeds
        .iter()
        .map(|&s| {
            let (workload, drawn) =
                generate::generate_from_named(sources, jobs, ArrivalProcess::Poisson { mean: mean_gap }, 1, s)?;
            let waves = waves.map(|t| t.for_workload(&workload, &drawn)).transpose()?;
            Ok(HeldOut { workload, waves })
        })
        .collect()
}

pub use crate::learn::mix;

/// The integral of the number of jobs in the system over time, from a replay cut at `end`.
struct Occupancy {
    times: Vec<f64>,
    /// Integral from 0 to times[k].
    cum: Vec<f64>,
    /// Jobs in the system from times[k] to times[k + 1].
    level: Vec<f64>,
    end: f64,
}

impl Occupancy {
    fn new(r: &SimResult, end: f64) -> Occupancy {
        let mut ev: Vec<(f64, f64)> = Vec::new();
        for j in &r.jobs {
            if j.arrival <= end {
                ev.push((j.arrival, 1.0));
                if j.finish.is_finite() && j.finish <= end {
                    ev.push((j.finish, -1.0));
                }
            }
        }
        ev.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        let (mut times, mut cum, mut level) = (vec![0.0], vec![0.0], vec![0.0]);
        for (t, d) in ev {
            let k = times.len() - 1;
            let c = cum[k] + level[k] * (t - times[k]);
            times.push(t);
            cum.push(c);
            level.push(level[k] + d);
        }
        Occupancy { times, cum, level, end }
    }

    /// Integral from 0 to t.
    fn at(&self, t: f64) -> f64 {
        let k = self.times.partition_point(|&x| x <= t).saturating_sub(1);
        self.cum[k] + self.level[k] * (t - self.times[k]).max(0.0)
    }

    /// Penalty still to come after t: ∫_t^end J.
    fn to_go(&self, t: f64) -> f64 {
        self.at(self.end) - self.at(t.min(self.end))
    }
}

fn check(cfg: &TrainConfig) -> Result<()> {
    reinforce::check_common(cfg.rollouts, cfg.lr, cfg.entropy)?;
    let bad = |m: String| Err(Error::Usage(m));
    for (name, v) in
        [("episode start", cfg.episode_start), ("episode max", cfg.episode_max), ("mean gap", cfg.mean_gap)]
    {
        if !(v.is_finite() && v > 0.0) {
            return bad(format!("{name} {v} must be a finite number > 0"));
        }
    }
    if !(cfg.episode_growth.is_finite() && cfg.episode_growth >= 0.0) {
        return bad(format!("episode growth {} must be a finite number >= 0", cfg.episode_growth));
    }
    if cfg.max_jobs == 0 {
        return bad("--jobs must be at least 1 (jobs per episode)".into());
    }
    crate::limits::current().check_jobs(cfg.max_jobs as u64, "--jobs (jobs per episode)")?;
    if !(cfg.heartbeat.is_finite() && cfg.heartbeat > 0.0) {
        return bad(format!("--heartbeat {} must be a finite number > 0", cfg.heartbeat));
    }
    crate::limits::check_seconds(cfg.heartbeat, "--heartbeat", "heartbeat")?;
    crate::limits::check_seconds(cfg.episode_start, "--episode-start", "mean episode length")?;
    crate::limits::check_seconds(cfg.episode_max, "--episode-max", "mean episode length")?;
    Ok(())
}

/// Checks the held-out workloads before any is drawn: `traces` workloads of `jobs` jobs each
/// (at least 1), all kept in memory, so their jobs together are held to `--limit-jobs`.
pub fn check_held_out(traces: usize, jobs: usize) -> Result<()> {
    if jobs == 0 {
        return Err(Error::Usage("--eval-jobs must be at least 1 (jobs per held-out workload)".into()));
    }
    let total = (traces as u128 * jobs as u128).min(u64::MAX as u128) as u64;
    crate::limits::current().check_jobs(total, "held-out jobs (--eval-traces x --eval-jobs)")
}

/// Greedy mean JCT of `model` over `workloads` (every job of every workload).
pub fn evaluate(model: &Model, workloads: &[Workload], cluster: &Cluster, heartbeat: f64) -> Result<f64> {
    let items: Vec<(&Workload, Option<&Waves>)> = workloads.iter().map(|w| (w, None)).collect();
    evaluate_on(model, &items, cluster, heartbeat, false)
}

/// [`evaluate`] on held-out workloads, each with its durations (wave ones under `--waves`),
/// every machine kept on its job first when `sticky` ([`TrainConfig::sticky`]).
pub fn evaluate_held_out(
    model: &Model,
    eval: &[HeldOut],
    cluster: &Cluster,
    heartbeat: f64,
    sticky: bool,
) -> Result<f64> {
    let items: Vec<(&Workload, Option<&Waves>)> = eval.iter().map(|h| (&h.workload, h.waves.as_ref())).collect();
    evaluate_on(model, &items, cluster, heartbeat, sticky)
}

fn evaluate_on(
    model: &Model,
    items: &[(&Workload, Option<&Waves>)],
    cluster: &Cluster,
    heartbeat: f64,
    sticky: bool,
) -> Result<f64> {
    let per: Vec<Result<(f64, usize)>> = items
        .par_iter()
        .map(|(w, waves)| {
            let cfg = SimConfig { heartbeat, waves: waves.cloned(), ..SimConfig::default() };
            let r = kept_if(Decima::new(model), sticky, |p| sim::run(w, cluster, p, &cfg)).1?;
            Ok((r.jobs.iter().map(|j| j.jct()).sum::<f64>(), r.jobs.len()))
        })
        .collect();
    let (mut sum, mut n) = (0.0, 0);
    for x in per {
        let (s, k) = x?;
        sum += s;
        n += k;
    }
    Ok(if n > 0 { sum / n as f64 } else { f64::NAN })
}

/// What [`train`] returns.
#[derive(Clone, Debug)]
pub struct Trained {
    /// The weights with the lowest held-out mean JCT among those scored (the first of equal
    /// scores; `init` itself is a candidate, scored as iteration 0); the last weights when
    /// nothing was scored.
    pub best: Model,
    /// The iteration `best` comes from and its held-out score (`None` when nothing was scored).
    pub best_at: Option<(usize, f64)>,
    /// The weights after the last iteration.
    pub last: Model,
    pub stats: Vec<IterStats>,
}

/// Trains from `init` on jobs drawn from `dags` on `cluster`. After every `eval_every`
/// iterations (and before the first, and after the last) the greedy policy is scored on `eval`
/// (mean JCT) and the best-scoring weights are kept; `progress` sees every iteration.
pub fn train(
    dags: &[Dag],
    cluster: &Cluster,
    cfg: &TrainConfig,
    init: &Model,
    eval: &[Workload],
    eval_every: usize,
    progress: &mut dyn FnMut(&IterStats),
) -> Result<Trained> {
    train_from(&[dags], cluster, cfg, init, eval, eval_every, progress)
}

/// As [`train`], each job's DAG drawn in two steps: a source uniformly from `sources`, then a
/// DAG within it ([`generate::generate_from`]; spark-sched-sim's draw of a TPC-H size, then a
/// query, with one source per size). With one source this is exactly [`train`].
pub fn train_from(
    sources: &[&[Dag]],
    cluster: &Cluster,
    cfg: &TrainConfig,
    init: &Model,
    eval: &[Workload],
    eval_every: usize,
    progress: &mut dyn FnMut(&IterStats),
) -> Result<Trained> {
    let eval: Vec<HeldOut> = eval.iter().map(|w| HeldOut { workload: w.clone(), waves: None }).collect();
    train_with(sources, None, cluster, cfg, init, &eval, eval_every, progress)
}

/// As [`train_from`], with wave durations in every episode when `waves` is given (module
/// doc), scored on `eval` ([`held_out`]). Without waves this is exactly [`train_from`].
#[allow(clippy::too_many_arguments)]
pub fn train_with(
    sources: &[&[Dag]],
    waves: Option<&TrainWaves>,
    cluster: &Cluster,
    cfg: &TrainConfig,
    init: &Model,
    eval: &[HeldOut],
    eval_every: usize,
    progress: &mut dyn FnMut(&IterStats),
) -> Result<Trained> {
    check(cfg)?;
    if sources.iter().all(|s| s.is_empty()) {
        return Err(Error::Usage("no DAGs to train on".into()));
    }
    let arch = Arch::new();
    let mut model = init.clone();
    let mut adam = Adam::new(arch.len);
    let sim_cfg = SimConfig { heartbeat: cfg.heartbeat, ..SimConfig::default() };
    // Grown per iteration (not reserved: --iterations bounds time, not memory up front).
    let mut stats = Vec::new();
    // Model selection on held-out workloads (NaN, no job finished, never wins).
    let mut best = Best::new();
    if eval_every > 0 && !eval.is_empty() {
        let jct = evaluate_held_out(&model, eval, cluster, cfg.heartbeat, cfg.sticky)?;
        best.offer(0, jct, &model);
        let s = IterStats {
            iteration: 0,
            episode: 0.0,
            jobs: 0,
            actions: 0,
            jobs_in_system: f64::NAN,
            entropy_weight: cfg.entropy,
            eval_jct: Some(jct),
        };
        progress(&s);
        stats.push(s);
    }
    for it in 0..cfg.iterations {
        let seq_seed = mix(cfg.seed, 2 * it as u64);
        let mean = (cfg.episode_start + cfg.episode_growth * it as f64).min(cfg.episode_max);
        let u: f64 = ChaCha8Rng::seed_from_u64(mix(cfg.seed, 2 * it as u64 + 1)).gen();
        let tau = -mean * (1.0 - u).ln();
        let (mut w, drawn) = generate::generate_from_named(
            sources,
            cfg.max_jobs,
            ArrivalProcess::Poisson { mean: cfg.mean_gap },
            1,
            seq_seed,
        )?;
        w.jobs.retain(|j| j.arrival <= tau);
        let ep_cfg = match waves {
            None => sim_cfg.clone(),
            Some(t) => SimConfig { waves: Some(t.for_workload(&w, &drawn)?), seed: seq_seed, ..sim_cfg.clone() },
        };
        let beta = reinforce::entropy_weight(cfg.entropy, it, cfg.iterations);
        // Each rollout keeps its decisions and the occupancy its replay gives, not the replay
        // itself (every task run): that is all the step needs.
        let runs: Vec<Result<(Vec<Step>, Occupancy)>> = (0..cfg.rollouts)
            .into_par_iter()
            .map(|r| {
                let p = Decima::sampling(&model, mix(seq_seed, r as u64 + 1));
                let (mut p, res) = kept_if(p, cfg.sticky, |p| sim::run_until(&w, cluster, p, &ep_cfg, tau));
                Ok((p.steps.take().unwrap_or_default(), Occupancy::new(&res?, tau)))
            })
            .collect();
        let (runs, occ): (Vec<Vec<Step>>, Vec<Occupancy>) =
            runs.into_iter().collect::<Result<Vec<_>>>()?.into_iter().unzip();
        let k = cfg.rollouts as f64;
        let baseline = |t: f64| occ.iter().map(|o| o.to_go(t)).sum::<f64>() / k;
        // Advantage = (−to_go) − (−baseline).
        let advs: Vec<Vec<f64>> = runs
            .iter()
            .zip(&occ)
            .map(|(steps, o)| steps.iter().map(|s| baseline(s.time) - o.to_go(s.time)).collect())
            .collect();
        let all: Vec<f64> = advs.iter().flatten().copied().collect();
        let n = all.len();
        let actions = n;
        if n > 0 {
            let mean_a = all.iter().sum::<f64>() / n as f64;
            let var = all.iter().map(|a| (a - mean_a) * (a - mean_a)).sum::<f64>() / n as f64;
            let sd = if var > 0.0 { var.sqrt() } else { 1.0 };
            let params = &model.params;
            let grads: Vec<Vec<f64>> = runs
                .par_iter()
                .zip(advs.par_iter())
                .map(|(steps, adv)| {
                    let mut g = vec![0.0; arch.len];
                    for (s, a) in steps.iter().zip(adv) {
                        net::accumulate_grad(&arch, params, &s.obs, s.stage, s.level, a / sd, beta, &mut g);
                    }
                    g
                })
                .collect();
            reinforce::step(&mut adam, &mut model.params, grads.iter().map(Vec::as_slice), n, cfg.lr, it + 1)?;
        }
        let jobs_in_system = occ.iter().map(|o| o.at(tau) / tau.max(1e-9)).sum::<f64>() / k;
        let eval_jct = if eval_every > 0 && !eval.is_empty() && reinforce::eval_due(eval_every, it, cfg.iterations) {
            let jct = evaluate_held_out(&model, eval, cluster, cfg.heartbeat, cfg.sticky)?;
            best.offer(it + 1, jct, &model);
            Some(jct)
        } else {
            None
        };
        let s = IterStats {
            iteration: it + 1,
            episode: tau,
            jobs: w.jobs.len(),
            actions,
            jobs_in_system,
            entropy_weight: beta,
            eval_jct,
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
    use crate::model::ClusterSpec;
    use crate::trace::spark_sched_sim;
    use std::path::PathBuf;

    fn q6() -> Vec<PathBuf> {
        vec![PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/tpch-2g-q6.json")]
    }

    fn one_slot(n: usize) -> Cluster {
        let cap = crate::trace::RESOURCES.iter().map(|r| (r.to_string(), 1.0)).collect();
        ClusterSpec::uniform(n, cap).resolve(&crate::trace::RESOURCES.map(String::from)).unwrap()
    }

    /// Under `--waves` a held-out workload carries the model `replay --waves` makes of the
    /// sidecar `gen-trace --waves-out` writes for the same draw (the same code), its greedy JCT
    /// differs from the trace durations' one, and training episodes run the wave durations:
    /// the same seed gives the same weights and curve, without waves other ones.
    #[test]
    fn wave_durations_reach_every_episode_and_held_out_workload() {
        let paths = q6();
        let per = spark_sched_sim::sources(&paths, 10).unwrap();
        let sources: Vec<&[Dag]> = per.iter().map(Vec::as_slice).collect();
        let cluster = one_slot(3);
        let waves = TrainWaves::new(WaveLibrary::load(&paths, None, 10).unwrap());
        let seeds = [mix(5, 1 << 41)];
        let plain = held_out(&sources, 6, 4.0, &seeds, None).unwrap();
        let waved = held_out(&sources, 6, 4.0, &seeds, Some(&waves)).unwrap();
        assert!(plain[0].waves.is_none());
        let (w, drawn) =
            generate::generate_from_named(&sources, 6, ArrivalProcess::Poisson { mean: 4.0 }, 1, seeds[0]).unwrap();
        let names: Vec<String> = w.jobs.iter().map(|j| j.name.clone()).collect();
        let file = spark_sched_sim::waves_sidecar(&paths, None, 10, &names, &drawn).unwrap();
        let text = serde_json::to_string(&file).unwrap();
        let from_file = crate::sim::waves::Sidecar::parse(&text).unwrap().bind(&w).unwrap();
        let held = &waved[0].waves.as_ref().unwrap().model;
        assert_eq!(held.stages.len(), 6);
        for (a, b) in held.stages.iter().zip(&from_file.stages) {
            assert!(a.iter().zip(b).all(|(x, y)| **x == **y));
        }
        let init = Model::init(5);
        let jct_plain = evaluate_held_out(&init, &plain, &cluster, 1.0, false).unwrap();
        let jct_waves = evaluate_held_out(&init, &waved, &cluster, 1.0, false).unwrap();
        assert!(jct_plain.is_finite() && jct_waves.is_finite() && jct_plain != jct_waves, "{jct_plain} {jct_waves}");

        let cfg = TrainConfig {
            iterations: 2,
            rollouts: 2,
            seed: 5,
            episode_start: 1e5,
            episode_growth: 0.0,
            episode_max: 1e5,
            mean_gap: 4.0,
            max_jobs: 6,
            ..TrainConfig::default()
        };
        let run = |waves: Option<&TrainWaves>, eval: &[HeldOut]| {
            train_with(&sources, waves, &cluster, &cfg, &init, eval, 1, &mut |_| {}).unwrap()
        };
        let a = run(Some(&waves), &waved);
        let b = run(Some(&waves), &waved);
        let p = run(None, &plain);
        let curve = |t: &Trained| t.stats.iter().map(|s| (s.jobs_in_system, s.eval_jct)).collect::<Vec<_>>();
        assert_eq!(a.last.params, b.last.params);
        assert_eq!(format!("{:?}", curve(&a)), format!("{:?}", curve(&b)));
        assert_eq!(a.stats[0].eval_jct, Some(jct_waves));
        assert_eq!(p.stats[0].eval_jct, Some(jct_plain));
        // The same episodes (sequence and end), other occupancy: the durations differ.
        assert_eq!(a.stats[1].jobs, p.stats[1].jobs);
        assert_ne!(a.stats[1].jobs_in_system, p.stats[1].jobs_in_system);
        assert_ne!(a.last.params, p.last.params);
        // Without waves, train_with is train_from.
        let q = train_from(&sources, &cluster, &cfg, &init, &[plain[0].workload.clone()], 1, &mut |_| {}).unwrap();
        assert_eq!(q.last.params, p.last.params);
    }
}
