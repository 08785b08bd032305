//! Whole requests described by plain options, as the CLI's flags describe them: where the DAG or
//! trace comes from (a file or text), which cluster, which scheduler. Resolving them here, once,
//! is what lets the Python bindings give the CLI's bytes and the CLI's error messages for the
//! same inputs. Each function mirrors one command (`build-schedule`, `lower-bound --json`,
//! `validate`, `compare --json`, `gen-trace`, `replay`) after its flags are parsed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::api;
use crate::compare::{compare_each, summarize, Row};
use crate::fairness::FairnessMode;
use crate::formats::{self, Format, LoadOptions};
use crate::metrics;
use crate::model::{Cluster, ClusterSpec, Dag, Workload, MAX_RESOURCES};
use crate::offline::PlacementKey;
use crate::online::{self, Charge, Eta, GrapheneOnline, OnlineSettings, SrptTerm};
use crate::sim::{self, Misestimated, SimConfig, SimResult};
use crate::trace::{self, ArrivalProcess, TraceFormat, TraceOptions};
use crate::validate::Violation;
use crate::{Error, OfflineConfig, Result, Scheduler};

/// Where an input comes from: a file (errors name it), or text already in memory (a DAG given
/// as a dict), with the name a file's stem would have given.
#[derive(Clone, Debug)]
pub enum Source {
    Path(PathBuf),
    Text { text: String, name: String },
}

impl Source {
    /// Text given as bytes (a body, or bytes from Python), decoded as files are
    /// ([`formats::decode_text`]); an error names the input after `name`.
    pub fn from_bytes(bytes: Vec<u8>, name: impl Into<String>) -> Result<Source> {
        let name = name.into();
        match formats::decode_text(bytes) {
            Ok(text) => Ok(Source::Text { text, name }),
            Err(e) => Err(e.in_file(Path::new(&name))),
        }
    }

    pub fn text(&self) -> Result<String> {
        match self {
            Source::Path(p) => formats::read_text(p),
            Source::Text { text, .. } => Ok(text.clone()),
        }
    }

    fn path(&self) -> Option<&Path> {
        match self {
            Source::Path(p) => Some(p),
            Source::Text { .. } => None,
        }
    }

    /// Names errors after the file, as the readers do.
    fn named<T>(&self, r: Result<T>) -> Result<T> {
        match self.path() {
            Some(p) => r.map_err(|e| e.in_file(p)),
            None => r,
        }
    }
}

/// Every DAG of a source (a TPC-H file holds 22 unless `opts.query` picks one).
pub fn load_dags(src: &Source, opts: &LoadOptions) -> Result<Vec<Dag>> {
    load_dags_detected(src, opts).map(|(_, dags)| dags)
}

fn load_dags_detected(src: &Source, opts: &LoadOptions) -> Result<(Format, Vec<Dag>)> {
    match src {
        Source::Path(p) => formats::load_dags_detected(p, opts),
        Source::Text { text, name } => {
            if let Some(p) = &opts.demands {
                formats::profile::Profile::by_name(p)?;
            }
            formats::parse_dags_detected(text, name, opts)
        }
    }
}

/// Exactly one DAG.
pub fn load_dag(src: &Source, opts: &LoadOptions) -> Result<Dag> {
    let (format, dags) = load_dags_detected(src, opts)?;
    let what = match src {
        Source::Path(p) => p.display().to_string(),
        Source::Text { name, .. } => name.clone(),
    };
    formats::one_of(&what, format, dags)
}

fn is_network_source(src: &Source, format: Option<Format>) -> Result<bool> {
    Ok(match (format, src) {
        (Some(f), _) => f == Format::Hetero,
        // A compressed Spark log or a rolling-log directory is not text to detect.
        (None, Source::Path(p)) => formats::is_network_file(p, None)?,
        (None, Source::Text { .. }) => src.named(formats::detect(&src.text()?))? == Format::Hetero,
    })
}

/// The cluster flags: `--cluster`, `--machines`, `--capacity`, `--no-overbook`, `--speeds`,
/// `--bandwidth`.
#[derive(Clone, Debug, Default)]
pub struct ClusterOptions {
    pub file: Option<Source>,
    pub machines: Option<usize>,
    pub capacity: Option<String>,
    pub no_overbook: bool,
    pub speeds: Option<Vec<f64>>,
    pub bandwidth: Option<f64>,
}

impl ClusterOptions {
    pub fn spec(&self) -> Result<ClusterSpec> {
        if self.file.is_some() && (self.machines.is_some() || self.capacity.is_some()) {
            return Err(Error::Usage("a cluster file conflicts with machines and capacity".into()));
        }
        let mut spec = match &self.file {
            Some(src) => match src {
                Source::Path(p) => formats::cluster::load(p)?,
                Source::Text { text, .. } => formats::cluster::parse(text)?,
            },
            None => {
                let cap = match &self.capacity {
                    Some(c) => formats::cluster::parse_capacity(c)?,
                    None => ClusterSpec::default_capacity(),
                };
                let n = self.machines.unwrap_or(10);
                if n == 0 {
                    return Err(Error::Usage("--machines must be at least 1".into()));
                }
                crate::limits::current().check_machines(n as u64, "--machines")?;
                ClusterSpec::uniform(n, cap)
            }
        };
        if self.no_overbook {
            spec.overbook.clear();
        }
        self.apply_network(&mut spec)?;
        Ok(spec)
    }

    /// Whether the cluster is left to the input (no option describes it).
    pub fn is_default(&self) -> bool {
        self.file.is_none() && self.machines.is_none() && self.capacity.is_none()
    }

