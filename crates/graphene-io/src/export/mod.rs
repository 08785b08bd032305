//! Precedence orders for other engines: a schedule file turned into integer priorities for Tez
//! vertices and tasks, YARN container requests, a YARN SLS job trace, or a flat CSV.
//!
//! Every format derives from one thing, the precedence order of the schedule (its `order`: task
//! ids by start time, i.e. by decreasing priScore). Engines want small integers where a lower
//! number is served first, so each task gets its rank in that order (see [`levels`]); a parent
//! always starts before its child in a valid schedule, so no priority ever puts a child ahead of
//! its parent. `--levels N` folds the ranks into N bands for engines that pay per distinct
//! priority (YARN keeps one request table per priority).

pub mod csv;
pub mod levels;
pub mod schedule;
pub mod sls;
pub mod tez;
pub mod yarn;

pub use levels::Priorities;
pub use schedule::ScheduleIn;

use crate::error::{Error, Result};
use crate::model::Dag;

crate::named_enum! {
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum ExportFormat {
        /// Vertex and task priorities for a Tez DAGScheduler (JSON).
        Tez = "tez",
        /// One YARN container request per task: priority, vcores, memory-mb (JSON).
        Yarn = "yarn",
        /// A YARN Scheduler Load Simulator (SLS) job for graphene's SLS AM (JSON, am.type graphene).
        Sls = "sls",
        /// task,stage,priority,start,end,machine
        Csv = "csv",
        /// Chrome trace-event JSON for Perfetto and chrome://tracing (machines, slots, counters;
        /// resource counters with --dag).
        Chrome = "chrome",
    }
}

impl ExportFormat {
    /// Whether the format needs the DAG (demands and durations are not in the schedule file).
    pub fn needs_dag(self) -> bool {
        matches!(self, ExportFormat::Yarn | ExportFormat::Sls)
    }
}

/// How schedule units map to what YARN counts.
#[derive(Clone, Debug)]
pub struct Units {
    /// DAG resource read as vcores (rounded up).
    pub cpu: String,
    /// DAG resource read as memory.
    pub mem: String,
    /// Megabytes per unit of the memory resource (1024: the DAG counts GB).
    pub mem_mb: f64,
    /// Milliseconds per unit of schedule time (1000: the schedule counts seconds).
    pub time_ms: f64,
}

impl Default for Units {
    fn default() -> Self {
        Units { cpu: "cpu".into(), mem: "mem".into(), mem_mb: 1024.0, time_ms: 1000.0 }
    }
}

/// The largest milliseconds or megabytes an export writes: Java's `long` (YARN, Tez and SLS
/// read these fields as one), 2^63 - 1.
pub const MAX_LONG: u64 = i64::MAX as u64;
/// The largest vcores an export writes: Java's `int` (YARN's `Resource.getVirtualCores`).
pub const MAX_INT: u64 = i32::MAX as u64;

impl Units {
    /// Refuses a scale that is not a finite number > 0, or whose one unit alone is beyond a
    /// Java long (`--time-ms 1e300`).
    pub fn check(&self) -> Result<()> {
        for (flag, v) in [("--mem-mb", self.mem_mb), ("--time-ms", self.time_ms)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::Usage(format!("{flag} {v} must be a positive number")));
            }
            if v >= MAX_LONG as f64 {
                return Err(Error::Usage(format!(
                    "{flag} {} is beyond the largest whole number YARN holds ({MAX_LONG}, a Java long)",
                    crate::limits::show(v)
                )));
            }
        }
        Ok(())
    }
}

/// `value` x `scale` (`value` from `what`, `scale` from `flag`), rounded by `round`, as the whole
/// number an export writes: refused, naming `field`, when it is beyond `max` (so that no field
/// saturates to 18446744073709551615). A usage error: the scale is what to change.
pub(crate) fn whole(
    value: f64,
    scale: f64,
    round: fn(f64) -> f64,
    max: u64,
    field: impl FnOnce() -> String,
    what: &str,
    flag: &str,
) -> Result<u64> {
    let v = round(value * scale);
    // `max as f64` rounds up to a power of two: refuse from there on.
    if v.is_finite() && v >= 0.0 && v < max as f64 {
        return Ok(v as u64);
    }
    let shown = if flag.is_empty() {
        crate::limits::show(v)
    } else {
        format!("{} x {flag} {} = {}", crate::limits::show(value), crate::limits::show(scale), crate::limits::show(v))
    };
    Err(Error::Usage(format!("{}: {what} {shown} is beyond the largest YARN holds ({max})", field())))
}

