//! `graphene_sched._core.Env`: the stepping simulator of `graphene::env` for `graphene_sched.gym`. An
//! observation crosses as little-endian byte buffers that the Python side views with numpy.

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use graphene::env::{self, Action, Decision, Episode, EpisodeConfig, Final, Span, Step};
use graphene::formats::LoadOptions;
use graphene::model::{Cluster, Dag, Workload};
use graphene::request::{self, ReplayOptions, Source};
use graphene::sim::SimConfig;
use graphene::trace::{self, ArrivalProcess};

use crate::args::{opt, source, sources, Arg};
use crate::{replay_opts, run, usage, Opts};

/// Where episodes' workloads come from.
enum Jobs {
    /// One trace, the same every episode.
    Fixed(Arc<Workload>),
    /// Drawn per episode from these DAGs with the seed of the reset.
    /// `spread`: `spread_queues`, each drawn workload's jobs round-robin over that many queues.
    Drawn {
        dags: Vec<Dag>,
        jobs: usize,
        arrival: ArrivalProcess,
        queues: usize,
        load: Option<f64>,
        spread: Option<usize>,
    },
}

#[pyclass(module = "graphene_sched._core")]
pub struct Env {
    jobs: Jobs,
    cluster: Arc<Cluster>,
    sim: SimConfig,
    until: Option<f64>,
    reference: Option<String>,
    settings: Option<graphene::online::OnlineSettings>,
    /// `sticky=True`: machines stay on their job without a decision (drawn workloads build
    /// their settings per episode, so the flag is kept here).
    sticky: bool,
    workload: Option<Arc<Workload>>,
    /// Behind a mutex so that the class is Sync (the episode's channels are Send only).
    episode: Mutex<Option<Episode>>,
}

fn f32_bytes<'py>(py: Python<'py>, v: impl Iterator<Item = f64>) -> Bound<'py, PyBytes> {
    let mut out = Vec::new();
    for x in v {
        out.extend_from_slice(&(x as f32).to_le_bytes());
    }
    PyBytes::new(py, &out)
}

fn i64_bytes<'py>(py: Python<'py>, v: impl Iterator<Item = i64>) -> Bound<'py, PyBytes> {
    let mut out = Vec::new();
    for x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
    PyBytes::new(py, &out)
}

/// Spans as little-endian f64 rows of (job, task, machine, start, end), for numpy.
fn span_bytes<'py>(py: Python<'py>, spans: &[Span]) -> Bound<'py, PyBytes> {
    let mut out = Vec::with_capacity(spans.len() * 40);
    for s in spans {
        for x in [s.job as f64, s.task as f64, s.machine as f64, s.start, s.end] {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    PyBytes::new(py, &out)
}

fn decision<'py>(py: Python<'py>, d: &Decision) -> PyResult<Bound<'py, PyDict>> {
    let o = &d.obs;
    let out = PyDict::new(py);
    out.set_item("nodes", f32_bytes(py, o.x.iter().flat_map(|x| x.iter().copied())))?;
    out.set_item("n_nodes", o.x.len())?;
    let edges: Vec<i64> =
        (0..o.x.len()).flat_map(|v| o.children(v).iter().flat_map(move |&c| [v as i64, c as i64])).collect();
    out.set_item("n_edges", edges.len() / 2)?;
    out.set_item("edges", i64_bytes(py, edges.into_iter()))?;
    out.set_item("node_job", i64_bytes(py, o.job_of.iter().map(|&j| j as i64)))?;
    out.set_item("stage_ids", i64_bytes(py, o.stage.iter().flat_map(|&(j, s)| [j as i64, s as i64])))?;
    out.set_item("jobs", f32_bytes(py, o.job_x.iter().flat_map(|x| x.iter().copied())))?;
    out.set_item("n_jobs", o.jobs())?;
    out.set_item("candidates", o.cand.iter().map(|&c| c as usize).collect::<Vec<_>>())?;
    out.set_item("time", d.now)?;
    out.set_item("machine", d.machine)?;
    out.set_item("job_seconds", d.job_seconds)?;
    out.set_item("in_system", d.in_system)?;
    out.set_item("done_jobs", d.done)?;
    out.set_item("reference", d.reference.map(|a| (a.node, a.level)))?;
    out.set_item("started", span_bytes(py, &d.started))?;
    let ended: Vec<Span> =
        d.ended.iter().map(|&(job, task, end)| Span { job, task, machine: 0, start: f64::NAN, end }).collect();
    out.set_item("ended", span_bytes(py, &ended))?;
    out.set_item("done", false)?;
    Ok(out)
}