    /// Applies `--speeds` (one per machine: the groups are split into single machines) and
    /// `--bandwidth`.
    pub fn apply_network(&self, spec: &mut ClusterSpec) -> Result<()> {
        if let Some(speeds) = &self.speeds {
            let n = spec.machine_count();
            if speeds.len() != n {
                return Err(Error::Usage(format!("--speeds gives {} speeds for {n} machines", speeds.len())));
            }
            if let Some(s) = speeds.iter().find(|s| !(s.is_finite() && **s > 0.0)) {
                return Err(Error::Usage(format!("--speeds: {s} is not a finite number > 0")));
            }
            spec.split_into_machines();
            spec.speeds = speeds.clone();
        }
        if let Some(b) = self.bandwidth {
            if !(b.is_finite() && b > 0.0) {
                return Err(Error::Usage(format!("--bandwidth {b} must be a finite number > 0")));
            }
            spec.bandwidth = b;
        }
        Ok(())
    }

    fn named<T>(&self, r: Result<T>) -> Result<T> {
        match &self.file {
            Some(src) => src.named(r),
            None => r,
        }
    }

    /// The cluster for a DAG source: a task-graph/network file brings its own nodes unless the
    /// options describe the cluster.
    pub fn spec_for(&self, src: &Source, format: Option<Format>) -> Result<ClusterSpec> {
        if !(self.is_default() && is_network_source(src, format)?) {
            return self.spec();
        }
        let text = src.text()?;
        let name = match src {
            Source::Path(p) => p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "dag".into()),
            Source::Text { name, .. } => name.clone(),
        };
        let (_, mut spec) = src.named(formats::hetero::parse(&text, &name))?;
        if self.no_overbook {
            spec.overbook.clear();
        }
        self.apply_network(&mut spec)?;
        Ok(spec)
    }

    /// Resolves `spec` for `dag` and checks that every task fits some machine.
    pub fn cluster_for(&self, spec: &ClusterSpec, dag: &Dag, src: &Source) -> Result<Cluster> {
        let cluster = self.named(spec.resolve(&dag.resources))?;
        src.named(cluster.check_fits(dag))?;
        Ok(cluster)
    }

    /// The cluster for workload traces (their fixed resource list).
    pub fn trace_cluster(&self) -> Result<Cluster> {
        let spec = self.spec()?;
        self.named(spec.resolve(&trace::RESOURCES.map(String::from)))
    }
}

/// The search flags: `--grid-step`, `--max-trouble`, `--no-cuts`, `--placement`, `--threads`.
#[derive(Clone, Debug)]
pub struct SearchOptions {
    pub grid_step: f64,
    pub max_trouble: f64,
    pub no_cuts: bool,
    pub placement: Vec<PlacementKey>,
    /// `--pairing`: the pairing family of candidate troublesome sets.
    pub pairing: bool,
    /// `--compact`: forward re-compaction of every candidate plan.
    pub compact: bool,
    /// `--search-work`: tasks the constructor may place over its candidate plans.
    pub search_work: u64,
    /// `--recurse`: place a large troublesome set by the construction itself.
    pub recurse: bool,
    pub threads: Option<usize>,
    /// `--improve N`: task placements for the improver after the constructor (0: off).
    pub improve: u64,
    /// `--improve-seed`.
    pub improve_seed: u64,
    /// `--exact`: prove the schedule optimal by branch and bound (graphene, small DAGs).
    pub exact: bool,
    /// `--exact-nodes`: the exact search's node budget.
    pub exact_nodes: u64,
    /// `--time-limit`: seconds after which the search returns the best schedule found.
    pub time_limit: Option<f64>,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            grid_step: 0.1,
            max_trouble: 0.75,
            no_cuts: false,
            placement: crate::offline::DEFAULT_KEYS.to_vec(),
            pairing: crate::offline::DEFAULT_PAIRING,
            compact: crate::offline::DEFAULT_COMPACT,
            search_work: crate::offline::DEFAULT_SEARCH_WORK,
            recurse: crate::offline::DEFAULT_RECURSE,
            threads: None,
            improve: crate::offline::DEFAULT_IMPROVE_BUDGET,
            improve_seed: 0,
            exact: false,
            exact_nodes: crate::offline::DEFAULT_EXACT_NODES,
            time_limit: None,
        }
    }
}

impl SearchOptions {
    pub fn config(&self) -> Result<OfflineConfig> {
        // Below 0.001 the grids grow to thousands of thresholds per score with nothing to gain
        // (the discriminative values are the distinct scores, far fewer) and the search stalls.
        if !(self.grid_step >= 0.001 && self.grid_step <= 1.0) {
            return Err(Error::Usage(format!("--grid-step {} must be in [0.001, 1]", self.grid_step)));
        }
        if !(0.0..=1.0).contains(&self.max_trouble) {
            return Err(Error::Usage(format!("--max-trouble {} must be in [0, 1]", self.max_trouble)));
        }
        if self.placement.is_empty() {
            return Err(Error::Usage("--placement needs at least one key".into()));
        }
        if self.exact && self.exact_nodes == 0 {
            return Err(Error::Usage("--exact-nodes must be at least 1".into()));
        }
        if let Some(k) = self.threads {
            crate::limits::check_threads(k)?;
        }
        let mut keys = self.placement.clone();
        keys.dedup();
        Ok(OfflineConfig {
            grid_step: self.grid_step,
            max_trouble: self.max_trouble,
            cuts: !self.no_cuts,
            keys,
            pairing: self.pairing,
            compact: self.compact,
            search_work: self.search_work,
            recurse: self.recurse,
            improve_budget: self.improve,
            improve_seed: self.improve_seed,
            exact: self.exact.then_some(self.exact_nodes),
            deadline: time_limit(self.time_limit)?,
        })
    }

    /// Runs `f` inside a thread pool of the requested size.
    pub fn in_pool<T: Send>(&self, f: impl FnOnce() -> T + Send) -> Result<T> {
        match self.threads {
            None => Ok(f()),
            Some(k) => {
                crate::limits::check_threads(k)?;
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(k)
                    .build()
                    .map_err(|e| Error::Usage(format!("cannot start {k} threads: {e}")))?;
                Ok(pool.install(f))
            }
        }
    }
}

