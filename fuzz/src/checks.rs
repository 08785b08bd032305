//! One check per fuzz target: feed the bytes to a reader and assert what must hold of whatever it
//! accepts, beyond "no panic". Shared by the cargo-fuzz targets (fuzz/fuzz_targets/) and by the
//! stable integration test that replays the seed corpora, every kept crash and every input that
//! must be refused (crates/graphene-cli/tests/integration/fuzz.rs includes this file), so a
//! regression input runs through exactly the checks that found it.
//!
//! Properties, per reader:
//! * every DAG that parses is well formed: tasks numbered stage by stage, stages in topological
//!   order (every parent stage before its child, so task ids are a topological order), parent and
//!   child edge lists mirror each other, one-to-one edges join equal stages, names resolve back,
//!   durations and demands finite and >= 0 (durations at most `limits::MAX_SECONDS`), sizes within
//!   the limits in force; and it round-trips through graphene's own DAG JSON unchanged;
//! * a DAX, DOT or STG graph that parses is one task per stage with the demands its format gives,
//!   and written back in its own format (`writers.rs`) it reads as the same graph;
//! * a Spark event log reads the same plain, in each codec's framing (lz4-java blocks, snappy-java
//!   chunks, zstd frames) and split into a rolling-log directory; a byte changed in a checksummed
//!   stream (lz4, zstd) is refused or changes nothing; an `.inprogress` log drops its cut-short
//!   last line; a part of another application in a rolling directory is refused or ignored;
//! * a `--waves` sidecar that binds to a fixed trace gives a model of finite samples that
//!   re-serializes to itself, and a replay under it realizes only durations the rules allow,
//!   the same on a second run;
//! * a cluster that parses resolves (or refuses with an error) and never exceeds the machine limit;
//! * a schedule file that parses goes through the validator against a fixed DAG without panicking,
//!   and the validator is consistent with `check_tasks` on bad machines and times;
//! * a trace that reads (native CSV or Alibaba) holds well-formed job DAGs in arrival order within
//!   the limits, and what `native_csv::write` writes reads back equal;
//! * a request body the service accepts yields a DAG as above and a cluster that fits it; one it
//!   refuses maps to 400/413/422, never 500; accepted lower-bound and validate requests (and
//!   schedule requests on small DAGs) are answered with JSON; an option value the service
//!   accepts is the value it uses.
//!
//! No reader may answer with an "internal error".

use std::path::{Path, PathBuf};

use graphene::error::Error;
use graphene::formats::spark::{self, SparkApp};
use graphene::formats::{self, cluster, hetero, native, schedule_file, tpch, wfcommons, LoadOptions};
use graphene::limits;
use graphene::model::EdgeKind;
use graphene::model::{ClusterSpec, Dag, Workload};
use graphene::trace::{alibaba, native_csv};

#[path = "writers.rs"]
pub mod writers;

/// What a check made of its input.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The reader accepted it, and every property held.
    Accepted,
    /// The reader refused it with this message (a message for the user, never an internal
    /// error; in the service a 4xx).
    Refused(String),
    /// Not an input for this target (e.g. not UTF-8 where the reader takes text).
    Skipped,
}

impl Outcome {
    pub fn accepted(&self) -> bool {
        *self == Outcome::Accepted
    }

    fn of<T>(r: &Result<T, Error>) -> Outcome {
        match r {
            Ok(_) => Outcome::Accepted,
            Err(e) => {
                refused(e);
                Outcome::Refused(e.to_string())
            }
        }
    }
}

fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// A refusal must be a message for the user, never the tool's own fault.
/// (Only the error's own kind counts: input text quoted in a message may say anything, e.g. a
/// resource named "internal error", the first thing the fuzzer found.)
fn refused(e: &Error) {
    fn internal(e: &Error) -> bool {
        match e {
            Error::InFile { source, .. } | Error::AtLine { source, .. } => internal(source),
            Error::Usage(m) => m.starts_with("internal error"),
            _ => false,
        }
    }
    assert!(!internal(e), "a reader reported an internal error: {e}");
    assert!(!e.to_string().is_empty(), "an error without a message: {e:?}");
}

/// Every structural invariant of a DAG the rest of the library relies on.
pub fn check_dag(dag: &Dag) {
    let lim = limits::current();
    assert!(!dag.resources.is_empty() && dag.dims() <= graphene::model::MAX_RESOURCES);
    assert!(dag.len() as u64 <= lim.tasks, "{} tasks over the limit {}", dag.len(), lim.tasks);
    assert!(dag.stages.len() as u64 <= lim.stages);
    assert!(!dag.is_empty(), "an accepted DAG has tasks");
    let mut next = 0u32;
    for (s, st) in dag.stages.iter().enumerate() {
        let sid = s as u32;
        assert_eq!(st.first, next, "stage {s} ('{}') does not start where the previous ended", st.name);
        next = next.checked_add(st.len).expect("task ids fit in u32");
        assert!((st.group as usize) < dag.groups.len());
        assert_eq!(dag.stage_by_name(&st.name), Some(sid), "stage name '{}' does not resolve", st.name);
        for t in st.tasks() {
            let task = &dag.tasks[t as usize];
            assert_eq!(task.stage, sid);
            assert_eq!(task.index, t - st.first);
            assert!(task.duration.is_finite() && task.duration >= 0.0 && task.duration <= limits::MAX_SECONDS);
            for r in 0..graphene::model::MAX_RESOURCES {
                let v = task.demand.0[r];
                assert!(v.is_finite() && v >= 0.0, "demand {v}");
                if r >= dag.dims() {
                    assert_eq!(v, 0.0, "a demand beyond the DAG's resources");
                }
            }
        }
        if st.len > 0 {
            for t in [st.first, st.first + st.len - 1] {
                assert_eq!(
                    dag.task_by_name(&dag.task_name(t)),
                    Some(t),
                    "task name {} does not resolve",
                    dag.task_name(t)
                );
                dag.for_each_parent(t, |p| assert!(p < t, "parent {p} of task {t} is not before it"));
                dag.for_each_child(t, |c| assert!(c > t, "child {c} of task {t} is not after it"));
            }
        }
        let mut seen = std::collections::HashSet::new();
        for e in &st.parents {
            assert!(e.stage < sid, "parent stage {} of stage {s} is not before it", e.stage);
            assert!(seen.insert(e.stage), "parent stage listed twice");
            let p = &dag.stages[e.stage as usize];
            assert!(p.children.iter().any(|c| c.stage == sid && c.kind == e.kind), "edge lists do not mirror");
            if e.kind == EdgeKind::OneToOne {
                assert_eq!(p.len, st.len, "one-to-one edge between stages of different sizes");
            }
            let d = dag.edge_data(e.stage, sid);
            assert!(d.is_finite() && d >= 0.0);
        }
        for c in &st.children {
            assert!(c.stage > sid);
            assert!(dag.stages[c.stage as usize].parents.iter().any(|p| p.stage == sid && p.kind == c.kind));
        }
    }
    assert_eq!(next as usize, dag.len(), "stages do not cover the tasks");
}

