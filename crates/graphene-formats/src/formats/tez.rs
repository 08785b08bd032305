//! Apache Tez history: the files `SimpleHistoryLoggingService` writes into
//! `tez.simple.history.logging.dir` (one `history.txt.<application attempt>` per AM attempt).
//!
//! Framing (Tez 0.10): one JSON object per history event (the ATS entity form of
//! `HistoryEventJsonConversion`: `entity`, `entitytype`, `events[0].eventtype`, `otherinfo`),
//! each followed by the record separator `"\u{1}"` and a line separator, so that every record is
//! one line. Tez writes the text with `DataOutputStream.writeBytes`, which keeps the low byte of
//! each character: ASCII is exact, and a file that is not UTF-8 is read byte for byte as
//! Latin-1 (what those low bytes spell).
//!
//! Each DAG that succeeded becomes a graphene DAG named after the DAG: its vertices are the
//! stages (the vertex name is the stage id), its edges come from the DAG plan of
//! `DAG_SUBMITTED` (`SCATTER_GATHER`, `BROADCAST` and `CUSTOM` are all-to-all, `ONE_TO_ONE`
//! one-to-one), its tasks are the vertex's tasks (the final count of `VERTEX_CONFIGURE_DONE`,
//! else `VERTEX_INITIALIZED`), each lasting the measured time of its successful attempt
//! (`endTime - startTime` of `TASK_ATTEMPT_FINISHED`, in seconds). Failed and killed attempts,
//! and DAGs that failed, were killed or did not finish, are counted in the [`TezReport`].
//!
//! Demands: the history keeps no per-vertex container size, only the AM's configuration in an
//! `APP_LAUNCHED` record (written on YARN, not in local mode): `tez.task.resource.memory.mb`
//! and `tez.task.resource.cpu.vcores` there give every task's demand (`cpu` = vcores, `mem` =
//! GB); without them Tez's defaults (1 vcore, 1024 MB). `--demands` replaces them.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::model::{Dag, DagBuilder, EdgeKind, ResVec, StageSpec, TaskSpec};

/// The name of the DAG signature scheme; see [`signature`].
pub const SIGNATURE_SCHEME: &str = "graphene-tez-signature/1";

/// `graphene-tez-signature/1`: the lowercase hex SHA-256 of one line `v\t<name>\n` per vertex
/// (sorted by byte order), then one line `e\t<source>\t<destination>\n` per edge (sorted by
/// source, then destination). Names only, so a renamed DAG, or one run at another parallelism,
/// keeps its signature. None when a name holds a tab or a newline (the text would be ambiguous).
pub fn signature<'a>(
    vertices: impl IntoIterator<Item = &'a str>,
    edges: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Option<String> {
    let mut v: Vec<&str> = vertices.into_iter().collect();
    let mut e: Vec<(&str, &str)> = edges.into_iter().collect();
    let bad = |s: &str| s.contains('\t') || s.contains('\n');
    if v.iter().any(|s| bad(s)) || e.iter().any(|(a, b)| bad(a) || bad(b)) {
        return None;
    }
    v.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    e.sort_unstable_by(|x, y| (x.0.as_bytes(), x.1.as_bytes()).cmp(&(y.0.as_bytes(), y.1.as_bytes())));
    let mut h = Sha256::new();
    for name in v {
        h.update(b"v\t");
        h.update(name.as_bytes());
        h.update(b"\n");
    }
    for (a, b) in e {
        h.update(b"e\t");
        h.update(a.as_bytes());
        h.update(b"\t");
        h.update(b.as_bytes());
        h.update(b"\n");
    }
    Some(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// The signature of any graphene DAG, its stages taken as vertices and its stage edges as
/// edges (for a DAG read from Tez history, the same as the Tez DAG's).
pub fn dag_signature(dag: &Dag) -> Option<String> {
    let edges = dag
        .stages
        .iter()
        .flat_map(|s| s.parents.iter().map(move |p| (dag.stages[p.stage as usize].name.as_str(), s.name.as_str())));
    signature(dag.stages.iter().map(|s| s.name.as_str()), edges)
}

/// The signature of a DAG, or the error the export gives when it has none.
pub fn require_signature(dag: &Dag) -> Result<String> {
    dag_signature(dag).ok_or_else(|| {
        Error::Usage(format!("DAG '{}' has no {SIGNATURE_SCHEME}: a vertex name holds a tab or a newline", dag.name))
    })
}

/// Whether `path` is Tez history by its name: a `history.txt.*` file, or a directory holding one.
pub fn looks_like_tez(path: &Path) -> bool {
    let named = |p: &Path| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("history.txt"));
    if path.is_dir() {
        return history_files(path).map(|f| !f.is_empty()).unwrap_or(false);
    }
    named(path)
}

/// Whether the text is Tez history: its first record is a Tez ATS entity ended by `\u{1}`.
pub fn looks_like_tez_text(text: &str) -> bool {
    let t = text.trim_start();
    if !t.starts_with('{') {
        return false;
    }
    match t.find('\u{1}') {
        Some(end) => t[..end].contains("\"entitytype\":\"TEZ_"),
        None => false,
    }
}

fn history_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let fail = |e: std::io::Error| Error::Io(e).in_file(dir);
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(fail)? {
        let entry = entry.map_err(fail)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("history.txt") && entry.path().is_file() {
            files.push(entry.path());
        }
    }
    files.sort();
    Ok(files)
}

/// What reading the history left out, so that nothing is lost silently.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TezReport {
    pub files: usize,
    pub dags_read: usize,
    /// DAGs that ended FAILED, KILLED or ERROR, with the first one's name.
    pub dags_failed: (usize, Option<String>),
    pub dags_killed: (usize, Option<String>),
    /// DAGs submitted but never finished in the history (a running AM, a lost AM attempt).
    pub dags_unfinished: (usize, Option<String>),
    /// Task attempts that failed or were killed (in DAGs read and left out alike).
    pub attempts_failed: usize,
    pub attempts_killed: usize,
    /// Records of events no DAG needs (containers, AM, starts).
    pub events_ignored: u64,
}

