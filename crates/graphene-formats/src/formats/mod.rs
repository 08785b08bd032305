//! Readers and writers for files: DAGs (native, WfCommons, Decima TPC-H, Spark event logs),
//! clusters, schedules.
//!
//! Every reader returns errors that name the file and then the line and column, or the field.

pub mod cluster;
pub mod dax;
pub mod dot;
mod dot_syntax;
pub mod hetero;
pub mod native;
pub mod profile;
pub mod schedule_file;
pub mod spark;
pub mod stg;
pub(crate) mod task_graph;
pub mod tez;
pub mod tpch;
pub mod waves;
pub mod wfcommons;

#[cfg(test)]
pub(crate) mod test_support {
    /// A file of the shared data set that CI keeps beside the repository, or None (with a note
    /// on stderr) when the data set is not there: such tests skip rather than fail, unless
    /// `GRAPHENE_REQUIRE_SHARED` is set (CI sets it, so that a lost data set is an error).
    pub fn shared(rel: &str) -> Option<String> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data").join(rel);
        match std::fs::read_to_string(&path) {
            Ok(t) => Some(t),
            Err(e) if std::env::var_os("GRAPHENE_REQUIRE_SHARED").is_some() => {
                panic!("cannot read {} ({e}); GRAPHENE_REQUIRE_SHARED is set", path.display())
            }
            Err(e) => {
                eprintln!(
                    "skipped: cannot read {} ({e}); this test needs ../shared/data beside the checkout",
                    path.display()
                );
                None
            }
        }
    }

    /// `shared(rel)`, or return from the test (skip) when the data set is missing.
    macro_rules! shared_or_skip {
        ($rel:expr) => {
            match $crate::formats::test_support::shared($rel) {
                Some(text) => text,
                None => return,
            }
        };
    }
    pub(crate) use shared_or_skip;
}

use std::path::Path;
use std::sync::RwLock;

use crate::error::{Error, Result};
use crate::model::Dag;

static NOTE_PRINTER: RwLock<Option<fn(&str)>> = RwLock::new(None);

/// Where notes go: what a reader left out or dropped when the call returns only what it read
/// (the DAGs of a Spark log: its failed jobs, an in-progress log's cut-short last line). The CLI
/// prints them on stderr; without a printer (the service, Python) they are not shown.
pub fn set_note_printer(printer: Option<fn(&str)>) {
    *NOTE_PRINTER.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = printer;
}

pub(crate) fn note(text: &str) {
    if let Some(print) = *NOTE_PRINTER.read().unwrap_or_else(|poisoned| poisoned.into_inner()) {
        print(text);
    }
}

crate::named_enum! {
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Format {
        /// graphene's own `dag.json`.
        Native = "native",
        /// WfCommons WfFormat JSON (schema 1.4 to 1.6).
        Wfcommons = "wfcommons",
        /// Decima's TPC-H JSON (one file per input size, 22 queries).
        Tpch = "tpch",
        /// Task graph and network (`tasks`, `edges`, `nodes`, `links`) of the heterogeneous
        /// reference instances; the network is the cluster unless one is given.
        Hetero = "hetero",
        /// Kasahara's Standard Task Graph text format (one processor per task).
        Stg = "stg",
        /// Pegasus DAX XML (DAX 2 and 3): jobs, files and child/parent dependencies.
        Dax = "dax",
        /// Graphviz DOT digraph with dslab-dag's task attributes (size or runtime, cores, memory).
        Dot = "dot",
        /// A Spark event log: a JSON-lines file (plain or compressed with zstd, lz4 or snappy) or a
        /// rolling-log directory; each job that succeeded is a DAG.
        Spark = "spark",
        /// Apache Tez history (SimpleHistoryLoggingService's `history.txt.*` files, or a
        /// directory of them); each DAG that succeeded is a DAG.
        Tez = "tez",
    }
}

/// How to read DAG files: format detection, which TPC-H query and duration samples, and which
/// demand profile fills in missing resource demands.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    pub format: Option<Format>,
    /// TPC-H query number (1-22); all queries when None.
    pub query: Option<u32>,
    /// TPC-H executor count whose duration samples are used.
    pub executors: u32,
    /// Demand profile name; None keeps the file's demands (the default profile applies to
    /// formats that carry no demands).
    pub demands: Option<String>,
    pub seed: u64,
    /// Spark event logs: the job to read (all jobs that succeeded when None).
    pub job: Option<u64>,
    /// Tez history: the DAG to read, by name, Tez DAG id or number from 1 (all DAGs that
    /// succeeded when None).
    pub dag: Option<String>,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions { format: None, query: None, executors: 20, demands: None, seed: 0, job: None, dag: None }
    }
}