fn finished<'py>(py: Python<'py>, f: &Final) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("done", true)?;
    out.set_item("time", f.now)?;
    out.set_item("job_seconds", f.job_seconds)?;
    out.set_item("jct", f.jct.clone())?;
    out.set_item("makespan", f.makespan)?;
    out.set_item("complete", f.complete)?;
    out.set_item("invalid_actions", f.invalid_actions)?;
    out.set_item("tasks", f.tasks)?;
    out.set_item("runs", span_bytes(py, &f.runs))?;
    Ok(out)
}

fn step_dict<'py>(py: Python<'py>, s: &Step) -> PyResult<Bound<'py, PyDict>> {
    match s {
        Step::Decide(d) => decision(py, d),
        Step::Done(f) => finished(py, f),
    }
}

#[pymethods]
impl Env {
    /// `trace` (a source) or `dags` (sources) with `jobs`, `arrival`, `queues`, `load`; cluster
    /// options as everywhere; `heartbeat`, `until`, `reference`, and the replay options a
    /// reference policy reads (queues, kappa, ...).
    #[new]
    #[pyo3(signature = (trace=None, dags=None, jobs=None, arrival=None, queues=None, load=None, until=None, reference=None, opts=None))]
    #[allow(clippy::too_many_arguments)]
    fn new<'py>(
        py: Python<'py>,
        trace: Option<Bound<'py, PyAny>>,
        dags: Option<Bound<'py, PyAny>>,
        jobs: Option<Bound<'py, PyAny>>,
        arrival: Option<Bound<'py, PyAny>>,
        queues: Option<Bound<'py, PyAny>>,
        load: Option<Bound<'py, PyAny>>,
        until: Option<Bound<'py, PyAny>>,
        reference: Option<Bound<'py, PyAny>>,
        opts: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Env> {
        let trace = trace.filter(|t| !t.is_none());
        let dags = dags.filter(|d| !d.is_none());
        let jobs: usize = opt("jobs", jobs.as_ref())?.unwrap_or(50);
        let arrival: String = opt("arrival", arrival.as_ref())?.unwrap_or_else(|| "poisson:10".into());
        let queues: usize = opt("queues", queues.as_ref())?.unwrap_or(1);
        let load: Option<f64> = opt("load", load.as_ref())?;
        let until: Option<f64> = opt("time_limit", until.as_ref())?;
        let reference: Option<String> = opt("reference", reference.as_ref())?;
        let o = Opts::new(py, opts)?;
        let lo = LoadOptions {
            format: None,
            query: o.take("query")?,
            executors: o.take("executors")?.unwrap_or(20),
            demands: o.take("demands")?,
            seed: o.take("dag_seed")?.unwrap_or(0),
            job: None,
            dag: None,
        };
        let ro: ReplayOptions = replay_opts(&o)?;
        o.finish()?;
        let sticky = ro.sticky;
        if let Some(u) = until {
            if u.is_nan() || u <= 0.0 {
                return Err(usage(format!("time_limit: {u} must be a positive number of seconds")));
            }
        }
        match (&trace, &dags) {
            (Some(t), None) => {
                let src = source("trace", "trace", t)?;
                let setup = run(py, move || ro.setup(&src))?;
                let w = Arc::new(setup.workload);
                Ok(Env {
                    jobs: Jobs::Fixed(w.clone()),
                    cluster: Arc::new(setup.cluster),
                    sim: setup.cfg,
                    until,
                    reference,
                    settings: Some(setup.settings),
                    sticky,
                    workload: Some(w),
                    episode: Mutex::new(None),
                })
            }
            (None, Some(ds)) => {
                if ro.waves.is_some() || ro.moving_delay.is_some() {
                    // A sidecar names the jobs of one trace; drawn workloads have other jobs.
                    return Err(usage("waves (and moving_delay) go with a trace, not with dags drawn per episode"));
                }
                let srcs: Vec<Source> = sources("dags", "dag", ds)?;
                let arrival: ArrivalProcess = arrival.parse().map_err(crate::to_py)?;
                if queues == 0 || jobs == 0 {
                    return Err(usage("jobs and queues must be at least 1"));
                }
                let spread = ro.spread_queues;
                if spread == Some(0) {
                    return Err(usage("spread_queues must be at least 1"));
                }
                let cluster_o = ro.cluster.clone();
                let (dags, cluster) = run(py, move || {
                    let mut dags = Vec::new();
                    for s in &srcs {
                        dags.extend(request::load_dags(s, &lo)?);
                    }
                    Ok((dags, cluster_o.trace_cluster()?))
                })?;
                let sim = SimConfig { heartbeat: ro.heartbeat, ..SimConfig::default() };
                if !(sim.heartbeat > 0.0 && sim.heartbeat.is_finite()) {
                    return Err(usage(format!("heartbeat {} must be a positive number of seconds", sim.heartbeat)));
                }
                Ok(Env {
                    jobs: Jobs::Drawn { dags, jobs, arrival, queues, load, spread },
                    cluster: Arc::new(cluster),
                    sim,
                    until,
                    reference,
                    settings: None,
                    sticky,
                    workload: None,
                    episode: Mutex::new(None),
                })
            }
            _ => Err(usage("give either a trace or dags to draw jobs from")),
        }
    }

