//! Spark event logs (what the History Server reads) as DAGs and as a replayable workload.
//!
//! # What becomes what
//!
//! * Each Spark **job** that succeeded becomes a DAG named `<app>-job<ID>`; in `replay` it arrives
//!   at its `Submission Time` (seconds after the application started) into the queue named by
//!   its `spark.scheduler.pool` property (`default` when unset). With adaptive query execution
//!   (on by default since Spark 3.2) one SQL query runs as several jobs, one per query stage.
//! * Each **stage** the job ran becomes a stage, its `Parent IDs` all-to-all edges (a shuffle is a
//!   barrier). A stage the job lists but never submitted was **skipped** by Spark (its shuffle
//!   output existed from an earlier job): it has no tasks here, its edges are dropped, and it is
//!   counted in the report. A parent id that no job of the log ever lists is an error.
//! * Each **task** (a partition, Spark's task `Index`) gets the duration of its successful
//!   attempt, `Finish Time - Launch Time`. Failed attempts, attempts of a stage attempt that was
//!   retried (`Stage Attempt ID` > 0 re-runs only the missing partitions) and killed speculative
//!   copies are not added to it (the time the cluster lost on them is not work the DAG needs),
//!   and each kind is counted in the report. When two attempts of one index both succeeded (a
//!   speculative race), the earlier finish counts.
//! * Jobs that failed (`JobFailed`) or never ended (an unfinished log) are reported and left out.
//!
//! # Demands (resources `cpu`, `mem`, `disk`, `net`)
//!
//! A Spark task holds `spark.task.cpus` cores (`Task Resource Requests`, 1 by default) of an
//! executor, and the executor's memory is shared by the tasks it runs at once. So
//! `cpu` = task cpus and `mem` = executor memory (GiB) x task cpus / executor cores, where the
//! executor's cores are the first executor's `Total Cores` (in local mode: the driver's), else the
//! resource profile's, else `spark.executor.cores`, else 1; its memory is the resource profile's
//! (`Executor Resource Requests.memory`, MiB), else `spark.executor.memory`, and in local mode
//! `spark.driver.memory` (default 1g). `disk` and `net` are 0; `--demands` can fill them.

mod events;
pub mod open;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::path::Path;

use self::events::AppLog;
use super::native::default_resources;
use crate::error::{Error, Result};
use crate::model::{Dag, DagBuilder, EdgeKind, Job, ResVec, StageSpec, TaskSpec, Workload};

pub use open::looks_like_spark;

/// True when the text's first non-empty line is a Spark listener event.
pub fn looks_like_spark_text(text: &str) -> bool {
    let first = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    first.starts_with('{') && first.contains("\"Event\"") && first.contains("SparkListener")
}

/// What reading a log left out or changed, so that nothing is lost silently.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SparkReport {
    pub jobs_read: usize,
    /// Jobs that failed, with the first one's id.
    pub jobs_failed: (usize, Option<i64>),
    pub jobs_unfinished: (usize, Option<i64>),
    /// Stages listed by a job but not run by it (their output existed).
    pub stages_skipped: usize,
    /// Stage attempts after the first (re-runs of lost partitions).
    pub stage_retries: usize,
    pub failed_attempts: usize,
    pub killed_speculative: usize,
    /// Events ignored because no DAG needs them.
    pub events_ignored: u64,
    /// An `.inprogress` log's cut-short last line was dropped.
    pub partial_line_dropped: bool,
}

