//! Alibaba cluster-trace-v2018 batch jobs.
//!
//! Two layouts, told apart by the column count of the first row (neither has a header; a raw
//! file starting with the trace's own `task_name,...` header line is accepted too):
//!
//! * raw `batch_task.csv`, 9 columns:
//!   `task_name,instance_num,job_name,task_type,status,start_time,end_time,plan_cpu,plan_mem`.
//!   Only rows whose status is `Terminated` are kept (the others never ran to completion, so
//!   they have no duration to replay); the report counts the rows dropped. A job arrives at the
//!   earliest `start_time` of its kept tasks, measured from the earliest arrival in the file, and
//!   a task runs `end_time - start_time` seconds.
//! * the spar one-hour sample (`sample_tasks.csv` of `../shared/data/alibaba-v2018-spar/`),
//!   7 columns: `arrival_s,job_name,task_name,duration_s,plan_cpu,plan_mem,instance_num`.
//!
//! # From rows to DAGs
//!
//! An Alibaba *task* is a row: it becomes one stage of its job with `instance_num` tasks (the
//! trace's *instances*), each demanding `cpu = plan_cpu / 100` cores and `mem = plan_mem`
//! (memory in units of 1/100 of a machine), `disk = net = 0`. Alibaba's machines are
//! [`MACHINE_CPU`] cores and [`MACHINE_MEM`] memory units. Rows of a job need not be adjacent.
//!
//! Dependencies come from task names: `M1`, `R2_1`, `J3_1_2` are an operator type (letters), the
//! task's id within its job, then the ids of its parents, so `J3_1_2` waits for tasks 1 and 2
//! (all-to-all edges). A parent listed twice is one edge. A name whose letters are not followed
//! by a digit (`task_MzQw...`, `MergeTask`) carries no dependency: the task is an independent
//! stage. A job may mix both kinds; its independent tasks are then source-and-sink stages of the
//! same job, running beside its DAG, as nothing in the trace ties them to it. Stage names are the
//! task names.
//!
//! # What is skipped
//!
//! A job the trace describes inconsistently is skipped whole and counted by its first problem,
//! never repaired by guessing: a parent id no task of the job has (`missing parent`), a parent
//! that is a non-Terminated task of the raw trace (`parent not terminated`), a dependency cycle,
//! two tasks with one id or one name (`duplicate task id`), a name with letters and digits that
//! does not parse as ids (`non-numeric task id`, e.g. `M1_Stg1`), `instance_num` < 1, a negative
//! duration, a negative demand, an empty field (`missing value`), or no Terminated task at all.
//! Text that is not a number where a number belongs, or a row with the wrong column count, is a
//! malformed file rather than a broken DAG, and is an error naming the line and column.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use crate::error::{Error, Result};
use crate::model::{DagBuilder, EdgeKind, Job, ResVec, StageSpec, TaskSpec, Workload};

use super::{field_position, resources, thousands, MAX_TASKS_PER_STAGE};

/// Columns of the raw `batch_task.csv`.
pub const RAW_COLUMNS: usize = 9;
/// Columns of the spar sample.
pub const SPAR_COLUMNS: usize = 7;
/// Cores of an Alibaba machine (the trace's default cluster).
pub const MACHINE_CPU: f64 = 96.0;
/// Memory of an Alibaba machine, in the trace's normalized units.
pub const MACHINE_MEM: f64 = 100.0;
/// The queue of every job (the trace has no queues; `--queues K` spreads them).
pub const DEFAULT_QUEUE: &str = "default";

/// Why a job was skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SkipReason {
    MissingParent,
    ParentNotTerminated,
    Cycle,
    DuplicateTaskId,
    NonNumericTaskId,
    BadInstanceNum,
    /// `instance_num` above the most tasks a stage may hold.
    TooManyInstances,
    NegativeDuration,
    /// A duration above `limits::MAX_SECONDS` (such a clock cannot be simulated precisely).
    DurationTooLarge,
    /// A start time more than `limits::MAX_SECONDS` after the trace's first.
    ArrivalTooLate,
    NegativeDemand,
    MissingValue,
    NoTerminatedTask,
    /// Anything else the DAG checks reject (kept so that no job is dropped unexplained).
    Invalid,
}

