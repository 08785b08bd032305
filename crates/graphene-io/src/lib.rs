//! graphene-io: what graphene writes for people and other systems.
//!
//! * [`output`]: schedule and replay reports, replay tables (CSV, JSON, Parquet), Chrome
//!   traces, atomic file writes.
//! * [`export`]: precedence orders for Tez, YARN, SLS and CSV.
//! * [`plot`]: SVG charts (Gantt, usage over time, CDFs) drawn with plotters.
//!
//! The heavy writers (parquet, plotters) are dependencies of this crate only. It re-exports the
//! modules of the crates below it so that paths stay the same.

// Index loops over fixed resource arrays read better than zipped iterators here.
#![allow(clippy::needless_range_loop, clippy::single_range_in_vec_init)]

pub use graphene_engine::{metrics, offline, online, sim, validate};
pub use graphene_formats::formats;
pub use graphene_model::{error, limits, lowerbound, model, named_enum};

pub mod export;
pub mod output;
pub mod plot;
