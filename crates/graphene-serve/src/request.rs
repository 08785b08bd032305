//! Request bodies: a DAG alone, or an envelope `{"dag": ..., "cluster": ..., "schedule": ...,
//! options}`; options may also come from the query string (the envelope wins).
//!
//! The DAG and cluster are read as if they were the files `dag.json` and `cluster.json` given to
//! the CLI, so an error names them the way the CLI would and positions count from their own
//! first character: a client sees exactly the message `graphene build-schedule dag.json` prints.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;

use graphene::choice::Choice;
use graphene::error::{Error, Result};
use graphene::formats::{self, schedule_file, Format, LoadOptions};
use graphene::model::{Cluster, ClusterSpec, Dag, Network};
use graphene::request::ClusterOptions;
use graphene::Scheduler;

pub const DAG_FILE: &str = "dag.json";
pub const CLUSTER_FILE: &str = "cluster.json";
pub const SCHEDULE_FILE: &str = "schedule.json";
pub const BODY: &str = "request body";

/// The CLI flags a request may set, under their flag names with `_` for `-`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    pub scheduler: Option<String>,
    pub seed: Option<u64>,
    pub machines: Option<usize>,
    pub capacity: Option<String>,
    pub no_overbook: Option<bool>,
    pub no_timing: Option<bool>,
    pub format: Option<String>,
    pub query: Option<u32>,
    pub executors: Option<u32>,
    pub demands: Option<String>,
    /// `--improve`: task placements for the improver (0: the constructor alone).
    pub improve: Option<u64>,
    /// `--exact`: the branch and bound after the improver (bounded by `exact_nodes` and the
    /// service's timeout).
    pub exact: Option<bool>,
    /// `--exact-nodes`.
    pub exact_nodes: Option<u64>,
    /// `--job`: one job of a Spark event log.
    pub job: Option<u64>,
    /// `--dag`: one DAG of a Tez history (its name, id or index); not `dag`, which in an
    /// envelope is the DAG itself.
    pub tez_dag: Option<String>,
    /// The name of a DAG whose file carries none (STG, a DOT graph without an id, a Spark log):
    /// the CLI takes it from the file name, a body has none, so it is `dag` unless given.
    pub name: Option<String>,
}

impl Options {
    /// `self`'s fields where set, else `under`'s.
    fn over(self, under: Options) -> Options {
        Options {
            scheduler: self.scheduler.or(under.scheduler),
            seed: self.seed.or(under.seed),
            machines: self.machines.or(under.machines),
            capacity: self.capacity.or(under.capacity),
            no_overbook: self.no_overbook.or(under.no_overbook),
            no_timing: self.no_timing.or(under.no_timing),
            format: self.format.or(under.format),
            query: self.query.or(under.query),
            executors: self.executors.or(under.executors),
            demands: self.demands.or(under.demands),
            improve: self.improve.or(under.improve),
            exact: self.exact.or(under.exact),
            exact_nodes: self.exact_nodes.or(under.exact_nodes),
            job: self.job.or(under.job),
            tez_dag: self.tez_dag.or(under.tez_dag),
            name: self.name.or(under.name),
        }
    }

    fn load_options(&self) -> Result<LoadOptions> {
        let format = match &self.format {
            None => None,
            Some(f) => Some(<Format as Choice>::from_name(f).ok_or_else(|| {
                Error::Usage(format!("invalid value '{f}' for format (known: {})", Format::names().join(", ")))
            })?),
        };
        Ok(LoadOptions {
            format,
            query: self.query,
            executors: self.executors.unwrap_or(20),
            demands: self.demands.clone(),
            seed: self.seed.unwrap_or(0),
            job: self.job,
            dag: self.tez_dag.clone(),
        })
    }

    /// The name for a DAG whose file carries none: `name`, at most 256 bytes and without control
    /// characters (it is echoed in every answer), else `dag`.
    fn dag_name(&self) -> Result<&str> {
        match self.name.as_deref() {
            None => Ok("dag"),
            Some(n) if n.is_empty() || n.len() > 256 || n.chars().any(char::is_control) => {
                Err(Error::field(BODY, "name: a DAG's name is 1 to 256 bytes without control characters".to_string()))
            }
            Some(n) => Ok(n),
        }
    }

