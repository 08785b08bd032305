//! A step-wise environment over the simulator, for reinforcement learning: the simulator runs
//! until a scheduling decision is due, hands the caller an observation, and resumes with the
//! caller's action. Actions, observations and reward are Decima's (see
//! [`crate::online::decima`]): an action is ⟨stage, parallelism limit⟩, the observation one node
//! per unfinished stage of every active job, and the reward minus the job-seconds spent in the
//! system since the previous decision.
//!
//! # How the simulator is paused
//!
//! [`sim::run`] drives policies through callbacks; an [`Episode`] runs it on a thread of its own
//! with a policy ([`Agent`]) whose decisions are taken by the caller: at a decision point the
//! policy sends the observation over a channel and waits for the action. The two threads never
//! run at the same time (each waits for the other), so an episode is exactly as deterministic
//! as a replay: the same workload, configuration and actions give the same observations,
//! rewards and schedule. Dropping an episode mid-way ends its thread at the next decision.
//!
//! # Decision points and semantics
//!
//! Exactly those of the `decima` policy: at a heartbeat of machine m, freed resources first go
//! back to the stages earlier actions committed (up to their job's limit); then, while a
//! runnable task fits what is left of m, the caller picks a candidate stage and a limit level;
//! the tasks of that stage are taken lowest id first while they fit and the job's dominant share
//! is below the limit (at least one task). With the bundled model choosing the actions, an
//! episode reproduces `replay --scheduler decima` decision for decision (tested).
//!
//! # Reference agents
//!
//! An episode can carry a built-in policy as a reference: at each decision it also reports the
//! action that policy would take now. For `decima` that is its network's greedy choice on the
//! same observation. For the other policies (graphene, tetris, cs, ...) it is the stage of the
//! first task the policy would launch on the machine, with no limit (the first candidate when
//! it would launch none there); the policy sees every arrival, launch and finish. Exact JCTs of a built-in policy on an episode's workload come
//! from [`baseline`], a plain replay.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::error::{Error, Result};
use crate::model::{Cluster, ResVec, Workload};
use crate::online::decima::cache::{self, EmbedCache};
use crate::online::decima::features::{any_fits, cluster_total, observe, take, JobTrack, Obs, Tracks};
use crate::online::decima::model::Model;
use crate::online::decima::net::{self, level_value, Arch, LEVELS};
use crate::online::{self, OnlineSettings, Policy, TaskRef};
use crate::sim::{self, SimConfig, View};

pub use crate::online::decima::features::{F as NODE_FEATURES, J as JOB_FEATURES};

/// Limit levels an action chooses from: level k is a share (k + 1) / 20 of the cluster, the
/// last is unlimited.
pub const LIMIT_LEVELS: usize = LEVELS;

/// The caller's choice at a decision point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Action {
    /// A node of the observation (an unfinished stage). Must be a candidate; another node is
    /// replaced by the first candidate and the step reports it as invalid.
    pub node: usize,
    /// Limit level, 0..LIMIT_LEVELS (larger values mean unlimited).
    pub level: usize,
}

/// A task's time on a machine, for drawing an episode's Gantt chart.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Span {
    pub job: u32,
    pub task: u32,
    pub machine: u32,
    pub start: f64,
    /// NaN while the task runs.
    pub end: f64,
}

/// A decision point: what the caller sees and what happened since the previous one.
#[derive(Clone, Debug)]
pub struct Decision {
    /// Simulated time.
    pub now: f64,
    /// The machine whose free resources are being handed out.
    pub machine: usize,
    pub obs: Obs,
    /// Job-seconds spent in the system since the previous decision (the reward is minus this).
    pub job_seconds: f64,
    /// Jobs in the system now.
    pub in_system: usize,
    /// Jobs finished so far.
    pub done: usize,
    /// The reference policy's action here, when the episode has one.
    pub reference: Option<Action>,
    /// Tasks launched since the previous decision (their `end` is NaN).
    pub started: Vec<Span>,
    /// Tasks ended since the previous decision: (job, task, end).
    pub ended: Vec<(u32, u32, f64)>,
}