/// `dag` written as graphene DAG JSON reads back as the same DAG.
pub fn check_native_round_trip(dag: &Dag) {
    let json = serde_json::to_string(&native::to_file(dag)).expect("a DAG serializes");
    let back = native::parse(&json, "x").unwrap_or_else(|e| panic!("written DAG does not read back: {e}\n{json}"));
    assert_same_dag(dag, &back);
}

fn assert_same_dag(a: &Dag, b: &Dag) {
    assert_eq!(a.name, b.name);
    assert_eq!(a.resources, b.resources);
    assert_eq!(a.stages.len(), b.stages.len());
    assert_eq!(a.len(), b.len());
    for (x, y) in a.stages.iter().zip(&b.stages) {
        assert_eq!((&x.name, x.first, x.len), (&y.name, y.first, y.len));
        assert_eq!(x.parents, y.parents, "stage '{}' parents", x.name);
        assert_eq!(a.groups[x.group as usize], b.groups[y.group as usize]);
    }
    for (s, st) in a.stages.iter().enumerate() {
        for e in &st.parents {
            assert_eq!(a.edge_data(e.stage, s as u32), b.edge_data(e.stage, s as u32));
        }
    }
    for (x, y) in a.tasks.iter().zip(&b.tasks) {
        assert_eq!(x.duration, y.duration);
        assert_eq!(x.demand, y.demand);
    }
}

fn accepted_dag(dag: &Dag) {
    check_dag(dag);
    check_native_round_trip(dag);
}

/// Returns whether the reader accepted `data`.
pub fn dag_native(data: &[u8]) -> Outcome {
    let Some(t) = text(data) else { return Outcome::Skipped };
    let r = native::parse(t, "fuzz");
    if let Ok(dag) = &r {
        accepted_dag(dag);
    }
    Outcome::of(&r)
}

pub fn dag_wfcommons(data: &[u8]) -> Outcome {
    let Some(t) = text(data) else { return Outcome::Skipped };
    let r = wfcommons::parse(t, "fuzz");
    if let Ok(dag) = &r {
        accepted_dag(dag);
    }
    let accepted = r.is_ok();
    // As the CLI reads it: with the default demand profile applied; accepted exactly when the
    // bare reader accepts.
    let opts = LoadOptions { format: Some(formats::Format::Wfcommons), ..LoadOptions::default() };
    match formats::parse_dags(t, "fuzz", &opts) {
        Ok(dags) => {
            assert!(accepted, "accepted only with the demand profile");
            dags.iter().for_each(check_dag);
        }
        Err(e) => {
            assert!(!accepted, "refused only with the demand profile: {e}");
            refused(&e);
        }
    }
    Outcome::of(&r)
}

/// STG, DAX and DOT, each as its format is detected from the text.
pub fn dag_task_graph(data: &[u8]) -> Outcome {
    let Some(t) = text(data) else { return Outcome::Skipped };
    let format = match formats::detect(t) {
        Ok(f @ (formats::Format::Stg | formats::Format::Dax | formats::Format::Dot)) => f,
        _ => return Outcome::Skipped,
    };
    let opts = LoadOptions { format: Some(format), ..LoadOptions::default() };
    let r = formats::parse_dags(t, "fuzz", &opts);
    if let Ok(dags) = &r {
        dags.iter().for_each(accepted_dag);
    }
    Outcome::of(&r)
}

/// What one task-graph format makes of a task: one task per stage, `cpu` and `mem` from the
/// file, `disk` only where the format derives it (DAX: the bytes a job moves per second).
fn check_task_graph(dag: &Dag, disk: bool) {
    for st in &dag.stages {
        assert_eq!(st.len, 1, "stage '{}' of a task graph holds {} tasks", st.name, st.len);
        assert!(st.parents.iter().all(|e| e.kind == EdgeKind::AllToAll));
        let d = dag.tasks[st.first as usize].demand;
        assert!(disk || d.0[2] == 0.0, "task '{}' has a disk demand", st.name);
        assert_eq!(d.0[3], 0.0, "task '{}' has a net demand", st.name);
    }
}

/// How two readings of one graph must agree (`diff_dags`).
#[derive(Clone, Copy)]
struct Agree {
    /// Relative tolerance on demands and edge data (0: bit for bit). A writer that scales a
    /// number (GB to MB) and a reader that scales it back may differ in the last bit.
    tolerance: f64,
    /// Compare the disk demand and the edge data (not written by the DAX writer).
    data: bool,
}

fn close(a: f64, b: f64, tolerance: f64) -> bool {
    a == b || (a - b).abs() <= tolerance * a.abs().max(b.abs())
}

/// Where two DAGs differ, comparing stages by name (their order is the builder's and may differ
/// between two files of one graph): name, tasks, durations, demands, groups, parents, edge data.
fn diff_dags(a: &Dag, b: &Dag, agree: Agree) -> Option<String> {
    if a.name != b.name || a.resources != b.resources || a.stages.len() != b.stages.len() || a.len() != b.len() {
        return Some(format!(
            "DAG '{}' ({} stages, {} tasks) vs '{}' ({} stages, {} tasks)",
            a.name,
            a.stages.len(),
            a.len(),
            b.name,
            b.stages.len(),
            b.len()
        ));
    }
    let names = |d: &Dag, s: &graphene::model::Stage| {
        let mut v: Vec<(String, EdgeKind)> =
            s.parents.iter().map(|e| (d.stages[e.stage as usize].name.clone(), e.kind)).collect();
        v.sort_by(|x, y| x.0.cmp(&y.0));
        v
    };
    for (s, x) in a.stages.iter().enumerate() {
        let Some(t) = b.stage_by_name(&x.name) else { return Some(format!("stage '{}' is missing", x.name)) };
        let y = &b.stages[t as usize];
        if x.len != y.len || a.groups[x.group as usize] != b.groups[y.group as usize] {
            return Some(format!("stage '{}': tasks or group differ", x.name));
        }
        if names(a, x) != names(b, y) {
            return Some(format!("stage '{}': parents {:?} vs {:?}", x.name, names(a, x), names(b, y)));
        }
        for (i, j) in x.tasks().zip(y.tasks()) {
            let (p, q) = (&a.tasks[i as usize], &b.tasks[j as usize]);
            let dims = if agree.data { 4 } else { 2 };
            if p.duration != q.duration || (0..dims).any(|r| !close(p.demand.0[r], q.demand.0[r], agree.tolerance)) {
                return Some(format!(
                    "stage '{}': task {:?} vs {:?}",
                    x.name,
                    (p.duration, p.demand),
                    (q.duration, q.demand)
                ));
            }
        }
        if agree.data {
            for e in &x.parents {
                let pname = &a.stages[e.stage as usize].name;
                let (da, db) = (a.edge_data(e.stage, s as u32), b.edge_data(b.stage_by_name(pname).unwrap(), t));
                if !close(da, db, agree.tolerance) {
                    return Some(format!("edge {pname} -> {}: data {da} vs {db}", x.name));
                }
            }
        }
    }
    None
}