impl TezReport {
    /// Whether anything was left out or not counted.
    pub fn says_more_than_dags_read(&self) -> bool {
        *self
            != TezReport {
                files: self.files,
                dags_read: self.dags_read,
                events_ignored: self.events_ignored,
                ..TezReport::default()
            }
    }
}

impl fmt::Display for TezReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = vec![format!("{} DAGs read", self.dags_read)];
        let first = |x: &Option<String>| x.as_ref().map(|j| format!(" (first: {j})")).unwrap_or_default();
        for ((n, name), what) in [
            (&self.dags_failed, "failed DAGs left out"),
            (&self.dags_killed, "killed DAGs left out"),
            (&self.dags_unfinished, "unfinished DAGs left out"),
        ] {
            if *n > 0 {
                parts.push(format!("{n} {what}{}", first(name)));
            }
        }
        for (n, what) in [
            (self.attempts_failed, "failed task attempts not counted"),
            (self.attempts_killed, "killed task attempts not counted"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        }
        write!(f, "{}", parts.join("; "))
    }
}

/// One DAG that succeeded.
#[derive(Clone, Debug)]
pub struct TezRun {
    /// Tez's DAG id (`dag_<cluster timestamp>_<app>_<n>`).
    pub id: String,
    pub dag: Dag,
    /// `graphene-tez-signature/1` of the DAG plan (None when a name holds a tab or newline).
    pub signature: Option<String>,
    /// The file and line of its `DAG_SUBMITTED`.
    pub file: PathBuf,
    pub line: usize,
}

/// Every DAG of a history: those that succeeded, and why the others were left out.
#[derive(Clone, Debug)]
pub struct TezHistory {
    pub runs: Vec<TezRun>,
    /// (DAG id, DAG name, why) of each DAG left out, in submission order.
    pub left_out: Vec<(String, String, String)>,
    pub report: TezReport,
}

/// Reads a history file, or every `history.txt*` file of a directory (in name order).
pub fn read(path: &Path) -> Result<TezHistory> {
    let files = if path.is_dir() {
        let f = history_files(path)?;
        if f.is_empty() {
            return Err(Error::Usage("holds no Tez history file (history.txt.*)".into()).in_file(path));
        }
        f
    } else {
        vec![path.to_path_buf()]
    };
    let mut acc = Acc::default();
    for file in &files {
        let text = read_history_text(file)?;
        acc.read(&text, file).map_err(|e| e.in_file(file))?;
    }
    acc.finish(files.len())
}

/// Reads history given as text (`name` stands for the file in messages).
pub fn parse(text: &str, name: &str) -> Result<TezHistory> {
    let mut acc = Acc::default();
    acc.read(text, Path::new(name))?;
    acc.finish(1)
}

/// A history file's text: UTF-8, or else Latin-1 (see the module header); size-checked first.
pub fn read_history_text(path: &Path) -> Result<String> {
    let bytes = crate::formats::read_bytes(path)?;
    Ok(match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => e.into_bytes().iter().map(|&b| b as char).collect(),
    })
}

// ---- records ----

#[derive(Deserialize)]
struct Record {
    entity: Option<String>,
    #[serde(default)]
    events: Vec<EventEntry>,
    #[serde(default)]
    otherinfo: OtherInfo,
}

#[derive(Deserialize)]
struct EventEntry {
    eventtype: Option<String>,
    #[serde(default)]
    eventinfo: EventInfo,
}

#[derive(Default, Deserialize)]
struct EventInfo {
    #[serde(rename = "numTasks")]
    num_tasks: Option<i64>,
}

#[derive(Default, Deserialize)]
struct OtherInfo {
    #[serde(rename = "dagPlan")]
    dag_plan: Option<DagPlan>,
    #[serde(rename = "vertexName")]
    vertex_name: Option<String>,
    #[serde(rename = "numTasks")]
    num_tasks: Option<i64>,
    #[serde(rename = "startTime")]
    start_time: Option<i64>,
    #[serde(rename = "endTime")]
    end_time: Option<i64>,
    status: Option<String>,
    config: Option<AmConfig>,
}

#[derive(Default, Deserialize)]
struct AmConfig {
    #[serde(rename = "tez.task.resource.memory.mb")]
    memory_mb: Option<String>,
    #[serde(rename = "tez.task.resource.cpu.vcores")]
    vcores: Option<String>,
}

#[derive(Clone, Deserialize)]
struct DagPlan {
    #[serde(rename = "dagName")]
    dag_name: Option<String>,
    #[serde(default)]
    vertices: Vec<PlanVertex>,
    #[serde(default)]
    edges: Vec<PlanEdge>,
}

#[derive(Clone, Deserialize)]
struct PlanVertex {
    #[serde(rename = "vertexName")]
    vertex_name: Option<String>,
}

#[derive(Clone, Deserialize)]
struct PlanEdge {
    #[serde(rename = "inputVertexName")]
    input: Option<String>,
    #[serde(rename = "outputVertexName")]
    output: Option<String>,
    #[serde(rename = "dataMovementType")]
    movement: Option<String>,
}

/// Every event type of Tez 0.10's `HistoryEventType`: others are refused as unknown.
const KNOWN_EVENTS: [&str; 23] = [
    "APP_LAUNCHED",
    "AM_LAUNCHED",
    "AM_STARTED",
    "DAG_SUBMITTED",
    "DAG_INITIALIZED",
    "DAG_STARTED",
    "DAG_FINISHED",
    "DAG_KILL_REQUEST",
    "VERTEX_INITIALIZED",
    "VERTEX_STARTED",
    "VERTEX_CONFIGURE_DONE",
    "VERTEX_FINISHED",
    "TASK_STARTED",
    "TASK_FINISHED",
    "TASK_ATTEMPT_STARTED",
    "TASK_ATTEMPT_FINISHED",
    "CONTAINER_LAUNCHED",
    "CONTAINER_STOPPED",
    "DAG_COMMIT_STARTED",
    "VERTEX_COMMIT_STARTED",
    "VERTEX_GROUP_COMMIT_STARTED",
    "VERTEX_GROUP_COMMIT_FINISHED",
    "DAG_RECOVERED",
];

