//! Sizes the tool accepts, checked before anything is allocated for them.
//!
//! A 130-byte DAG can ask for a billion tasks and a one-line cluster for a billion machines; the
//! readers expand counts into vectors, so without a check such input aborts the process on a
//! failed allocation (in the service: for everyone). Every reader and every place that expands a
//! count asks [`current`] first and fails with [`Error::TooLarge`] naming the field, the value,
//! the limit and the flag that raises it.
//!
//! The defaults cover every real input the project knows with room to spare: the Alibaba hour
//! (4.3 million tasks in 16,749 jobs on 4,000 machines), the 5,000-task WfCommons
//! workflows, and the million-task DAGs of the scaling benchmark; they cap memory at a few GiB.
//! The limits are one process-wide setting (the CLI sets them from its flags, the service from
//! its settings, both once at start-up), so that no reader can forget to pass them along.

use std::sync::RwLock;

use crate::error::{Error, Result};

/// Upper bounds on input sizes. Counts are totals: the tasks of a DAG or of a whole workload,
/// the machines of a cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Tasks in one DAG, and in one workload trace (`--limit-tasks`).
    pub tasks: u64,
    /// Stages in one DAG (`--limit-tasks` too: a stage holds at least one task).
    pub stages: u64,
    /// Stage-to-stage edges in one DAG.
    pub edges: u64,
    /// Machines in a cluster (`--limit-machines`).
    pub machines: u64,
    /// Jobs in a workload (`--limit-jobs`).
    pub jobs: u64,
    /// Bytes of one input file or request body (`--limit-input`).
    pub input_bytes: u64,
}

impl Limits {
    pub const DEFAULT: Limits = Limits {
        tasks: 10_000_000,
        stages: 10_000_000,
        edges: 50_000_000,
        machines: 1_000_000,
        jobs: 1_000_000,
        input_bytes: 1 << 30,
    };

    /// Fails when `value` (of `field`) is above `limit`; `flag` is how a user raises the limit.
    fn check(value: u64, limit: u64, field: &str, flag: &str) -> Result<()> {
        if value > limit {
            return Err(Error::too_large(field, value, limit, format!("raise it with {flag}")));
        }
        Ok(())
    }

    pub fn check_tasks(&self, n: u64, field: &str) -> Result<()> {
        Limits::check(n, self.tasks, field, "--limit-tasks")
    }

    pub fn check_stages(&self, n: u64, field: &str) -> Result<()> {
        Limits::check(n, self.stages, field, "--limit-tasks")
    }

    pub fn check_edges(&self, n: u64, field: &str) -> Result<()> {
        Limits::check(n, self.edges, field, "--limit-tasks")
    }

    pub fn check_machines(&self, n: u64, field: &str) -> Result<()> {
        Limits::check(n, self.machines, field, "--limit-machines")
    }

    pub fn check_jobs(&self, n: u64, field: &str) -> Result<()> {
        Limits::check(n, self.jobs, field, "--limit-jobs")
    }

    pub fn check_input_bytes(&self, n: u64, field: &str) -> Result<()> {
        Limits::check(n, self.input_bytes, field, "--limit-input")
    }
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::DEFAULT
    }
}

/// The largest duration, arrival or capacity-free time value accepted, in seconds (about 31,700
/// years). Far above any real job, and far below where sums of millions of such values lose the
/// precision a simulator needs to advance its clock (2^53 s) or overflow to infinity.
pub const MAX_SECONDS: f64 = 1e12;

/// Fails unless `v` is a finite number in `[0, MAX_SECONDS]`.
pub fn check_seconds(v: f64, field: &str, what: &str) -> Result<()> {
    if !v.is_finite() || v < 0.0 {
        return Err(Error::field(field, format!("{what} {v} is not a finite number >= 0")));
    }
    if v > MAX_SECONDS {
        return Err(Error::field(
            field,
            format!("{what} {} is above the largest accepted, {MAX_SECONDS:e} s", show(v)),
        ));
    }
    Ok(())
}

/// A number as a person would write it: plainly, or in exponent form when plain would be a
/// wall of digits (`1e300`, not three hundred zeros).
pub fn show(v: f64) -> String {
    if v.abs() >= 1e15 || (v != 0.0 && v.abs() < 1e-6) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// How deep the nested formats may nest: the XML elements of a DAX, the subgraphs of a DOT file.
/// Their parsers recurse once per level, so a fixed bound, checked before the recursion starts,
/// keeps hostile input from exhausting the stack (real files nest a few levels). JSON inputs are
/// bounded by their parser's own limit, [`MAX_JSON_NESTING`].
pub const MAX_NESTING: usize = 64;

/// How deep a JSON input may nest (arrays and objects): serde_json's recursion limit, which every
/// JSON reader here keeps (it refuses deeper input with "recursion limit exceeded").
pub const MAX_JSON_NESTING: usize = 128;

/// Most worker threads `--threads` may ask for: each costs a stack (2 MiB or more) and a kernel
/// thread, and a billion of them aborted the process; far above the cores of any machine the
/// search can use.
pub const MAX_THREADS: usize = 1024;

/// Fails unless `--threads` is between 1 and [`MAX_THREADS`].
pub fn check_threads(k: usize) -> Result<()> {
    if k == 0 {
        return Err(Error::Usage("--threads must be at least 1".into()));
    }
    if k > MAX_THREADS {
        return Err(Error::Usage(format!(
            "--threads {k} exceeds the limit of {MAX_THREADS} (each thread takes a stack; use at most one per core)"
        )));
    }
    Ok(())
}

static CURRENT: RwLock<Limits> = RwLock::new(Limits::DEFAULT);

/// The limits in force.
pub fn current() -> Limits {
    *CURRENT.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Sets the limits for the whole process (the CLI and the service do this once, at start-up).
pub fn set(limits: Limits) {
    *CURRENT.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = limits;
}

/// Adds task counts without wrapping: a sum past `u64::MAX` is as over the limit as any other.
pub fn add(a: u64, b: u64) -> u64 {
    a.saturating_add(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn over_the_limit_names_field_value_limit_and_flag() {
        let l = Limits { tasks: 10, ..Limits::DEFAULT };
        assert!(l.check_tasks(10, "x").is_ok());
        let msg = l.check_tasks(11, "stages[0] ('a').tasks").unwrap_err().to_string();
        assert_eq!(msg, "stages[0] ('a').tasks: 11 exceeds the limit of 10 (raise it with --limit-tasks)");
    }

    #[test]
    fn sums_saturate_instead_of_wrapping() {
        assert_eq!(add(u64::MAX - 1, 5), u64::MAX);
        assert!(Limits::DEFAULT.check_machines(add(u64::MAX, 1), "machines").is_err());
    }
}