fn task_graph(data: &[u8], format: formats::Format) -> Option<(&str, Result<Dag, Error>)> {
    let t = text(data)?;
    let opts = LoadOptions { format: Some(format), ..LoadOptions::default() };
    let r = formats::parse_dags(t, "fuzz", &opts).map(|mut d| {
        assert_eq!(d.len(), 1, "a task graph file is one DAG");
        d.remove(0)
    });
    Some((t, r))
}

/// Reads `written` (what a writer made of `dag`) in `format` and compares.
fn reads_back(dag: &Dag, written: &str, format: formats::Format, agree: Agree) {
    let opts = LoadOptions { format: Some(format), ..LoadOptions::default() };
    let back = formats::parse_dags(written, "fuzz", &opts)
        .unwrap_or_else(|e| panic!("the graph written as {format:?} does not read back: {e}\n{written}"));
    if let Some(d) = diff_dags(dag, &back[0], agree) {
        panic!("the graph written as {format:?} reads back different: {d}\n{written}");
    }
}

/// Pegasus DAX, whatever the text looks like.
pub fn dag_dax(data: &[u8]) -> Outcome {
    let Some((_, r)) = task_graph(data, formats::Format::Dax) else { return Outcome::Skipped };
    if let Ok(dag) = &r {
        accepted_dag(dag);
        check_task_graph(dag, true);
        reads_back(dag, &writers::dax(dag), formats::Format::Dax, Agree { tolerance: 1e-12, data: false });
    }
    Outcome::of(&r)
}

/// Graphviz DOT, whatever the text looks like.
pub fn dag_dot(data: &[u8]) -> Outcome {
    let Some((_, r)) = task_graph(data, formats::Format::Dot) else { return Outcome::Skipped };
    if let Ok(dag) = &r {
        accepted_dag(dag);
        check_task_graph(dag, false);
        if let Some(written) = writers::dot(dag) {
            reads_back(dag, &written, formats::Format::Dot, Agree { tolerance: 1e-12, data: true });
        }
    }
    Outcome::of(&r)
}

/// Kasahara's STG, whatever the text looks like.
pub fn dag_stg(data: &[u8]) -> Outcome {
    let Some((_, r)) = task_graph(data, formats::Format::Stg) else { return Outcome::Skipped };
    if let Ok(dag) = &r {
        accepted_dag(dag);
        check_task_graph(dag, false);
        for st in &dag.stages {
            let task = &dag.tasks[st.first as usize];
            assert!(task.duration.fract() == 0.0, "an STG processing time is whole: {}", task.duration);
            assert_eq!((task.demand.0[0], task.demand.0[1]), (1.0, 0.0), "an STG task takes one processor");
        }
        let written = writers::stg(dag).expect("an STG graph can be written as STG");
        reads_back(dag, &written, formats::Format::Stg, Agree { tolerance: 0.0, data: true });
    }
    Outcome::of(&r)
}

/// Tez history: every DAG read is well formed and round-trips, carries the signature its stages
/// and edges give, and is counted once; read from a file (as the CLI does) it is the same.
pub fn dag_tez(data: &[u8]) -> Outcome {
    use graphene::formats::tez;
    let Some(t) = text(data) else { return Outcome::Skipped };
    let r = tez::parse(t, "fuzz");
    if let Ok(h) = &r {
        assert_eq!(h.report.dags_read, h.runs.len(), "the report counts the DAGs read");
        let mut ids: Vec<&str> = h.runs.iter().map(|x| x.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), h.runs.len(), "a DAG id read twice");
        for run in &h.runs {
            accepted_dag(&run.dag);
            assert_eq!(run.signature, tez::dag_signature(&run.dag), "the signature is the DAG's own");
            assert!(run.dag.tasks.iter().all(|x| x.duration >= 0.0), "a negative duration");
        }
        let dir = scratch();
        let path = write(&dir.path().join("history.txt.appattempt_1_0001_000001"), data);
        let again = tez::read(&path).unwrap_or_else(|e| panic!("the text reads, the file does not: {e}"));
        assert_eq!(again.runs.len(), h.runs.len(), "the file reads as the text");
        assert_eq!(again.report, h.report, "the file reads as the text");
    }
    Outcome::of(&r)
}

/// Where two readings of one Spark log differ: jobs (ids, submission times, pools, DAGs), what
/// was left out and the report; `partial` also ignores the report's note of a dropped line.
fn diff_apps(a: &SparkApp, b: &SparkApp, partial: bool) -> Option<String> {
    if (&a.name, &a.spark_version, &a.left_out) != (&b.name, &b.spark_version, &b.left_out) {
        return Some(format!(
            "app {:?} vs {:?}",
            (&a.name, &a.spark_version, &a.left_out),
            (&b.name, &b.spark_version, &b.left_out)
        ));
    }
    let mut ra = a.report.clone();
    if partial {
        ra.partial_line_dropped = b.report.partial_line_dropped;
    }
    if ra != b.report {
        return Some(format!("report {:?} vs {:?}", a.report, b.report));
    }
    if a.jobs.len() != b.jobs.len() {
        return Some(format!("{} jobs vs {}", a.jobs.len(), b.jobs.len()));
    }
    for (x, y) in a.jobs.iter().zip(&b.jobs) {
        if (x.id, x.submitted, &x.queue) != (y.id, y.submitted, &y.queue) {
            return Some(format!("job {:?} vs {:?}", (x.id, x.submitted, &x.queue), (y.id, y.submitted, &y.queue)));
        }
        if let Some(d) = diff_dags(&x.dag, &y.dag, Agree { tolerance: 0.0, data: true }) {
            return Some(format!("job {}: {d}", x.id));
        }
    }
    None
}