#[derive(Default)]
struct VertexAcc {
    name: String,
    tasks: i64,
    line: usize,
}

struct DagAcc {
    id: String,
    name: String,
    plan: DagPlan,
    file: PathBuf,
    line: usize,
    status: Option<String>,
    /// By vertex index (the id's last part).
    vertices: HashMap<u32, VertexAcc>,
    /// (vertex index, task index) -> duration in seconds of the successful attempt.
    done: HashMap<(u32, u32), f64>,
    /// Demand from the AM configuration in force when the DAG was submitted.
    demand: ResVec,
}

#[derive(Default)]
struct Acc {
    dags: Vec<DagAcc>,
    by_id: HashMap<String, usize>,
    /// Attempt id -> (file number, line) of its TASK_ATTEMPT_FINISHED.
    attempts: HashMap<String, (usize, usize)>,
    files: Vec<PathBuf>,
    report: TezReport,
    demand: Option<ResVec>,
}

/// `dag_<ts>_<app>_<n>` from `vertex_<ts>_<app>_<n>_<v>`, `task_..._<v>_<t>` or
/// `attempt_..._<v>_<t>_<a>`, with the trailing numbers.
fn split_id<'a>(id: &'a str, prefix: &str, numbers: usize) -> Option<(String, Vec<u32>)> {
    let rest = id.strip_prefix(prefix)?;
    let mut parts: Vec<&'a str> = rest.rsplitn(numbers + 1, '_').collect();
    if parts.len() != numbers + 1 {
        return None;
    }
    let head = parts.pop()?;
    let mut nums = Vec::with_capacity(numbers);
    for p in parts.iter().rev() {
        nums.push(p.parse().ok()?);
    }
    Some((format!("dag_{head}"), nums))
}

fn tez_default_demand() -> ResVec {
    ResVec::from_slice(&[1.0, 1.0, 0.0, 0.0])
}

impl Acc {
    fn read(&mut self, text: &str, file: &Path) -> Result<()> {
        self.files.push(file.to_path_buf());
        let file_no = self.files.len() - 1;
        let limits = crate::limits::current();
        let mut line = 0usize;
        let mut rest = text;
        while !rest.is_empty() {
            line += 1;
            crate::deadline::poll()?;
            let (record, terminated) = match rest.find('\u{1}') {
                Some(end) => {
                    let r = &rest[..end];
                    rest = &rest[end + 1..];
                    // The line separator after the record separator (\n, or \r\n on Windows).
                    rest = rest.strip_prefix("\r\n").or_else(|| rest.strip_prefix('\n')).unwrap_or(rest);
                    (r, true)
                }
                None => {
                    let r = rest;
                    rest = "";
                    (r, false)
                }
            };
            if record.trim().is_empty() {
                if terminated {
                    return Err(Error::field("(record)", "an empty record").at_line(line));
                }
                continue;
            }
            if !terminated {
                return Err(Error::field(
                    "(record)",
                    "the last record is cut short (no \\u0001 record separator after it): the file was still being written or was truncated",
                )
                .at_line(line));
            }
            let rec: Record = serde_json::from_str(record)
                .map_err(|e| Error::field("(record)", format!("not a Tez history record: {e}")).at_line(line))?;
            self.record(rec, file, file_no, line).map_err(|e| e.at_line(line))?;
            limits.check_tasks(self.attempts.len() as u64, "task attempts in the history")?;
        }
        Ok(())
    }

