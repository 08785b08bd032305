//! Flag groups shared by several commands.

use std::path::{Path, PathBuf};

use clap::Args;

use graphene::export::Units;
use graphene::formats::{self, Format, LoadOptions};
use graphene::model::{Cluster, ClusterSpec, Dag};
use graphene::request::{ClusterOptions, Source};
use graphene::{Error, OfflineConfig, Result};

/// The clap parser of a library enum a user names ([`graphene::choice::Choice`]): its names as
/// the possible values, the first paragraph of each value's doc comment as its help.
pub fn choice<T: graphene::choice::Choice + Send + Sync>() -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let values = T::CHOICES.iter().map(|c| match c.help() {
        Some(help) => PossibleValue::new(c.name).help(help),
        None => PossibleValue::new(c.name),
    });
    PossibleValuesParser::new(values).map(|name: String| T::from_name(&name).expect("a listed name"))
}

/// Input size limits (see `graphene::limits`), global to every command. Unset flags keep the
/// library's defaults, or the service's lower ones for `serve`, where one request must not be
/// able to take the memory every other request needs.
#[derive(Args, Debug, Clone)]
pub struct LimitArgs {
    /// Most tasks in one DAG or workload [default: 10000000; serve: 1000000].
    #[arg(long, value_name = "N", global = true)]
    pub limit_tasks: Option<u64>,
    /// Most machines in a cluster [default: 1000000; serve: 100000].
    #[arg(long, value_name = "N", global = true)]
    pub limit_machines: Option<u64>,
    /// Most jobs in a workload trace [default: 1000000].
    #[arg(long, value_name = "N", global = true)]
    pub limit_jobs: Option<u64>,
    /// Largest input file, e.g. 512MiB; also bounds the attribute bytes a DOT file applies to
    /// its nodes, defaults counted per node [default: 1GiB; serve: 256MiB].
    #[arg(long, value_name = "SIZE", global = true)]
    pub limit_input: Option<String>,
}

impl LimitArgs {
    pub fn install(&self, serving: bool) -> Result<()> {
        let base = if serving { graphene_serve::SERVICE_LIMITS } else { graphene::limits::Limits::DEFAULT };
        let positive = |v: Option<u64>, flag: &str, default: u64| match v {
            Some(0) => Err(Error::Usage(format!("{flag} must be at least 1"))),
            Some(n) => Ok(n),
            None => Ok(default),
        };
        let tasks = positive(self.limit_tasks, "--limit-tasks", base.tasks)?;
        let limits = graphene::limits::Limits {
            tasks,
            // Stages and edges follow the task limit: a stage holds at least one task, and
            // edges beyond a few per stage are what the limit on input bytes already bounds.
            stages: if self.limit_tasks.is_some() { tasks } else { base.stages },
            edges: if self.limit_tasks.is_some() { tasks.saturating_mul(5) } else { base.edges },
            machines: positive(self.limit_machines, "--limit-machines", base.machines)?,
            jobs: positive(self.limit_jobs, "--limit-jobs", base.jobs)?,
            input_bytes: match &self.limit_input {
                None => base.input_bytes,
                Some(s) => graphene_serve::config::parse_size(s)
                    .map_err(|m| Error::Usage(format!("--limit-input '{s}': {m}")))? as u64,
            },
        };
        graphene::limits::set(limits);
        Ok(())
    }
}

#[derive(Args, Debug, Clone)]
pub struct ClusterArgs {
    /// Cluster file: {"machines": [{"count": N, "capacity": {...}}], "overbook": [...]}.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["machines", "capacity"])]
    pub cluster: Option<PathBuf>,
    /// Number of identical machines [default: 10].
    #[arg(long, value_name = "N")]
    pub machines: Option<usize>,
    /// Capacity of each machine [default: cpu=16,mem=64,disk=200,net=1250].
    #[arg(long, value_name = "R=V,...")]
    pub capacity: Option<String>,
    /// Hold every resource to capacity (by default disk and net may be overbooked).
    #[arg(long)]
    pub no_overbook: bool,
    /// Speed of each machine, in machine order (a task runs for duration / speed there).
    #[arg(long, value_name = "S,...", value_delimiter = ',')]
    pub speeds: Option<Vec<f64>>,
    /// Data per time unit between two different machines (edge data / bandwidth is a transfer).
    #[arg(long, value_name = "B")]
    pub bandwidth: Option<f64>,
}

impl ClusterArgs {
    /// The flags as the library's [`ClusterOptions`], which checks and resolves them (one set of
    /// rules for the CLI and the Python package).
    pub fn options(&self) -> ClusterOptions {
        ClusterOptions {
            file: self.cluster.clone().map(Source::Path),
            machines: self.machines,
            capacity: self.capacity.clone(),
            no_overbook: self.no_overbook,
            speeds: self.speeds.clone(),
            bandwidth: self.bandwidth,
        }
    }

    pub fn spec(&self) -> Result<ClusterSpec> {
        self.options().spec()
    }
}