fn accepted_app(app: &SparkApp) {
    app.jobs.iter().for_each(|j| accepted_dag(&j.dag));
    let mut ids = std::collections::HashSet::new();
    for j in &app.jobs {
        assert!(ids.insert(j.id), "job {} read twice", j.id);
        assert!(!app.left_out.contains_key(&j.id), "job {} read and left out", j.id);
        assert!(j.submitted.is_finite() && j.submitted >= 0.0, "job {} submitted at {}", j.id, j.submitted);
        assert!(j.dag.tasks.iter().all(|t| t.demand.0[0] > 0.0), "a Spark task without a core");
    }
    if let Ok(w) = app.clone().workload() {
        assert!(w.jobs.windows(2).all(|p| p[0].arrival <= p[1].arrival), "jobs out of arrival order");
        assert!(w.jobs.iter().all(|j| j.arrival.is_finite() && j.arrival >= 0.0));
    }
}

/// A scratch directory for a check that reads files (the Spark readers take paths).
fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("graphene-fuzz").tempdir().expect("a temporary directory")
}

fn write(path: &Path, bytes: &[u8]) -> PathBuf {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("a scratch directory");
    }
    std::fs::write(path, bytes).expect("a scratch file");
    path.to_path_buf()
}

/// The lines of `text` up to its last non-empty one, and that one, when it is an event cut
/// short (what Spark leaves at the end of a log it is still writing): the reader, given that
/// line alone, says it is cut short. (A line with a wrong type before the cut, e.g.
/// `{"Event":4,"Job`, is "not a JSON event" to the reader and is left out here: Spark never
/// writes one.)
fn cut_last_line(text: &str) -> Option<(&str, &str)> {
    let body = text.trim_end();
    let start = body.rfind('\n').map_or(0, |i| i + 1);
    let (head, last) = body.split_at(start);
    if last.trim().is_empty() {
        return None;
    }
    match spark::parse(last, "fuzz") {
        Err(e) if e.to_string().contains("cut short") => Some((head, last)),
        _ => None,
    }
}

/// A plain Spark event log: every job read is a well-formed DAG, and as a workload its jobs
/// arrive in order. When its last line is an event cut short (what Spark's History Server drops
/// from a log still being written), the log read as an `.inprogress` file, by `spark::read` and
/// as the CLI finds it (by its content), is the log without that line, with the drop noted.
pub fn dag_spark(data: &[u8]) -> Outcome {
    let Some(t) = text(data) else { return Outcome::Skipped };
    let r = spark::parse(t, "fuzz");
    if let Ok(app) = &r {
        accepted_app(app);
    }
    if let Some((head, _)) = cut_last_line(t) {
        if let Ok(whole) = spark::parse(head, "fuzz") {
            let dir = scratch();
            let path = write(&dir.path().join("fuzz.inprogress"), t.as_bytes());
            let app = spark::read(&path)
                .unwrap_or_else(|e| panic!("an in-progress log with a cut last line is refused: {e}"));
            assert!(app.report.partial_line_dropped, "the cut line was dropped without a note");
            if let Some(d) = diff_apps(&whole, &app, true) {
                panic!("the in-progress log reads differently from the log without its cut line: {d}");
            }
            let dags = formats::load_dags(&path, &LoadOptions::default());
            let want = whole.dags(None);
            match (&want, &dags) {
                (Ok(a), Ok(b)) => assert_eq!(a.len(), b.len(), "as the CLI reads it"),
                (Err(_), Err(e)) => refused(e),
                _ => panic!(
                    "as the CLI reads it, the in-progress log gives {:?}, the log without its cut line {:?}",
                    dags.as_ref().map(Vec::len).map_err(ToString::to_string),
                    want.as_ref().map(Vec::len).map_err(ToString::to_string)
                ),
            }
        }
    }
    Outcome::of(&r)
}

/// A Spark compression codec, as the log's file extension names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    Plain,
    Lz4,
    Snappy,
    Zstd,
}

impl Codec {
    fn ext(self) -> &'static str {
        match self {
            Codec::Plain => "",
            Codec::Lz4 => ".lz4",
            Codec::Snappy => ".snappy",
            Codec::Zstd => ".zstd",
        }
    }

    fn magic(self) -> &'static [u8] {
        match self {
            Codec::Plain => b"",
            Codec::Lz4 => writers::LZ4_MAGIC,
            Codec::Snappy => writers::SNAPPY_MAGIC,
            Codec::Zstd => writers::ZSTD_MAGIC,
        }
    }

    /// Whether the stream checksums its content, so that a changed byte cannot go unnoticed.
    fn checksummed(self) -> bool {
        matches!(self, Codec::Lz4 | Codec::Zstd)
    }

    /// `text` framed as Spark's codec writes it; `p` picks the block size (64 B to 8 KiB) and,
    /// for zstd, one frame per block (0x08) and stored blocks (0x10).
    pub fn encode(self, text: &[u8], p: u8) -> Vec<u8> {
        let block = 64usize << (p & 7);
        match self {
            Codec::Plain => text.to_vec(),
            Codec::Lz4 => writers::lz4_java(text, block),
            Codec::Snappy => writers::snappy_java(text, block),
            Codec::Zstd => writers::zstd_frames(text, block, p & 0x08 != 0, p & 0x10 != 0),
        }
    }
}

/// A Spark log read from `path`: checked when accepted, its refusal checked when not.
fn read_log(path: &Path) -> Result<SparkApp, Error> {
    let r = spark::read(path);
    match &r {
        Ok(app) => accepted_app(app),
        Err(e) => refused(e),
    }
    r
}

/// Both readings accepted alike, and the same app when accepted.
fn same_reading(plain: &Result<SparkApp, Error>, other: &Result<SparkApp, Error>, what: &str) {
    match (plain, other) {
        (Ok(a), Ok(b)) => {
            if let Some(d) = diff_apps(a, b, false) {
                panic!("{what} reads differently from the plain log: {d}");
            }
        }
        (Err(_), Err(_)) => {}
        (Ok(_), Err(e)) => panic!("{what} is refused, the plain log is not: {e}"),
        (Err(e), Ok(_)) => panic!("{what} is accepted, the plain log is refused: {e}"),
    }
}