impl SkipReason {
    pub fn as_str(&self) -> &'static str {
        match self {
            SkipReason::MissingParent => "missing parent",
            SkipReason::ParentNotTerminated => "parent not terminated",
            SkipReason::Cycle => "cycle",
            SkipReason::DuplicateTaskId => "duplicate task id",
            SkipReason::NonNumericTaskId => "non-numeric task id",
            SkipReason::BadInstanceNum => "instance_num < 1",
            SkipReason::TooManyInstances => "instance_num above the per-stage limit",
            SkipReason::NegativeDuration => "negative duration",
            SkipReason::DurationTooLarge => "duration above 1e12 s",
            SkipReason::ArrivalTooLate => "arrival over 1e12 s after the first",
            SkipReason::NegativeDemand => "negative demand",
            SkipReason::MissingValue => "missing value",
            SkipReason::NoTerminatedTask => "no terminated task",
            SkipReason::Invalid => "invalid DAG",
        }
    }
}

/// What a reader left out, so that a caller can tell the user instead of replaying a silently
/// smaller trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkipReport {
    /// Jobs skipped per reason, with the first such job's name (to look at in the file).
    pub jobs: BTreeMap<SkipReason, (usize, String)>,
    /// Rows of the raw trace dropped because their status is not `Terminated`.
    pub rows_not_terminated: usize,
    /// What other readers say they left out or merged (a Spark log's report), one line each.
    pub notes: Vec<String>,
}

impl SkipReport {
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty() && self.rows_not_terminated == 0 && self.notes.is_empty()
    }

    pub fn jobs_skipped(&self) -> usize {
        self.jobs.values().map(|(n, _)| n).sum()
    }

    pub fn count(&self, reason: SkipReason) -> usize {
        self.jobs.get(&reason).map_or(0, |(n, _)| *n)
    }

    fn skip(&mut self, reason: SkipReason, job: &str) {
        let e = self.jobs.entry(reason).or_insert_with(|| (0, job.to_string()));
        e.0 += 1;
    }
}

/// `skipped 12 jobs: 7 missing parent (first: j_12), 5 cycle (first: j_40); dropped 3 rows not
/// Terminated`, or `nothing skipped`.
impl fmt::Display for SkipReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return write!(f, "nothing skipped");
        }
        let mut parts = Vec::new();
        if !self.jobs.is_empty() {
            let n = self.jobs_skipped();
            let reasons: Vec<String> = self
                .jobs
                .iter()
                .map(|(r, (k, first))| format!("{} {} (first: {first})", thousands(*k), r.as_str()))
                .collect();
            parts.push(format!(
                "skipped {} job{}: {}",
                thousands(n),
                if n == 1 { "" } else { "s" },
                reasons.join(", ")
            ));
        }
        if self.rows_not_terminated > 0 {
            let n = self.rows_not_terminated;
            parts.push(format!("dropped {} row{} not Terminated", thousands(n), if n == 1 { "" } else { "s" }));
        }
        parts.extend(self.notes.iter().cloned());
        write!(f, "{}", parts.join("; "))
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    Raw,
    Spar,
}

/// Column indices of one layout.
struct Cols {
    task: usize,
    instances: usize,
    job: usize,
    cpu: usize,
    mem: usize,
}

const RAW: Cols = Cols { task: 0, instances: 1, job: 2, cpu: 7, mem: 8 };
const SPAR: Cols = Cols { task: 2, instances: 6, job: 1, cpu: 4, mem: 5 };
const RAW_NAMES: [&str; RAW_COLUMNS] =
    ["task_name", "instance_num", "job_name", "task_type", "status", "start_time", "end_time", "plan_cpu", "plan_mem"];
const SPAR_NAMES: [&str; SPAR_COLUMNS] =
    ["arrival_s", "job_name", "task_name", "duration_s", "plan_cpu", "plan_mem", "instance_num"];

/// What a task name says about dependencies.
#[derive(Debug, PartialEq, Eq)]
enum Name {
    /// `task_...`: no dependency information.
    Independent,
    /// `J3_1_2`: id 3, parents 1 and 2.
    Dag { id: u32, parents: Vec<u32> },
    /// Letters and digits that do not parse as ids.
    Bad,
}