/// The deadline of `--time-limit SECONDS` (none without one).
pub fn time_limit(seconds: Option<f64>) -> Result<crate::Deadline> {
    match seconds {
        None => Ok(crate::Deadline::none()),
        Some(s) if s.is_finite() && (0.0..=1e9).contains(&s) => {
            Ok(crate::Deadline::after(std::time::Duration::from_secs_f64(s)))
        }
        Some(s) => Err(Error::Usage(format!("--time-limit {s}: expected seconds in [0, 1e9]"))),
    }
}

/// A placement key by its flag name.
pub fn parse_placement(name: &str) -> Result<PlacementKey> {
    match name {
        "longest" => Ok(PlacementKey::Longest),
        "path-length" => Ok(PlacementKey::PathLength),
        "mixed" => Ok(PlacementKey::Mixed),
        other => Err(Error::Usage(format!("unknown placement key '{other}' (known: longest, path-length, mixed)"))),
    }
}

pub fn parse_scheduler(name: &str) -> Result<Scheduler> {
    Scheduler::parse(name).ok_or_else(|| {
        Error::Usage(format!("unknown scheduler '{name}' (known: {})", Scheduler::known_names().join(", ")))
    })
}

/// `build-schedule`: the checked schedule and the bytes it writes.
pub fn build_schedule(
    dag_src: &Source,
    cluster: &ClusterOptions,
    load: &LoadOptions,
    search: &SearchOptions,
    scheduler: &str,
    no_timing: bool,
) -> Result<api::Scheduled> {
    let which = parse_scheduler(scheduler)?;
    let cfg = search.config()?;
    let dag = load_dag(dag_src, load)?;
    let network_file = is_network_source(dag_src, load.format)?;
    let spec = cluster.spec_for(dag_src, load.format)?;
    let net = spec.network();
    api::check_network(which, &net, &dag)?;
    let c = cluster.cluster_for(&spec, &dag, dag_src)?;
    search.in_pool(|| api::schedule(&dag, &c, &net, network_file, which, &cfg, load.seed, no_timing))?
}

/// `lower-bound --json`.
pub fn lower_bound(dag_src: &Source, cluster: &ClusterOptions, load: &LoadOptions) -> Result<serde_json::Value> {
    let dag = load_dag(dag_src, load)?;
    let spec = cluster.spec()?;
    let c = cluster.cluster_for(&spec, &dag, dag_src)?;
    Ok(api::lower_bound_json(&dag, &c))
}

/// `validate`: the summary line of a valid schedule, or its violations.
pub fn validate(
    dag_src: &Source,
    schedule_src: &Source,
    cluster: &ClusterOptions,
    load: &LoadOptions,
) -> Result<std::result::Result<String, Vec<Violation>>> {
    let dag = load_dag(dag_src, load)?;
    let file = schedule_src.named(formats::schedule_file::parse(&schedule_src.text()?))?;
    let spec = cluster.spec_for(dag_src, load.format)?;
    let c = cluster.cluster_for(&spec, &dag, dag_src)?;
    Ok(api::validate_file(&dag, &c, &spec.network(), &file))
}

/// `compare` runs every scheduler on many DAGs: an exact search per DAG is `build-schedule`'s.
pub fn refuse_exact(cfg: &OfflineConfig) -> Result<()> {
    if cfg.exact.is_some() {
        return Err(Error::Usage(
            "--exact is a build-schedule option (one DAG, graphene); compare does not take it".into(),
        ));
    }
    Ok(())
}

/// `compare --json`: rows and summary.
pub fn compare(
    dag_srcs: &[Source],
    cluster: &ClusterOptions,
    load: &LoadOptions,
    search: &SearchOptions,
    schedulers: Option<&[String]>,
) -> Result<serde_json::Value> {
    let cfg = search.config()?;
    refuse_exact(&cfg)?;
    let mut dags = Vec::new();
    let mut specs = Vec::new();
    for src in dag_srcs {
        let spec = cluster.spec_for(src, load.format)?;
        for dag in load_dags(src, load)? {
            cluster.cluster_for(&spec, &dag, src)?;
            dags.push(dag);
            specs.push(spec.clone());
        }
    }
    let networked = dags.iter().zip(&specs).any(|(d, s)| !s.network().is_trivial_for(d));
    let schedulers: Vec<Scheduler> = match schedulers {
        Some(names) => names.iter().map(|n| parse_scheduler(n)).collect::<Result<_>>()?,
        None if networked => std::iter::once(Scheduler::Graphene).chain(Scheduler::hetero()).collect(),
        None => Scheduler::all(),
    };
    let spec_refs: Vec<&ClusterSpec> = specs.iter().collect();
    let rows = search.in_pool(|| compare_each(&dags, &spec_refs, &schedulers, &cfg, load.seed, |_: &Row| {}))??;
    let summary = summarize(&rows, &schedulers);
    Ok(serde_json::json!({ "rows": rows, "summary": summary }))
}

/// `gen-trace`: the native CSV text of a workload drawn from the DAG sources.
pub fn gen_trace(
    dag_srcs: &[Source],
    jobs: usize,
    arrival: &str,
    queues: usize,
    target_load: Option<f64>,
    load: &LoadOptions,
    cluster: &ClusterOptions,
) -> Result<String> {
    let arrival: ArrivalProcess = arrival.parse()?;
    trace::generate::check_counts(jobs, arrival, queues)?;
    let mut dags = Vec::new();
    for src in dag_srcs {
        dags.extend(load_dags(src, load)?);
    }
    let c = cluster.trace_cluster()?;
    let mut workload = trace::generate(&dags, jobs, arrival, queues, load.seed)?;
    if let Some(target) = target_load {
        trace::load::calibrate(&mut workload, &c, target)?;
    }
    trace::native_csv::write(&workload)
}

