//! The events of a Spark event log that a DAG needs, read line by line.
//!
//! Each line is one JSON object with an `"Event"` name (Spark's `JsonProtocol`). The reader keeps
//! what builds DAGs: the application's start, executors and the resources a task asks for, job
//! starts (their stages and the stages' `Parent IDs`) and ends, stage submissions and task ends.
//! Every other event Spark or its SQL layer writes is skipped and counted. A line that is not
//! JSON, has no `Event`, or names an event that is neither one of Spark's listener events
//! (`SparkListener...`) nor a listener class (a dotted Java name, as SQL and third-party events
//! are written) is an error naming the file and line: the file is not a Spark event log, or it
//! is corrupt. The one exception is the last line of an `.inprogress` log, which Spark itself may
//! still be writing: it is dropped with a note, as the History Server does.

use std::collections::{BTreeMap, HashMap, VecDeque};

use serde::Deserialize;

use super::open::LogPart;
use crate::error::{Error, Result};

#[derive(Deserialize)]
struct Line {
    #[serde(rename = "Event")]
    event: Option<String>,
    #[serde(rename = "Spark Version")]
    spark_version: Option<String>,
    #[serde(rename = "App Name")]
    app_name: Option<String>,
    #[serde(rename = "App ID")]
    app_id: Option<String>,
    #[serde(rename = "Timestamp")]
    timestamp: Option<i64>,
    #[serde(rename = "Job ID")]
    job_id: Option<i64>,
    #[serde(rename = "Submission Time")]
    submission_time: Option<i64>,
    #[serde(rename = "Completion Time")]
    completion_time: Option<i64>,
    #[serde(rename = "Stage Infos")]
    stage_infos: Option<Vec<StageInfo>>,
    #[serde(rename = "Stage Info")]
    stage_info: Option<StageInfo>,
    #[serde(rename = "Job Result")]
    job_result: Option<JobResult>,
    #[serde(rename = "Properties")]
    properties: Option<HashMap<String, serde_json::Value>>,
    #[serde(rename = "Stage ID")]
    stage_id: Option<i64>,
    #[serde(rename = "Task Info")]
    task_info: Option<TaskInfo>,
    #[serde(rename = "Task End Reason")]
    task_end_reason: Option<Reason>,
    #[serde(rename = "Executor Info")]
    executor_info: Option<ExecutorInfo>,
    #[serde(rename = "Spark Properties")]
    spark_properties: Option<serde_json::Value>,
    #[serde(rename = "Resource Profile Id")]
    resource_profile_id: Option<i64>,
    #[serde(rename = "Executor Resource Requests")]
    executor_requests: Option<HashMap<String, ResourceRequest>>,
    #[serde(rename = "Task Resource Requests")]
    task_requests: Option<HashMap<String, ResourceRequest>>,
}

#[derive(Deserialize, Clone, Debug)]
pub struct StageInfo {
    #[serde(rename = "Stage ID")]
    pub id: i64,
    #[serde(rename = "Stage Attempt ID", default)]
    pub attempt: i64,
    #[serde(rename = "Stage Name", default)]
    pub name: String,
    #[serde(rename = "Number of Tasks")]
    pub tasks: i64,
    #[serde(rename = "Parent IDs", default)]
    pub parents: Vec<i64>,
    #[serde(rename = "Resource Profile Id", default)]
    pub resource_profile: i64,
}

#[derive(Deserialize)]
struct JobResult {
    #[serde(rename = "Result")]
    result: String,
}

#[derive(Deserialize)]
struct Reason {
    #[serde(rename = "Reason")]
    reason: String,
}

#[derive(Deserialize)]
struct TaskInfo {
    #[serde(rename = "Task ID")]
    id: i64,
    #[serde(rename = "Index")]
    index: i64,
    #[serde(rename = "Launch Time")]
    launch: i64,
    #[serde(rename = "Finish Time", default)]
    finish: i64,
    #[serde(rename = "Speculative", default)]
    speculative: bool,
    #[serde(rename = "Failed", default)]
    failed: bool,
    #[serde(rename = "Killed", default)]
    killed: bool,
}

#[derive(Deserialize)]
struct ExecutorInfo {
    #[serde(rename = "Total Cores")]
    cores: Option<f64>,
}

#[derive(Deserialize)]
struct ResourceRequest {
    #[serde(rename = "Amount")]
    amount: f64,
}

