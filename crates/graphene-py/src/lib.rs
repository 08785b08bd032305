//! `graphene_sched._core`: the Python extension module. Thin: every function converts Python
//! arguments into `graphene::request` options, runs the library call with the GIL released,
//! and converts the result (the CLI's bytes, or plain values) back. Errors become
//! `graphene_sched.GrapheneError` subclasses carrying the CLI's message; a panic, should one
//! ever happen, is caught here and raised as `graphene_sched.InternalError` instead of crossing
//! into Python. `run_cli` runs the `graphene` command itself (the same entry point as the
//! binary) for `python -m graphene_sched`.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use graphene::choice::Choice;
use graphene::formats::{Format, LoadOptions};
use graphene::request::{self, ClusterOptions, ReplayOptions, SearchOptions, Source};
use graphene::trace::TraceFormat;
use graphene::Error;

mod args;
mod env;
mod policy_view;

use args::{opt, source, sources, Arg};

create_exception!(graphene_sched, GrapheneError, PyException, "Base class of every error graphene raises.");
create_exception!(
    graphene_sched,
    ParseError,
    GrapheneError,
    "A syntax or type error at a line and column of an input."
);
create_exception!(
    graphene_sched,
    FieldError,
    GrapheneError,
    "A well-formed value that is not acceptable, named by its field."
);
create_exception!(graphene_sched, CycleError, GrapheneError, "The DAG has a dependency cycle.");
create_exception!(graphene_sched, TaskTooBigError, GrapheneError, "A task no machine of the cluster can hold.");
create_exception!(graphene_sched, GrapheneIOError, GrapheneError, "An input could not be read.");
create_exception!(graphene_sched, UsageError, GrapheneError, "Inconsistent or unknown options (the CLI's bad flags).");
create_exception!(graphene_sched, TooLargeError, GrapheneError, "An input over a configured size limit.");
create_exception!(graphene_sched, TimedOutError, GrapheneError, "Work stopped at its deadline or was cancelled.");
create_exception!(graphene_sched, InvalidScheduleError, GrapheneError, "A schedule broke dependencies or capacities.");
create_exception!(
    graphene_sched,
    InternalError,
    GrapheneError,
    "A bug in graphene (a caught panic); please report it."
);

/// The innermost error (a file wrapper names where, its source says what).
fn kind(e: &Error) -> &Error {
    match e {
        Error::InFile { source, .. } | Error::AtLine { source, .. } => kind(source),
        other => other,
    }
}

pub(crate) fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    match kind(&e) {
        Error::Syntax { .. } => ParseError::new_err(msg),
        Error::Field { .. } => FieldError::new_err(msg),
        Error::Cycle(_) => CycleError::new_err(msg),
        Error::TaskTooBig { .. } => TaskTooBigError::new_err(msg),
        Error::Io(_) => GrapheneIOError::new_err(msg),
        Error::TooLarge { .. } => TooLargeError::new_err(msg),
        Error::TimedOut { .. } => TimedOutError::new_err(msg),
        Error::Usage(_) | Error::InFile { .. } | Error::AtLine { .. } => UsageError::new_err(msg),
    }
}

/// Runs `f` without the GIL, turning a library error or a panic into a Python exception.
pub(crate) fn run<T: Send>(py: Python<'_>, f: impl FnOnce() -> graphene::Result<T> + Send) -> PyResult<T> {
    let out = py.allow_threads(|| catch_unwind(AssertUnwindSafe(f)));
    match out {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(to_py(e)),
        Err(panic) => Err(panic_err(panic)),
    }
}

pub(crate) fn panic_err(panic: Box<dyn std::any::Any + Send>) -> PyErr {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    InternalError::new_err(format!("internal error: {what}; please report this with the input"))
}

pub(crate) fn usage(msg: impl Into<String>) -> PyErr {
    UsageError::new_err(msg.into())
}

/// Keyword options, each taken once; whatever is left over is an unknown option.
pub(crate) struct Opts<'py> {
    d: Bound<'py, PyDict>,
}