/// `export-trace --format sls`: a workload trace (file or text) exported for graphene's SLS AM
/// with the order in `opts`, for the cluster the options describe. Errors in a job (its queue,
/// a task no machine holds, a stage name the trace cannot carry) name the trace file.
pub fn export_trace(
    trace_src: &Source,
    trace_format: Option<TraceFormat>,
    cluster: &ClusterOptions,
    opts: &crate::export::sls::TraceExportOptions,
) -> Result<(crate::export::sls::TraceExport, String)> {
    opts.units.check()?;
    let c = cluster.trace_cluster()?;
    let (workload, skipped) = match trace_src {
        Source::Path(p) => trace::load(p, &TraceOptions { format: trace_format, queues: None })?,
        Source::Text { text, .. } => trace::parse(text, trace_format)?,
    };
    let out = crate::export::sls::write_workload(&workload, &c, opts).map_err(|e| match (e, trace_src) {
        // A job's field is the trace file's; a bad flag is nobody's file.
        (e @ Error::Field { .. }, Source::Path(p)) => e.in_file(p),
        (e, _) => e,
    })?;
    let skipped = if skipped.is_empty() { String::new() } else { skipped.to_string() };
    Ok((out, skipped))
}

/// The replay flags (`replay` and `replay-compare` share them).
#[derive(Clone, Debug)]
pub struct ReplayOptions {
    pub trace_format: Option<TraceFormat>,
    pub spread_queues: Option<usize>,
    pub cluster: ClusterOptions,
    pub kappa: Option<String>,
    /// `--tetris-kappa`: the same bound for `tetris` (absent: none).
    pub tetris_kappa: Option<String>,
    /// `--cs-accounting`: containers, memory or dominant.
    pub cs_accounting: String,
    /// `--cs-user-limit-factor` (absent: elastic queues).
    pub cs_user_limit_factor: Option<f64>,
    /// `--cs-am`: every job's application-master container, `cpu=1,mem=0.001` (absent: none).
    pub cs_am: Option<String>,
    /// `--cs-assignments-per-heartbeat` (absent: as many as fit).
    pub cs_per_heartbeat: Option<usize>,
    /// `--cs-reservations`: strict FIFO with YARN's node reservations.
    pub cs_reservations: bool,
    /// `--cs-tez-order`: a job's stages in Tez's natural (depth) order inside `cs`.
    pub cs_tez_order: bool,
    /// `--periodic-heartbeats`: no heartbeat when a task ends.
    pub periodic_heartbeats: bool,
    /// `--sticky`: each machine serves the job of its last task first (any scheduler).
    pub sticky: bool,
    /// `--container-overhead`: seconds a task holds its machine past its duration.
    pub container_overhead: f64,
    /// `--tetris-overbook-limit` (absent: 1, never).
    pub tetris_overbook_limit: Option<f64>,
    /// `--tetris-srpt-scale`: "mean" (the Tetris paper's eps, the default) or "max".
    pub tetris_srpt_scale: String,
    /// `--online-rules`: "default" or "paper" (graphene's online rules exactly as the paper's).
    pub online_rules: String,
    /// `--srpt-term`: "work" (the paper's) or "rank".
    pub srpt_term: String,
    /// `--graphene-rm`: `graphene` as graphene's scheduler in YARN's ResourceManager sees the
    /// cluster (remaining work by container size, priScore from the YARN priority, memory the
    /// only resource refused, the others overbooked at no cost).
    pub graphene_rm: bool,
    pub eta: String,
    pub rp: Option<f64>,
    pub overbook_limit: Option<f64>,
    /// "slot" or "drf".
    pub fairness: String,
    /// "time", "time-bounded", "accrue" or "task".
    pub charge: String,
    pub queues: Option<String>,
    pub heartbeat: f64,
    pub misestimate: Option<String>,
    /// "durations", "demands" or "both".
    pub misestimate_what: String,
    pub seed: u64,
    pub decima_model: Option<PathBuf>,
    /// `--waves`: a sidecar of spark-sched-sim wave samples (`gen-trace --waves-out`) bound to
    /// the trace's jobs: tasks run wave- and parallelism-dependent durations ([`sim::waves`]).
    pub waves: Option<PathBuf>,
    /// `--moving-delay`: with `waves`, the seconds an executor travels to another job (absent:
    /// [`sim::waves::DEFAULT_MOVING_DELAY`]).
    pub moving_delay: Option<f64>,
    pub no_timing: bool,
    /// Give up after this many seconds of wall time (`--time-limit`).
    pub time_limit: Option<f64>,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            trace_format: None,
            spread_queues: None,
            cluster: ClusterOptions::default(),
            kappa: None,
            tetris_kappa: None,
            tetris_overbook_limit: None,
            tetris_srpt_scale: "mean".into(),
            cs_accounting: "containers".into(),
            cs_user_limit_factor: None,
            cs_am: None,
            cs_per_heartbeat: None,
            cs_reservations: false,
            cs_tez_order: false,
            periodic_heartbeats: false,
            sticky: false,
            container_overhead: 0.0,
            online_rules: "default".into(),
            srpt_term: "work".into(),
            graphene_rm: false,
            eta: "auto".into(),
            rp: None,
            overbook_limit: None,
            fairness: "drf".into(),
            charge: "time".into(),
            queues: None,
            heartbeat: 1.0,
            misestimate: None,
            misestimate_what: "both".into(),
            seed: 0,
            decima_model: None,
            waves: None,
            moving_delay: None,
            no_timing: false,
            time_limit: None,
        }
    }
}

