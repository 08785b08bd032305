//! graphene-engine: every scheduler and the simulator that runs them.
//!
//! * [`offline`]: Graphene's schedule constructor, improver and exact search; [`space`] is its
//!   resource-time space; [`baselines`]: BFS, CP, Tetris, Random, StripPart, Coffman-Graham.
//! * [`hetero`]: machines of different speeds with data transfers: HEFT, CPOP, DEFT, LACHESIS.
//! * [`scheduler`]: the offline schedulers by name.
//! * [`sim`]: the event-driven cluster simulator (it owns time, events, the [`sim::Policy`]
//!   trait and the view); [`online`]: the policies it consults, Decima among them;
//!   [`fairness`]: shares and gates; [`metrics`]: what a replay measures.
//! * [`learn`]: the MLPs, Adam and weights files the learned policies (Decima, LACHESIS) share.
//! * [`env`](mod@env): the Decima environment the Python Gym wrapper steps.
//! * [`validate`]: the model's schedule checker plus the replay checker.
//!
//! Depends on graphene-model and graphene-formats, whose modules it re-exports so that paths
//! stay the same.

// Index loops over fixed resource arrays read better than zipped iterators here.
#![allow(clippy::needless_range_loop, clippy::single_range_in_vec_init)]

pub use graphene_formats::{formats, trace};
pub use graphene_model::{choice, deadline, error, limits, lowerbound, model, named_enum};

/// Schedule and replay checkers: [`validate_schedule`](graphene_model::validate::validate_schedule)
/// and its kin check a schedule against the DAG and cluster,
/// [`validate_replay`](crate::validate::validate_replay) a replay.
pub mod validate {
    pub use crate::validate_replay::{validate_replay, validate_replay_durations, validate_replay_on};
    pub use graphene_model::validate::*;
}
mod validate_replay;

pub mod baselines;
pub mod env;
pub mod fairness;
pub mod hetero;
pub mod learn;
pub mod metrics;
pub mod offline;
pub mod online;
pub mod scheduler;
pub mod sim;
pub mod space;

pub use graphene_model::model::ClusterSpec;
pub use graphene_model::{Deadline, Error, Result};
