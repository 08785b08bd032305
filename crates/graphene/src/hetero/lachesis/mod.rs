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
//! # Departures from the paper, and why
//!
//! * **A decision picks a stage, not a single task** (see [`features`] for the node level). The
//!   tasks of a TPC-H stage are interchangeable copies; placing a stage's ready tasks together
//!   takes tens of decisions per job instead of hundreds to thousands, which is what makes
//!   training within minutes on two cores possible. A policy that picks one task at a time could
//!   interleave stages more finely; the highest-rank-first order inside the stage is what
//!   RankUp-DEFT would do with those tasks.
//! * **REINFORCE with a per-batch baseline instead of actor-critic** (see [`train`]): the paper's
//!   critic scores (state, action) pairs; with several rollouts of the same batch their mean
//!   makespan is an unbiased, input-dependent baseline (Decima's), with no second network to fit.
//! * **tanh instead of ReLU-family activations** and an MLP lifting x_v to the embedding width,
//!   as in [`crate::online::decima`]: smooth, so the finite-difference check never sits on a
//!   kink.

pub mod features;
pub mod model;
pub mod net;
pub mod train;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub use model::Model;

use super::instance::Instance;
use super::plan::Plan;
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

/// Runs LACHESIS on `dag` (whose task-level view is `inst`) with `params`.
pub fn run_episode(dag: &Dag, inst: &Instance, params: &[f64], mut mode: Mode) -> Episode {
    let arch = Arch::new();
    let graph = Graph::new(dag, inst);
    let mut state = State::new(inst, &graph);
    let mut steps = Vec::new();
    while let Some(obs) = state.observe() {
        let pass = net::forward(&arch, params, &obs);
        let act = if obs.cand.len() == 1 {
            0
        } else {
            match &mut mode {
                Mode::Greedy => crate::learn::argmax(&pass.q),
                Mode::Sample(rng) => crate::learn::sample(&pass.q, rng.gen()),
            }
        };
        let stage = obs.stage[obs.cand[act] as usize];
        if matches!(mode, Mode::Sample(_)) && obs.cand.len() > 1 {
            steps.push(Step { obs, act });
        }
        state.act(stage);
    }
    let makespan = state.makespan();
    let decisions = state.decisions;
    Episode { plan: state.plan, makespan, steps, decisions }
}

/// Greedy LACHESIS with `model`: the plan of the `lachesis` scheduler.
pub fn schedule(dag: &Dag, inst: &Instance, model: &Model) -> Plan {
    run_episode(dag, inst, &model.params, Mode::Greedy).plan
}