/// One task attempt that ended.
#[derive(Clone, Debug)]
pub struct Attempt {
    pub stage: i64,
    pub index: i64,
    pub launch_ms: i64,
    pub finish_ms: i64,
    pub success: bool,
    pub speculative: bool,
    pub killed: bool,
    /// Where the attempt's end was read (file, line), for messages.
    pub at: (usize, usize),
}

#[derive(Clone, Debug)]
pub struct JobRecord {
    pub id: i64,
    pub submitted_ms: i64,
    pub stages: Vec<StageInfo>,
    /// `None` while the job has not ended; `Some(true)` for `JobSucceeded`.
    pub succeeded: Option<bool>,
    pub ended_ms: Option<i64>,
    /// `spark.scheduler.pool` from the job's properties (the fair scheduler's pool).
    pub pool: Option<String>,
    pub at: (usize, usize),
}

/// A resource profile: what an executor has and what one task asks for.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    pub executor_cores: Option<f64>,
    /// MiB, as Spark counts `spark.executor.memory`.
    pub executor_memory_mib: Option<f64>,
    pub task_cpus: Option<f64>,
}

/// Everything kept from one application's log.
#[derive(Debug, Default)]
pub struct AppLog {
    pub files: Vec<String>,
    pub app_name: Option<String>,
    pub app_id: Option<String>,
    pub spark_version: Option<String>,
    pub start_ms: Option<i64>,
    /// Where the application's start was read (file, line).
    pub start_at: Option<(usize, usize)>,
    pub jobs: Vec<JobRecord>,
    /// Stage id -> the (job index) and stage attempts submitted, in submission order.
    pub submitted: BTreeMap<i64, Vec<(i64, i64)>>,
    pub attempts: Vec<Attempt>,
    pub profiles: HashMap<i64, Profile>,
    pub properties: HashMap<String, String>,
    /// Where the Spark properties were read (file, line).
    pub properties_at: Option<(usize, usize)>,
    /// `Total Cores` of the first executor added (local mode: the driver).
    pub first_executor_cores: Option<f64>,
    /// Events skipped because no DAG needs them, by name.
    pub skipped_events: BTreeMap<String, u64>,
    /// A cut-short last line of an `.inprogress` log that was dropped: (file, line).
    pub dropped_partial_line: Option<(usize, usize)>,
}

impl AppLog {
    pub fn file(&self, i: usize) -> &str {
        &self.files[i]
    }
}

fn known_event(name: &str) -> bool {
    name.starts_with("SparkListener")
        || (name.contains('.')
            && name.split('.').all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$')))
}

/// Reads every part of a log, in order.
pub fn read(parts: &[LogPart]) -> Result<AppLog> {
    let mut log = AppLog { files: parts.iter().map(|p| p.path.display().to_string()).collect(), ..AppLog::default() };
    let mut seen = Seen::default();
    for (f, part) in parts.iter().enumerate() {
        let last = part.text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()).map(|(i, _)| i).last();
        for (i, raw) in part.text.lines().enumerate() {
            crate::deadline::poll()?;
            let line = raw.trim();
            if line.is_empty() {
                continue;
            }
            let at = (f, i + 1);
            let fail = |e: Error| e.at_line(i + 1).in_file(&part.path);
            let parsed: Line = match serde_json::from_str(line) {
                Ok(l) => l,
                Err(e) if part.in_progress && Some(i) == last && e.is_eof() => {
                    log.dropped_partial_line = Some(at);
                    continue;
                }
                Err(e) => {
                    let what = if e.is_eof() { "the line is cut short (a truncated log?)" } else { "not a JSON event" };
                    let detail = match Error::from_json(&e) {
                        Error::Syntax { message, .. } => message,
                        other => other.to_string(),
                    };
                    return Err(Error::Syntax {
                        line: i + 1,
                        column: e.column(),
                        message: format!("{what}: {detail}"),
                    }
                    .in_file(&part.path));
                }
            };
            let Some(event) = parsed.event.clone() else {
                return Err(fail(Error::field("Event", "missing: every line of a Spark event log names its event")));
            };
            if !known_event(&event) {
                return Err(fail(Error::field(
                    "Event",
                    format!(
                        "unknown event '{event}': neither a SparkListener event nor a listener class name; \
                         is this a Spark event log?"
                    ),
                )));
            }
            log_event(&mut log, &event, parsed, at, &mut seen).map_err(fail)?;
        }
    }
    Ok(log)
}

fn need<T>(v: Option<T>, field: &str) -> Result<T> {
    v.ok_or_else(|| Error::field(field, "missing"))
}