/// A `--kappa`-style value: a number in [0, 1), `none`, or absent (`default`).
fn parse_kappa(flag: &str, value: Option<&str>, default: Option<f64>) -> Result<Option<f64>> {
    match value {
        None => Ok(default),
        Some("none") => Ok(None),
        Some(k) => match k.parse::<f64>() {
            Ok(v) if (0.0..1.0).contains(&v) => Ok(Some(v)),
            _ => Err(Error::Usage(format!("{flag} '{k}' must be a number in [0, 1) or none"))),
        },
    }
}

fn parse_misestimate(s: &str) -> Result<(f64, f64)> {
    let bad = || Error::Usage(format!("--misestimate '{s}' is not LOW:HIGH with -1 < LOW <= HIGH"));
    let (a, b) = s.split_once(':').ok_or_else(bad)?;
    let lo: f64 = a.trim().parse().map_err(|_| bad())?;
    let hi: f64 = b.trim().parse().map_err(|_| bad())?;
    if !(lo > -1.0 && lo <= hi && hi.is_finite()) {
        return Err(bad());
    }
    Ok((lo, hi))
}

/// `--cs-am cpu=1,mem=0.001`: the AM container's demand in the cluster's resource order; a
/// resource the spec leaves out is 0, one the cluster lacks is refused. It must fit a machine.
fn cs_am(spec: &str, cluster: &crate::model::Cluster) -> Result<crate::model::ResVec> {
    let given = formats::cluster::parse_capacity(spec)
        .map_err(|_| Error::Usage(format!("--cs-am '{spec}' is not RESOURCE=AMOUNT,...")))?;
    let mut d = crate::model::ResVec::ZERO;
    for (name, v) in &given {
        let Some(i) = cluster.resources.iter().position(|r| r == name) else {
            return Err(Error::Usage(format!(
                "--cs-am names '{name}', but the cluster's resources are {}",
                cluster.resources.join(", ")
            )));
        };
        if !(v.is_finite() && *v >= 0.0) {
            return Err(Error::Usage(format!("--cs-am {name}={v} must be a finite number >= 0")));
        }
        d.0[i] = *v;
    }
    if !cluster.machines.iter().any(|c| (0..cluster.resources.len()).all(|r| d.0[r] <= c.0[r])) {
        return Err(Error::Usage(format!("--cs-am '{spec}' fits no machine")));
    }
    Ok(d)
}

/// Entitled share per queue, in `workload.queues()` order.
pub fn shares(spec: Option<&str>, workload: &Workload) -> Result<Vec<f64>> {
    let queues = workload.queues();
    let Some(spec) = spec else {
        return Ok(vec![1.0 / queues.len().max(1) as f64; queues.len()]);
    };
    let given: BTreeMap<String, f64> = formats::cluster::parse_capacity(spec)
        .map_err(|_| Error::Usage(format!("--queues '{spec}' is not NAME=SHARE,...")))?;
    for name in given.keys() {
        if !queues.contains(name) {
            return Err(Error::Usage(format!(
                "--queues names '{name}', but the trace's queues are {}",
                queues.join(", ")
            )));
        }
    }
    let out: Vec<f64> = queues
        .iter()
        .map(|q| given.get(q).copied().ok_or_else(|| Error::Usage(format!("--queues gives no share for queue '{q}'"))))
        .collect::<Result<_>>()?;
    let sum: f64 = out.iter().sum();
    if sum <= 0.0 {
        return Err(Error::Usage("--queues shares must not all be 0".into()));
    }
    Ok(out.iter().map(|s| s / sum).collect())
}

impl ReplayOptions {
    fn graphene_config(&self, shares: &[f64]) -> Result<GrapheneOnline> {
        let mut cfg = GrapheneOnline { shares: shares.to_vec(), ..GrapheneOnline::default() };
        cfg.kappa = parse_kappa("--kappa", self.kappa.as_deref(), cfg.kappa)?;
        cfg.srpt_term = match self.srpt_term.as_str() {
            "work" => SrptTerm::Work,
            "rank" => SrptTerm::Rank,
            other => return Err(Error::Usage(format!("--srpt-term '{other}' must be work or rank"))),
        };
        cfg.paper_rules = match self.online_rules.as_str() {
            "default" => false,
            "paper" => true,
            other => return Err(Error::Usage(format!("--online-rules '{other}' must be default or paper"))),
        };
        cfg.eta = match self.eta.as_str() {
            "auto" => Eta::Auto,
            e if e.starts_with("auto:") => match e[5..].parse::<f64>() {
                Ok(k) if k >= 0.0 && k.is_finite() => Eta::AutoTimes(k),
                _ => {
                    return Err(Error::Usage(format!("--eta '{e}' must be auto, auto:K with K >= 0, or a number >= 0")))
                }
            },
            e => match e.parse::<f64>() {
                Ok(v) if v >= 0.0 && v.is_finite() => Eta::Fixed(v),
                _ => return Err(Error::Usage(format!("--eta '{e}' must be a number >= 0 or auto"))),
            },
        };
        if let Some(rp) = self.rp {
            if !(0.0..=1.0).contains(&rp) {
                return Err(Error::Usage(format!("--rp {rp} must be in [0, 1]")));
            }
            cfg.rp = rp;
        }
        if let Some(x) = self.overbook_limit {
            if !(x.is_finite() && x >= 1.0) {
                return Err(Error::Usage(format!("--overbook-limit {x} must be a finite number >= 1")));
            }
            cfg.overbook = x;
        }
        cfg.charge = match self.charge.as_str() {
            "time" => Charge::Time,
            "time-bounded" => Charge::TimeBounded,
            "task" => Charge::Task,
            "accrue" => Charge::Accrue,
            other => {
                return Err(Error::Usage(format!("--charge '{other}' must be time, time-bounded, accrue or task")))
            }
        };
        cfg.fairness = match self.fairness.as_str() {
            "slot" => FairnessMode::Slot,
            "drf" => FairnessMode::Drf,
            other => return Err(Error::Usage(format!("--fairness '{other}' must be slot or drf"))),
        };
        Ok(cfg)
    }