impl<'py> Opts<'py> {
    pub(crate) fn new(py: Python<'py>, d: Option<&Bound<'py, PyDict>>) -> PyResult<Opts<'py>> {
        Ok(Opts {
            d: match d {
                Some(d) => d.copy()?,
                None => PyDict::new(py),
            },
        })
    }

    /// Option `key` converted as [`Arg`] converts (errors name the option); None is absent.
    pub(crate) fn take<T: Arg>(&self, key: &str) -> PyResult<Option<T>> {
        match self.d.get_item(key)? {
            None => Ok(None),
            Some(v) => {
                self.d.del_item(key)?;
                opt(key, Some(&v))
            }
        }
    }

    pub(crate) fn take_any(&self, key: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.d.get_item(key)? {
            None => Ok(None),
            Some(v) => {
                self.d.del_item(key)?;
                Ok(if v.is_none() { None } else { Some(v) })
            }
        }
    }

    pub(crate) fn finish(self) -> PyResult<()> {
        if let Some((k, _)) = self.d.iter().next() {
            return Err(usage(format!("unknown option '{}'", k.str()?)));
        }
        Ok(())
    }
}

fn format_of(s: &str) -> PyResult<Format> {
    <Format as Choice>::from_name(s)
        .ok_or_else(|| usage(format!("unknown format '{s}' (known: {})", Format::names().join(", "))))
}

fn load_opts(o: &Opts) -> PyResult<LoadOptions> {
    let d = LoadOptions::default();
    Ok(LoadOptions {
        format: o.take::<String>("format")?.map(|f| format_of(&f)).transpose()?,
        query: o.take("query")?,
        executors: o.take("executors")?.unwrap_or(d.executors),
        demands: o.take("demands")?,
        seed: o.take("seed")?.unwrap_or(0),
        job: o.take("job")?,
        dag: o.take("tez_dag")?,
    })
}

pub(crate) fn cluster_opts(o: &Opts) -> PyResult<ClusterOptions> {
    Ok(ClusterOptions {
        file: o.take_any("cluster")?.map(|c| source("cluster", "cluster", &c)).transpose()?,
        machines: o.take("machines")?,
        capacity: o.take("capacity")?,
        no_overbook: o.take("no_overbook")?.unwrap_or(false),
        speeds: o.take("speeds")?,
        bandwidth: o.take("bandwidth")?,
    })
}

fn search_opts(o: &Opts) -> PyResult<SearchOptions> {
    let d = SearchOptions::default();
    let placement = match o.take::<Vec<String>>("placement")? {
        None => d.placement,
        Some(names) => names.iter().map(|n| request::parse_placement(n)).collect::<Result<_, _>>().map_err(to_py)?,
    };
    Ok(SearchOptions {
        grid_step: o.take("grid_step")?.unwrap_or(d.grid_step),
        max_trouble: o.take("max_trouble")?.unwrap_or(d.max_trouble),
        no_cuts: o.take("no_cuts")?.unwrap_or(false),
        placement,
        pairing: o.take("pairing")?.unwrap_or(d.pairing),
        compact: o.take("compact")?.unwrap_or(d.compact),
        search_work: o.take("search_work")?.unwrap_or(d.search_work),
        recurse: o.take("recurse")?.unwrap_or(d.recurse),
        threads: o.take("threads")?,
        improve: o.take("improve")?.unwrap_or(d.improve),
        improve_seed: o.take("improve_seed")?.unwrap_or(0),
        exact: o.take("exact")?.unwrap_or(false),
        exact_nodes: o.take("exact_nodes")?.unwrap_or(d.exact_nodes),
        time_limit: o.take("time_limit")?,
    })
}