/// A Spark log compressed with `codec`. Input that starts with the codec's magic is the file
/// itself (the decompressor's own input is fuzzed); any other input is a parameter byte and a
/// plain log, which is framed as Spark writes it and must read as the plain log does. Parameter
/// bits: 0-2 the block size, 3-4 the zstd variant (`Codec::encode`), 7 set: three more bytes
/// change one byte of the framed file (position, little-endian 16-bit, and the XOR mask), and a
/// checksummed codec must then refuse the file or read the same.
pub fn spark_codec(codec: Codec, data: &[u8]) -> Outcome {
    let dir = scratch();
    let file = dir.path().join(format!("fuzz{}", codec.ext()));
    if data.starts_with(codec.magic()) {
        return Outcome::of(&read_log(&write(&file, data)));
    }
    let Some((&p, rest)) = data.split_first() else { return Outcome::Skipped };
    let (flip, text) = if p & 0x80 != 0 {
        let Some((f, text)) = rest.split_first_chunk::<3>() else { return Outcome::Skipped };
        (Some((u16::from_le_bytes([f[0], f[1]]) as usize, f[2].max(1))), text)
    } else {
        (None, rest)
    };
    let plain = read_log(&write(&dir.path().join("plain/fuzz"), text));
    let mut framed = codec.encode(text, p);
    let r = read_log(&write(&file, &framed));
    same_reading(&plain, &r, &format!("the log framed as {codec:?} (parameters 0x{p:02x})"));
    if let Some((at, mask)) = flip {
        let at = at % framed.len();
        framed[at] ^= mask;
        let changed = read_log(&write(&file, &framed));
        if codec.checksummed() {
            match (&r, &changed) {
                (_, Err(_)) => {}
                (Ok(a), Ok(b)) => {
                    if let Some(d) = diff_apps(a, b, false) {
                        panic!("byte {at} of the {codec:?} file changed (xor 0x{mask:02x}) and was read: {d}");
                    }
                }
                (Err(e), Ok(_)) => {
                    panic!(
                        "byte {at} of the {codec:?} file changed (xor 0x{mask:02x}) and the refused log was read: {e}"
                    )
                }
            }
        }
    }
    Outcome::of(&r)
}

pub fn spark_lz4(data: &[u8]) -> Outcome {
    spark_codec(Codec::Lz4, data)
}

pub fn spark_snappy(data: &[u8]) -> Outcome {
    spark_codec(Codec::Snappy, data)
}

pub fn spark_zstd(data: &[u8]) -> Outcome {
    spark_codec(Codec::Zstd, data)
}

/// Another application's log: one job with ids no fuzzed log is likely to use, so that read
/// into a log it changes the answer.
const OTHER_APP: &str = r#"{"Event":"SparkListenerApplicationStart","App Name":"other","App ID":"otherapp","Timestamp":0}
{"Event":"SparkListenerJobStart","Job ID":987654,"Submission Time":0,"Stage Infos":[{"Stage ID":987654,"Number of Tasks":1}]}
{"Event":"SparkListenerStageSubmitted","Stage Info":{"Stage ID":987654,"Number of Tasks":1}}
{"Event":"SparkListenerTaskEnd","Stage ID":987654,"Task End Reason":{"Reason":"Success"},"Task Info":{"Task ID":987654,"Index":0,"Launch Time":0,"Finish Time":1000}}
{"Event":"SparkListenerJobEnd","Job ID":987654,"Job Result":{"Result":"JobSucceeded"}}
"#;

/// A plain log (after a parameter byte) split at line ends into a rolling-log directory
/// (`eventlog_v2_<app>/events_<N>_<app>[.codec]`), which must read as the plain log does.
/// Parameter bits: 0-1 parts - 1, 2-3 the codec of every part (plain, lz4, snappy, zstd), 4-5
/// the numbering (1, 2, ... or gaps of 10), 6 an `appstatus` marker and an unrelated file
/// beside the parts, 7 a part of another application (`OTHER_APP`, as `events_<last + 1>_otherapp`), which
/// must be refused or leave the reading unchanged.
pub fn spark_rolling(data: &[u8]) -> Outcome {
    let Some((&p, text)) = data.split_first() else { return Outcome::Skipped };
    let dir = scratch();
    let plain = read_log(&write(&dir.path().join("plain/eventlog_v2_fuzz"), text));
    let parts = 1 + (p & 3) as usize;
    let codec = [Codec::Plain, Codec::Lz4, Codec::Snappy, Codec::Zstd][((p >> 2) & 3) as usize];
    // Spark numbers a rolling log's parts 1, 2, 3, ...; a gap is refused as an incomplete log.
    let step = 1;
    let root = dir.path().join("eventlog_v2_fuzz");
    std::fs::create_dir_all(&root).expect("a scratch directory");
    // Split after line ends into `parts` runs of about equal numbers of lines.
    let ends: Vec<usize> = text.iter().enumerate().filter(|(_, &b)| b == b'\n').map(|(i, _)| i + 1).collect();
    let mut cuts = vec![0];
    for k in 1..parts {
        let c = ends.get(ends.len() * k / parts).copied().unwrap_or(text.len());
        cuts.push(c.max(*cuts.last().unwrap()));
    }
    cuts.push(text.len());
    for (k, w) in cuts.windows(2).enumerate() {
        let name = format!("events_{}_fuzz{}", 1 + k * step, codec.ext());
        write(&root.join(name), &codec.encode(&text[w[0]..w[1]], 0x02));
    }
    if p & 0x40 != 0 {
        write(&root.join("appstatus_fuzz"), b"");
        write(&root.join("notes.txt"), b"not a part");
    }
    let r = read_log(&root);
    same_reading(&plain, &r, &format!("the log split into {parts} {codec:?} parts (parameters 0x{p:02x})"));
    if p & 0x80 != 0 {
        let name = format!("events_{}_otherapp{}", 1 + parts * step, codec.ext());
        write(&root.join(name), &codec.encode(OTHER_APP.as_bytes(), 0x02));
        match (&r, &read_log(&root)) {
            (_, Err(_)) => {}
            (Ok(a), Ok(b)) => {
                if let Some(d) = diff_apps(a, b, false) {
                    panic!("another application's part was read into the log: {d}");
                }
            }
            (Err(e), Ok(_)) => panic!("another application's part made a refused log readable: {e}"),
        }
    }
    Outcome::of(&r)
}