/// Reads a whole input file as UTF-8, refusing one larger than `--max-input` before reading it
/// (and, for special files such as `/dev/zero` whose size is unknown, as soon as the limit is
/// passed). A UTF-8 byte-order mark is dropped: editors on Windows write one.
pub fn read_text(path: &Path) -> Result<String> {
    decode_text(read_bytes(path)?).map_err(|e| e.in_file(path))
}

/// A file's bytes, refused (naming the file) when it is a directory or larger than
/// `--limit-input`: by its size before anything is read, and by what was read (a file that
/// grows while read, or reports no size, stops one byte past the limit).
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let limits = crate::limits::current();
    let fail = |e: Error| e.in_file(path);
    let file = std::fs::File::open(path).map_err(|e| fail(Error::Io(e)))?;
    if let Ok(meta) = file.metadata() {
        if meta.is_dir() {
            return Err(fail(Error::Usage("is a directory, not a file".into())));
        }
        limits.check_input_bytes(meta.len(), "file size").map_err(fail)?;
    }
    let mut bytes = Vec::new();
    file.take(limits.input_bytes.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| fail(Error::Io(e)))?;
    limits.check_input_bytes(bytes.len() as u64, "file size").map_err(fail)?;
    Ok(bytes)
}

/// An input's bytes as text, as files are read: UTF-8 or an error giving the offset of the
/// first invalid byte; a UTF-8 byte-order mark is dropped.
pub fn decode_text(bytes: Vec<u8>) -> Result<String> {
    let mut text = String::from_utf8(bytes).map_err(|e| {
        Error::Usage(format!("not UTF-8 text (invalid byte at offset {})", e.utf8_error().valid_up_to()))
    })?;
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

pub(crate) fn stem(path: &Path) -> String {
    path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "dag".into())
}

/// Guesses the format from the top-level keys (or, for JSON lines, the first line's event).
pub fn detect(text: &str) -> Result<Format> {
    if tez::looks_like_tez_text(text) {
        return Ok(Format::Tez);
    }
    if spark::looks_like_spark_text(text) {
        return Ok(Format::Spark);
    }
    if dax::looks_like(text) {
        return Ok(Format::Dax);
    }
    if dot::looks_like(text) {
        return Ok(Format::Dot);
    }
    if stg::looks_like(text) {
        return Ok(Format::Stg);
    }
    // Only the top-level keys matter: read them and skip every value, rather than build the
    // whole document (a DAG file is parsed again by its reader; for a 100,000-stage DAG building
    // it here cost as much as the read).
    if !text.trim_start().starts_with('{') {
        // Not an object: its syntax error if it has one (as a document: nesting deeper than
        // serde_json's limit is such an error), else that it is not an object.
        serde_json::from_str::<serde_json::Value>(text).map_err(|e| Error::from_json(&e))?;
        return Err(Error::field("(top level)", "expected a JSON object"));
    }
    let obj: std::collections::HashMap<String, serde::de::IgnoredAny> =
        serde_json::from_str(text).map_err(|e| Error::from_json(&e))?;
    if obj.contains_key("stages") {
        Ok(Format::Native)
    } else if obj.contains_key("workflow") || obj.contains_key("schemaVersion") {
        Ok(Format::Wfcommons)
    } else if obj.contains_key("queries") {
        Ok(Format::Tpch)
    } else if obj.contains_key("tasks") && obj.contains_key("nodes") {
        Ok(Format::Hetero)
    } else {
        Err(Error::field(
            "(top level)",
            "cannot tell the format: expected \"stages\" (graphene), \"workflow\" (WfCommons), \"queries\" (Decima TPC-H) or \"tasks\" and \"nodes\" (task graph and network), Spark event-log lines, Tez history records, a DAX <adag>, a DOT digraph or an STG task count; use --format",
        ))
    }
}

/// Whether `path` is a task-graph/network file (which describes its own cluster).
pub fn is_network_file(path: &Path, format: Option<Format>) -> Result<bool> {
    Ok(match format {
        Some(f) => f == Format::Hetero,
        None if spark::looks_like_spark(path) || tez::looks_like_tez(path) => false,
        None => {
            let text = read_text(path)?;
            detect(&text).map_err(|e| e.in_file(path))? == Format::Hetero
        }
    })
}

