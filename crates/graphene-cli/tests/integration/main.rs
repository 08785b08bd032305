//! The one integration-test binary (one binary links and starts once, which keeps the suite fast
//! in debug mode; modules split it by concern).
//!
//! * `util`: running the CLI, temporary files, loading traces through the library.
//! * `gen`: random stage DAGs and clusters for property tests, kept in the test's own
//!   representation so that the oracle never depends on graphene's parsing or model.
//! * `oracle`: an independent exhaustive optimum solver for tiny DAGs, and the checks built on it.
//! * `properties`: validity and lower-bound properties of every scheduler on random DAGs.
//! * `motivating`: the paper's motivating example against the oracle.
//! * `regression`: exact makespans on hand-computed cases.
//! * `cli`: the commands' happy paths, output contract and determinism.
//! * `bad_input`: every class of bad input through the CLI; `hardening`: hostile sizes, times
//!   and output paths (nothing crashes, hangs or replaces what it must not).
//! * `counts`: every count a flag sets checked against a limit before work, and generated
//!   outputs the tool reads back (no two outputs on one file).
//! * `convert`: every reader's DAG written as native JSON schedules and bounds as the original.
//! * `export`, `serve`: precedence-order exports round-trip; the HTTP service answers as the CLI.
//! * `export_trace`: whole workloads for graphene's SLS AM, each order, and bad input.
//! * `fuzz`: the seed corpora and every kept fuzz crash through the fuzz targets' checks.
//! * `spark`: Spark event logs (plain, compressed, rolling) against an independent reading in Python.
//! * `task_graphs`: STG, DAX and DOT fixtures, and against the WfCommons reader on a real workflow.
//! * `chrome_trace`: Chrome trace-event output against a Python check of what Perfetto reads.
//! * `improve`: the anytime improver against a proven optimum.
//! * `exact`: `--exact` against proven optima, the exhaustive oracle, and its refusals.
//! * `plot`: the SVG charts parse and hold the lanes, bars, lines and labels their inputs call for.
//! * `schedules`: `validate` against the figures a schedule states; HEFT on multi-slot machines.
//! * `plan`: `--scheduler graphene-plan` (determinism, validity, its options).
//! * `waves`: `replay --waves` (wave- and parallelism-dependent durations) by hand and its bad sidecars.

mod util;

mod gen;
mod oracle;

// The fuzz targets' check functions (fuzz/ is its own nightly workspace; the checks are plain
// Rust and run here on stable, over the seed corpora and every kept crash).
#[path = "../../../../fuzz/src/checks.rs"]
mod fuzz_checks;

mod bad_input;
mod chrome_trace;
mod cli;
mod convert;
mod counts;
mod decima;
mod exact;
mod export;
mod export_trace;
mod fuzz;
mod hardening;
mod hetero;
mod improve;
mod motivating;
mod online_baselines;
mod plan;
mod plot;
mod properties;
mod regression;
mod replay;
mod schedules;
mod serve;
mod spark;
mod task_graphs;
mod tez;
mod trace;
mod waves;