pub(crate) fn replay_opts(o: &Opts) -> PyResult<ReplayOptions> {
    let d = ReplayOptions::default();
    let trace_format = match o.take::<String>("trace_format")?.as_deref() {
        None => None,
        Some("native") => Some(TraceFormat::Native),
        Some("alibaba") => Some(TraceFormat::Alibaba),
        Some("spark") => Some(TraceFormat::Spark),
        Some(other) => return Err(usage(format!("unknown trace format '{other}' (known: native, alibaba)"))),
    };
    Ok(ReplayOptions {
        trace_format,
        spread_queues: o.take("spread_queues")?,
        cluster: cluster_opts(o)?,
        kappa: o.take_any("kappa")?.map(|k| k.str().map(|s| s.to_string())).transpose()?,
        tetris_kappa: o.take_any("tetris_kappa")?.map(|k| k.str().map(|s| s.to_string())).transpose()?,
        tetris_overbook_limit: o.take("tetris_overbook_limit")?,
        tetris_srpt_scale: o.take("tetris_srpt_scale")?.unwrap_or(d.tetris_srpt_scale),
        cs_accounting: o.take("cs_accounting")?.unwrap_or(d.cs_accounting),
        cs_user_limit_factor: o.take("cs_user_limit_factor")?,
        cs_am: o.take("cs_am")?,
        cs_per_heartbeat: o.take("cs_assignments_per_heartbeat")?,
        cs_reservations: o.take("cs_reservations")?.unwrap_or(false),
        cs_tez_order: o.take("cs_tez_order")?.unwrap_or(false),
        periodic_heartbeats: o.take("periodic_heartbeats")?.unwrap_or(false),
        sticky: o.take("sticky")?.unwrap_or(false),
        container_overhead: o.take("container_overhead")?.unwrap_or(0.0),
        online_rules: o.take("online_rules")?.unwrap_or(d.online_rules),
        srpt_term: o.take("srpt_term")?.unwrap_or(d.srpt_term),
        graphene_rm: o.take("graphene_rm")?.unwrap_or(false),
        eta: o.take_any("eta")?.map(|k| k.str().map(|s| s.to_string())).transpose()?.unwrap_or(d.eta),
        rp: o.take("rp")?,
        overbook_limit: o.take("overbook_limit")?,
        fairness: o.take("fairness")?.unwrap_or(d.fairness),
        charge: o.take("charge")?.unwrap_or(d.charge),
        queues: o.take("queues")?,
        heartbeat: o.take("heartbeat")?.unwrap_or(d.heartbeat),
        misestimate: o.take("misestimate")?,
        misestimate_what: o.take("misestimate_what")?.unwrap_or(d.misestimate_what),
        seed: o.take("seed")?.unwrap_or(0),
        decima_model: o.take("decima_model")?,
        waves: o.take("waves")?,
        moving_delay: o.take("moving_delay")?,
        no_timing: o.take("no_timing")?.unwrap_or(false),
        time_limit: o.take("time_limit")?,
    })
}

/// `build-schedule`: (schedule JSON bytes, elapsed ms).
#[pyfunction]
#[pyo3(signature = (dag, scheduler, opts=None))]
fn build_schedule<'py>(
    py: Python<'py>,
    dag: &Bound<'py, PyAny>,
    scheduler: &Bound<'py, PyAny>,
    opts: Option<&Bound<'py, PyDict>>,
) -> PyResult<(Bound<'py, PyBytes>, f64)> {
    let src = source("dag", "dag", dag)?;
    let scheduler = String::arg("scheduler", scheduler)?;
    let o = Opts::new(py, opts)?;
    let load = load_opts(&o)?;
    let cluster = cluster_opts(&o)?;
    let search = search_opts(&o)?;
    let no_timing = o.take("no_timing")?.unwrap_or(false);
    o.finish()?;
    let s = run(py, move || request::build_schedule(&src, &cluster, &load, &search, &scheduler, no_timing))?;
    Ok((PyBytes::new(py, &s.json), s.elapsed_ms))
}

/// `lower-bound --json`, as its text.
#[pyfunction]
#[pyo3(signature = (dag, opts=None))]
fn lower_bound<'py>(py: Python<'py>, dag: &Bound<'py, PyAny>, opts: Option<&Bound<'py, PyDict>>) -> PyResult<String> {
    let src = source("dag", "dag", dag)?;
    let o = Opts::new(py, opts)?;
    let load = load_opts(&o)?;
    let cluster = cluster_opts(&o)?;
    o.finish()?;
    let v = run(py, move || request::lower_bound(&src, &cluster, &load))?;
    Ok(serde_json::to_string_pretty(&v).expect("serializable"))
}

/// `validate`: the summary line, or raises InvalidScheduleError with the violations in
/// `.violations`.
#[pyfunction]
#[pyo3(signature = (dag, schedule, opts=None))]
fn validate<'py>(
    py: Python<'py>,
    dag: &Bound<'py, PyAny>,
    schedule: &Bound<'py, PyAny>,
    opts: Option<&Bound<'py, PyDict>>,
) -> PyResult<String> {
    let src = source("dag", "dag", dag)?;
    let sched = source("schedule", "schedule", schedule)?;
    let o = Opts::new(py, opts)?;
    let load = load_opts(&o)?;
    let cluster = cluster_opts(&o)?;
    o.finish()?;
    let verdict = run(py, move || request::validate(&src, &sched, &cluster, &load))?;
    match verdict {
        Ok(summary) => Ok(summary),
        Err(violations) => {
            let lines: Vec<String> = violations.iter().map(|v| v.to_string()).collect();
            let err = InvalidScheduleError::new_err(format!(
                "{} violation(s): {}",
                lines.len(),
                lines.first().cloned().unwrap_or_default()
            ));
            err.value(py).setattr("violations", PyList::new(py, &lines)?)?;
            Err(err)
        }
    }
}