/// Every DAG in a file (TPC-H files hold one per query unless `opts.query` picks one).
pub fn load_dags(path: &Path, opts: &LoadOptions) -> Result<Vec<Dag>> {
    load_dags_detected(path, opts).map(|(_, dags)| dags)
}

/// As [`load_dags`], with the format the file was read in.
pub fn load_dags_detected(path: &Path, opts: &LoadOptions) -> Result<(Format, Vec<Dag>)> {
    // A bad profile name is the flag's fault, not the file's: report it before reading.
    if let Some(p) = &opts.demands {
        profile::Profile::by_name(p)?;
    }
    let spark_dags = |app: spark::SparkApp| {
        if app.report.says_more_than_jobs_read() {
            note(&format!("{}: {}", path.display(), app.report));
        }
        let dags = app.dags(opts.job).map_err(|e| e.in_file(path))?;
        apply_profile(dags, Format::Spark, opts)
    };
    let tez_dags = |h: tez::TezHistory| {
        if h.report.says_more_than_dags_read() {
            note(&format!("{}: {}", path.display(), h.report));
        }
        let dags = h.dags(opts.dag.as_deref()).map_err(|e| e.in_file(path))?;
        apply_profile(dags, Format::Tez, opts)
    };
    if opts.format == Some(Format::Tez) || (opts.format.is_none() && tez::looks_like_tez(path)) {
        return Ok((Format::Tez, tez_dags(tez::read(path)?)?));
    }
    if opts.format == Some(Format::Spark) || (opts.format.is_none() && spark::looks_like_spark(path)) {
        return Ok((Format::Spark, spark_dags(spark::read(path)?)?));
    }
    let text = read_text(path)?;
    if opts.format.is_none() && spark::looks_like_spark_text(&text) {
        // A plain log known by its content: read as a file (its name says whether it is still
        // being written), not as text.
        return Ok((Format::Spark, spark_dags(spark::read_plain(path, text)?)?));
    }
    if opts.format.is_none() && tez::looks_like_tez_text(&text) {
        let h = tez::parse(&text, &path.display().to_string()).map_err(|e| e.in_file(path))?;
        return Ok((Format::Tez, tez_dags(h)?));
    }
    parse_dags_detected(&text, &stem(path), opts).map_err(|e| e.in_file(path))
}

/// Exactly one DAG from a file.
pub fn load_dag(path: &Path, opts: &LoadOptions) -> Result<Dag> {
    let (format, dags) = load_dags_detected(path, opts)?;
    one_of(&path.display().to_string(), format, dags)
}

/// The one DAG of `dags`, read from `what` in `format`; when there are several, an error that
/// names a few and the flag that picks one (`--job` for Spark logs, `--query` otherwise).
pub fn one_of(what: &str, format: Format, mut dags: Vec<Dag>) -> Result<Dag> {
    if dags.len() == 1 {
        return Ok(dags.remove(0));
    }
    let pick = match format {
        Format::Spark => "--job ID (the number after -job in each name)",
        Format::Tez => "--dag NAME|ID|N",
        _ => "--query N",
    };
    let names: Vec<&str> = dags.iter().take(5).map(|d| d.name.as_str()).collect();
    let more = if dags.len() > 5 { ", ..." } else { "" };
    Err(Error::Usage(format!("{what}: holds {} DAGs ({}{more}); pick one with {pick}", dags.len(), names.join(", "))))
}

pub fn parse_dags(text: &str, name: &str, opts: &LoadOptions) -> Result<Vec<Dag>> {
    parse_dags_detected(text, name, opts).map(|(_, dags)| dags)
}

/// As [`parse_dags`], with the format the text was read in.
pub fn parse_dags_detected(text: &str, name: &str, opts: &LoadOptions) -> Result<(Format, Vec<Dag>)> {
    let format = match opts.format {
        Some(f) => f,
        None => detect(text)?,
    };
    let dags = match format {
        Format::Native => vec![native::parse(text, name)?],
        Format::Wfcommons => vec![wfcommons::parse(text, name)?],
        Format::Tpch => tpch::parse(text, name, opts.query, opts.executors)?,
        Format::Hetero => vec![hetero::parse(text, name)?.0],
        Format::Spark => spark::parse(text, name)?.dags(opts.job)?,
        Format::Stg => vec![stg::parse(text, name)?],
        Format::Dax => vec![dax::parse(text, name)?],
        Format::Dot => vec![dot::parse(text, name)?],
        Format::Tez => tez::parse(text, name)?.dags(opts.dag.as_deref())?,
    };
    Ok((format, apply_profile(dags, format, opts)?))
}