    /// `waves` read and bound to `workload`'s jobs (errors name the file), with `moving_delay`;
    /// None without `waves`. A moving delay without waves is refused, as is one that is not a
    /// finite number of seconds >= 0.
    fn waves(&self, workload: &Workload) -> Result<Option<sim::waves::Waves>> {
        let Some(path) = &self.waves else {
            if self.moving_delay.is_some() {
                return Err(Error::Usage(
                    "--moving-delay needs --waves (the moving delay is part of the wave model)".into(),
                ));
            }
            return Ok(None);
        };
        let mut waves = sim::waves::Waves::new(sim::waves::load(path, workload)?);
        if let Some(d) = self.moving_delay {
            crate::limits::check_seconds(d, "--moving-delay", "moving delay")?;
            waves.moving_delay = d;
        }
        Ok(Some(waves))
    }

    /// Loads the trace and resolves everything a replay needs besides the scheduler.
    pub fn setup(&self, trace_src: &Source) -> Result<ReplaySetup> {
        let format = match self.trace_format {
            Some(f) => f,
            None => match trace_src {
                // A compressed log or a rolling-log directory is known by its name; its text
                // is not readable as is.
                Source::Path(p) if crate::formats::spark::looks_like_spark(p) => TraceFormat::Spark,
                _ => trace_src.named(trace::detect(&trace_src.text()?))?,
            },
        };
        let opts = TraceOptions { format: Some(format), queues: self.spread_queues };
        let (workload, skipped) = match trace_src {
            Source::Path(p) => trace::load(p, &opts)?,
            Source::Text { text, .. } => {
                if opts.queues == Some(0) {
                    return Err(Error::Usage("--spread-queues must be at least 1".into()));
                }
                let (mut w, r) = trace::parse(text, Some(format))?;
                if let Some(k) = opts.queues {
                    trace::spread_queues(&mut w, k)?;
                }
                (w, r)
            }
        };
        if workload.jobs.is_empty() {
            let what = match trace_src {
                Source::Path(p) => p.display().to_string(),
                Source::Text { name, .. } => name.clone(),
            };
            return Err(Error::Usage(format!("{what}: the trace holds no jobs")));
        }
        let resources = workload.jobs[0].dag.resources.clone();
        let c = &self.cluster;
        let spec = if format == TraceFormat::Alibaba && c.file.is_none() && c.capacity.is_none() {
            let cap =
                [("cpu".to_string(), trace::alibaba::MACHINE_CPU), ("mem".to_string(), trace::alibaba::MACHINE_MEM)]
                    .into_iter()
                    .collect();
            let n = c.machines.unwrap_or(4000);
            crate::limits::current().check_machines(n as u64, "--machines")?;
            let mut s = ClusterSpec::uniform(n, cap);
            if c.no_overbook {
                s.overbook.clear();
            }
            c.apply_network(&mut s)?;
            s
        } else {
            c.spec()?
        };
        let mut cluster = c.named(spec.resolve(&resources))?;
        let shares = shares(self.queues.as_deref(), &workload)?;
        let mut graphene = self.graphene_config(&shares)?;
        let mut unaccounted = [false; MAX_RESOURCES];
        if self.graphene_rm {
            // The ResourceManager refuses memory only: every other resource may be overbooked,
            // at no cost; the offline constructor's priScores stay those of the cluster given.
            let Some(m) = cluster.resources.iter().position(|r| r == "mem") else {
                return Err(Error::Usage(format!(
                    "--graphene-rm needs a resource named mem (the only one YARN's ResourceManager refuses); \
                     the cluster has {}",
                    cluster.resources.join(", ")
                )));
            };
            graphene.rm_work = true;
            graphene.rm_priority = true;
            graphene.rm_fit = Some(m);
            graphene.offline_overbook = Some(cluster.overbook);
            for r in 0..cluster.resources.len() {
                if r != m {
                    cluster.overbook[r] = true;
                    unaccounted[r] = true;
                }
            }
        }
        let settings = OnlineSettings {
            shares: shares.clone(),
            graphene,
            seed: self.seed,
            tetris_kappa: parse_kappa("--tetris-kappa", self.tetris_kappa.as_deref(), None)?,
            cs_accounting: online::CsAccounting::by_name(&self.cs_accounting)?,
            cs_user_limit: match self.cs_user_limit_factor {
                None => None,
                Some(f) if f.is_finite() && f > 0.0 => Some(f),
                Some(f) => return Err(Error::Usage(format!("--cs-user-limit-factor {f} must be a number > 0"))),
            },
            cs_yarn: online::CsYarn {
                am: self.cs_am.as_deref().map(|spec| cs_am(spec, &cluster)).transpose()?,
                per_heartbeat: match self.cs_per_heartbeat {
                    Some(0) => return Err(Error::Usage("--cs-assignments-per-heartbeat must be at least 1".into())),
                    n => n,
                },
                reserve: self.cs_reservations,
                tez_order: self.cs_tez_order,
            },
            tetris_overbook: match self.tetris_overbook_limit {
                None => 1.0,
                Some(x) if x.is_finite() && x >= 1.0 => x,
                Some(x) => {
                    return Err(Error::Usage(format!("--tetris-overbook-limit {x} must be a finite number >= 1")))
                }
            },
            tetris_srpt_scale: match self.tetris_srpt_scale.as_str() {
                "max" => online::TetrisSrptScale::Max,
                "mean" => online::TetrisSrptScale::Mean,
                other => return Err(Error::Usage(format!("--tetris-srpt-scale {other:?}: expected max or mean"))),
            },
            decima_model: self.decima_model.clone(),
            decima_bundled: None,
            sticky: self.sticky,
        };
        let mut settings = settings;
        let cfg = SimConfig {
            heartbeat: self.heartbeat,
            misestimate: self.misestimate.as_deref().map(parse_misestimate).transpose()?,
            misestimate_what: match self.misestimate_what.as_str() {
                "durations" => Misestimated::Durations,
                "demands" => Misestimated::Demands,
                "both" => Misestimated::Both,
                other => {
                    return Err(Error::Usage(format!(
                        "--misestimate-what '{other}' must be durations, demands or both"
                    )))
                }
            },
            seed: self.seed,
            speeds: if spec.speeds.iter().all(|&s| s == 1.0) { Vec::new() } else { spec.network().speeds },
            deadline: time_limit(self.time_limit)?,
            periodic_only: self.periodic_heartbeats,
            container_overhead: self.container_overhead,
            // Last, as the CLI always checked it: after every other option.
            waves: self.waves(&workload)?,
            unaccounted,
            // The decisions' times are dropped from the summary under --no-timing: not measured.
            time_decisions: !self.no_timing,
        };
        // Empty when the reader left nothing out.
        let skipped = if skipped.is_empty() { String::new() } else { skipped.to_string() };
        if settings.decima_model.is_none() {
            let run = decima_run_shape(&workload, &cluster, &cfg, settings.sticky);
            settings.decima_bundled = Some(online::decima::Model::closest(&run).0);
        }
        Ok(ReplaySetup { workload, cluster, shares, settings, cfg, skipped })
    }
}