fn parse_name(name: &str) -> Name {
    let rest = name.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    if rest.len() == name.len() {
        return Name::Bad;
    }
    if !rest.starts_with(|c: char| c.is_ascii_digit()) {
        return Name::Independent;
    }
    let mut ids =
        rest.split('_').map(|p| if p.bytes().all(|b| b.is_ascii_digit()) { p.parse::<u32>().ok() } else { None });
    let Some(Some(id)) = ids.next() else { return Name::Bad };
    let Some(mut parents) = ids.collect::<Option<Vec<u32>>>() else { return Name::Bad };
    // A parent listed twice is one edge, kept where it is first listed (found with a set: a
    // scan of the parents so far was quadratic in a name listing many).
    if parents.len() > 1 {
        let mut seen = HashSet::with_capacity(parents.len());
        parents.retain(|p| seen.insert(*p));
    }
    Name::Dag { id, parents }
}

/// One kept row (an Alibaba task).
struct Row {
    name: String,
    kind: Name,
    instances: u32,
    duration: f64,
    cpu: f64,
    mem: f64,
}

struct JobRows {
    name: String,
    first_line: u64,
    /// Spar: the job's arrival; raw: the earliest start of a kept task (None: none yet).
    arrival: Option<f64>,
    rows: Vec<Row>,
    /// Ids of the raw trace's non-Terminated tasks of this job.
    dropped: Vec<u32>,
    problem: Option<SkipReason>,
}

impl JobRows {
    fn flag(&mut self, reason: SkipReason) {
        self.problem.get_or_insert(reason);
    }
}

/// A number field: empty fields are a gap of the trace (the job is skipped), text that is not a
/// number is a malformed file (an error).
enum Num {
    Empty,
    Value(f64),
}