/// A time in milliseconds since 1970, as Spark writes them: at least 0.
fn time_ms(v: Option<i64>, field: &str) -> Result<i64> {
    let v = need(v, field)?;
    if v < 0 {
        return Err(Error::field(field, format!("{v} is not a time (milliseconds since 1970, at least 0)")));
    }
    Ok(v)
}

/// A number of cores, cpus or MiB, which Spark keeps positive.
fn positive(v: f64, field: &str) -> Result<f64> {
    if !(v.is_finite() && v > 0.0) {
        return Err(Error::field(field, format!("{v} is not a positive number")));
    }
    Ok(v)
}

/// What the reader keeps to look events up by id, so that each event costs the same however
/// long the log is.
#[derive(Default)]
struct Seen {
    /// Task id -> where it ended.
    task_ids: HashMap<i64, (usize, usize)>,
    /// Job id -> its index in `AppLog::jobs`.
    jobs: HashMap<i64, usize>,
    /// Stage id -> the jobs listing it, by index in start order; jobs that ended are dropped
    /// from the front as submissions look for the earliest one still running.
    listed_by: HashMap<i64, VecDeque<usize>>,
    /// Stage id -> its first listing (job index, position in that job's `Stage Infos`).
    first_listing: HashMap<i64, (usize, usize)>,
}

/// Parent ids as a set (Spark writes one stage's the same way each time; order is not meaning).
fn same_parents(a: &[i64], b: &[i64]) -> bool {
    if a == b {
        return true;
    }
    let set = |v: &[i64]| {
        let mut v = v.to_vec();
        v.sort_unstable();
        v.dedup();
        v
    };
    set(a) == set(b)
}