/// Jobs to draw workloads from: every DAG of every file, in order.
pub fn load_job_dags(paths: &[PathBuf], input: &InputArgs) -> Result<Vec<Dag>> {
    let opts = input.load_options();
    let mut dags = Vec::new();
    for p in paths {
        dags.extend(formats::load_dags(p, &opts)?);
    }
    Ok(dags)
}

/// The cluster resolved for workload traces (their fixed resource list); errors name the
/// cluster file.
pub fn trace_cluster(args: &ClusterArgs) -> Result<Cluster> {
    args.options().trace_cluster()
}

/// The cluster for a DAG file: a task-graph/network file brings its own nodes unless flags
/// describe the cluster (`--speeds` and `--bandwidth` still apply).
pub fn spec_for_file(args: &ClusterArgs, input: &InputArgs, path: &Path) -> Result<ClusterSpec> {
    args.options().spec_for(&Source::Path(path.to_path_buf()), input.format)
}

/// Resolves the cluster for one DAG and checks that every task fits some machine. Errors name
/// the cluster file (bad capacities) or the DAG file (a task too big for every machine).
pub fn cluster_for(spec: &ClusterSpec, dag: &Dag, cluster_file: Option<&Path>, dag_file: &Path) -> Result<Cluster> {
    let opts =
        ClusterOptions { file: cluster_file.map(|p| Source::Path(p.to_path_buf())), ..ClusterOptions::default() };
    opts.cluster_for(spec, dag, &Source::Path(dag_file.to_path_buf()))
}

#[derive(Args, Debug, Clone)]
pub struct InputArgs {
    /// Input format (detected from the file's content, or a Spark log's name, when absent).
    #[arg(long, value_parser = choice::<Format>())]
    pub format: Option<Format>,
    /// TPC-H query (1-22) to read from a Decima TPC-H file.
    #[arg(long, value_name = "N")]
    pub query: Option<u32>,
    /// Spark event log: the job to read (every job that succeeded when absent).
    #[arg(long, value_name = "ID")]
    pub job: Option<u64>,
    /// TPC-H: executor count whose measured task durations are used.
    #[arg(long, value_name = "E", default_value_t = 20)]
    pub executors: u32,
    /// Fill resource demands from a profile: none, mixed, cpu-mem, uniform, single (see README; the
    /// default for formats without demands).
    #[arg(long, value_name = "PROFILE")]
    pub demands: Option<String>,
    /// Seed for every random choice (demand profiles, the random baseline).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

impl InputArgs {
    pub fn load_options(&self) -> LoadOptions {
        LoadOptions {
            format: self.format,
            query: self.query,
            executors: self.executors,
            demands: self.demands.clone(),
            seed: self.seed,
            job: self.job,
            dag: None,
        }
    }
}

/// `--dag`: which DAG of a Tez history to read.
#[derive(Args, Debug, Clone, Default)]
pub struct DagPickArgs {
    /// Tez history: the DAG to read, by name, Tez DAG id (dag_...) or number N (the N-th DAG
    /// submitted, from 1); every DAG that succeeded when absent.
    #[arg(long = "dag", id = "tez_dag", value_name = "NAME|ID|N")]
    pub dag: Option<String>,
}

impl InputArgs {
    /// [`InputArgs::load_options`] with the Tez DAG picked by `--dag`.
    pub fn load_options_picking(&self, pick: &DagPickArgs) -> LoadOptions {
        LoadOptions { dag: pick.dag.clone(), ..self.load_options() }
    }
}

#[derive(Args, Debug, Clone)]
pub struct SearchArgs {
    /// Step of Graphene's LongScore / FragScore threshold grids.
    #[arg(long, value_name = "STEP", default_value_t = 0.1)]
    pub grid_step: f64,
    /// Prune candidate troublesome sets holding more than this fraction of the tasks.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.75)]
    pub max_trouble: f64,
    /// Do not split DAGs at cuts.
    #[arg(long)]
    pub no_cuts: bool,
    /// Placement keys tried for every candidate troublesome set: longest (the paper's rule),
    /// path-length, mixed (both at once), or several (the most compact schedule wins).
    #[arg(long, value_parser = choice::<graphene::offline::PlacementKey>(), value_delimiter = ',', default_value = "longest,path-length")]
    pub placement: Vec<graphene::offline::PlacementKey>,
    /// graphene: also try candidate troublesome sets made of tasks that cannot share a machine
    /// (over half a machine in some resource); off keeps the paper's LongScore / FragScore sets.
    #[arg(long, value_name = "on|off", default_value = on_off(graphene::offline::DEFAULT_PAIRING), value_parser = parse_on_off, action = clap::ArgAction::Set)]
    pub pairing: bool,
    /// graphene: re-compact every candidate plan forward (each task as early as its parents and
    /// its machine allow, in start order; never longer); off keeps the paper's placement.
    #[arg(long, value_name = "on|off", default_value = on_off(graphene::offline::DEFAULT_COMPACT), value_parser = parse_on_off, action = clap::ArgAction::Set)]
    pub compact: bool,
    /// graphene: tasks the constructor may place over all its candidate plans of one part
    /// (each candidate troublesome set under each placement key; the empty set under every key
    /// always), or all for the paper's exhaustive search. A work budget, so the result is the
    /// same on every machine; the default keeps the search exhaustive on DAGs of up to about
    /// 10,000 tasks and narrows it above. search.parts[].skipped_by_budget says what it left out.
    #[arg(long, value_name = "N|all", default_value = "200000", value_parser = parse_search_work)]
    pub search_work: u64,
    /// graphene: place a large troublesome set (6 tasks or more) by the construction itself, one
    /// level deep: its longest tasks first as an inner T, then the rest of T in a dead-end-free
    /// order (the paper's future work); the plain placement is kept when it is as compact.
    #[arg(long, value_name = "on|off", default_value = on_off(graphene::offline::DEFAULT_RECURSE), value_parser = parse_on_off, action = clap::ArgAction::Set)]
    pub recurse: bool,
    /// Worker threads for the candidate search [default: all cores].
    #[arg(long, value_name = "K")]
    pub threads: Option<usize>,
    /// graphene: task placements the improver may spend after the constructor (iterated greedy
    /// over the precedence order; never worse; 0 turns it off), or auto: 50,000,000 / tasks,
    /// between 50,000 and 500,000. A work budget, not a time, so the result is the same on
    /// every machine.
    #[arg(long, value_name = "N|auto", default_value = "auto", value_parser = parse_improve)]
    pub improve: u64,
    /// graphene: seed of the improver's moves.
    #[arg(long, value_name = "SEED", default_value_t = 0)]
    pub improve_seed: u64,
    /// graphene: after the improver, search for a provably optimal schedule by branch and bound
    /// (DAGs of at most 200 tasks); the schedule is never worse, and search.exact says whether
    /// optimality was proven, the lower bound and the gap. Bounded by --exact-nodes and
    /// --time-limit.
    #[arg(long)]
    pub exact: bool,
    /// graphene --exact: most search nodes (partial schedules) to visit; a work budget, so the
    /// result is the same on every machine unless --time-limit stops it first.
    #[arg(long, value_name = "N", default_value_t = graphene::offline::DEFAULT_EXACT_NODES)]
    pub exact_nodes: u64,
}

const fn on_off(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

fn parse_on_off(s: &str) -> std::result::Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("'{s}': expected on or off")),
    }
}