/// Reads either Alibaba layout. Errors are positioned (line, column, field).
pub fn read(text: &str) -> Result<(Workload, SkipReport)> {
    let mut rdr = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(text.as_bytes());
    let mut record = csv::ByteRecord::new();
    let mut layout: Option<Layout> = None;
    let mut jobs: Vec<JobRows> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    let mut total_tasks = 0u64;
    let mut report = SkipReport::default();

    while rdr.read_byte_record(&mut record).map_err(csv_error)? {
        let (line, byte) = record.position().map_or((0, 0), |p| (p.line(), p.byte()));
        if record.len() == 1 && record[0].iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let at = |field: usize, message: String| {
            let (line, column) = field_position(text, line, byte, field);
            Error::Syntax { line, column, message }
        };
        let this = match layout {
            Some(l) => l,
            None => {
                let l = match record.len() {
                    RAW_COLUMNS => Layout::Raw,
                    SPAR_COLUMNS => Layout::Spar,
                    n => {
                        return Err(at(
                            0,
                            format!(
                                "an Alibaba trace has {RAW_COLUMNS} columns (batch_task.csv: {}) or {SPAR_COLUMNS} \
                                 (spar sample: {}); this row has {n}",
                                RAW_NAMES.join(","),
                                SPAR_NAMES.join(",")
                            ),
                        ))
                    }
                };
                layout = Some(l);
                // The raw trace's own header line, if a copy kept it.
                let first = std::str::from_utf8(&record[0]).unwrap_or("").trim().trim_start_matches('\u{feff}');
                if (l == Layout::Raw && first == "task_name") || (l == Layout::Spar && first == "arrival_s") {
                    continue;
                }
                l
            }
        };
        let (cols, names, width) = match this {
            Layout::Raw => (&RAW, &RAW_NAMES[..], RAW_COLUMNS),
            Layout::Spar => (&SPAR, &SPAR_NAMES[..], SPAR_COLUMNS),
        };
        if record.len() != width {
            return Err(at(
                record.len().min(width),
                format!("expected {width} fields like the first row, found {}", record.len()),
            ));
        }
        let field = |i: usize| -> Result<&str> {
            std::str::from_utf8(&record[i]).map(str::trim).map_err(|_| at(i, format!("{}: not valid UTF-8", names[i])))
        };
        let num = |i: usize| -> Result<Num> {
            let s = field(i)?;
            if s.is_empty() {
                return Ok(Num::Empty);
            }
            s.parse::<f64>().map(Num::Value).map_err(|_| at(i, format!("{}: '{s}' is not a number", names[i])))
        };

        let job_name = field(cols.job)?;
        if job_name.is_empty() {
            return Err(at(cols.job, "job_name: empty; every row must name its job".into()));
        }
        let j = match by_name.get(job_name) {
            Some(&j) => j,
            None => {
                crate::limits::current()
                    .check_jobs(jobs.len() as u64 + 1, "jobs in the trace")
                    .map_err(|e| at(cols.job, e.to_string()))?;
                by_name.insert(job_name.to_string(), jobs.len());
                jobs.push(JobRows {
                    name: job_name.to_string(),
                    first_line: line,
                    arrival: None,
                    rows: Vec::new(),
                    dropped: Vec::new(),
                    problem: None,
                });
                jobs.len() - 1
            }
        };
        let job = &mut jobs[j];
        let task = field(cols.task)?;
        let kind = if task.is_empty() { None } else { Some(parse_name(task)) };

        // Raw: status filter, arrival and duration from the task's times.
        let (duration, start) = match this {
            Layout::Raw => {
                if field(4)? != "Terminated" {
                    report.rows_not_terminated += 1;
                    if let Some(Name::Dag { id, .. }) = kind {
                        job.dropped.push(id);
                    }
                    continue;
                }
                match (num(5)?, num(6)?) {
                    (Num::Value(s), Num::Value(e)) => (Some(e - s), Some(s)),
                    _ => (None, None),
                }
            }
            Layout::Spar => {
                if let Num::Value(a) = num(0)? {
                    if !(0.0..=crate::limits::MAX_SECONDS).contains(&a) {
                        return Err(at(
                            0,
                            format!(
                                "arrival_s: {a} is not in [0, {:e}] (seconds from the start of the trace)",
                                crate::limits::MAX_SECONDS
                            ),
                        ));
                    }
                    match job.arrival {
                        Some(prev) if prev != a => {
                            return Err(at(
                                0,
                                format!(
                                    "arrival_s: job '{}' arrives at {a} here but at {prev} on line {}",
                                    job.name, job.first_line
                                ),
                            ))
                        }
                        _ => job.arrival = Some(a),
                    }
                } else {
                    job.flag(SkipReason::MissingValue);
                }
                match num(3)? {
                    Num::Value(d) => (Some(d), None),
                    Num::Empty => (None, None),
                }
            }
        };
        if let Some(s) = start {
            job.arrival = Some(job.arrival.map_or(s, |a: f64| a.min(s)));
        }
        let instances = match num(cols.instances)? {
            Num::Empty => {
                job.flag(SkipReason::MissingValue);
                0
            }
            Num::Value(v) if v.fract() != 0.0 => {
                return Err(at(cols.instances, format!("instance_num: '{v}' is not a whole number")));
            }
            Num::Value(v) if v < 1.0 => {
                job.flag(SkipReason::BadInstanceNum);
                0
            }
            Num::Value(v) if v > MAX_TASKS_PER_STAGE as f64 => {
                job.flag(SkipReason::TooManyInstances);
                0
            }
            Num::Value(v) => {
                // The trace's tasks so far, before any job's tasks are laid out.
                total_tasks = crate::limits::add(total_tasks, v as u64);
                crate::limits::current()
                    .check_tasks(total_tasks, "tasks (instance_num) in the trace so far")
                    .map_err(|e| at(cols.instances, e.to_string()))?;
                v as u32
            }
        };
        let mut demand = [0.0; 2];
        for (k, i) in [cols.cpu, cols.mem].into_iter().enumerate() {
            match num(i)? {
                Num::Empty => job.flag(SkipReason::MissingValue),
                Num::Value(v) if !(v >= 0.0 && v.is_finite()) => job.flag(SkipReason::NegativeDemand),
                Num::Value(v) => demand[k] = v,
            }
        }
        let duration = match duration {
            None => {
                job.flag(SkipReason::MissingValue);
                0.0
            }
            Some(d) if !d.is_finite() || d < 0.0 => {
                job.flag(SkipReason::NegativeDuration);
                0.0
            }
            Some(d) if d > crate::limits::MAX_SECONDS => {
                job.flag(SkipReason::DurationTooLarge);
                0.0
            }
            Some(d) => d,
        };
        let Some(kind) = kind else {
            job.flag(SkipReason::MissingValue);
            continue;
        };
        job.rows.push(Row {
            name: task.to_string(),
            kind,
            instances,
            duration,
            cpu: demand[0] / 100.0,
            mem: demand[1],
        });
    }

    let raw = layout == Some(Layout::Raw);
    let mut out: Vec<Job> = Vec::with_capacity(jobs.len());
    for job in jobs {
        match build_job(&job) {
            Ok(j) => out.push(j),
            Err(reason) => report.skip(reason, &job.name),
        }
    }
    if raw {
        // Start times are seconds since Alibaba's epoch: measure from the first arrival.
        let origin = out.iter().map(|j| j.arrival).fold(f64::INFINITY, f64::min);
        for j in &mut out {
            j.arrival -= origin;
        }
        // A start time so far from the others cannot be simulated with a precise clock.
        out.retain(|j| {
            let keep = j.arrival <= crate::limits::MAX_SECONDS;
            if !keep {
                report.skip(SkipReason::ArrivalTooLate, &j.name);
            }
            keep
        });
    }
    out.sort_by(|a, b| a.arrival.total_cmp(&b.arrival));
    Ok((Workload { jobs: out }, report))
}