/// Fills demands from `--demands`, or from the format's default profile when it has none.
fn apply_profile(dags: Vec<Dag>, format: Format, opts: &LoadOptions) -> Result<Vec<Dag>> {
    let profile = match (&opts.demands, format) {
        (Some(p), _) => Some(profile::Profile::by_name(p)?),
        (
            None,
            Format::Native | Format::Hetero | Format::Spark | Format::Stg | Format::Dax | Format::Dot | Format::Tez,
        ) => None,
        (None, _) => Some(profile::Profile::default_for(format)),
    };
    Ok(match profile {
        Some(p) => dags.iter().map(|d| p.apply(d, opts.seed)).collect(),
        None => dags,
    })
}

#[cfg(test)]
mod deadline_tests {
    use std::time::Duration;

    use super::{parse_dags, Format, LoadOptions};
    use crate::deadline::{scope, total_polls, Deadline};
    use crate::error::Error;

    /// Every reader the service runs polls the ambient deadline per element, and an expired
    /// deadline stops the reading. Building the DAG polls twice per stage; the readers poll per
    /// stage, task, node, edge or element on top (the minimum counts below, for 1,000 of each).
    #[test]
    fn every_reader_polls_the_scope() {
        let n = 1000;
        let list = |f: &dyn Fn(usize) -> String, sep: &str| (0..n).map(f).collect::<Vec<_>>().join(sep);
        let native = format!(
            r#"{{"resources": ["cpu"], "stages": [{}]}}"#,
            list(
                &|i| format!(
                    r#"{{"id": "s{i}", "tasks": 1, "duration": 1, "parents": [{}]}}"#,
                    if i > 0 { format!(r#""s{}""#, i - 1) } else { String::new() }
                ),
                ", "
            )
        );
        let wfcommons = format!(
            r#"{{"name": "w", "schemaVersion": "1.4", "workflow": {{"tasks": [{}]}}}}"#,
            list(
                &|i| format!(
                    r#"{{"name": "t{i}", "id": "t{i}", "category": "c", "type": "compute", "parents": [], "files": [], "runtimeInSeconds": 1, "cores": 1}}"#
                ),
                ", "
            )
        );
        let dax = format!(
            r#"<adag name="d">{}</adag>"#,
            list(&|i| format!(r#"<job id="j{i}" name="x" runtime="1"/>"#), "\n")
        );
        let dot = format!("digraph d {{\n{}\n}}", list(&|i| format!("n{i} [runtime=1]"), "\n"));
        let stg = format!("{n}\n0 0 0\n{}\n{} 0 1 {n}\n", list(&|i| format!("{} 1 1 {i}", i + 1), "\n"), n + 1);
        let hetero = format!(
            r#"{{"tasks": [{}], "nodes": [{{"id": "m0"}}], "links": 1}}"#,
            list(&|i| format!(r#"{{"id": "t{i}", "cost": 1}}"#), ", ")
        );
        for (format, per_element, text) in [
            (Format::Native, 3, native),
            (Format::Wfcommons, 3, wfcommons),
            (Format::Dax, 4, dax),
            (Format::Dot, 4, dot),
            (Format::Stg, 4, stg),
            (Format::Hetero, 3, hetero),
        ] {
            let opts = LoadOptions { format: Some(format), ..LoadOptions::default() };
            let before = total_polls();
            let dags = scope(&Deadline::after(Duration::from_secs(3600)), || parse_dags(&text, "x", &opts))
                .unwrap_or_else(|e| panic!("{format:?}: {e}"));
            assert_eq!(dags[0].len(), n, "{format:?}");
            let polls = total_polls() - before;
            assert!(polls >= per_element * n as u64, "{format:?}: {polls} polls for {n} elements");
            let e = scope(&Deadline::after(Duration::ZERO), || parse_dags(&text, "x", &opts)).unwrap_err();
            assert!(matches!(e, Error::TimedOut { .. }), "{format:?}: {e}");
            // Outside a scope nothing stops it.
            assert_eq!(parse_dags(&text, "x", &opts).unwrap()[0].len(), n);
        }
    }
}