pub fn dag_tpch(data: &[u8]) -> Outcome {
    let Some(t) = text(data) else { return Outcome::Skipped };
    let r = tpch::parse(t, "fuzz", None, 20);
    if let Ok(dags) = &r {
        dags.iter().for_each(accepted_dag);
    }
    Outcome::of(&r)
}

pub fn dag_hetero(data: &[u8]) -> Outcome {
    let Some(t) = text(data) else { return Outcome::Skipped };
    let r = hetero::parse(t, "fuzz");
    if let Ok((dag, spec)) = &r {
        accepted_dag(dag);
        accepted_cluster(spec, dag);
    }
    Outcome::of(&r)
}
/// A fixed small DAG to resolve clusters and validate schedules against.
fn example_dag() -> Dag {
    native::parse(
        r#"{"name":"fixed","resources":["cpu","mem"],"stages":[
            {"id":"a","tasks":2,"duration":1,"demands":{"cpu":1,"mem":1}},
            {"id":"b","tasks":2,"duration":2,"demands":{"cpu":2},"parents":[{"stage":"a","kind":"one-to-one"}]},
            {"id":"c","tasks":1,"duration":1,"demands":{"mem":3},"parents":["a","b"]}]}"#,
        "fixed",
    )
    .expect("the fixed DAG parses")
}

fn accepted_cluster(spec: &ClusterSpec, dag: &Dag) {
    assert!(spec.machine_count() as u64 <= limits::current().machines, "cluster over the machine limit");
    let _ = spec.network();
    match spec.resolve(&dag.resources) {
        Ok(c) => {
            assert_eq!(c.len(), spec.machine_count());
            assert_eq!(c.resources, dag.resources);
            for m in &c.machines {
                assert!(m.0.iter().all(|v| v.is_finite() && *v >= 0.0));
            }
            // Either every task fits some machine, or the error names a task.
            if let Err(e) = c.check_fits(dag) {
                assert!(matches!(e, Error::TaskTooBig { .. }), "{e:?}");
            }
        }
        Err(e) => refused(&e),
    }
}

pub fn cluster(data: &[u8]) -> Outcome {
    let Some(t) = text(data) else { return Outcome::Skipped };
    let r = cluster::parse(t);
    if let Ok(spec) = &r {
        accepted_cluster(spec, &example_dag());
    }
    Outcome::of(&r)
}

pub fn schedule(data: &[u8]) -> Outcome {
    let Some(t) = text(data) else { return Outcome::Skipped };
    let file = match schedule_file::parse(t) {
        Ok(f) => f,
        Err(e) => {
            refused(&e);
            return Outcome::Refused(e.to_string());
        }
    };
    let dag = example_dag();
    let spec = ClusterSpec::uniform(3, ClusterSpec::default_capacity());
    let cluster = spec.resolve(&dag.resources).expect("fixed cluster");
    let net = spec.network();
    let verdict = graphene::api::validate_entries(&dag, &cluster, &net, &file.tasks, &file.copies, &file.order);
    if verdict.is_ok() {
        // A valid schedule places every task once, on a real machine, at sane times.
        assert_eq!(file.tasks.len(), dag.len());
        for e in &file.tasks {
            assert!(e.machine >= 0 && (e.machine as usize) < cluster.len(), "valid with machine {}", e.machine);
            assert!(e.start.is_finite() && e.end.is_finite() && 0.0 <= e.start && e.start <= e.end);
            assert!(dag.task_by_name(&e.id).is_some(), "valid with unknown task {}", e.id);
        }
    }
    Outcome::Accepted
}

fn check_workload(w: &Workload) {
    let lim = limits::current();
    assert!(w.jobs.len() as u64 <= lim.jobs, "{} jobs over the limit", w.jobs.len());
    assert!(w.tasks() as u64 <= lim.tasks, "{} tasks over the limit", w.tasks());
    let mut names = std::collections::HashSet::new();
    for pair in w.jobs.windows(2) {
        assert!(pair[0].arrival <= pair[1].arrival, "jobs out of arrival order");
    }
    for j in &w.jobs {
        assert!(j.arrival.is_finite() && j.arrival >= 0.0 && j.arrival <= limits::MAX_SECONDS, "arrival {}", j.arrival);
        assert!(names.insert(j.name.as_str()), "two jobs named '{}'", j.name);
        check_dag(&j.dag);
    }
}

/// What `native_csv::write` writes reads back equal (and writes again byte for byte).
fn check_trace_round_trip(w: &Workload) {
    // A reader may keep no job at all (every row skipped, or an empty file): the commands refuse
    // such a trace by name, and the writer refuses to write one.
    if w.jobs.is_empty() {
        assert!(native_csv::write(w).is_err(), "an empty workload was written as a trace");
        return;
    }
    let csv = native_csv::write(w).unwrap_or_else(|e| panic!("a workload that was read cannot be written: {e}"));
    let back = native_csv::read(&csv).unwrap_or_else(|e| panic!("written trace does not read back: {e}\n{csv}"));
    assert_eq!(w.jobs.len(), back.jobs.len());
    for (a, b) in w.jobs.iter().zip(&back.jobs) {
        assert_eq!((&a.name, a.arrival, &a.queue), (&b.name, b.arrival, &b.queue));
        assert_eq!(a.dag.len(), b.dag.len(), "job '{}'", a.name);
        assert_eq!(a.dag.stages.len(), b.dag.stages.len(), "job '{}'", a.name);
        for (x, y) in a.dag.tasks.iter().zip(&b.dag.tasks) {
            assert_eq!((x.duration, x.demand), (y.duration, y.demand), "job '{}'", a.name);
        }
        for (x, y) in a.dag.stages.iter().zip(&b.dag.stages) {
            assert_eq!((&x.name, x.len, &x.parents), (&y.name, y.len, &y.parents), "job '{}'", a.name);
        }
    }
    assert_eq!(native_csv::write(&back).expect("writes again"), csv, "a second write differs");
}

pub fn trace_native(data: &[u8]) -> Outcome {
    let Some(t) = text(data) else { return Outcome::Skipped };
    let r = native_csv::read(t);
    if let Ok(w) = &r {
        check_workload(w);
        check_trace_round_trip(w);
    }
    Outcome::of(&r)
}

pub fn trace_alibaba(data: &[u8]) -> Outcome {
    let Some(t) = text(data) else { return Outcome::Skipped };
    let r = alibaba::read(t);
    if let Ok((w, _report)) = &r {
        check_workload(w);
        check_trace_round_trip(w);
    }
    Outcome::of(&r)
}