/// `compare --json`, as its text.
#[pyfunction]
#[pyo3(signature = (dags, schedulers=None, opts=None))]
fn compare<'py>(
    py: Python<'py>,
    dags: &Bound<'py, PyAny>,
    schedulers: Option<&Bound<'py, PyAny>>,
    opts: Option<&Bound<'py, PyDict>>,
) -> PyResult<String> {
    let srcs: Vec<Source> = sources("dags", "dag", dags)?;
    let schedulers: Option<Vec<String>> = opt("schedulers", schedulers)?;
    let o = Opts::new(py, opts)?;
    let load = load_opts(&o)?;
    let cluster = cluster_opts(&o)?;
    let search = search_opts(&o)?;
    o.finish()?;
    let v = run(py, move || request::compare(&srcs, &cluster, &load, &search, schedulers.as_deref()))?;
    Ok(serde_json::to_string_pretty(&v).expect("serializable"))
}

/// `gen-trace`: the native CSV text.
#[pyfunction]
#[pyo3(signature = (dags, jobs, arrival=None, queues=None, load=None, opts=None))]
fn gen_trace<'py>(
    py: Python<'py>,
    dags: &Bound<'py, PyAny>,
    jobs: &Bound<'py, PyAny>,
    arrival: Option<&Bound<'py, PyAny>>,
    queues: Option<&Bound<'py, PyAny>>,
    load: Option<&Bound<'py, PyAny>>,
    opts: Option<&Bound<'py, PyDict>>,
) -> PyResult<String> {
    let srcs: Vec<Source> = sources("dags", "dag", dags)?;
    let jobs = usize::arg("jobs", jobs)?;
    let arrival: String = opt("arrival", arrival)?.unwrap_or_else(|| "poisson:10".into());
    let queues: usize = opt("queues", queues)?.unwrap_or(1);
    let load: Option<f64> = opt("load", load)?;
    let o = Opts::new(py, opts)?;
    let lo = load_opts(&o)?;
    let cluster = cluster_opts(&o)?;
    o.finish()?;
    run(py, move || request::gen_trace(&srcs, jobs, &arrival, queues, load, &lo, &cluster))
}

/// `replay`: (jobs.csv, schedule.csv, summary.json bytes).
#[pyfunction]
#[pyo3(signature = (trace, trace_name, scheduler, opts=None))]
fn replay<'py>(
    py: Python<'py>,
    trace: &Bound<'py, PyAny>,
    trace_name: &Bound<'py, PyAny>,
    scheduler: &Bound<'py, PyAny>,
    opts: Option<&Bound<'py, PyDict>>,
) -> PyResult<(String, String, Bound<'py, PyBytes>)> {
    let src = source("trace", "trace", trace)?;
    let name = String::arg("trace_name", trace_name)?;
    let scheduler = String::arg("scheduler", scheduler)?;
    let o = Opts::new(py, opts)?;
    let ro = replay_opts(&o)?;
    o.finish()?;
    let out = run(py, move || request::replay(&src, &name, &ro, &scheduler))?;
    Ok((out.jobs_csv, out.schedule_csv, PyBytes::new(py, &out.summary_json)))
}