/// A loaded trace, its cluster and everything a replay needs besides the scheduler.
pub struct ReplaySetup {
    pub workload: Workload,
    pub cluster: Cluster,
    pub shares: Vec<f64>,
    pub settings: OnlineSettings,
    pub cfg: SimConfig,
    /// What the reader skipped (Alibaba), empty when nothing was.
    pub skipped: String,
}

/// What `replay` writes: `jobs.csv`, `schedule.csv` and `summary.json`, byte for byte.
pub struct ReplayOutput {
    pub jobs_csv: String,
    pub schedule_csv: String,
    pub summary_json: Vec<u8>,
    pub result: SimResult,
    pub summary: metrics::Summary,
    pub scheduler: String,
}

/// `replay`: runs the trace under `scheduler` and checks the realized schedule. `trace_name`
/// is what summary.json records as the trace (the CLI writes the path as given).
pub fn replay(trace_src: &Source, trace_name: &str, opts: &ReplayOptions, scheduler: &str) -> Result<ReplayOutput> {
    let setup = opts.setup(trace_src)?;
    let mut policy = online::by_name(scheduler, &setup.settings)?;
    let result = sim::run(&setup.workload, &setup.cluster, policy.as_mut(), &setup.cfg)?;
    replay_output(&setup, trace_name, opts, policy.name(), result)
}

/// The warning for running the `decima` model `setup` names (its `decima_model`, else the
/// bundled one) on `setup`'s trace and cluster: None when the run matches the setting the model
/// was trained for (see [`online::decima::setting`]). Fails only when the model cannot be read,
/// which the replay itself would fail on too.
pub fn decima_warning(setup: &ReplaySetup) -> Result<Option<String>> {
    use online::decima::{setting, Model};
    let run = decima_run_shape(&setup.workload, &setup.cluster, &setup.cfg, setup.settings.sticky);
    let (model, source) = match (&setup.settings.decima_model, setup.settings.decima_bundled) {
        (Some(p), _) => (Model::load(p)?, p.display().to_string()),
        (None, name) => {
            let name = name.unwrap_or(online::decima::model::BUNDLED_MODELS[0].0);
            (Model::bundled_named(name)?, format!("(bundled models/{name}, the closest to this run)"))
        }
    };
    let warning = setting::warning(model.setting()?.as_ref(), &source, &run);
    Ok(warning.map(|w| {
        if setup.settings.decima_model.is_some() {
            return w;
        }
        // No bundled model fits: say which exist, so the user can pick one or train their own.
        let names: Vec<&str> = online::decima::model::BUNDLED_MODELS.iter().map(|(n, _)| *n).collect();
        format!(
            "{w}\n  no bundled model was trained for this setting (bundled: {}); pass --decima-model FILE, or train one with `graphene train-decima`",
            names.join(", ")
        )
    }))
}

/// What a `decima` model's setting is compared with: the run's cluster, arrivals and load,
/// and its wave durations and stickiness.
fn decima_run_shape(workload: &Workload, cluster: &Cluster, cfg: &SimConfig, sticky: bool) -> online::decima::RunShape {
    let mut run = online::decima::RunShape::of(workload, cluster, &cfg.speeds, cfg.heartbeat);
    run.waves = cfg.waves.as_ref().map(|w| w.moving_delay);
    run.sticky = sticky;
    run
}

/// Refuses a realized schedule that breaks a dependency or a capacity: that would be a bug in
/// the simulator or a policy, and no figure may be computed from it.
pub fn check_replay(setup: &ReplaySetup, result: &SimResult, scheduler: &str) -> Result<()> {
    let violations = crate::validate::validate_replay_durations(
        &setup.workload,
        &setup.cluster,
        &setup.cfg.speeds,
        result,
        setup.cfg.waves.is_none(),
    );
    match violations.first() {
        None => Ok(()),
        Some(v) => Err(Error::Usage(format!(
            "internal error: the replay under {scheduler} broke {} rule(s), first: {v}; please report this with the trace",
            violations.len()
        ))),
    }
}