    fn record(&mut self, rec: Record, file: &Path, file_no: usize, line: usize) -> Result<()> {
        let Some(first) = rec.events.first() else {
            return Err(Error::field("events", "missing or empty: no event type"));
        };
        let Some(kind) = first.eventtype.as_deref() else {
            return Err(Error::field("events[0].eventtype", "missing"));
        };
        if !KNOWN_EVENTS.contains(&kind) {
            return Err(Error::field("events[0].eventtype", format!("unknown Tez history event type '{kind}'")));
        }
        let entity =
            || rec.entity.as_deref().ok_or_else(|| Error::field("entity", format!("missing in a {kind} record")));
        let info = &rec.otherinfo;
        match kind {
            "APP_LAUNCHED" => {
                if let Some(c) = &info.config {
                    let num = |v: &Option<String>, key: &str, default: f64| -> Result<f64> {
                        match v {
                            None => Ok(default),
                            Some(s) => match s.trim().parse::<f64>() {
                                Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
                                _ => Err(Error::field(
                                    format!("otherinfo.config.{key}"),
                                    format!("'{s}' is not a positive number"),
                                )),
                            },
                        }
                    };
                    let mem = num(&c.memory_mb, "tez.task.resource.memory.mb", 1024.0)?;
                    let cpu = num(&c.vcores, "tez.task.resource.cpu.vcores", 1.0)?;
                    self.demand = Some(ResVec::from_slice(&[cpu, mem / 1024.0, 0.0, 0.0]));
                }
            }
            "DAG_SUBMITTED" => {
                let id = entity()?.to_string();
                let plan = info.dag_plan.clone().ok_or_else(|| Error::field("otherinfo.dagPlan", "missing"))?;
                let name = plan.dag_name.clone().unwrap_or_else(|| id.clone());
                if let Some(&i) = self.by_id.get(&id) {
                    let d = &self.dags[i];
                    return Err(Error::field(
                        "entity",
                        format!("DAG {id} is submitted twice (first in {} line {})", d.file.display(), d.line),
                    ));
                }
                crate::limits::current().check_stages(plan.vertices.len() as u64, "vertices of the DAG plan")?;
                self.by_id.insert(id.clone(), self.dags.len());
                self.dags.push(DagAcc {
                    id,
                    name,
                    plan,
                    file: file.to_path_buf(),
                    line,
                    status: None,
                    vertices: HashMap::new(),
                    done: HashMap::new(),
                    demand: self.demand.unwrap_or_else(tez_default_demand),
                });
            }
            "DAG_FINISHED" => {
                let id = entity()?;
                let status = info.status.clone().ok_or_else(|| Error::field("otherinfo.status", "missing"))?;
                let d = self.dag_mut(id, "entity")?;
                if d.status.is_some() {
                    return Err(Error::field("entity", format!("DAG {id} finishes twice")));
                }
                d.status = Some(status);
            }
            "VERTEX_INITIALIZED" | "VERTEX_CONFIGURE_DONE" => {
                let id = entity()?;
                let (dag, nums) = split_id(id, "vertex_", 1)
                    .ok_or_else(|| Error::field("entity", format!("'{id}' is not a Tez vertex id")))?;
                let d = self.dag_mut(&dag, "entity")?;
                let v = d.vertices.entry(nums[0]).or_default();
                if kind == "VERTEX_INITIALIZED" {
                    v.name = info.vertex_name.clone().ok_or_else(|| Error::field("otherinfo.vertexName", "missing"))?;
                    v.line = line;
                    if let Some(n) = info.num_tasks {
                        // A count set by VERTEX_CONFIGURE_DONE (the final one) wins.
                        if v.tasks <= 0 {
                            v.tasks = n;
                        }
                    } else {
                        return Err(Error::field("otherinfo.numTasks", "missing"));
                    }
                } else if let Some(n) = first.eventinfo.num_tasks {
                    v.tasks = n;
                }
            }
            "TASK_ATTEMPT_FINISHED" => {
                let id = entity()?;
                let (dag, nums) = split_id(id, "attempt_", 3)
                    .ok_or_else(|| Error::field("entity", format!("'{id}' is not a Tez task attempt id")))?;
                if let Some(&(f, l)) = self.attempts.get(id) {
                    return Err(Error::field(
                        "entity",
                        format!("task attempt {id} ends twice (first in {} line {l})", self.files[f].display()),
                    ));
                }
                self.attempts.insert(id.to_string(), (file_no, line));
                let status = info.status.as_deref().ok_or_else(|| Error::field("otherinfo.status", "missing"))?;
                match status {
                    "SUCCEEDED" => {
                        let start = info.start_time.ok_or_else(|| Error::field("otherinfo.startTime", "missing"))?;
                        let end = info.end_time.ok_or_else(|| Error::field("otherinfo.endTime", "missing"))?;
                        if start < 0 {
                            return Err(Error::field("otherinfo.startTime", format!("{start} is below 0")));
                        }
                        if end < start {
                            return Err(Error::field(
                                "otherinfo.endTime",
                                format!("{end} is before startTime {start}"),
                            ));
                        }
                        // Both are >= 0, so the difference fits.
                        let secs = (end - start) as f64 / 1000.0;
                        if secs > crate::limits::MAX_SECONDS {
                            return Err(Error::field(
                                "otherinfo.endTime",
                                format!("the attempt lasts {secs} s, beyond {} s", crate::limits::MAX_SECONDS),
                            ));
                        }
                        let d = self.dag_mut(&dag, "entity")?;
                        if d.done.insert((nums[0], nums[1]), secs).is_some() {
                            return Err(Error::field(
                                "entity",
                                format!("a second attempt of task {} succeeded", nums[1]),
                            ));
                        }
                    }
                    "FAILED" => self.report.attempts_failed += 1,
                    "KILLED" => self.report.attempts_killed += 1,
                    other => {
                        return Err(Error::field(
                            "otherinfo.status",
                            format!("'{other}' is not a final attempt state (SUCCEEDED, FAILED, KILLED)"),
                        ))
                    }
                }
            }
            _ => self.report.events_ignored += 1,
        }
        Ok(())
    }

    fn dag_mut(&mut self, id: &str, field: &str) -> Result<&mut DagAcc> {
        match self.by_id.get(id) {
            Some(&i) => Ok(&mut self.dags[i]),
            None => Err(Error::field(
                field,
                format!("DAG {id} was never submitted (no DAG_SUBMITTED record before this one)"),
            )),
        }
    }

    fn finish(mut self, files: usize) -> Result<TezHistory> {
        self.report.files = files;
        let mut runs = Vec::new();
        let mut left_out = Vec::new();
        let mut total_tasks = 0u64;
        for d in std::mem::take(&mut self.dags) {
            let note = |n: &mut (usize, Option<String>), name: &str| {
                n.0 += 1;
                n.1.get_or_insert_with(|| name.to_string());
            };
            match d.status.as_deref() {
                Some("SUCCEEDED") => {}
                Some("KILLED") => {
                    note(&mut self.report.dags_killed, &d.name);
                    left_out.push((d.id, d.name, "it was killed".into()));
                    continue;
                }
                Some(s) => {
                    note(&mut self.report.dags_failed, &d.name);
                    left_out.push((d.id, d.name, format!("it ended {s}")));
                    continue;
                }
                None => {
                    note(&mut self.report.dags_unfinished, &d.name);
                    left_out.push((d.id, d.name, "it never finished in the history".into()));
                    continue;
                }
            }
            let at = |e: Error| match e {
                Error::Field { field, message } => {
                    Error::field(format!("DAG {} ('{}', submitted at line {}): {field}", d.id, d.name, d.line), message)
                }
                e => e,
            };
            let run = build(&d, &mut total_tasks).map_err(|e| at(e).in_file(&d.file))?;
            runs.push(run);
        }
        self.report.dags_read = runs.len();
        Ok(TezHistory { runs, left_out, report: self.report })
    }
}

