//! LACHESIS (Luo et al., "Learning to Optimize DAG Scheduling in Heterogeneous Environment"):
//! a learned policy chooses which ready work to place next, and DEFT
//! ([`super::deft`]) places it, duplicating one parent where that finishes earlier.
//!
//! * [`features`]: the state, one node per stage with tasks left, with the paper's features.
//! * [`net`]: the GNN (node, job and global levels) and the policy network, with a hand-written
//!   backward pass built from [`crate::learn`].
//! * [`train`]: REINFORCE with a per-batch baseline, Adam and an entropy bonus, on batches of
//!   TPC-H jobs on heterogeneous executors.
//! * [`model`]: the weights file and the model trained for this repository.
//!
//! # One decision
//!
//! At every step the open stages of every job form the observation; the candidates are the
//! stages with a ready task (all its parents placed). The policy scores each candidate, a
//! softmax turns scores into probabilities (eq. 8); inference takes the highest score (ties: the
//! lower stage id), training samples with a seeded RNG. Every ready task of the chosen stage is
//! then placed by DEFT, highest upward rank first. Tasks that become ready meanwhile wait for a
//! later decision.
//!
//! With [`Decision::Task`] (an option of the trainer, recorded in the model file as
//! `trained.setting.decision: "task"`) the same network scores the same stages, but a decision
//! places only the chosen stage's highest-rank ready task, and a candidate's rank feature is
//! that task's rank: the policy can then interleave stages task by task, as RankUp-DEFT does.
//! BENCHMARKS.md ("LACHESIS reproduction") measures what the coarser default costs: RankUp's own order at
//! stage granularity ([`rank_rule`]) trails RankUp-DEFT by up to 0.6% at ccr 0.5 and not at
//! ccr 5, and a per-task model fine-tuned there did worse than the stage models.
//!
//! # Departures from the paper, and why
//!
//! * **A decision picks a stage, not a single task** (by default; see [`features`] for the node
//!   level and [`Decision::Task`] for the per-task option). The
//!   tasks of a TPC-H stage are interchangeable copies; placing a stage's ready tasks together
//!   takes tens of decisions per job instead of hundreds to thousands, which is what makes
//!   training within minutes on two cores possible. A policy that picks one task at a time could
//!   interleave stages more finely; the highest-rank-first order inside the stage is what
//!   RankUp-DEFT would do with those tasks.
//! * **REINFORCE with a per-batch baseline instead of actor-critic** (see [`train`]): the paper's
//!   critic scores (state, action) pairs; with several rollouts of the same batch their mean
//!   makespan is an unbiased, input-dependent baseline (Decima's), with no second network to fit.
//! * **tanh instead of ReLU-family activations** and an MLP lifting x_v to the embedding width,
//!   as in Decima (`online::decima`): smooth, so the finite-difference check never sits on a
//!   kink.

pub mod features;
pub mod model;
pub mod net;
pub mod train;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

pub use model::Model;

use super::instance::Instance;
use super::plan::Plan;
use crate::error::{Error, Result};
use crate::model::Dag;
use features::{Graph, Obs, State};
use net::Arch;

/// One decision as training needs it: the observation and the candidate taken.
#[derive(Clone, Debug)]
pub struct Step {
    pub obs: Obs,
    pub act: usize,
}

/// How candidates are chosen.
pub enum Mode {
    /// The highest score; ties go to the first candidate (the lowest stage id).
    Greedy,
    /// Sampled from the softmax with this RNG, recording every step.
    Sample(Box<ChaCha8Rng>),
}

impl Mode {
    pub fn sample(seed: u64) -> Mode {
        Mode::Sample(Box::new(ChaCha8Rng::seed_from_u64(seed)))
    }
}

/// What one episode produced.
pub struct Episode {
    pub plan: Plan,
    pub makespan: f64,
    /// Recorded in sampling mode only.
    pub steps: Vec<Step>,
    pub decisions: usize,
}

/// How much one decision places.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Every ready task of the chosen stage (the bundled model's mode: tens of decisions per
    /// job, which keeps training within minutes).
    #[default]
    Stage,
    /// One ready task of the chosen stage, the one DEFT's rank order would place first; then
    /// the policy decides again. As fine as RankUp-DEFT's per-task interleaving (and the paper's
    /// one-task decisions), at one network evaluation per task with a choice to make.
    Task,
}

