//! graphene: packing- and dependency-aware scheduling of DAG jobs on multi-resource clusters.
//!
//! The library holds every algorithm; the `graphene` binary is a thin command-line layer.
//! This crate is its facade: `api`, `request` and `compare` are its own, every other module
//! comes from a crate of its layer and is re-exported here under the same name:
//! graphene-model (`model`, `error`, `limits`, `deadline`, `lowerbound`, `validate`, `choice`),
//! graphene-formats (`formats`, `trace`), graphene-engine (`space`, `offline`, `baselines`,
//! `hetero`, `scheduler`, `learn`, `sim`, `online`, `fairness`, `metrics`, `env`) and
//! graphene-io (`output`, `export`, `plot`).
//!
//! * [`model`]: DAGs of stages and tasks, clusters, schedules.
//! * [`formats`]: reading DAGs (graphene JSON, WfCommons, Decima TPC-H), clusters and schedules.
//! * [`offline`]: Graphene's schedule constructor; [`space`] is its resource-time space.
//! * [`hetero`]: machines of different speeds with data transfers: HEFT, CPOP, DEFT with task
//!   duplication and its selection policies, speedup and SLR.
//! * [`learn`]: the MLPs, Adam and weights files the learned schedulers (Decima, LACHESIS) share.
//! * [`baselines`]: BFS, CP, Tetris, Random, StripPart and Coffman-Graham list schedulers.
//! * [`lowerbound`]: critical path, total work and a stage-aware bound.
//! * [`validate`]: an independent schedule checker.
//! * [`output`]: schedule reports and atomic file writes.
//! * [`plot`]: SVG charts (Gantt, usage over time, CDFs) drawn with plotters.
//! * [`trace`]: workload traces (native CSV, Alibaba v2018) and synthetic workloads.
//! * [`sim`]: the event-driven cluster simulator; [`online`] the schedulers it consults;
//!   [`metrics`] what a replay measures.
//! * [`export`]: precedence orders for Tez, YARN, SLS and CSV.
//!
//! The `graphene` binary (crates/graphene-cli) and the HTTP service (crates/graphene-serve) are
//! thin layers over this library.

// Index loops over fixed resource arrays read better than zipped iterators here.
#![allow(clippy::needless_range_loop, clippy::single_range_in_vec_init)]

pub use graphene_engine::{
    baselines, env, fairness, hetero, learn, metrics, offline, online, scheduler, sim, space, validate,
};
pub use graphene_formats::{formats, trace};
pub use graphene_io::{export, output, plot};
pub use graphene_model::{choice, deadline, error, limits, lowerbound, model, named_enum};

pub mod api;
pub mod compare;
pub mod request;

pub use deadline::Deadline;
pub use error::{Error, Result};
pub use lowerbound::LowerBounds;
pub use model::{Cluster, ClusterSpec, Dag, Schedule};
pub use offline::{build_schedule, OfflineConfig};
pub use scheduler::{build, Built, Scheduler};