/// Checks a finished replay and renders its three files (the CLI runs the simulator itself, to
/// show progress, and then comes here too, so both write the same bytes).
pub fn replay_output(
    setup: &ReplaySetup,
    trace_name: &str,
    opts: &ReplayOptions,
    name: String,
    result: SimResult,
) -> Result<ReplayOutput> {
    let ReplaySetup { workload, cluster, shares, .. } = setup;
    check_replay(setup, &result, &name)?;
    let mut summary = metrics::summarize(workload, cluster, &result, shares, 100);
    if opts.no_timing {
        summary.decision_us = metrics::Stats::of(&[]);
    }
    let utf8 = |b: Vec<u8>| String::from_utf8(b).expect("CSV of UTF-8 names is UTF-8");
    let jobs = utf8(crate::output::replay::jobs_csv(&result)?);
    let sched = utf8(crate::output::replay::schedule_csv(workload, &result)?);
    let mut json = serde_json::to_vec_pretty(&serde_json::json!({
        "trace": trace_name,
        "scheduler": name,
        "machines": cluster.len(),
        "seed": opts.seed,
        "summary": summary,
    }))
    .expect("serializable");
    json.push(b'\n');
    Ok(ReplayOutput { jobs_csv: jobs, schedule_csv: sched, summary_json: json, result, summary, scheduler: name })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Job j0 (at 0): stage a of 3 one-slot tasks, then b; job j1 (at 8): stage c. Durations 1 s.
    const TRACE: &str = "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations
j0,0,q0,a,3,1,1,0,0,0,,
j0,0,q0,b,1,1,1,0,0,0,a,
j1,8,q0,c,1,1,1,0,0,0,,
";

    /// One sample per list (ms) at 2 executors: every realized duration is forced (the CLI's
    /// `waves` integration test has the hand computation of these JCTs).
    const SIDECAR: &str = r#"{"format":"graphene-waves","unit":"ms","jobs":{"j0":"d0","j1":"d1"},"dags":{
        "d0":{"a":{"fresh_durations":{"2":[5250]},"first_wave":{"2":[3000]},"rest_wave":{"2":[2000]}},
              "b":{"fresh_durations":{"2":[6000]},"first_wave":{"2":[4000]},"rest_wave":{"2":[1000]}}},
        "d1":{"c":{"fresh_durations":{"2":[1500]},"first_wave":{"2":[500]},"rest_wave":{"2":[250]}}}}}"#;

    fn opts(waves: Option<PathBuf>, moving_delay: Option<f64>) -> ReplayOptions {
        ReplayOptions {
            cluster: ClusterOptions {
                machines: Some(2),
                capacity: Some("cpu=1,mem=1,disk=1,net=1".into()),
                ..ClusterOptions::default()
            },
            waves,
            moving_delay,
            no_timing: true,
            ..ReplayOptions::default()
        }
    }

    fn jcts(o: &ReplayOptions) -> Result<Vec<f64>> {
        let src = Source::Text { text: TRACE.into(), name: "t.csv".into() };
        let out = replay(&src, "t.csv", o, "fifo")?;
        let mut jcts: Vec<(String, f64)> = out.result.jobs.iter().map(|j| (j.name.clone(), j.jct())).collect();
        jcts.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(jcts.into_iter().map(|(_, t)| t).collect())
    }

    /// Bytes decode as files do: a byte-order mark dropped, invalid UTF-8 named by the input and
    /// the offset of its first bad byte.
    #[test]
    fn sources_from_bytes_decode_as_files() {
        match Source::from_bytes(b"\xef\xbb\xbf{}".to_vec(), "dag").unwrap() {
            Source::Text { text, name } => assert_eq!((text.as_str(), name.as_str()), ("{}", "dag")),
            other => panic!("{other:?}"),
        }
        let e = Source::from_bytes(b"ab\xff\xfe".to_vec(), "dag").unwrap_err();
        assert!(matches!(e, Error::InFile { .. }));
        assert_eq!(e.to_string(), "dag: not UTF-8 text (invalid byte at offset 2)");
    }

    /// `ReplayOptions::waves` binds the sidecar in the library (every front end gets it), with
    /// the CLI's figures and messages.
    #[test]
    fn waves_are_bound_by_the_library() {
        let dir = tempfile::tempdir().unwrap();
        let side = dir.path().join("w.json");
        std::fs::write(&side, SIDECAR).unwrap();
        assert_eq!(jcts(&opts(None, None)).unwrap(), [3.0, 1.0]);
        assert_eq!(jcts(&opts(Some(side.clone()), None)).unwrap(), [13.25, 4.0]);
        assert_eq!(jcts(&opts(Some(side.clone()), Some(0.5))).unwrap(), [11.75, 2.5]);
        let setup =
            opts(Some(side.clone()), Some(0.5)).setup(&Source::Text { text: TRACE.into(), name: "t".into() }).unwrap();
        assert_eq!(setup.cfg.waves.as_ref().map(|w| w.moving_delay), Some(0.5));
        // The Gymnasium env's built-in replay takes the same setup (and checks its runs under
        // waves by their drawn durations, not the trace's).
        let env_jcts = crate::env::baseline(&setup.workload, &setup.cluster, "fifo", &setup.settings, &setup.cfg);
        assert_eq!(env_jcts.unwrap(), [11.75, 2.5]);

        let e = jcts(&opts(Some(side.clone()), Some(-1.0))).unwrap_err().to_string();
        assert!(e.contains("--moving-delay") && e.contains("moving delay -1"), "{e}");
        let e = jcts(&opts(Some(side), Some(f64::NAN))).unwrap_err().to_string();
        assert!(e.contains("--moving-delay"), "{e}");
        let e = jcts(&opts(None, Some(1.0))).unwrap_err().to_string();
        assert!(e.contains("--moving-delay needs --waves"), "{e}");
        let missing = dir.path().join("missing.json");
        let e = jcts(&opts(Some(missing.clone()), None)).unwrap_err().to_string();
        assert!(e.contains(&missing.display().to_string()), "{e}");
    }
}