fn log_event(log: &mut AppLog, event: &str, l: Line, at: (usize, usize), seen: &mut Seen) -> Result<()> {
    match event {
        "SparkListenerLogStart" => log.spark_version = l.spark_version,
        "SparkListenerApplicationStart" => {
            log.app_name = l.app_name;
            log.app_id = l.app_id;
            log.start_ms = Some(time_ms(l.timestamp, "Timestamp")?);
            log.start_at = Some(at);
        }
        "SparkListenerEnvironmentUpdate" => {
            log.properties_at = Some(at);
            // A map in every Spark release since 1.x; older logs wrote a list of pairs.
            match l.spark_properties {
                Some(serde_json::Value::Object(m)) => {
                    for (k, v) in m {
                        if let Some(s) = v.as_str() {
                            log.properties.insert(k, s.to_string());
                        }
                    }
                }
                Some(serde_json::Value::Array(pairs)) => {
                    for p in pairs {
                        if let (Some(k), Some(v)) =
                            (p.get(0).and_then(|v| v.as_str()), p.get(1).and_then(|v| v.as_str()))
                        {
                            log.properties.insert(k.to_string(), v.to_string());
                        }
                    }
                }
                _ => {}
            }
        }
        "SparkListenerResourceProfileAdded" => {
            let id = need(l.resource_profile_id, "Resource Profile Id")?;
            let ex = l.executor_requests.unwrap_or_default();
            let task = l.task_requests.unwrap_or_default();
            let amount = |m: &HashMap<String, ResourceRequest>, key: &str, field: &str| {
                m.get(key).map(|r| positive(r.amount, &format!("{field}.{key}.Amount"))).transpose()
            };
            log.profiles.insert(
                id,
                Profile {
                    executor_cores: amount(&ex, "cores", "Executor Resource Requests")?,
                    executor_memory_mib: amount(&ex, "memory", "Executor Resource Requests")?,
                    task_cpus: amount(&task, "cpus", "Task Resource Requests")?,
                },
            );
        }
        "SparkListenerExecutorAdded" => {
            let cores = l.executor_info.and_then(|e| e.cores);
            if let Some(c) = cores {
                positive(c, "Executor Info.Total Cores")?;
            }
            if log.first_executor_cores.is_none() {
                log.first_executor_cores = cores;
            }
        }
        "SparkListenerJobStart" => {
            let id = need(l.job_id, "Job ID")?;
            if id < 0 {
                return Err(Error::field("Job ID", format!("{id} is not a job id (Spark numbers jobs from 0)")));
            }
            if let Some(&prev) = seen.jobs.get(&id) {
                let prev = &log.jobs[prev];
                return Err(Error::field(
                    "Job ID",
                    format!("job {id} starts twice (first at {}:{})", log.files[prev.at.0], prev.at.1),
                ));
            }
            let index = log.jobs.len();
            crate::limits::current().check_jobs(index as u64 + 1, "jobs in the log")?;
            let submitted_ms = time_ms(l.submission_time, "Submission Time")?;
            let stages = need(l.stage_infos, "Stage Infos")?;
            // A stage is one stage wherever it is listed (a later job lists the stages it
            // reuses): the same parents and tasks every time.
            for (k, s) in stages.iter().enumerate() {
                let Some(&(j, k0)) = seen.first_listing.get(&s.id) else {
                    seen.first_listing.insert(s.id, (index, k));
                    seen.listed_by.entry(s.id).or_default().push_back(index);
                    continue;
                };
                let (first, first_job) =
                    if j == index { (&stages[k0], id) } else { (&log.jobs[j].stages[k0], log.jobs[j].id) };
                let first_at = if j == index { at } else { log.jobs[j].at };
                let first_at = format!("{}:{}", log.files[first_at.0], first_at.1);
                if !same_parents(&first.parents, &s.parents) {
                    return Err(Error::field(
                        format!("Stage Infos: stage {} Parent IDs", s.id),
                        format!(
                            "{:?} here, but {:?} where job {first_job} listed it first (at {first_at}): \
                             a stage's parents do not change",
                            s.parents, first.parents
                        ),
                    ));
                }
                if first.tasks != s.tasks {
                    return Err(Error::field(
                        format!("Stage Infos: stage {} Number of Tasks", s.id),
                        format!(
                            "{} here, but {} where job {first_job} listed it first (at {first_at}): \
                             a stage's task count does not change",
                            s.tasks, first.tasks
                        ),
                    ));
                }
                if j != index {
                    seen.listed_by.entry(s.id).or_default().push_back(index);
                }
            }
            let pool = l
                .properties
                .as_ref()
                .and_then(|p| p.get("spark.scheduler.pool"))
                .and_then(|v| v.as_str())
                .map(String::from);
            seen.jobs.insert(id, index);
            log.jobs.push(JobRecord { id, submitted_ms, stages, succeeded: None, ended_ms: None, pool, at });
        }
        "SparkListenerJobEnd" => {
            let id = need(l.job_id, "Job ID")?;
            let result = need(l.job_result, "Job Result")?.result;
            let Some(&index) = seen.jobs.get(&id) else {
                return Err(Error::field("Job ID", format!("job {id} ends but never started")));
            };
            let job = &mut log.jobs[index];
            job.succeeded = Some(result == "JobSucceeded");
            job.ended_ms = l.completion_time;
        }
        "SparkListenerStageSubmitted" => {
            let s = need(l.stage_info, "Stage Info")?;
            // The job that runs it: the earliest-started job still running that lists the stage.
            let running = seen.listed_by.get_mut(&s.id).and_then(|jobs| {
                while jobs.front().is_some_and(|&j| log.jobs[j].succeeded.is_some()) {
                    jobs.pop_front();
                }
                jobs.front().copied()
            });
            let Some(job) = running else {
                return Err(Error::field(
                    "Stage Info.Stage ID",
                    format!("stage {} is submitted, but no running job lists it in its Stage Infos", s.id),
                ));
            };
            log.submitted.entry(s.id).or_default().push((log.jobs[job].id, s.attempt));
        }
        "SparkListenerTaskEnd" => {
            let info = need(l.task_info, "Task Info")?;
            if let Some(first) = seen.task_ids.insert(info.id, at) {
                return Err(Error::field(
                    "Task Info.Task ID",
                    format!("duplicate task id {} (it already ended at {}:{})", info.id, log.files[first.0], first.1),
                ));
            }
            let reason = need(l.task_end_reason, "Task End Reason")?.reason;
            let stage = need(l.stage_id, "Stage ID")?;
            if info.index < 0 || info.launch < 0 || info.finish < info.launch {
                return Err(Error::field(
                    "Task Info",
                    format!(
                        "task {}: index {}, launch {} and finish {} are not a task that ran",
                        info.id, info.index, info.launch, info.finish
                    ),
                ));
            }
            log.attempts.push(Attempt {
                stage,
                index: info.index,
                launch_ms: info.launch,
                finish_ms: info.finish,
                success: reason == "Success" && !info.failed && !info.killed,
                speculative: info.speculative,
                killed: info.killed,
                at,
            });
        }
        other => *log.skipped_events.entry(other.to_string()).or_default() += 1,
    }
    Ok(())
}
