//! graphene-formats: everything graphene reads and writes as input.
//!
//! * [`formats`]: DAGs (graphene JSON, WfCommons, Decima TPC-H, Spark event logs, STG, DAX,
//!   DOT, heterogeneous instances), clusters and schedule files; one module per format, and
//!   the waves sidecar ([`formats::waves`]).
//! * [`trace`]: workload traces (native CSV, Alibaba v2018, Spark) and synthetic workloads.
//!
//! Depends only on graphene-model, whose modules it re-exports so that paths stay the same.

// Index loops over fixed resource arrays read better than zipped iterators here.
#![allow(clippy::needless_range_loop, clippy::single_range_in_vec_init)]

pub use graphene_model::{choice, deadline, error, limits, lowerbound, model, named_enum, validate};

pub mod formats;
pub mod trace;