fn build(d: &DagAcc, total_tasks: &mut u64) -> Result<TezRun> {
    let limits = crate::limits::current();
    let mut by_name: HashMap<&str, (u32, &VertexAcc)> = HashMap::with_capacity(d.vertices.len());
    // Vertices with a VERTEX_INITIALIZED record (one that was only reconfigured has no name).
    for (i, v) in d.vertices.iter().filter(|(_, v)| v.line > 0) {
        if let Some((_, other)) = by_name.insert(v.name.as_str(), (*i, v)) {
            let lines = (other.line.min(v.line), other.line.max(v.line));
            return Err(Error::field(
                format!("vertex '{}'", v.name),
                format!(
                    "two vertices of the DAG have this name (VERTEX_INITIALIZED at lines {} and {})",
                    lines.0, lines.1
                ),
            ));
        }
    }
    let mut specs = Vec::with_capacity(d.plan.vertices.len());
    let mut names = Vec::with_capacity(d.plan.vertices.len());
    for (i, pv) in d.plan.vertices.iter().enumerate() {
        crate::deadline::poll()?;
        let name = pv
            .vertex_name
            .as_deref()
            .ok_or_else(|| Error::field(format!("otherinfo.dagPlan.vertices[{i}].vertexName"), "missing"))?;
        names.push(name);
        let Some(&(vi, v)) = by_name.get(name) else {
            return Err(Error::field(format!("vertex '{name}'"), "no VERTEX_INITIALIZED record"));
        };
        if v.tasks <= 0 {
            return Err(Error::field(format!("vertex '{name}' (line {}) numTasks", v.line), "the vertex has no tasks"));
        }
        *total_tasks += v.tasks as u64;
        limits.check_tasks(*total_tasks, "tasks of the history's DAGs")?;
        let mut tasks = Vec::with_capacity(v.tasks as usize);
        for t in 0..v.tasks as u32 {
            crate::deadline::poll()?;
            let Some(&secs) = d.done.get(&(vi, t)) else {
                return Err(Error::field(
                    format!("vertex '{name}' task {t}"),
                    "the DAG succeeded, but no TASK_ATTEMPT_FINISHED record says this task did",
                ));
            };
            tasks.push(TaskSpec { duration: secs, demand: d.demand });
        }
        specs.push(StageSpec { name: name.to_string(), group: None, tasks, parents: Vec::new() });
    }
    for (vi, t) in d.done.keys() {
        let known = d.vertices.get(vi).is_some_and(|v| i64::from(*t) < v.tasks);
        if !known {
            let name = d.vertices.get(vi).map(|v| v.name.as_str()).unwrap_or("?");
            return Err(Error::field(
                format!("vertex '{name}' task {t}"),
                "an attempt of this task succeeded, but the vertex has fewer tasks (numTasks)",
            ));
        }
    }
    let index: HashMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut edges = Vec::with_capacity(d.plan.edges.len());
    let mut seen = std::collections::HashSet::with_capacity(d.plan.edges.len());
    for (i, e) in d.plan.edges.iter().enumerate() {
        let f = |k: &str| format!("otherinfo.dagPlan.edges[{i}].{k}");
        let src = e.input.as_deref().ok_or_else(|| Error::field(f("inputVertexName"), "missing"))?;
        let dst = e.output.as_deref().ok_or_else(|| Error::field(f("outputVertexName"), "missing"))?;
        let kind = match e.movement.as_deref() {
            Some("SCATTER_GATHER" | "BROADCAST" | "CUSTOM") => EdgeKind::AllToAll,
            Some("ONE_TO_ONE") => EdgeKind::OneToOne,
            Some(other) => {
                return Err(Error::field(f("dataMovementType"), format!("unknown data movement type '{other}'")))
            }
            None => return Err(Error::field(f("dataMovementType"), "missing")),
        };
        for (v, k) in [(src, "inputVertexName"), (dst, "outputVertexName")] {
            if !index.contains_key(v) {
                return Err(Error::field(f(k), format!("'{v}' is not a vertex of the DAG plan")));
            }
        }
        if !seen.insert((src, dst)) {
            return Err(Error::field(f("outputVertexName"), format!("a second edge from '{src}' to '{dst}'")));
        }
        specs[index[dst]].parents.push((src.to_string(), kind));
        edges.push((src, dst));
    }
    let signature = signature(names.iter().copied(), edges.iter().copied());
    let mut b = DagBuilder::new(d.name.clone(), super::native::default_resources());
    for s in specs {
        b.stage(s);
    }
    let dag = b.build()?;
    Ok(TezRun { id: d.id.clone(), dag, signature, file: d.file.clone(), line: d.line })
}

impl TezHistory {
    /// The DAGs, all that succeeded or the one `pick` names: a DAG name, a Tez DAG id, or a
    /// number N for the N-th DAG of the history (counting from 1, in submission order, the DAGs
    /// left out included). Picking a DAG that was left out says why.
    pub fn dags(self, pick: Option<&str>) -> Result<Vec<Dag>> {
        self.pick(pick).map(|runs| runs.into_iter().map(|r| r.dag).collect())
    }

    pub fn pick(self, pick: Option<&str>) -> Result<Vec<TezRun>> {
        let Some(want) = pick else {
            if self.runs.is_empty() {
                return Err(Error::Usage(format!("the history holds no DAG that succeeded ({})", self.report)));
            }
            return Ok(self.runs);
        };
        let want = want.trim();
        // Submission order of all DAGs, read and left out: (id, name, run index or why).
        let mut all: Vec<(&str, &str, std::result::Result<usize, &str>)> = Vec::new();
        // In submission order: Tez numbers DAGs by cluster timestamp, application, then DAG.
        for (i, r) in self.runs.iter().enumerate() {
            all.push((r.id.as_str(), r.dag.name.as_str(), Ok(i)));
        }
        for (id, name, why) in &self.left_out {
            all.push((id.as_str(), name.as_str(), Err(why.as_str())));
        }
        all.sort_by_cached_key(|a| id_order(a.0));
        let found: Vec<usize> = if let Ok(n) = want.parse::<usize>() {
            if n == 0 || n > all.len() {
                return Err(Error::Usage(format!(
                    "--dag {n}: the history holds {} DAGs (1 to {})",
                    all.len(),
                    all.len()
                )));
            }
            vec![n - 1]
        } else {
            let by_id: Vec<usize> = (0..all.len()).filter(|&i| all[i].0 == want).collect();
            if by_id.is_empty() {
                (0..all.len()).filter(|&i| all[i].1 == want).collect()
            } else {
                by_id
            }
        };
        match found.as_slice() {
            [] => {
                let names: Vec<String> =
                    all.iter().take(8).enumerate().map(|(i, a)| format!("{} {}", i + 1, a.1)).collect();
                let more = if all.len() > 8 { ", ..." } else { "" };
                Err(Error::Usage(format!(
                    "--dag {want}: no such DAG in the history (it holds: {}{more})",
                    names.join(", ")
                )))
            }
            [one] => match all[*one].2 {
                Ok(i) => Ok(vec![self.runs[i].clone()]),
                Err(why) => Err(Error::Usage(format!(
                    "--dag {want}: DAG {} ('{}') is left out: {why}",
                    all[*one].0, all[*one].1
                ))),
            },
            several => {
                let ids: Vec<&str> = several.iter().map(|&i| all[i].0).collect();
                Err(Error::Usage(format!(
                    "--dag {want}: {} DAGs have this name ({}); pick one by its id or number",
                    several.len(),
                    ids.join(", ")
                )))
            }
        }
    }
}

