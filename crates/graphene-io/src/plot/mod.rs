//! Charts as SVG, drawn with plotters: Gantt charts of offline schedules, cluster usage over
//! time of a replay, and CDFs of per-job JCT gaps or offline makespan ratios.
//!
//! Readers of the inputs (schedule reports, replay directories, `compare --csv`) live beside
//! the chart that needs them; every reader names the file and field or line of bad input.

pub mod cdf;
pub mod gantt;
mod style;
pub mod usage;

pub use cdf::{against, cdf, load_compare, load_series, CdfChart, JobsIn, Metric};
pub use gantt::{gantt, Context, Gantt, GanttOptions, Lanes, ScheduleIn};
pub use usage::{usage, ReplaySummary};