    pub fn scheduler(&self) -> Result<Scheduler> {
        let name = self.scheduler.as_deref().unwrap_or("graphene");
        Scheduler::parse(name).ok_or_else(|| {
            Error::Usage(format!("unknown scheduler '{name}' (known: {})", Scheduler::known_names().join(", ")))
        })
    }

    pub fn seed(&self) -> u64 {
        self.seed.unwrap_or(0)
    }

    pub fn no_timing(&self) -> bool {
        self.no_timing.unwrap_or(false)
    }
}

/// A parsed request: the DAG, its cluster, the options and, for `/v1/validate`, a schedule.
pub struct Job {
    pub dag: Dag,
    pub cluster: Cluster,
    /// Machine speeds and bandwidth (trivial unless the cluster or DAG file gives them).
    pub net: Network,
    /// The DAG came as a task-graph/network file (planned on the network by every scheduler).
    pub network_file: bool,
    pub options: Options,
    pub schedule: Option<schedule_file::ScheduleFile>,
}

/// What a request is for; it decides which parts are required and the order of the checks (the
/// order of the matching CLI command, so that the first problem reported is the same).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    Schedule,
    LowerBound,
    Validate,
}

pub fn parse(body: &[u8], query: Options, endpoint: Endpoint) -> Result<Job> {
    let want_schedule = endpoint == Endpoint::Validate;
    // A compressed Spark event log (zstd, lz4 or snappy, as Spark writes them) is known by its
    // codec's magic number, decompressed under the input limit and read as the log's text.
    let inflated = formats::spark::open::decompress_bytes(body, graphene::limits::current().input_bytes)
        .map_err(|e| e.in_file(Path::new(DAG_FILE)))?;
    let text = match &inflated {
        Some(text) => text.as_str(),
        None => std::str::from_utf8(body).map_err(|_| {
            Error::field(BODY, "stream did not contain valid UTF-8 (nor starts as a zstd, lz4 or snappy Spark log)")
        })?,
    };
    // Editors on Windows start files with a byte-order mark; the CLI accepts it too.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // A BTreeMap, so that of several bad options the same one is always reported first.
    let envelope: Option<BTreeMap<String, &RawValue>> =
        serde_json::from_str(text).ok().filter(|m: &BTreeMap<String, &RawValue>| m.contains_key("dag"));
    let (dag_text, cluster_text, schedule_text, options) = match envelope {
        Some(mut m) => {
            let Some(dag) = m.remove("dag") else { unreachable!("the filter above keeps envelopes with a dag") };
            let cluster = m.remove("cluster").map(|v| v.get());
            let schedule = m.remove("schedule").map(|v| v.get());
            let mut opts = Options::default();
            for (name, value) in &m {
                opts = option(name, value)?.over(opts);
            }
            (dag.get(), cluster, schedule, opts.over(query))
        }
        None if want_schedule => {
            return Err(Error::field(BODY, "expected an object {\"dag\": ..., \"schedule\": ...}"));
        }
        // Not an envelope: the body is the DAG file itself (also when it is not even JSON, so
        // that the client gets the parser's message for its DAG).
        None => (text, None, None, query),
    };
    if endpoint == Endpoint::Schedule {
        options.scheduler()?;
    }
    if cluster_text.is_some() && (options.machines.is_some() || options.capacity.is_some()) {
        return Err(Error::Usage("a cluster cannot be combined with machines or capacity".into()));
    }
    let load = options.load_options()?;
    let dag = parse_dag(dag_text, options.dag_name()?, &load)?;
    let schedule = match (want_schedule, schedule_text) {
        (false, _) => None,
        (true, None) => return Err(Error::field(BODY, "missing \"schedule\"")),
        (true, Some(s)) => Some(schedule_file::parse(s).map_err(|e| e.in_file(Path::new(SCHEDULE_FILE)))?),
    };
    let in_dag = |e: Error| e.in_file(Path::new(DAG_FILE));
    let network_file = match load.format {
        Some(f) => f == Format::Hetero,
        None => formats::detect(dag_text).map_err(in_dag)? == Format::Hetero,
    };
    let spec = if endpoint == Endpoint::Schedule && network_file && options_leave_cluster(cluster_text, &options) {
        // As build-schedule: a task-graph/network file brings its own machines.
        let (_, mut spec) = formats::hetero::parse(dag_text, "dag").map_err(in_dag)?;
        if options.no_overbook.unwrap_or(false) {
            spec.overbook.clear();
        }
        spec
    } else {
        cluster_spec(cluster_text, &options)?
    };
    let net = spec.network();
    if endpoint == Endpoint::Schedule {
        graphene::api::check_network(options.scheduler()?, &net, &dag)?;
    }
    let cluster = resolve(&spec, &dag, cluster_text.is_some())?;
    Ok(Job { dag, cluster, net, network_file, options, schedule })
}