impl fmt::Display for SparkReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = vec![format!("{} jobs read", self.jobs_read)];
        let first = |x: Option<i64>| x.map(|j| format!(" (first: job {j})")).unwrap_or_default();
        if self.jobs_failed.0 > 0 {
            parts.push(format!("{} failed jobs left out{}", self.jobs_failed.0, first(self.jobs_failed.1)));
        }
        if self.jobs_unfinished.0 > 0 {
            parts.push(format!("{} unfinished jobs left out{}", self.jobs_unfinished.0, first(self.jobs_unfinished.1)));
        }
        for (n, what) in [
            (self.stages_skipped, "skipped stages (output reused) left out"),
            (self.stage_retries, "stage retries merged into their stage"),
            (self.failed_attempts, "failed task attempts not counted"),
            (self.killed_speculative, "killed speculative attempts not counted"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        }
        if self.partial_line_dropped {
            parts.push("the cut-short last line of the in-progress log dropped".into());
        }
        write!(f, "{}", parts.join("; "))
    }
}

/// One job of the application.
#[derive(Clone, Debug)]
pub struct SparkJob {
    pub id: i64,
    /// Seconds after the application started.
    pub submitted: f64,
    pub queue: String,
    pub dag: Dag,
}

/// An application's log, read: its jobs as DAGs and what was left out.
#[derive(Clone, Debug)]
pub struct SparkApp {
    pub name: String,
    pub spark_version: Option<String>,
    pub jobs: Vec<SparkJob>,
    pub report: SparkReport,
    /// Jobs that are not in `jobs`, with the reason (for `--job N` on one of them).
    pub left_out: BTreeMap<i64, String>,
}

/// Reads a log: a plain or compressed file, or a rolling-log directory.
pub fn read(path: &Path) -> Result<SparkApp> {
    let parts = open::read_parts(path)?;
    let log = events::read(&parts)?;
    build(&log, &super::stem(path)).map_err(|e| e.in_file(path))
}

/// Reads a log from text (one plain JSON-lines file), e.g. a request body.
pub fn parse(text: &str, name: &str) -> Result<SparkApp> {
    let part = open::LogPart { path: name.into(), text: text.to_string(), in_progress: false };
    let log = events::read(std::slice::from_ref(&part))?;
    build(&log, name)
}

fn mib(spec: &str) -> Option<f64> {
    // Spark's byte strings: a number with an optional unit (b, k, m, g, t; "1g", "512m"),
    // mebibytes when no unit is given.
    let s = spec.trim().to_ascii_lowercase();
    let s = s.strip_suffix('b').filter(|r| r.ends_with(|c: char| c.is_ascii_alphabetic())).unwrap_or(&s);
    let (num, unit) = s.split_at(s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len()));
    let v: f64 = num.trim().parse().ok()?;
    let scale = match unit {
        "" | "m" => 1.0,
        "b" => 1.0 / 1024.0 / 1024.0,
        "k" => 1.0 / 1024.0,
        "g" => 1024.0,
        "t" => 1024.0 * 1024.0,
        _ => return None,
    };
    (v.is_finite() && v >= 0.0).then_some(v * scale)
}

/// The demand of one task of resource profile `profile`.
fn demand(log: &AppLog, profile: i64) -> Result<ResVec> {
    let p = log.profiles.get(&profile).or_else(|| log.profiles.get(&0)).cloned().unwrap_or_default();
    let prop = |k: &str| log.properties.get(k).map(String::as_str);
    let local = prop("spark.master").is_some_and(|m| m.starts_with("local"));
    let task_cpus = p.task_cpus.or_else(|| prop("spark.task.cpus").and_then(|v| v.parse().ok())).unwrap_or(1.0);
    let cores = log
        .first_executor_cores
        .or(p.executor_cores)
        .or_else(|| prop("spark.executor.cores").and_then(|v| v.parse().ok()))
        .unwrap_or(1.0)
        .max(task_cpus);
    let memory = if local {
        prop("spark.driver.memory").map(|v| (v, "spark.driver.memory"))
    } else {
        prop("spark.executor.memory").map(|v| (v, "spark.executor.memory"))
    };
    let mem_mib = match (local, p.executor_memory_mib, memory) {
        (false, Some(m), _) => m,
        (_, _, Some((v, key))) => {
            mib(v).ok_or_else(|| Error::field(format!("Spark Properties.{key}"), format!("'{v}' is not a size")))?
        }
        _ => 1024.0,
    };
    if !(task_cpus.is_finite() && task_cpus > 0.0) {
        return Err(Error::field("Task Resource Requests.cpus", format!("{task_cpus} is not a positive number")));
    }
    let mut v = ResVec::ZERO;
    v.0[0] = task_cpus;
    v.0[1] = mem_mib / 1024.0 * task_cpus / cores;
    Ok(v)
}