/// How an episode ended.
#[derive(Clone, Debug)]
pub struct Final {
    pub now: f64,
    /// Job-seconds since the last decision, up to the end.
    pub job_seconds: f64,
    /// Per job (workload order): JCT, NaN for jobs unfinished at a time limit.
    pub jct: Vec<f64>,
    pub makespan: f64,
    /// Whether every job finished (false: the episode hit its time limit).
    pub complete: bool,
    /// Invalid node choices replaced by the first candidate.
    pub invalid_actions: usize,
    /// Tasks launched.
    pub tasks: usize,
    /// Every task's run, in the order they ended (unfinished ones at a time limit left out).
    pub runs: Vec<Span>,
}

/// What a step returns.
#[derive(Clone, Debug)]
pub enum Step {
    Decide(Box<Decision>),
    Done(Final),
}

enum Msg {
    Decide(Box<Decision>),
    Done(Final),
    Failed(Error),
}

/// The marker a dropped episode unwinds its simulator thread with.
struct Abandoned;

/// Everything an episode needs besides the actions.
#[derive(Clone)]
pub struct EpisodeConfig {
    pub sim: SimConfig,
    /// Stop at this simulated time (Decima's memoryless episode ends); None runs every job to
    /// its end.
    pub until: Option<f64>,
    /// A built-in online policy reported as a reference at every decision.
    pub reference: Option<String>,
    /// Settings for the reference policy (queue shares, Graphene's knobs, the decima model).
    pub settings: Option<OnlineSettings>,
}

/// One episode: the simulator on its own thread, paused at decision points.
pub struct Episode {
    to_sim: Option<SyncSender<Action>>,
    from_sim: Receiver<Msg>,
    thread: Option<JoinHandle<()>>,
    finished: bool,
}