/// Largest DAG a fuzzed schedule request is actually scheduled for (the search is the
/// expensive part; parsing and checking run for every size).
const SCHEDULE_AT_MOST: usize = 64;

/// The query-string options fuzzed requests are parsed and answered under: a short improver
/// and exact search (graphene's default improver budget, about half a second for any small DAG,
/// would leave a few requests a second), which the request's own options override.
fn cheap_query() -> graphene_serve::request::Options {
    graphene_serve::request::Options { improve: Some(50), exact_nodes: Some(2000), ..Default::default() }
}

/// One request body to one endpoint, as the service would take it: accepted, the DAG and
/// cluster are sound and small requests are answered with JSON within `answer_within` (or
/// time out, a 503); refused, a 4xx. Returns the parsed request when accepted.
fn serve_one(
    body: &[u8],
    endpoint: graphene_serve::request::Endpoint,
    answer_within: std::time::Duration,
) -> Result<graphene_serve::request::Job, Error> {
    use graphene_serve::request::{self, Endpoint};
    let r = request::parse(body, cheap_query(), endpoint);
    match &r {
        Ok(job) => {
            check_dag(&job.dag);
            assert!(job.cluster.len() as u64 <= limits::current().machines);
            assert!(job.cluster.check_fits(&job.dag).is_ok(), "accepted a DAG that does not fit its cluster");
            assert_eq!(job.schedule.is_some(), endpoint == Endpoint::Validate);
            let run = match endpoint {
                Endpoint::Schedule => job.dag.len() <= SCHEDULE_AT_MOST && job.cluster.len() <= SCHEDULE_AT_MOST,
                _ => job.dag.len() <= 5_000,
            };
            if run {
                let deadline = graphene::Deadline::after(answer_within);
                match graphene_serve::answer(body, cheap_query(), endpoint, &deadline) {
                    Ok(json) => {
                        let v: serde_json::Value = serde_json::from_slice(&json).expect("the answer is JSON");
                        if endpoint == Endpoint::LowerBound {
                            let best = v["best"].as_f64().expect("a lower bound is a number");
                            assert!(best.is_finite() && best >= 0.0, "lower bound {best}");
                        }
                    }
                    Err(e) => {
                        let status = graphene_serve::status_of(&e);
                        assert!(!status.is_server_error() || matches!(e, Error::TimedOut { .. }), "{status} for {e}");
                    }
                }
            }
        }
        Err(e) => {
            refused(e);
            let status = graphene_serve::status_of(e);
            assert!(status.is_client_error(), "a refused body answered {status}: {e}");
        }
    }
    r
}

const ENDPOINTS: [graphene_serve::request::Endpoint; 3] = [
    graphene_serve::request::Endpoint::Schedule,
    graphene_serve::request::Endpoint::LowerBound,
    graphene_serve::request::Endpoint::Validate,
];

/// Accepted when some endpoint accepts the body; else the first endpoint's refusal.
pub fn serve_request(data: &[u8]) -> Outcome {
    let mut out = None;
    for endpoint in ENDPOINTS {
        let o = Outcome::of(&serve_one(data, endpoint, std::time::Duration::from_secs(1)));
        if out.is_none() || o.accepted() {
            out = Some(o);
        }
    }
    out.expect("three endpoints")
}

/// The DAG (graphene JSON) and a valid schedule of it that `serve_options` wraps option values
/// around.
const OPTIONS_DAG: &str = r#"{"name":"fixed","resources":["cpu","mem"],"stages":[{"id":"a","tasks":2,"duration":1,"demands":{"cpu":1,"mem":1}},{"id":"b","tasks":2,"duration":2,"demands":{"cpu":2},"parents":[{"stage":"a","kind":"one-to-one"}]},{"id":"c","tasks":1,"duration":1,"demands":{"mem":3},"parents":["a","b"]}]}"#;
const OPTIONS_SCHEDULE: &str = r#"{"dag":"fixed","scheduler":"hand","makespan":4,"tasks":[{"id":"a[0]","machine":0,"start":0,"end":1},{"id":"a[1]","machine":1,"start":0,"end":1},{"id":"b[0]","machine":0,"start":1,"end":3},{"id":"b[1]","machine":1,"start":1,"end":3},{"id":"c[0]","machine":2,"start":3,"end":4}],"order":["a[0]","a[1]","b[0]","b[1]","c[0]"],"copies":[]}"#;

/// The options a request may set (`graphene_serve::request::Options`), and a name that is none.
pub const OPTION_KEYS: [&str; 14] = [
    "scheduler",
    "seed",
    "machines",
    "capacity",
    "no_overbook",
    "no_timing",
    "format",
    "query",
    "executors",
    "demands",
    "improve",
    "exact",
    "exact_nodes",
    "not_an_option",
];

/// The value a request's options hold for `key`, as JSON (null when unset).
fn option_value(o: &graphene_serve::request::Options, key: &str) -> serde_json::Value {
    use serde_json::json;
    match key {
        "scheduler" => json!(o.scheduler),
        "seed" => json!(o.seed),
        "machines" => json!(o.machines),
        "capacity" => json!(o.capacity),
        "no_overbook" => json!(o.no_overbook),
        "no_timing" => json!(o.no_timing),
        "format" => json!(o.format),
        "query" => json!(o.query),
        "executors" => json!(o.executors),
        "demands" => json!(o.demands),
        "improve" => json!(o.improve),
        "exact" => json!(o.exact),
        "exact_nodes" => json!(o.exact_nodes),
        _ => serde_json::Value::Null,
    }
}

/// Equal JSON values, numbers by value (an integer option holds exactly the integer sent,
/// never truncated or wrapped).
fn same_json(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    match (a, b) {
        (serde_json::Value::Number(x), serde_json::Value::Number(y)) => {
            x.as_u64().zip(y.as_u64()).is_some_and(|(p, q)| p == q)
                || x.as_i64().zip(y.as_i64()).is_some_and(|(p, q)| p == q)
                || (x.as_u64().is_none() && x.as_i64().is_none() && x.as_f64() == y.as_f64())
        }
        _ => a == b,
    }
}