fn build(log: &AppLog, stem: &str) -> Result<SparkApp> {
    let name = log.app_name.clone().unwrap_or_else(|| stem.to_string());
    let start = log.start_ms.or_else(|| log.jobs.iter().map(|j| j.submitted_ms).min()).unwrap_or(0);
    let mut report = SparkReport {
        events_ignored: log.skipped_events.values().sum(),
        partial_line_dropped: log.dropped_partial_line.is_some(),
        ..SparkReport::default()
    };
    let listed: HashSet<i64> = log.jobs.iter().flat_map(|j| j.stages.iter().map(|s| s.id)).collect();
    // Successful attempts by (stage, index): the earliest finish.
    let mut best: HashMap<(i64, i64), (i64, i64)> = HashMap::new();
    for a in &log.attempts {
        if !log.submitted.contains_key(&a.stage) {
            return Err(Error::field(
                "Stage ID",
                format!(
                    "task of stage {} ends at {}:{}, but that stage was never submitted",
                    a.stage,
                    log.file(a.at.0),
                    a.at.1
                ),
            ));
        }
        if a.success {
            let e = best.entry((a.stage, a.index)).or_insert((a.launch_ms, a.finish_ms));
            if a.finish_ms < e.1 {
                *e = (a.launch_ms, a.finish_ms);
            }
        } else if a.killed && a.speculative {
            report.killed_speculative += 1;
        } else {
            report.failed_attempts += 1;
        }
    }
    let mut by_stage: HashMap<i64, Vec<(i64, f64)>> = HashMap::new();
    for ((stage, index), (launch, finish)) in best {
        by_stage.entry(stage).or_default().push((index, (finish - launch) as f64 / 1000.0));
    }
    report.stage_retries = log.submitted.values().map(|v| v.len().saturating_sub(1)).sum();
    let mut left_out = BTreeMap::new();
    let mut jobs = Vec::new();
    for job in &log.jobs {
        match job.succeeded {
            Some(true) => {}
            Some(false) => {
                report.jobs_failed.0 += 1;
                report.jobs_failed.1.get_or_insert(job.id);
                left_out.insert(job.id, "it failed (JobFailed)".to_string());
                continue;
            }
            None => {
                report.jobs_unfinished.0 += 1;
                report.jobs_unfinished.1.get_or_insert(job.id);
                left_out.insert(job.id, "it never ended (no SparkListenerJobEnd)".to_string());
                continue;
            }
        }
        let at = format!("{}:{}", log.file(job.at.0), job.at.1);
        let ran = |id: i64| log.submitted.get(&id).is_some_and(|v| v.iter().any(|(j, _)| *j == job.id));
        let mut stages: Vec<&events::StageInfo> = job.stages.iter().collect();
        stages.sort_by_key(|s| s.id);
        stages.dedup_by_key(|s| s.id);
        let mut specs = Vec::new();
        for s in &stages {
            for p in &s.parents {
                if !listed.contains(p) {
                    return Err(Error::field(
                        format!("job {} (line {at}) Stage Infos: stage {} Parent IDs", job.id, s.id),
                        format!("stage {p} never appears in the log"),
                    ));
                }
            }
            if !ran(s.id) {
                report.stages_skipped += 1;
                continue;
            }
            let d = demand(log, s.resource_profile).map_err(|e| match e {
                Error::Field { field, message } => Error::field(format!("stage {}: {field}", s.id), message),
                e => e,
            })?;
            let mut tasks = by_stage.get(&s.id).cloned().unwrap_or_default();
            tasks.sort_by_key(|t| t.0);
            if let Some((index, _)) = tasks.iter().find(|(i, _)| *i >= s.tasks) {
                return Err(Error::field(
                    format!("job {} stage {}", job.id, s.id),
                    format!("a task has Index {index}, but the stage has {} tasks (Number of Tasks)", s.tasks),
                ));
            }
            if tasks.is_empty() {
                return Err(Error::field(
                    format!("job {} stage {}", job.id, s.id),
                    "the job succeeded, but no task of this stage did",
                ));
            }
            specs.push(StageSpec {
                name: format!("stage{}", s.id),
                group: Some(s.name.clone()),
                tasks: tasks.iter().map(|(_, d0)| TaskSpec { duration: *d0, demand: d }).collect(),
                parents: s
                    .parents
                    .iter()
                    .filter(|p| ran(**p))
                    .map(|p| (format!("stage{p}"), EdgeKind::AllToAll))
                    .collect(),
            });
        }
        if specs.is_empty() {
            left_out.insert(job.id, "it ran no stage (every stage was skipped)".to_string());
            continue;
        }
        let mut b = DagBuilder::new(format!("{name}-job{}", job.id), default_resources());
        for s in specs {
            b.stage(s);
        }
        let dag = b.build().map_err(|e| match e {
            Error::Field { field, message } => Error::field(format!("job {} (line {at}): {field}", job.id), message),
            e => e,
        })?;
        jobs.push(SparkJob {
            id: job.id,
            submitted: (job.submitted_ms - start).max(0) as f64 / 1000.0,
            queue: job.pool.clone().unwrap_or_else(|| "default".into()),
            dag,
        });
    }
    report.jobs_read = jobs.len();
    Ok(SparkApp { name, spark_version: log.spark_version.clone(), jobs, report, left_out })
}