#[derive(Clone, Debug)]
pub struct ExportOptions {
    pub format: ExportFormat,
    /// Fold priorities into at most this many distinct values.
    pub levels: Option<u32>,
    pub units: Units,
    /// SLS queue the job is submitted to.
    pub queue: String,
    /// The YARN version has `allocationRequestId` (YARN-4889): `--levels` bands may hold
    /// several container sizes. Otherwise bands are cut where the size changes.
    pub allocation_request_id: bool,
    /// tez: the DAG's `graphene-tez-signature/1`, written as the export's `signature`.
    pub signature: Option<String>,
}

impl ExportOptions {
    pub fn new(format: ExportFormat) -> ExportOptions {
        ExportOptions {
            format,
            levels: None,
            units: Units::default(),
            queue: "default".into(),
            allocation_request_id: false,
            signature: None,
        }
    }
}

/// Renders `schedule` in the requested format. `dag` is required for YARN and SLS; when given it
/// is also checked against the schedule (every task known, no child ordered before a parent).
pub fn export(schedule: &ScheduleIn, dag: Option<&Dag>, opts: &ExportOptions) -> Result<Vec<u8>> {
    if opts.levels == Some(0) {
        return Err(Error::Usage("--levels must be at least 1".into()));
    }
    opts.units.check()?;
    let order = schedule.order()?;
    if let Some(dag) = dag {
        schedule.check_against(dag, &order)?;
    }
    // `--levels` for Tez and YARN requests: one container size per priority unless the YARN
    // version tells requests apart by allocationRequestId.
    let sized = opts.levels.is_some()
        && !opts.allocation_request_id
        && matches!(opts.format, ExportFormat::Tez | ExportFormat::Yarn);
    let pri = if sized {
        let dag = dag.ok_or_else(|| {
            Error::Usage(
                "--levels needs --dag to keep container sizes apart (one size per priority, as YARN \
                 without allocationRequestId requires), or --allocation-request-id"
                    .into(),
            )
        })?;
        let cols = yarn::Columns::find(dag, &opts.units)?;
        let sizes: Vec<(u64, u64)> = schedule
            .tasks
            .iter()
            .map(|t| {
                let t = dag.task_by_name(&t.id).expect("checked against the DAG above");
                cols.capability(dag, t, &opts.units).map(|c| (c.vcores as u64, c.memory_mb))
            })
            .collect::<Result<_>>()?;
        Priorities::new_sized(schedule, &order, opts.levels, |i| sizes[i])
    } else {
        Priorities::new(schedule, &order, opts.levels)
    };
    let need_dag = || {
        dag.ok_or_else(|| {
            Error::Usage(format!(
                "--format {} needs --dag: demands and durations are not in the schedule file",
                match opts.format {
                    ExportFormat::Yarn => "yarn",
                    _ => "sls",
                }
            ))
        })
    };
    match opts.format {
        ExportFormat::Tez => {
            let mixed = opts.levels.is_some() && opts.allocation_request_id;
            Ok(tez::write(schedule, &order, &pri, opts.levels, mixed, opts.signature.as_deref()))
        }
        ExportFormat::Yarn => yarn::write(schedule, need_dag()?, &order, &pri, opts.levels, &opts.units),
        ExportFormat::Sls => sls::write(schedule, need_dag()?, &order, &pri, &opts.units, &opts.queue),
        ExportFormat::Csv => csv::write(schedule, &order, &pri),
        ExportFormat::Chrome => Ok(chrome(schedule, dag)),
    }
}

/// Pretty JSON with a final newline, as every JSON output of the crate.
pub(crate) fn to_json<T: serde::Serialize>(v: &T) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(v).expect("export records always serialize");
    out.push(b'\n');
    out
}

/// A schedule file as a Chrome trace: machines, slots and, with the DAG, resource counters.
fn chrome(schedule: &ScheduleIn, dag: Option<&Dag>) -> Vec<u8> {
    use crate::output::chrome::{write, Slice};
    let slices: Vec<Slice> = schedule
        .tasks
        .iter()
        .map(|t| Slice {
            job: None,
            stage: t.stage_name().to_string(),
            task: t.id.clone(),
            machine: t.machine.max(0) as u32,
            start: t.start,
            end: t.end,
            demand: dag.and_then(|d| d.task_by_name(&t.id)).map(|i| dag.expect("some").tasks[i as usize].demand),
        })
        .collect();
    let machines = schedule.tasks.iter().map(|t| t.machine.max(0) as u32 + 1).max().unwrap_or(0);
    let resources = dag.map(|d| d.resources.clone()).unwrap_or_default();
    write(schedule.name(), &resources, machines, &slices)
}