/// A request around the fixed DAG and schedule, then `rest` (the members after them and the
/// closing brace).
fn options_body(rest: &str) -> String {
    format!(r#"{{"dag":{OPTIONS_DAG},"schedule":{OPTIONS_SCHEDULE},{rest}"#)
}

/// The service's option values: the input is one JSON value, set as each option of a request
/// around a fixed DAG (and, for validate, a valid schedule of it) for every endpoint; an input
/// that is an object is also spliced in as the request's options. Every request must be
/// refused with a 4xx or accepted with the option holding exactly the value sent (an integer
/// as itself, never truncated or wrapped), a machine count within the limit, and an answer
/// (within 250 ms, or a 503 for the time-out). Accepted when some schedule request is.
pub fn serve_options(data: &[u8]) -> Outcome {
    use graphene_serve::request::Endpoint;
    let Some(v) = text(data) else { return Outcome::Skipped };
    let mut bodies: Vec<(Option<&str>, String)> =
        OPTION_KEYS.iter().map(|k| (Some(*k), options_body(&format!(r#""{k}":{v}}}"#)))).collect();
    if let Some(inner) = v.trim_start().strip_prefix('{') {
        bodies.push((None, options_body(inner)));
    }
    let sent: Option<serde_json::Value> = serde_json::from_str(v).ok();
    let mut out = None;
    for (key, body) in &bodies {
        for endpoint in ENDPOINTS {
            let r = serve_one(body.as_bytes(), endpoint, std::time::Duration::from_millis(250));
            // (When the input is more than one value, e.g. `1, "seed": 2`, it set other
            // options too: only what it did to its key's value is unknown.)
            if let (Ok(job), Some(key), Some(sent)) = (&r, key, &sent) {
                assert_ne!(*key, "not_an_option", "an unknown option was accepted");
                let held = option_value(&job.options, key);
                // null leaves the option to the query string's value.
                let want = if sent.is_null() { option_value(&cheap_query(), key) } else { sent.clone() };
                assert!(same_json(&held, &want), "option {key} holds {held} for {sent} ({endpoint:?})");
                if *key == "machines" {
                    assert_eq!(Some(job.cluster.len() as u64), sent.as_u64(), "machines");
                }
            }
            let o = Outcome::of(&r);
            if endpoint == Endpoint::Schedule && (out.is_none() || o.accepted()) {
                out = Some(o);
            }
        }
    }
    out.expect("at least one body")
}

/// The trace `waves` binds sidecars to: job j0 (stage a of 3 tasks, then b of 1) and job j1
/// (stage c of 1, arriving at 8); every task one core for 1 s.
const WAVES_TRACE: &str = "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations
j0,0,q0,a,3,1,1,0,0,0,,
j0,0,q0,b,1,1,1,0,0,0,a,
j1,8,q0,c,1,1,1,0,0,0,,
";

/// A `--waves` sidecar (`graphene::sim::waves`), bound to `WAVES_TRACE`. Accepted: a model
/// per job and stage with a `first_wave` key and finite samples in seconds; the sidecar
/// serializes and parses back equal; a replay (fifo, two one-core machines) under it finishes
/// every task, each running a sample of its stage (plus the warm-up and moving delays the rules
/// add) or its trace duration, and a second replay with the same seed is the same.
pub fn waves(data: &[u8]) -> Outcome {
    use graphene::sim::{self, waves};
    let Some(t) = text(data) else { return Outcome::Skipped };
    let workload = native_csv::read(WAVES_TRACE).expect("the fixed trace reads");
    let r = waves::Sidecar::parse(t).and_then(|s| s.bind(&workload).map(|m| (s, m)));
    let Ok((sidecar, model)) = &r else { return Outcome::of(&r) };
    let json = serde_json::to_string(sidecar).expect("a sidecar serializes");
    let back = waves::Sidecar::parse(&json).unwrap_or_else(|e| {
        panic!(
            "a written sidecar does not parse: {e}
{json}"
        )
    });
    assert_eq!(&back, sidecar, "a sidecar does not read back equal");
    assert_eq!(model.stages.len(), workload.jobs.len());
    for (job, stages) in workload.jobs.iter().zip(&model.stages) {
        assert_eq!(stages.len(), job.dag.stages.len(), "job {}", job.name);
        for st in stages {
            assert!(!st.first.is_empty(), "a stage without a first_wave key");
            for (&k, list) in st.first.iter().chain(&st.rest).chain(&st.fresh) {
                assert!(k >= 1, "executor key {k}");
                assert!(list.iter().all(|x| x.is_finite() && *x >= 0.0 && *x <= limits::MAX_SECONDS), "{list:?}");
            }
        }
    }
    let spec = ClusterSpec::uniform(2, [("cpu".to_string(), 1.0)].into_iter().collect());
    let cluster = spec.resolve(&workload.jobs[0].dag.resources).expect("the fixed cluster");
    let w = waves::Waves::new(model.clone());
    let (moving, warmup) = (w.moving_delay, w.warmup_delay);
    let cfg = sim::SimConfig { waves: Some(w), seed: 7, ..sim::SimConfig::default() };
    let run = || sim::run(&workload, &cluster, &mut graphene::online::Fifo, &cfg);
    let first = match run() {
        Ok(res) => res,
        Err(e) => {
            refused(&e);
            return Outcome::Refused(e.to_string());
        }
    };
    assert_eq!(first.runs.len(), workload.tasks(), "every task runs once");
    for run in &first.runs {
        let job = &workload.jobs[run.job as usize];
        let stage = job.dag.tasks[run.task as usize].stage as usize;
        let st = &model.stages[run.job as usize][stage];
        let took = run.end - run.start;
        let trace = job.dag.tasks[run.task as usize].duration;
        let samples = st.first.values().chain(st.rest.values()).chain(st.fresh.values()).flatten().copied();
        let allowed = samples.flat_map(|x| [x, x + warmup]).chain([trace]).flat_map(|x| [x, x + moving]);
        // The end is start + duration in floating point: exact up to the end's last bits.
        let fits = allowed.clone().any(|x| (took - x).abs() <= 4.0 * f64::EPSILON * run.end.abs().max(1.0));
        assert!(
            fits,
            "task {} of job {} ran {took} s ({} to {}), which no rule gives: {:?}",
            job.dag.task_name(run.task),
            job.name,
            run.start,
            run.end,
            allowed.collect::<Vec<_>>()
        );
    }
    let second = run().expect("the same replay again");
    let key =
        |r: &sim::SimResult| r.runs.iter().map(|x| (x.job, x.task, x.machine, x.start, x.end)).collect::<Vec<_>>();
    assert_eq!(key(&first), key(&second), "two replays with one seed differ");
    Outcome::Accepted
}