impl SparkApp {
    /// The DAGs, all jobs or job `id`; asking for a job that was left out says why.
    pub fn dags(self, job: Option<u64>) -> Result<Vec<Dag>> {
        match job {
            None if self.jobs.is_empty() => {
                Err(Error::Usage(format!("the log holds no job that succeeded ({})", self.report)))
            }
            None => Ok(self.jobs.into_iter().map(|j| j.dag).collect()),
            Some(id) => {
                let id = id as i64;
                if let Some(why) = self.left_out.get(&id) {
                    return Err(Error::Usage(format!("Spark job {id} is left out: {why}")));
                }
                match self.jobs.into_iter().find(|j| j.id == id) {
                    Some(j) => Ok(vec![j.dag]),
                    None => Err(Error::Usage(format!("the log has no Spark job {id}"))),
                }
            }
        }
    }

    /// The jobs as a workload in submission order (ties keep job-id order).
    pub fn workload(self) -> Result<Workload> {
        if self.jobs.is_empty() {
            return Err(Error::Usage(format!("the log holds no job that succeeded ({})", self.report)));
        }
        let mut jobs: Vec<Job> = self
            .jobs
            .into_iter()
            .map(|j| Job { name: format!("job{}", j.id), arrival: j.submitted, queue: j.queue, dag: j.dag })
            .collect();
        jobs.sort_by(|a, b| a.arrival.total_cmp(&b.arrival));
        Ok(Workload { jobs })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spark_sizes() {
        assert_eq!(mib("1g"), Some(1024.0));
        assert_eq!(mib("512m"), Some(512.0));
        assert_eq!(mib("2048"), Some(2048.0));
        assert_eq!(mib("4gb"), Some(4096.0));
        assert_eq!(mib("1t"), Some(1048576.0));
        assert_eq!(mib("x"), None);
        assert_eq!(mib("-1g"), None);
    }
}