    /// Starts an episode (the workload drawn with `seed` when generated); returns the first
    /// step.
    fn reset<'py>(&mut self, py: Python<'py>, seed: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        let seed = u64::arg("seed", seed)?;
        *self.episode.get_mut().unwrap_or_else(|e| e.into_inner()) = None;
        let workload = match &self.jobs {
            Jobs::Fixed(w) => w.clone(),
            Jobs::Drawn { dags, jobs, arrival, queues, load, spread } => {
                let (dags, jobs, arrival, queues, load, spread) = (dags, *jobs, *arrival, *queues, *load, *spread);
                let cluster = self.cluster.clone();
                let w = run(py, move || {
                    let mut w = trace::generate(dags, jobs, arrival, queues, seed)?;
                    if let Some(k) = spread {
                        trace::spread_queues(&mut w, k)?;
                    }
                    if let Some(l) = load {
                        trace::load::calibrate(&mut w, &cluster, l)?;
                    }
                    Ok(w)
                })?;
                Arc::new(w)
            }
        };
        self.workload = Some(workload.clone());
        let settings = match &self.settings {
            Some(s) => Some(s.clone()),
            None => Some(graphene::online::OnlineSettings { sticky: self.sticky, ..env::default_settings(&workload) }),
        };
        let cfg = EpisodeConfig {
            sim: SimConfig { seed, ..self.sim.clone() },
            until: self.until,
            reference: self.reference.clone(),
            settings,
        };
        let cluster = self.cluster.clone();
        let (ep, first) = run(py, move || Episode::start(workload, cluster, cfg))?;
        *self.episode.get_mut().unwrap_or_else(|e| e.into_inner()) = Some(ep);
        step_dict(py, &first)
    }

    /// Takes action ⟨node, level⟩ and runs to the next decision (or the end). A node that is not
    /// a candidate is replaced by the first candidate and counted as invalid; a level past the
    /// last is the last (unlimited). Negative values, or ones past the machine's integers, raise.
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        node: &Bound<'py, PyAny>,
        level: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (node, level) = (usize::arg("node", node)?, usize::arg("level", level)?);
        let ep = self.episode.get_mut().unwrap_or_else(|e| e.into_inner());
        let ep = ep.as_mut().ok_or_else(|| usage("call reset() before step()"))?;
        let s = run(py, move || ep.step(Action { node, level }))?;
        step_dict(py, &s)
    }

    /// Per-job JCTs of a built-in online policy replaying the current episode's workload.
    fn baseline(&self, py: Python<'_>, scheduler: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
        let scheduler = String::arg("scheduler", scheduler)?;
        let w = self.workload.clone().ok_or_else(|| usage("call reset() first"))?;
        let sticky = self.sticky;
        let settings = self
            .settings
            .clone()
            .unwrap_or_else(|| graphene::online::OnlineSettings { sticky, ..env::default_settings(&w) });
        let (cluster, cfg) = (self.cluster.clone(), self.sim.clone());
        run(py, move || env::baseline(&w, &cluster, &scheduler, &settings, &cfg))
    }

    /// The current episode's workload as a native CSV trace.
    fn workload_csv(&self, py: Python<'_>) -> PyResult<String> {
        let w = self.workload.clone().ok_or_else(|| usage("call reset() first"))?;
        run(py, move || trace::native_csv::write(&w))
    }

    /// Upper bounds for padded observations: (stages, edges, jobs) over any episode.
    fn bounds(&self) -> (usize, usize, usize) {
        let of = |d: &Dag| (d.stages.len(), d.stages.iter().map(|s| s.children.len()).sum::<usize>());
        match &self.jobs {
            Jobs::Fixed(w) => {
                let (mut n, mut e) = (0, 0);
                for j in &w.jobs {
                    let (a, b) = of(&j.dag);
                    n += a;
                    e += b;
                }
                (n, e, w.jobs.len())
            }
            Jobs::Drawn { dags, jobs, .. } => {
                let n = dags.iter().map(|d| of(d).0).max().unwrap_or(0);
                let e = dags.iter().map(|d| of(d).1).max().unwrap_or(0);
                (n * jobs, e * jobs, *jobs)
            }
        }
    }

    #[getter]
    fn machines(&self) -> usize {
        self.cluster.len()
    }

    #[classattr]
    fn node_features() -> usize {
        env::NODE_FEATURES
    }

    #[classattr]
    fn job_features() -> usize {
        env::JOB_FEATURES
    }

    #[classattr]
    fn limit_levels() -> usize {
        env::LIMIT_LEVELS
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Env>()?;
    Ok(())
}