impl Decision {
    /// The name a model file and the command line use.
    pub fn name(self) -> &'static str {
        match self {
            Decision::Stage => "stage",
            Decision::Task => "task",
        }
    }

    pub fn parse(s: &str) -> Result<Decision> {
        match s {
            "stage" => Ok(Decision::Stage),
            "task" => Ok(Decision::Task),
            _ => Err(Error::Usage(format!("decision {s:?}: expected \"stage\" or \"task\""))),
        }
    }

    /// The decision a model was trained with: its file's `trained.setting.decision`, "stage"
    /// when absent (files written before the option existed, and freshly initialized weights).
    pub fn of(trained: &serde_json::Value) -> Result<Decision> {
        match trained.get("setting").and_then(|s| s.get("decision")) {
            None | Some(serde_json::Value::Null) => Ok(Decision::Stage),
            Some(serde_json::Value::String(s)) => {
                Decision::parse(s).map_err(|e| Error::field("trained.setting.decision", e.to_string()))
            }
            Some(v) => Err(Error::field("trained.setting.decision", format!("{v}: expected \"stage\" or \"task\""))),
        }
    }

    /// Places what one decision for `stage` places.
    fn act(self, state: &mut State, stage: u32) {
        match self {
            Decision::Stage => state.act(stage),
            Decision::Task => {
                state.act_one(stage);
            }
        }
    }
}

/// Runs LACHESIS on `dag` (whose task-level view is `inst`) with `params`, each decision placing
/// what `decision` says. A decision with a single candidate is taken without evaluating the
/// network (the result would not change, and nothing is recorded for it), which matters for
/// [`Decision::Task`], where most of a small batch's decisions have one candidate.
pub fn run_episode(dag: &Dag, inst: &Instance, params: &[f64], mut mode: Mode, decision: Decision) -> Episode {
    let arch = Arch::new();
    let graph = Graph::new(dag, inst);
    let mut state = State::new(inst, &graph);
    state.ready_rank = decision == Decision::Task;
    let mut steps = Vec::new();
    loop {
        let (first, only) = {
            let mut cands = state.candidates();
            let Some(first) = cands.next() else { break };
            (first, cands.next().is_none())
        };
        let stage = if only {
            first
        } else {
            let obs = state.observe().expect("a state with candidates has an observation");
            let pass = net::forward(&arch, params, &obs);
            let act = match &mut mode {
                Mode::Greedy => crate::learn::argmax(&pass.q),
                Mode::Sample(rng) => crate::learn::sample(&pass.q, rng.gen()),
            };
            let stage = obs.stage[obs.cand[act] as usize];
            if matches!(mode, Mode::Sample(_)) {
                steps.push(Step { obs, act });
            }
            stage
        };
        decision.act(&mut state, stage);
    }
    let makespan = state.makespan();
    let decisions = state.decisions;
    Episode { plan: state.plan, makespan, steps, decisions }
}

/// Greedy LACHESIS with `model`, deciding as the model was trained to (`trained.setting.decision`,
/// checked when the file was parsed): the plan of the `lachesis` scheduler.
pub fn schedule(dag: &Dag, inst: &Instance, model: &Model) -> Plan {
    let decision = Decision::of(&model.trained).unwrap_or_default();
    run_episode(dag, inst, &model.params, Mode::Greedy, decision).plan
}

/// RankUp as a LACHESIS decision rule, without a network: each decision takes the stage whose
/// ready tasks include the highest upward rank (ties: the lower stage id) and places what
/// `decision` says. With [`Decision::Task`] this is RankUp-DEFT itself (the same task order,
/// ties included); with [`Decision::Stage`] it is RankUp-DEFT coarsened to the granularity of
/// the bundled model's decisions, so the two measure what that granularity alone costs a policy
/// that orders as RankUp does (BENCHMARKS.md, "LACHESIS reproduction").
pub fn rank_rule(dag: &Dag, inst: &Instance, decision: Decision) -> Plan {
    let graph = Graph::new(dag, inst);
    let mut state = State::new(inst, &graph);
    loop {
        let mut best: Option<(u32, f64)> = None;
        for s in state.candidates() {
            let r = state.best_ready_rank(s);
            if best.is_none_or(|(_, b)| r > b) {
                best = Some((s, r));
            }
        }
        let Some((stage, _)) = best else { break };
        decision.act(&mut state, stage);
    }
    state.plan
}