/// Sorts Tez DAG ids by cluster timestamp, application, then DAG number (numerically).
fn id_order(id: &str) -> (Vec<u64>, String) {
    let nums = id
        .strip_prefix("dag_")
        .map(|r| r.split('_').map(|p| p.parse().unwrap_or(u64::MAX)).collect())
        .unwrap_or_default();
    (nums, id.to_string())
}

/// One DAG per signature, made from every run of that signature: the latest run's tasks
/// (its parallelism), each task of a vertex lasting the median of that vertex's task
/// durations over all runs. Runs without a signature are refused.
pub fn merge_runs(runs: &[&TezRun]) -> Result<Dag> {
    let last = runs.last().ok_or_else(|| Error::Usage("no run to merge".into()))?;
    if runs.len() == 1 {
        return Ok(last.dag.clone());
    }
    let mut b = DagBuilder::new(last.dag.name.clone(), last.dag.resources.clone());
    for s in &last.dag.stages {
        let mut durations: Vec<f64> = Vec::new();
        for r in runs {
            let Some(id) = r.dag.stage_by_name(&s.name) else {
                return Err(Error::Usage(format!(
                    "runs {} and {} share a signature but not vertex '{}'",
                    r.id, last.id, s.name
                )));
            };
            durations.extend(r.dag.stages[id as usize].tasks().map(|t| r.dag.tasks[t as usize].duration));
        }
        durations.sort_by(f64::total_cmp);
        let n = durations.len();
        let median = if n % 2 == 1 { durations[n / 2] } else { (durations[n / 2 - 1] + durations[n / 2]) / 2.0 };
        let tasks =
            s.tasks().map(|t| TaskSpec { duration: median, demand: last.dag.tasks[t as usize].demand }).collect();
        let parents = s.parents.iter().map(|p| (last.dag.stages[p.stage as usize].name.clone(), p.kind)).collect();
        b.stage(StageSpec { name: s.name.clone(), group: None, tasks, parents });
    }
    b.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_test_vector() {
        // printf 'v\tMap 1\nv\tMap 2\nv\tReducer 3\ne\tMap 1\tReducer 3\ne\tMap 2\tReducer 3\n' | sha256sum
        let s = signature(["Reducer 3", "Map 2", "Map 1"], [("Map 2", "Reducer 3"), ("Map 1", "Reducer 3")]).unwrap();
        assert_eq!(s, TEST_VECTOR);
        assert_eq!(signature(["a\tb"], []), None);
        assert_eq!(signature(["a"], [("a", "b\n")]), None);
    }

    pub(crate) const TEST_VECTOR: &str = "101843599e02475317b784fba8058a85d1a0d208acb6f7262098ece585f2be7d";

    #[test]
    fn split_ids() {
        assert_eq!(
            split_id("attempt_17_0001_2_02_000001_0", "attempt_", 3),
            Some(("dag_17_0001_2".into(), vec![2, 1, 0]))
        );
        assert_eq!(split_id("vertex_17_0001_2_03", "vertex_", 1), Some(("dag_17_0001_2".into(), vec![3])));
        assert_eq!(split_id("vertex_x", "vertex_", 1), None);
        assert_eq!(split_id("task_1_2", "attempt_", 1), None);
    }

    const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/tez/history");
    /// The second session's file (etl-q2 alone), whatever its application attempt id.
    fn second() -> String {
        let mut names: Vec<String> =
            std::fs::read_dir(DIR).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names.pop().unwrap()
    }

    /// The raw records of a history file, parsed here with serde_json alone.
    fn raw(text: &str) -> Vec<serde_json::Value> {
        let recs: Vec<&str> = text.split("\u{1}\n").collect();
        assert_eq!(recs.last(), Some(&""), "every record ends with the separator");
        recs[..recs.len() - 1].iter().map(|r| serde_json::from_str(r).unwrap()).collect()
    }

    fn kind(v: &serde_json::Value) -> &str {
        v["events"][0]["eventtype"].as_str().unwrap()
    }

    /// What the fixtures hold, computed from the raw records without the reader: per DAG that
    /// succeeded, (name, signature input, per vertex (name, sorted durations in ms)), and the
    /// failed and killed attempt counts.
    #[test]
    fn fixtures_read_as_the_raw_records_say() {
        type Shape = (String, Vec<(String, String, String)>, Vec<(String, Vec<i64>)>);
        let mut expect: Vec<Shape> = Vec::new();
        let (mut failed, mut killed, mut dags_failed) = (0, 0, 0);
        let mut names: Vec<_> = std::fs::read_dir(DIR).unwrap().map(|e| e.unwrap().path()).collect();
        names.sort();
        for path in &names {
            let recs = raw(&std::fs::read_to_string(path).unwrap());
            let status: HashMap<String, String> = recs
                .iter()
                .filter(|r| kind(r) == "DAG_FINISHED")
                .map(|r| {
                    (r["entity"].as_str().unwrap().to_string(), r["otherinfo"]["status"].as_str().unwrap().to_string())
                })
                .collect();
            let vname: HashMap<String, String> = recs
                .iter()
                .filter(|r| kind(r) == "VERTEX_INITIALIZED")
                .map(|r| {
                    (
                        r["entity"].as_str().unwrap().to_string(),
                        r["otherinfo"]["vertexName"].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            for r in &recs {
                if kind(r) == "TASK_ATTEMPT_FINISHED" {
                    match r["otherinfo"]["status"].as_str().unwrap() {
                        "FAILED" => failed += 1,
                        "KILLED" => killed += 1,
                        _ => {}
                    }
                }
            }
            for r in recs.iter().filter(|r| kind(r) == "DAG_SUBMITTED") {
                let id = r["entity"].as_str().unwrap();
                if status[id] != "SUCCEEDED" {
                    dags_failed += 1;
                    continue;
                }
                let plan = &r["otherinfo"]["dagPlan"];
                let mut edges: Vec<(String, String, String)> = plan["edges"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| {
                        let s = |k: &str| e[k].as_str().unwrap().to_string();
                        (s("inputVertexName"), s("outputVertexName"), s("dataMovementType"))
                    })
                    .collect();
                edges.sort();
                let mut vertices = Vec::new();
                for v in plan["vertices"].as_array().unwrap() {
                    let name = v["vertexName"].as_str().unwrap().to_string();
                    let vid = vname
                        .iter()
                        .find(|(k, n)| **n == name && k.starts_with(&id.replace("dag_", "vertex_")))
                        .unwrap()
                        .0;
                    let mut ms: Vec<i64> = recs
                        .iter()
                        .filter(|a| kind(a) == "TASK_ATTEMPT_FINISHED" && a["otherinfo"]["status"] == "SUCCEEDED")
                        .filter(|a| {
                            a["entity"]
                                .as_str()
                                .unwrap()
                                .starts_with(&format!("{}_", vid.replace("vertex_", "attempt_")))
                        })
                        .map(|a| {
                            a["otherinfo"]["endTime"].as_i64().unwrap() - a["otherinfo"]["startTime"].as_i64().unwrap()
                        })
                        .collect();
                    ms.sort();
                    vertices.push((name, ms));
                }
                vertices.sort();
                expect.push((plan["dagName"].as_str().unwrap().to_string(), edges, vertices));
            }
        }
        let h = read(Path::new(DIR)).unwrap();
        assert_eq!(h.report.files, 2);
        assert_eq!((h.report.attempts_failed, h.report.attempts_killed), (failed, killed));
        assert_eq!(h.report.dags_failed.0, dags_failed);
        assert_eq!(h.report.dags_failed.1.as_deref(), Some("doomed"));
        // The fixtures' own shapes (tests/data/tez/README.md).
        assert_eq!((failed, killed, dags_failed), (3, 1, 1));
        let got: Vec<_> = h
            .runs
            .iter()
            .map(|r| {
                let d = &r.dag;
                let mut edges: Vec<(String, String, String)> = d
                    .stages
                    .iter()
                    .flat_map(|s| {
                        s.parents.iter().map(|p| {
                            let kind = match p.kind {
                                EdgeKind::OneToOne => "ONE_TO_ONE",
                                EdgeKind::AllToAll => "all-to-all",
                            };
                            (d.stages[p.stage as usize].name.clone(), s.name.clone(), kind.to_string())
                        })
                    })
                    .collect();
                edges.sort();
                let mut vertices: Vec<(String, Vec<i64>)> = d
                    .stages
                    .iter()
                    .map(|s| {
                        let mut ms: Vec<i64> =
                            s.tasks().map(|t| (d.tasks[t as usize].duration * 1000.0).round() as i64).collect();
                        ms.sort();
                        (s.name.clone(), ms)
                    })
                    .collect();
                vertices.sort();
                (d.name.clone(), edges, vertices)
            })
            .collect();
        assert_eq!(got.len(), expect.len());
        assert_eq!(expect.iter().map(|e| e.0.as_str()).collect::<Vec<_>>(), ["etl-q1", "diamond", "etl-q2"]);
        for (g, e) in got.iter().zip(&expect) {
            assert_eq!(g.0, e.0);
            assert_eq!(g.2, e.2, "{}: vertices, task counts and durations", g.0);
            let mapped: Vec<(String, String, String)> =
                e.1.iter()
                    .map(|(a, b, m)| {
                        (a.clone(), b.clone(), if m == "ONE_TO_ONE" { m.clone() } else { "all-to-all".into() })
                    })
                    .collect();
            assert_eq!(g.1, mapped, "{}: edges", g.0);
        }
        // etl-q1 and etl-q2 have the shape of the test vector; every task: Tez's default container.
        assert_eq!(h.runs[0].signature.as_deref(), Some(TEST_VECTOR));
        assert_eq!(h.runs[2].signature.as_deref(), Some(TEST_VECTOR));
        assert_ne!(h.runs[1].signature.as_deref(), Some(TEST_VECTOR));
        assert_eq!(dag_signature(&h.runs[1].dag), h.runs[1].signature);
        assert!(h.runs.iter().all(|r| r.dag.tasks.iter().all(|t| t.demand.0[..2] == [1.0, 1.0])));
    }

    #[test]
    fn pick_by_name_id_and_number() {
        let h = || read(Path::new(DIR)).unwrap();
        assert_eq!(h().dags(None).unwrap().len(), 3);
        assert_eq!(h().dags(Some("diamond")).unwrap()[0].name, "diamond");
        assert_eq!(h().dags(Some("4")).unwrap()[0].name, "etl-q2");
        let id = h().runs[0].id.clone();
        assert_eq!(h().dags(Some(&id)).unwrap()[0].name, "etl-q1");
        let e = h().dags(Some("3")).unwrap_err().to_string();
        assert!(e.contains("'doomed') is left out: it ended FAILED"), "{e}");
        let e = h().dags(Some("nope")).unwrap_err().to_string();
        assert!(e.contains("no such DAG") && e.contains("2 diamond"), "{e}");
        assert!(h().dags(Some("0")).is_err());
    }

    #[test]
    fn median_over_runs_with_the_latest_parallelism() {
        let h = read(Path::new(DIR)).unwrap();
        let runs: Vec<&TezRun> = [&h.runs[0], &h.runs[2]].into();
        let merged = merge_runs(&runs).unwrap();
        for s in &merged.stages {
            let mut all: Vec<f64> = runs
                .iter()
                .flat_map(|r| {
                    let st = &r.dag.stages[r.dag.stage_by_name(&s.name).unwrap() as usize];
                    st.tasks().map(|t| r.dag.tasks[t as usize].duration).collect::<Vec<_>>()
                })
                .collect();
            all.sort_by(f64::total_cmp);
            let n = all.len();
            let median = if n % 2 == 1 { all[n / 2] } else { (all[n / 2 - 1] + all[n / 2]) / 2.0 };
            let latest = &h.runs[2].dag;
            assert_eq!(s.len, latest.stages[latest.stage_by_name(&s.name).unwrap() as usize].len);
            assert!(s.tasks().all(|t| merged.tasks[t as usize].duration == median), "{}", s.name);
        }
        assert_eq!(dag_signature(&merged).as_deref(), Some(TEST_VECTOR));
    }

    /// The second fixture with its records edited: `f(index, record)` returns the records to
    /// write in its place.
    fn edited(f: impl Fn(usize, &str) -> Vec<String>) -> (tempfile::TempDir, PathBuf) {
        let text = std::fs::read_to_string(Path::new(DIR).join(second())).unwrap();
        let recs: Vec<&str> = text.split("\u{1}\n").filter(|r| !r.is_empty()).collect();
        let mut out = String::new();
        for (i, r) in recs.iter().enumerate() {
            for x in f(i, r) {
                out += &x;
                out += "\u{1}\n";
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(second());
        std::fs::write(&path, out).unwrap();
        (dir, path)
    }

    fn err(path: &Path) -> String {
        read(path).unwrap_err().to_string()
    }

    #[test]
    fn malformed_history_names_file_line_and_field() {
        // A truncated last record.
        let (_d, path) = edited(|_, r| vec![r.to_string()]);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines = text.matches('\u{1}').count();
        std::fs::write(&path, &text[..text.len() - 40]).unwrap();
        let e = err(&path);
        assert!(e.contains(&second()) && e.contains(&format!("line {lines}")) && e.contains("cut short"), "{e}");

        // An unknown event type (line 2 is AM_STARTED).
        let (_d, path) =
            edited(|i, r| vec![if i == 1 { r.replace("AM_STARTED", "AM_EXPLODED") } else { r.to_string() }]);
        let e = err(&path);
        assert!(
            e.contains(&second())
                && e.contains("line 2")
                && e.contains("events[0].eventtype")
                && e.contains("AM_EXPLODED"),
            "{e}"
        );

        // A vertex with no tasks.
        let zero = |r: &str| {
            let mut v: serde_json::Value = serde_json::from_str(r).unwrap();
            if kind(&v) == "VERTEX_INITIALIZED" && v["otherinfo"]["vertexName"] == "Map 2" {
                v["otherinfo"]["numTasks"] = 0.into();
            }
            if kind(&v) == "VERTEX_CONFIGURE_DONE" && v["entity"].as_str().unwrap().ends_with("_01") {
                v["events"][0]["eventinfo"]["numTasks"] = 0.into();
            }
            v.to_string()
        };
        let (_d, path) = edited(|_, r| vec![zero(r)]);
        let e = err(&path);
        assert!(
            e.contains(&second()) && e.contains("vertex 'Map 2' (line 9) numTasks") && e.contains("no tasks"),
            "{e}"
        );

        // An attempt that ends twice.
        let mut first = None;
        let (_d, path) = {
            let text = std::fs::read_to_string(Path::new(DIR).join(second())).unwrap();
            let recs: Vec<&str> = text.split("\u{1}\n").collect();
            first = recs.iter().position(|r| r.contains("\"TASK_ATTEMPT_FINISHED\"")).or(first);
            let at = first.unwrap();
            edited(move |i, r| if i == at { vec![r.to_string(), r.to_string()] } else { vec![r.to_string()] })
        };
        let at = first.unwrap() + 1;
        let e = err(&path);
        assert!(
            e.contains(&second())
                && e.contains(&format!("line {}", at + 1))
                && e.contains("entity")
                && e.contains(&format!("ends twice (first in {} line {at})", path.display())),
            "{e}"
        );

        // Not JSON at all, and a record with no events.
        let (_d, path) = edited(|i, r| vec![if i == 2 { "{nope".into() } else { r.to_string() }]);
        let e = err(&path);
        assert!(e.contains("line 3") && e.contains("not a Tez history record"), "{e}");
        let (_d, path) =
            edited(|i, r| vec![if i == 2 { r#"{"entity":"x","events":[]}"#.into() } else { r.to_string() }]);
        assert!(err(&path).contains("line 3: events: missing or empty"), "{}", err(&path));
    }

    #[test]
    fn detection_and_latin1() {
        let text = std::fs::read_to_string(Path::new(DIR).join(second())).unwrap();
        assert!(looks_like_tez_text(&text));
        assert!(!looks_like_tez_text(r#"{"stages": []}"#));
        assert!(looks_like_tez(Path::new(DIR)));
        assert!(looks_like_tez(&Path::new(DIR).join(second())));
        // Tez writes the low byte of each character: a vertex named "Map é" is the byte 0xE9.
        let bytes: Vec<u8> = text.replace("Map 2", "Map \u{e9}").chars().map(|c| c as u32 as u8).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(second());
        std::fs::write(&path, bytes).unwrap();
        let h = read(&path).unwrap();
        assert!(h.runs[0].dag.stage_by_name("Map \u{e9}").is_some());
    }
}