impl Episode {
    /// Starts the simulator; returns the episode and its first step (a decision, or the end
    /// when no decision was ever needed).
    pub fn start(workload: Arc<Workload>, cluster: Arc<Cluster>, cfg: EpisodeConfig) -> Result<(Episode, Step)> {
        let reference = cfg.reference.clone().map(|name| {
            let settings = cfg.settings.clone().unwrap_or_else(|| default_settings(&workload));
            (name, settings)
        });
        if let Some((name, _)) = &reference {
            if !online::NAMES.contains(&name.as_str()) {
                return Err(Error::Usage(format!(
                    "unknown online scheduler '{name}' (known: {})",
                    online::NAMES.join(", ")
                )));
            }
        }
        let sticky = cfg.settings.as_ref().is_some_and(|s| s.sticky);
        let (to_sim, from_env) = sync_channel::<Action>(1);
        let (to_env, from_sim) = sync_channel::<Msg>(1);
        let thread = std::thread::Builder::new()
            .name("graphene-env".into())
            .spawn(move || {
                let reference = match reference.map(|(name, settings)| Reference::new(&name, &settings)).transpose() {
                    Ok(r) => r,
                    Err(e) => {
                        let _ = to_env.send(Msg::Failed(e));
                        return;
                    }
                };
                let agent = Agent::new(to_env.clone(), from_env, reference);
                let until = cfg.until.unwrap_or(f64::INFINITY);
                // `sticky` (replay's --sticky): a machine whose job still has runnable work
                // keeps it without a decision; the agent places the others.
                let (mut agent, ran) = online::kept_if(agent, sticky, |p| {
                    catch_unwind(AssertUnwindSafe(|| sim::run_until(&workload, &cluster, p, &cfg.sim, until)))
                });
                let msg = match ran {
                    Err(p) if p.is::<Abandoned>() => return,
                    Err(p) => {
                        let what = p
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| p.downcast_ref::<String>().cloned())
                            .unwrap_or_else(|| "unknown panic".into());
                        Msg::Failed(Error::Usage(format!(
                            "internal error: the environment's simulator panicked: {what}"
                        )))
                    }
                    Ok(Err(e)) => Msg::Failed(e),
                    Ok(Ok(result)) => {
                        let complete = result.jobs.iter().all(|j| j.finish.is_finite());
                        let end = if complete { result.makespan.max(agent.last) } else { until };
                        agent.advance(end);
                        Msg::Done(Final {
                            now: end,
                            job_seconds: agent.acc,
                            jct: result.jobs.iter().map(|j| j.jct()).collect(),
                            makespan: result.makespan,
                            complete,
                            invalid_actions: agent.invalid,
                            tasks: result.runs.len(),
                            runs: result
                                .runs
                                .iter()
                                .map(|r| Span {
                                    job: r.job,
                                    task: r.task,
                                    machine: r.machine,
                                    start: r.start,
                                    end: r.end,
                                })
                                .collect(),
                        })
                    }
                };
                let _ = to_env.send(msg);
            })
            .map_err(Error::Io)?;
        let mut ep = Episode { to_sim: Some(to_sim), from_sim, thread: Some(thread), finished: false };
        let first = ep.receive()?;
        Ok((ep, first))
    }

    fn receive(&mut self) -> Result<Step> {
        let msg = self.from_sim.recv().map_err(|_| Error::Usage("the environment's simulator stopped".into()))?;
        match msg {
            Msg::Decide(d) => Ok(Step::Decide(d)),
            Msg::Done(f) => {
                self.close();
                Ok(Step::Done(f))
            }
            Msg::Failed(e) => {
                self.close();
                Err(e)
            }
        }
    }

    /// Applies `action` at the current decision and runs to the next one.
    pub fn step(&mut self, action: Action) -> Result<Step> {
        if self.finished {
            return Err(Error::Usage("the episode is over; reset the environment".into()));
        }
        let to = self.to_sim.as_ref().ok_or_else(|| Error::Usage("the episode is over".into()))?;
        to.send(action).map_err(|_| Error::Usage("the environment's simulator stopped".into()))?;
        self.receive()
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }

    fn close(&mut self) {
        self.finished = true;
        self.to_sim = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Episode {
    fn drop(&mut self) {
        // Closing the action channel makes the simulator thread unwind at its next decision.
        self.to_sim = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Equal queue shares and default knobs, as `replay` uses without flags.
pub fn default_settings(workload: &Workload) -> OnlineSettings {
    let q = workload.queues().len().max(1);
    let shares = vec![1.0 / q as f64; q];
    OnlineSettings {
        shares: shares.clone(),
        graphene: online::GrapheneOnline { shares, ..online::GrapheneOnline::default() },
        seed: 0,
        tetris_kappa: None,
        tetris_overbook: 1.0,
        tetris_srpt_scale: Default::default(),
        cs_accounting: online::CsAccounting::Containers,
        cs_user_limit: None,
        cs_yarn: online::CsYarn::default(),
        decima_model: None,
        decima_bundled: None,
        sticky: false,
    }
}

/// A built-in policy's replay of the workload: per-job JCTs and the job-seconds in the system
/// (the sum of JCTs), to compare an agent's episode with.
pub fn baseline(
    workload: &Workload,
    cluster: &Cluster,
    name: &str,
    settings: &OnlineSettings,
    cfg: &SimConfig,
) -> Result<Vec<f64>> {
    let mut policy = online::by_name(name, settings)?;
    let result = sim::run(workload, cluster, policy.as_mut(), cfg)?;
    // Under waves a task runs a duration drawn at launch, not its trace duration.
    let violations =
        crate::validate::validate_replay_durations(workload, cluster, &cfg.speeds, &result, cfg.waves.is_none());
    if let Some(v) = violations.first() {
        return Err(Error::Usage(format!("internal error: the replay under {name} broke a rule: {v}")));
    }
    Ok(result.jobs.iter().map(|j| j.jct()).collect())
}

enum Reference {
    Decima { arch: Box<Arch>, params: Vec<f64> },
    Policy(Box<dyn Policy>),
}

impl Reference {
    fn new(name: &str, settings: &OnlineSettings) -> Result<Reference> {
        if name == "decima" {
            let model = match (&settings.decima_model, settings.decima_bundled) {
                (Some(p), _) => Model::load(p)?,
                (None, Some(name)) => Model::bundled_named(name)?,
                (None, None) => Model::bundled()?,
            };
            return Ok(Reference::Decima { arch: Box::new(Arch::new()), params: model.params });
        }
        Ok(Reference::Policy(online::by_name(name, settings)?))
    }
}

/// The policy whose decisions the caller takes (runs on the episode's thread).
struct Agent {
    to_env: SyncSender<Msg>,
    from_env: Receiver<Action>,
    jobs: Tracks,
    touched: Vec<u32>,
    total: Option<ResVec>,
    reference: Option<Reference>,
    /// Job-seconds accumulated since the last decision, jobs in the system, and when that
    /// count last changed.
    acc: f64,
    in_system: usize,
    last: f64,
    done: usize,
    invalid: usize,
    /// Launches and ends since the last decision, for the caller's Gantt chart.
    started: Vec<Span>,
    ended: Vec<(u32, u32, f64)>,
}

impl Agent {
    fn new(to_env: SyncSender<Msg>, from_env: Receiver<Action>, reference: Option<Reference>) -> Agent {
        Agent {
            to_env,
            from_env,
            jobs: Tracks::default(),
            touched: Vec::new(),
            total: None,
            reference,
            acc: 0.0,
            in_system: 0,
            last: 0.0,
            done: 0,
            invalid: 0,
            started: Vec::new(),
            ended: Vec::new(),
        }
    }

    fn advance(&mut self, now: f64) {
        if now > self.last {
            self.acc += (now - self.last) * self.in_system as f64;
            self.last = now;
        }
    }

    fn reference_action(&mut self, view: &View, machine: usize, left: &ResVec, obs: &Obs) -> Option<Action> {
        match self.reference.as_mut()? {
            Reference::Decima { arch, params } => {
                let mut cache = EmbedCache::default();
                let mut pass = cache::forward(arch, params, obs, &mut cache);
                let c = crate::learn::argmax(&pass.gnn.q);
                let v = obs.cand[c] as usize;
                net::score_limits(arch, params, obs, &mut pass, obs.job_of[v] as usize);
                let k = crate::learn::argmax(&pass.w);
                Some(Action { node: v, level: pass.levels[k] })
            }
            Reference::Policy(p) => {
                let mut out = Vec::new();
                p.assign(view, machine, left, &mut out);
                // The stage of the policy's first pick; the first candidate when it would launch
                // nothing here (tetris holds every resource to capacity, for one) or a task the
                // action rule cannot start.
                let node = out
                    .first()
                    .and_then(|t| {
                        let stage = view.dag(t.job).tasks[t.task as usize].stage;
                        obs.stage.iter().position(|&(j, s)| j == t.job && s == stage)
                    })
                    .filter(|&v| obs.cand.contains(&(v as u32)))
                    .unwrap_or(obs.cand[0] as usize);
                Some(Action { node, level: LIMIT_LEVELS - 1 })
            }
        }
    }
}

impl Policy for Agent {
    fn name(&self) -> String {
        "agent".into()
    }

    fn job_arrived(&mut self, view: &View, job: u32) {
        self.advance(view.now);
        self.in_system += 1;
        self.jobs.insert(job, JobTrack::new(view, job));
        if let Some(Reference::Policy(p)) = &mut self.reference {
            p.job_arrived(view, job);
        }
    }

    fn assign(&mut self, view: &View, machine: usize, free: &ResVec, out: &mut Vec<TaskRef>) {
        let total = *self.total.get_or_insert_with(|| cluster_total(view));
        let mut left = *free;
        self.jobs.refill_committed(view, view.active(), &total, &mut left, out, &mut self.touched);
        let cap = view.caps[machine];
        loop {
            if !any_fits(view, &self.jobs, &left, out) {
                break;
            }
            let obs = observe(view, &self.jobs, &total, &cap, &left);
            if obs.cand.is_empty() {
                break;
            }
            self.advance(view.now);
            let reference = self.reference_action(view, machine, &left, &obs);
            let decision = Decision {
                now: view.now,
                machine,
                job_seconds: std::mem::take(&mut self.acc),
                in_system: self.in_system,
                done: self.done,
                reference,
                obs,
                started: std::mem::take(&mut self.started),
                ended: std::mem::take(&mut self.ended),
            };
            if self.to_env.send(Msg::Decide(Box::new(decision.clone()))).is_err() {
                resume_unwind(Box::new(Abandoned));
            }
            let Ok(action) = self.from_env.recv() else { resume_unwind(Box::new(Abandoned)) };
            let obs = decision.obs;
            // A node past u32 is no node of any observation: invalid like any non-candidate.
            let v = if u32::try_from(action.node).is_ok_and(|n| obs.cand.contains(&n)) {
                action.node
            } else {
                self.invalid += 1;
                obs.cand[0] as usize
            };
            let limit = level_value(action.level.min(LIMIT_LEVELS - 1));
            let (job, stage) = obs.stage[v];
            let tr = self.jobs.get_mut(job).expect("observed jobs are tracked");
            let n = take(view, tr, &total, job, stage, limit, true, &mut left, out);
            tr.commit(stage, limit);
            self.touched.push(job);
            if n == 0 {
                break;
            }
        }
        self.jobs.clear_picks(&mut self.touched);
    }

    fn launched(&mut self, view: &View, t: TaskRef) {
        let machine = view.launched_on.map_or(u32::MAX, |m| m as u32);
        self.started.push(Span { job: t.job, task: t.task, machine, start: view.now, end: f64::NAN });
        if let Some(tr) = self.jobs.get_mut(t.job) {
            tr.book_launch(view, t);
        }
        if let Some(Reference::Policy(p)) = &mut self.reference {
            p.launched(view, t);
        }
    }

    fn finished(&mut self, view: &View, t: TaskRef) {
        self.ended.push((t.job, t.task, view.now));
        if let Some(Reference::Policy(p)) = &mut self.reference {
            p.finished(view, t);
        }
        if view.job_state(t.job).left == 0 {
            self.advance(view.now);
            self.in_system -= 1;
            self.done += 1;
            self.jobs.remove(t.job);
            return;
        }
        if let Some(tr) = self.jobs.get_mut(t.job) {
            tr.book_finish(view, t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{generate, ArrivalProcess};

    fn setup(jobs: usize, seed: u64) -> (Arc<Workload>, Arc<Cluster>) {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/tpch-2g-q6.json")).unwrap();
        let dags = crate::formats::parse_dags(&text, "q6", &crate::formats::LoadOptions::default()).unwrap();
        let ex = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../traces/example.json")).unwrap();
        let mut all = dags;
        all.extend(crate::formats::parse_dags(&ex, "example", &crate::formats::LoadOptions::default()).unwrap());
        let w = generate(&all, jobs, ArrivalProcess::Poisson { mean: 5.0 }, 1, seed).unwrap();
        let cap = crate::ClusterSpec::default_capacity();
        let c = crate::ClusterSpec::uniform(4, cap).resolve(&crate::trace::RESOURCES.map(String::from)).unwrap();
        (Arc::new(w), Arc::new(c))
    }

    fn cfg(reference: Option<&str>) -> EpisodeConfig {
        EpisodeConfig { sim: SimConfig::default(), until: None, reference: reference.map(String::from), settings: None }
    }

    /// Runs an episode choosing `pick(decision)`; returns (steps, total job-seconds, final).
    fn play(
        w: &Arc<Workload>,
        c: &Arc<Cluster>,
        reference: Option<&str>,
        pick: impl Fn(&Decision) -> Action,
    ) -> (usize, f64, Final) {
        let (mut ep, mut step) = Episode::start(w.clone(), c.clone(), cfg(reference)).unwrap();
        let (mut n, mut total) = (0, 0.0);
        loop {
            match step {
                Step::Decide(d) => {
                    total += d.job_seconds;
                    n += 1;
                    step = ep.step(pick(&d)).unwrap();
                }
                Step::Done(f) => {
                    total += f.job_seconds;
                    return (n, total, f);
                }
            }
        }
    }

    /// Following the decima reference at every step replays `replay --scheduler decima`
    /// exactly, and the rewards add up to the sum of JCTs (job-seconds in the system).
    #[test]
    fn decima_reference_reproduces_the_decima_replay() {
        let (w, c) = setup(12, 3);
        let (steps, total, fin) = play(&w, &c, Some("decima"), |d| d.reference.unwrap());
        assert!(steps > 12);
        assert!(fin.complete && fin.invalid_actions == 0);
        let want = baseline(&w, &c, "decima", &default_settings(&w), &SimConfig::default()).unwrap();
        assert_eq!(fin.jct, want);
        let sum: f64 = want.iter().sum();
        assert!((total - sum).abs() <= 1e-6 * sum, "{total} vs {sum}");
    }

    /// Same actions, same episode; invalid nodes are replaced and counted.
    #[test]
    fn episodes_are_deterministic_and_invalid_actions_are_counted() {
        let (w, c) = setup(8, 1);
        let last = |d: &Decision| Action { node: *d.obs.cand.last().unwrap() as usize, level: 3 };
        let a = play(&w, &c, None, last);
        let b = play(&w, &c, None, last);
        assert_eq!(a.0, b.0);
        assert_eq!(a.2.jct, b.2.jct);
        assert_eq!(a.1.to_bits(), b.1.to_bits());
        let bad = play(&w, &c, None, |d| Action { node: d.obs.x.len() + 5, level: 99 });
        assert!(bad.2.complete);
        assert_eq!(bad.2.invalid_actions, bad.0);
    }

    /// A node past u32 whose low 32 bits name a candidate is no candidate: it is replaced and
    /// counted like any other invalid node (it was once cut to its low bits and then indexed
    /// the observation out of bounds).
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn nodes_past_u32_are_invalid_not_truncated() {
        let (w, c) = setup(8, 1);
        let wide = play(&w, &c, None, |d| Action { node: (1usize << 32) + d.obs.cand[0] as usize, level: 0 });
        assert!(wide.2.complete);
        assert_eq!(wide.2.invalid_actions, wide.0);
        let first = play(&w, &c, None, |d| Action { node: d.obs.cand[0] as usize, level: 0 });
        assert_eq!(first.2.invalid_actions, 0);
        assert_eq!(wide.2.jct, first.2.jct);
    }

    /// A reference built from another policy names a candidate at every step, and dropping an
    /// episode mid-way ends its thread.
    #[test]
    fn policy_references_and_early_drop() {
        let (w, c) = setup(6, 2);
        let (_, _, fin) = play(&w, &c, Some("tetris"), |d| {
            let r = d.reference.unwrap();
            assert!(d.obs.cand.contains(&(r.node as u32)));
            r
        });
        assert!(fin.complete);
        let (ep, first) = Episode::start(w.clone(), c.clone(), cfg(None)).unwrap();
        assert!(matches!(first, Step::Decide(_)));
        drop(ep);
        // A time limit ends the episode early with unfinished jobs.
        let mut short = cfg(None);
        short.until = Some(10.0);
        let (mut ep, mut step) = Episode::start(w, c, short).unwrap();
        let fin = loop {
            match step {
                Step::Decide(d) => step = ep.step(Action { node: d.obs.cand[0] as usize, level: 19 }).unwrap(),
                Step::Done(f) => break f,
            }
        };
        assert!(!fin.complete && fin.now == 10.0);
    }
}