fn parse_search_work(s: &str) -> std::result::Result<u64, String> {
    if s == "all" {
        return Ok(u64::MAX);
    }
    s.parse::<u64>().map_err(|_| format!("'{s}' is neither a number of task placements nor all"))
}

fn parse_improve(s: &str) -> std::result::Result<u64, String> {
    if s == "auto" {
        return Ok(graphene::offline::AUTO_IMPROVE);
    }
    s.parse::<u64>().map_err(|_| format!("'{s}' is neither a number of task placements nor auto"))
}

impl SearchArgs {
    /// The flags as the library's [`graphene::request::SearchOptions`], which checks them (one
    /// set of rules for the CLI, the service and the Python package).
    fn options(&self) -> graphene::request::SearchOptions {
        graphene::request::SearchOptions {
            grid_step: self.grid_step,
            max_trouble: self.max_trouble,
            no_cuts: self.no_cuts,
            placement: self.placement.clone(),
            pairing: self.pairing,
            compact: self.compact,
            search_work: self.search_work,
            recurse: self.recurse,
            threads: self.threads,
            improve: self.improve,
            improve_seed: self.improve_seed,
            exact: self.exact,
            exact_nodes: self.exact_nodes,
            // build-schedule sets its deadline itself (the flag is not a search flag elsewhere).
            time_limit: None,
        }
    }

    pub fn config(&self) -> Result<OfflineConfig> {
        self.options().config()
    }

    /// Runs `f` inside a thread pool of the requested size.
    pub fn in_pool<T: Send>(&self, f: impl FnOnce() -> T + Send) -> Result<T> {
        self.options().in_pool(f)
    }
}

pub fn parse_scheduler(name: &str) -> Result<graphene::Scheduler> {
    graphene::Scheduler::parse(name).ok_or_else(|| {
        Error::Usage(format!("unknown scheduler '{name}' (known: {})", graphene::Scheduler::known_names().join(", ")))
    })
}

/// How a DAG's resources become YARN container sizes, for `export` and `export-trace` (each adds
/// its own --time-ms, whose meaning differs between the two).
#[derive(Args, Debug, Clone)]
pub struct YarnUnitArgs {
    /// DAG resource counted as YARN vcores (rounded up).
    #[arg(long, value_name = "NAME", default_value = "cpu")]
    pub cpu_resource: String,
    /// DAG resource counted as YARN memory.
    #[arg(long, value_name = "NAME", default_value = "mem")]
    pub mem_resource: String,
    /// Megabytes per unit of the memory resource.
    #[arg(long, value_name = "MB", default_value_t = 1024.0)]
    pub mem_mb: f64,
}

impl YarnUnitArgs {
    /// The export units, with `time_ms` milliseconds per unit of time.
    pub fn units(self, time_ms: f64) -> Units {
        Units { cpu: self.cpu_resource, mem: self.mem_resource, mem_mb: self.mem_mb, time_ms }
    }
}
