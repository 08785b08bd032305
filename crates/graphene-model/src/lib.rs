//! graphene-model: the plain data every other graphene crate shares.
//!
//! * [`model`]: DAGs of stages and tasks, clusters, schedules, workloads, resource vectors.
//! * [`error`]: the one error type, rendered as a human report by every front end.
//! * [`limits`]: input size limits, checked before anything is allocated.
//! * [`deadline`]: the ambient time limit long work polls.
//! * [`lowerbound`]: critical path, total work and a stage-aware bound on the makespan.
//! * [`validate`]: an independent schedule checker.
//! * [`choice`]: enums a user picks by name ([`named_enum!`]).
//!
//! Nothing here depends on another graphene crate; the `graphene` crate re-exports all of it.

// Index loops over fixed resource arrays read better than zipped iterators here.
#![allow(clippy::needless_range_loop, clippy::single_range_in_vec_init)]

pub mod choice;
pub mod deadline;
pub mod error;
pub mod limits;
pub mod lowerbound;
pub mod model;
pub mod validate;

pub use deadline::Deadline;
pub use error::{Error, Result};