/// `replay` under a policy written in Python: `decide(view)` is called at each heartbeat with
/// runnable work, `view` a [`policy_view::PolicyView`] (the machine, and the runnable stages
/// and tasks built on demand), and returns (job, task) pairs to launch; the library checks
/// them and runs everything else as for the built-in policies. Returns the replay's three files,
/// the number of calls and the seconds spent in them (Python's side included). `stable_idle`:
/// the policy's empty answers depend on the view alone (its `idle_is_stable`).
#[pyfunction]
#[pyo3(signature = (trace, trace_name, decide, name, stable_idle=false, opts=None))]
#[allow(clippy::too_many_arguments)]
fn replay_policy<'py>(
    py: Python<'py>,
    trace: &Bound<'py, PyAny>,
    trace_name: &Bound<'py, PyAny>,
    decide: &Bound<'py, PyAny>,
    name: &Bound<'py, PyAny>,
    stable_idle: bool,
    opts: Option<&Bound<'py, PyDict>>,
) -> PyResult<(String, String, Bound<'py, PyBytes>, u64, f64)> {
    use graphene::online::external::{self, External, Snapshot};
    let src = source("trace", "trace", trace)?;
    let trace_name = String::arg("trace_name", trace_name)?;
    let name = String::arg("name", name)?;
    if !decide.is_callable() {
        return Err(usage("decide: expected a callable decide(view) -> launches"));
    }
    let o = Opts::new(py, opts)?;
    let ro = replay_opts(&o)?;
    o.finish()?;
    let decide: Py<PyAny> = decide.clone().unbind();
    // The policy's own exception, re-raised as it is (with its traceback) once the replay stops.
    let raised: std::sync::Mutex<Option<PyErr>> = std::sync::Mutex::new(None);
    let (calls, spent) = (std::sync::atomic::AtomicU64::new(0), std::sync::Mutex::new(0.0f64));
    let out = run(py, || {
        let setup = ro.setup(&src)?;
        let mut policy = External::new(name.clone(), |snap: Snapshot| {
            let t0 = std::time::Instant::now();
            let answer = Python::with_gil(|py| -> PyResult<Vec<(u32, u32)>> {
                let view = Bound::new(py, policy_view::PolicyView::new(snap))?;
                decide.bind(py).call1((view,))?.extract()
            });
            calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            *spent.lock().expect("not poisoned") += t0.elapsed().as_secs_f64();
            answer.map_err(|e| {
                let msg = format!("the policy's decide() failed: {e}");
                *raised.lock().expect("not poisoned") = Some(e);
                graphene::Error::Usage(msg)
            })
        })
        .with_stable_idle(stable_idle);
        let result = external::run(&setup.workload, &setup.cluster, &mut policy, &setup.cfg)?;
        request::replay_output(&setup, &trace_name, &ro, name.clone(), result)
    });
    if let Some(e) = raised.lock().expect("not poisoned").take() {
        return Err(e);
    }
    let out = out?;
    let spent = *spent.lock().expect("not poisoned");
    Ok((out.jobs_csv, out.schedule_csv, PyBytes::new(py, &out.summary_json), calls.into_inner(), spent))
}

/// Reads DAGs from any input format: a list of graphene-native JSON texts, one per DAG (TPC-H
/// files hold one per query). Demand profiles apply as in the CLI.
#[pyfunction]
#[pyo3(signature = (dag, opts=None))]
fn read_dags<'py>(
    py: Python<'py>,
    dag: &Bound<'py, PyAny>,
    opts: Option<&Bound<'py, PyDict>>,
) -> PyResult<Vec<String>> {
    let src = source("dag", "dag", dag)?;
    let o = Opts::new(py, opts)?;
    let load = load_opts(&o)?;
    o.finish()?;
    run(py, move || {
        let dags = request::load_dags(&src, &load)?;
        Ok(dags
            .iter()
            .map(|d| serde_json::to_string(&graphene::formats::native::to_file(d)).expect("serializable"))
            .collect())
    })
}

/// Reads a cluster (file or text) with the cluster options: its JSON as a cluster file.
#[pyfunction]
#[pyo3(signature = (opts=None))]
fn read_cluster<'py>(py: Python<'py>, opts: Option<&Bound<'py, PyDict>>) -> PyResult<String> {
    let o = Opts::new(py, opts)?;
    let cluster = cluster_opts(&o)?;
    o.finish()?;
    run(py, move || Ok(serde_json::to_string(&cluster.spec()?).expect("serializable")))
}

/// Reads a workload trace (native CSV or Alibaba): its native CSV text.
#[pyfunction]
#[pyo3(signature = (trace, trace_format=None, spread_queues=None))]
fn read_trace<'py>(
    py: Python<'py>,
    trace: &Bound<'py, PyAny>,
    trace_format: Option<&Bound<'py, PyAny>>,
    spread_queues: Option<&Bound<'py, PyAny>>,
) -> PyResult<String> {
    let src = source("trace", "trace", trace)?;
    let d = PyDict::new(py);
    d.set_item("trace_format", trace_format)?;
    d.set_item("spread_queues", spread_queues)?;
    let o = Opts::new(py, Some(&d))?;
    let ro = replay_opts(&o)?;
    o.finish()?;
    run(py, move || {
        let setup = ro.setup(&src)?;
        graphene::trace::native_csv::write(&setup.workload)
    })
}