/// One option of an envelope, as an `Options` with that field alone set. Option values are
/// numbers, strings and booleans, never nested: an array or object is refused, naming the
/// option, by its first character, without reading what it holds (JSON nested 100,000 deep would
/// exceed the JSON reader's recursion limit, and it has nothing to say anyway).
fn option(name: &str, raw: &RawValue) -> Result<Options> {
    use serde_json::{Map, Value};
    let one =
        |value: Value| serde_json::from_value::<Options>(Value::Object(Map::from_iter([(name.to_string(), value)])));
    // An unknown option is reported as such whatever its value.
    one(Value::Null).map_err(|e| Error::field(BODY, e.to_string()))?;
    let text = raw.get().trim_start();
    let value = match text.as_bytes().first() {
        Some(b'[') => Value::Array(Vec::new()),
        Some(b'{') => Value::Object(Map::new()),
        _ => serde_json::from_str(text).map_err(|e| Error::field(BODY, format!("{name}: {e}")))?,
    };
    one(value).map_err(|e| {
        let nested =
            if text.starts_with(['[', '{']) { " (options are numbers, strings or booleans, never nested)" } else { "" };
        Error::field(BODY, format!("{name}: {e}{nested}"))
    })
}

fn options_leave_cluster(cluster_text: Option<&str>, o: &Options) -> bool {
    cluster_text.is_none() && o.machines.is_none() && o.capacity.is_none()
}

/// As `formats::load_dag` reads `dag.json`.
fn parse_dag(text: &str, name: &str, opts: &LoadOptions) -> Result<Dag> {
    if let Some(p) = &opts.demands {
        formats::profile::Profile::by_name(p)?;
    }
    let mut dags = formats::parse_dags(text, name, opts).map_err(|e| e.in_file(Path::new(DAG_FILE)))?;
    if dags.len() != 1 {
        return Err(Error::Usage(format!("{DAG_FILE}: holds {} DAGs; pick one with --query N", dags.len())));
    }
    Ok(dags.remove(0))
}

/// As the CLI's cluster flags: a cluster file, or `machines` x `capacity` (10 default machines),
/// checked by the library's rules for the flags (the machine count against `--limit-machines`
/// before anything is allocated), so that the messages are the CLI's.
fn cluster_spec(text: Option<&str>, o: &Options) -> Result<ClusterSpec> {
    let flags = ClusterOptions {
        file: None,
        machines: o.machines,
        capacity: o.capacity.clone(),
        no_overbook: o.no_overbook.unwrap_or(false),
        speeds: None,
        bandwidth: None,
    };
    match text {
        Some(t) => {
            let mut spec = formats::cluster::parse(t).map_err(|e| e.in_file(Path::new(CLUSTER_FILE)))?;
            if flags.no_overbook {
                spec.overbook.clear();
            }
            Ok(spec)
        }
        None => flags.spec(),
    }
}

fn resolve(spec: &ClusterSpec, dag: &Dag, from_file: bool) -> Result<Cluster> {
    let cluster =
        spec.resolve(&dag.resources).map_err(|e| if from_file { e.in_file(Path::new(CLUSTER_FILE)) } else { e })?;
    cluster.check_fits(dag).map_err(|e| e.in_file(Path::new(DAG_FILE)))?;
    Ok(cluster)
}