/// Checks one job's tasks and builds its DAG, or says why the job is skipped.
fn build_job(job: &JobRows) -> std::result::Result<Job, SkipReason> {
    if let Some(p) = job.problem {
        return Err(p);
    }
    if job.rows.is_empty() {
        return Err(SkipReason::NoTerminatedTask);
    }
    let arrival = job.arrival.ok_or(SkipReason::MissingValue)?;
    let mut ids: HashMap<u32, usize> = HashMap::with_capacity(job.rows.len());
    let mut names: HashMap<&str, ()> = HashMap::with_capacity(job.rows.len());
    for (i, r) in job.rows.iter().enumerate() {
        match &r.kind {
            Name::Bad => return Err(SkipReason::NonNumericTaskId),
            Name::Dag { id, .. } => {
                if ids.insert(*id, i).is_some() {
                    return Err(SkipReason::DuplicateTaskId);
                }
            }
            Name::Independent => {}
        }
        if names.insert(&r.name, ()).is_some() {
            return Err(SkipReason::DuplicateTaskId);
        }
    }
    let mut b = DagBuilder::new(job.name.clone(), resources());
    for r in &job.rows {
        let mut parents = Vec::new();
        if let Name::Dag { parents: ps, .. } = &r.kind {
            for p in ps {
                match ids.get(p) {
                    Some(&k) => parents.push((job.rows[k].name.clone(), EdgeKind::AllToAll)),
                    None if job.dropped.contains(p) => return Err(SkipReason::ParentNotTerminated),
                    None => return Err(SkipReason::MissingParent),
                }
            }
        }
        let demand = ResVec::from_slice(&[r.cpu, r.mem, 0.0, 0.0]);
        b.stage(StageSpec {
            name: r.name.clone(),
            group: None,
            tasks: vec![TaskSpec { duration: r.duration, demand }; r.instances as usize],
            parents,
        });
    }
    match b.build() {
        Ok(dag) => Ok(Job { name: job.name.clone(), arrival, queue: DEFAULT_QUEUE.to_string(), dag }),
        Err(Error::Cycle(_)) => Err(SkipReason::Cycle),
        Err(_) => Err(SkipReason::Invalid),
    }
}