/// Reads a schedule file (or bytes) as an input is read (the input size limit, UTF-8): its bytes.
#[pyfunction]
fn read_schedule<'py>(py: Python<'py>, schedule: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let src = source("schedule", "schedule", schedule)?;
    let text = run(py, move || src.text())?;
    Ok(PyBytes::new(py, text.as_bytes()))
}

/// Triggers a panic inside the library call path (tests check that it surfaces as
/// InternalError, never as a crash).
#[pyfunction]
fn _panic_for_test(py: Python<'_>) -> PyResult<()> {
    run(py, || -> graphene::Result<()> { panic!("test panic") })
}

/// Raises the exception a library error of kind `which` maps to, built as the library builds
/// it (tests check the mapping for errors no input reaches on every build, such as time limits).
#[pyfunction]
fn _error_for_test(which: &Bound<'_, PyAny>) -> PyResult<()> {
    let e = match String::arg("which", which)?.as_str() {
        "too-large" => Error::too_large("tasks", 20_000_001, 10_000_000, "raise it with --max-tasks"),
        "timed-out" => {
            Error::TimedOut { what: "build-schedule".into(), limit: Some(std::time::Duration::from_millis(500)) }
        }
        "cancelled" => Error::TimedOut { what: "build-schedule".into(), limit: None },
        other => return Err(usage(format!("unknown error kind '{other}'"))),
    };
    Err(to_py(e.in_file(std::path::Path::new("dag.json"))))
}

/// Runs the `graphene` command with `argv` (the program name first, as in `sys.argv`) in this
/// process, with the GIL released; returns its exit status. Help, version and bad flags print
/// and return their status (0 or 2) instead of exiting.
#[pyfunction]
fn run_cli(py: Python<'_>, argv: &Bound<'_, PyAny>) -> PyResult<i32> {
    let args: Vec<std::ffi::OsString> = match argv.downcast::<PyList>() {
        Ok(l) => l
            .iter()
            .enumerate()
            .map(|(i, a)| match a.downcast::<pyo3::types::PyString>() {
                Ok(s) => s.extract::<std::ffi::OsString>(),
                Err(_) => Err(usage(format!("argv[{i}]: expected a string, not {}", args::type_name(&a)))),
            })
            .collect::<PyResult<_>>()?,
        Err(_) => return Err(usage(format!("argv: expected a list of strings, not {}", args::type_name(argv)))),
    };
    py.allow_threads(|| catch_unwind(AssertUnwindSafe(|| graphene_cli::run_from(args)))).map_err(panic_err)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    for (name, ty) in [
        ("GrapheneError", py.get_type::<GrapheneError>()),
        ("ParseError", py.get_type::<ParseError>()),
        ("FieldError", py.get_type::<FieldError>()),
        ("CycleError", py.get_type::<CycleError>()),
        ("TaskTooBigError", py.get_type::<TaskTooBigError>()),
        ("GrapheneIOError", py.get_type::<GrapheneIOError>()),
        ("UsageError", py.get_type::<UsageError>()),
        ("TooLargeError", py.get_type::<TooLargeError>()),
        ("TimedOutError", py.get_type::<TimedOutError>()),
        ("InvalidScheduleError", py.get_type::<InvalidScheduleError>()),
        ("InternalError", py.get_type::<InternalError>()),
    ] {
        m.add(name, ty)?;
    }
    m.add_function(wrap_pyfunction!(build_schedule, m)?)?;
    m.add_function(wrap_pyfunction!(replay_policy, m)?)?;
    m.add_function(wrap_pyfunction!(lower_bound, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(gen_trace, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(read_dags, m)?)?;
    m.add_function(wrap_pyfunction!(read_cluster, m)?)?;
    m.add_function(wrap_pyfunction!(read_trace, m)?)?;
    m.add_function(wrap_pyfunction!(read_schedule, m)?)?;
    m.add_function(wrap_pyfunction!(run_cli, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    m.add_function(wrap_pyfunction!(_error_for_test, m)?)?;
    // The workspace's version: the wheel's metadata (maturin reads Cargo.toml) and the CLI's
    // `--version` give the same.
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("SCHEDULERS", graphene::Scheduler::known_names())?;
    m.add("ONLINE_SCHEDULERS", graphene::online::NAMES.to_vec())?;
    env::register(m)?;
    m.add_class::<policy_view::PolicyView>()?;
    Ok(())
}