fn csv_error(e: csv::Error) -> Error {
    let line = e.position().map_or(0, |p| p.line() as usize);
    Error::Syntax { line, column: 1, message: format!("unreadable CSV: {e}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_names() {
        assert_eq!(parse_name("M1"), Name::Dag { id: 1, parents: vec![] });
        assert_eq!(parse_name("J3_1_2"), Name::Dag { id: 3, parents: vec![1, 2] });
        assert_eq!(parse_name("R4_2_2"), Name::Dag { id: 4, parents: vec![2] });
        assert_eq!(parse_name("task_MzQwNTk="), Name::Independent);
        assert_eq!(parse_name("task_0zQw"), Name::Independent);
        assert_eq!(parse_name("MergeTask"), Name::Independent);
        assert_eq!(parse_name("M1_Stg1"), Name::Bad);
        assert_eq!(parse_name("R2_"), Name::Bad);
        assert_eq!(parse_name("12"), Name::Bad);
        assert_eq!(parse_name("M99999999999"), Name::Bad);
    }

    #[test]
    fn a_name_with_many_parents_keeps_each_once_in_order() {
        // 200,000 parents, each listed twice (the second time in reverse).
        let n = 200_000u32;
        let name = format!(
            "R{}_{}_{}",
            n + 1,
            (1..=n).map(|i| i.to_string()).collect::<Vec<_>>().join("_"),
            (1..=n).rev().map(|i| i.to_string()).collect::<Vec<_>>().join("_")
        );
        assert_eq!(parse_name(&name), Name::Dag { id: n + 1, parents: (1..=n).collect() });
        assert_eq!(parse_name("J9_3_1_3_2_1"), Name::Dag { id: 9, parents: vec![3, 1, 2] });
        assert_eq!(parse_name("J9_3_1_3_x"), Name::Bad);
    }

    #[test]
    fn spar_rows_make_dags() {
        let text = "0,j_1,M1,10,50.0,0.3,3\n0,j_1,R2_1,20,100.0,0.5,2\n2,j_2,task_abc,5,100,1,1\n";
        let (w, rep) = read(text).unwrap();
        assert!(rep.is_empty(), "{rep}");
        assert_eq!(w.jobs.len(), 2);
        let d = &w.jobs[0].dag;
        assert_eq!(d.len(), 5);
        assert_eq!(d.stages[1].name, "R2_1");
        assert_eq!(d.stages[1].parents.len(), 1);
        assert_eq!(d.tasks[0].demand.0[..4], [0.5, 0.3, 0.0, 0.0]);
        assert_eq!(w.jobs[1].arrival, 2.0);
        assert_eq!(w.jobs[1].queue, "default");
    }

    #[test]
    fn raw_rows_skip_broken_jobs() {
        let text = "\
M1,2,j_ok,1,Terminated,100,110,100,0.5
R2_1,1,j_ok,1,Terminated,110,130,100,0.5
M3,1,j_ok,1,Failed,110,111,100,0.5
M1_2,1,j_cyc,1,Terminated,105,106,100,0.5
M2_1,1,j_cyc,1,Terminated,105,106,100,0.5
R2_7,1,j_miss,1,Terminated,90,95,100,0.5
M1,1,j_dead,1,Failed,90,95,100,0.5
R2_1,1,j_dead,1,Terminated,95,99,100,0.5
";
        let (w, rep) = read(text).unwrap();
        assert_eq!(w.jobs.len(), 1);
        assert_eq!(w.jobs[0].arrival, 0.0);
        assert_eq!(w.jobs[0].dag.stages.len(), 2);
        assert_eq!(rep.count(SkipReason::Cycle), 1);
        assert_eq!(rep.count(SkipReason::MissingParent), 1);
        assert_eq!(rep.count(SkipReason::ParentNotTerminated), 1);
        assert_eq!(rep.rows_not_terminated, 2);
        assert_eq!(
            rep.to_string(),
            "skipped 3 jobs: 1 missing parent (first: j_miss), 1 parent not terminated (first: j_dead), \
             1 cycle (first: j_cyc); dropped 2 rows not Terminated"
        );
    }

    #[test]
    fn malformed_numbers_are_positioned() {
        let e = read("0,j_1,M1,ten,50.0,0.3,3\n").unwrap_err().to_string();
        assert_eq!(e, "line 1, column 10: duration_s: 'ten' is not a number");
        let e = read("0,j_1,M1,10,50.0,0.3,3\n0,j_1,M2\n").unwrap_err().to_string();
        assert!(e.starts_with("line 2, column 9: expected 7 fields"), "{e}");
    }
}
