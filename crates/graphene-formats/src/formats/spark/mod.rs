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
//! Nothing is changed to make a log fit: a stage is the same stage wherever it is listed (a later
//! job lists the stages it reuses), so one listed again with other `Parent IDs` or `Number of
//! Tasks` is refused; a job submitted before the application started is refused rather than
//! moved to time 0; times below 0, cores and cpus that are not positive and job ids below 0 are
//! refused with their line and field.
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

impl SparkReport {
    /// Whether anything was left out, merged or dropped (beyond the events no DAG needs).
    pub fn says_more_than_jobs_read(&self) -> bool {
        *self
            != SparkReport { jobs_read: self.jobs_read, events_ignored: self.events_ignored, ..SparkReport::default() }
    }
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

/// Reads a plain log file whose text was read already (to detect its format): as `read` does,
/// errors name the file, and an `.inprogress` file's cut-short last line is dropped with a note.
pub fn read_plain(path: &Path, text: String) -> Result<SparkApp> {
    let in_progress = path.file_name().is_some_and(|n| n.to_string_lossy().ends_with(".inprogress"));
    let part = open::LogPart { path: path.to_path_buf(), text, in_progress };
    let log = events::read(std::slice::from_ref(&part))?;
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
    // A property that is set is used as it is, or refused where it was read: never replaced.
    let at = |e: Error| match log.properties_at {
        Some((file, line)) => e.at_line(line).in_file(Path::new(log.file(file))),
        None => e,
    };
    let number = |key: &str| -> Result<Option<f64>> {
        let Some(v) = prop(key) else { return Ok(None) };
        match v.trim().parse::<f64>() {
            Ok(x) if x.is_finite() && x > 0.0 => Ok(Some(x)),
            _ => Err(at(Error::field(format!("Spark Properties.{key}"), format!("'{v}' is not a positive number")))),
        }
    };
    let local = prop("spark.master").is_some_and(|m| m.starts_with("local"));
    let task_cpus = match p.task_cpus {
        Some(c) => c,
        None => number("spark.task.cpus")?.unwrap_or(1.0),
    };
    let cores = match log.first_executor_cores.or(p.executor_cores) {
        Some(c) => c,
        None => number("spark.executor.cores")?.unwrap_or(1.0),
    }
    .max(task_cpus);
    let memory = if local {
        prop("spark.driver.memory").map(|v| (v, "spark.driver.memory"))
    } else {
        prop("spark.executor.memory").map(|v| (v, "spark.executor.memory"))
    };
    let mem_mib = match (local, p.executor_memory_mib, memory) {
        (false, Some(m), _) => m,
        (_, _, Some((v, key))) => {
            mib(v).ok_or_else(|| at(Error::field(format!("Spark Properties.{key}"), format!("'{v}' is not a size"))))?
        }
        _ => 1024.0,
    };
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
    // (stage, job) for every stage a job ran.
    let ran_by: HashSet<(i64, i64)> =
        log.submitted.iter().flat_map(|(stage, v)| v.iter().map(move |(job, _)| (*stage, *job))).collect();
    // A stage that several jobs ran is in each of their DAGs: count the tasks that makes before
    // building them, so that a short log cannot make an unbounded number.
    let limits = crate::limits::current();
    let mut tasks_made = 0u64;
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
        // Spark's clocks put every job after the application's start; a log that says otherwise
        // is refused rather than have its times moved.
        if job.submitted_ms < start {
            let start_at = log.start_at.map(|(f, l)| format!(" (at {}:{l})", log.file(f))).unwrap_or_default();
            return Err(Error::field(
                format!("job {} (line {at}) Submission Time", job.id),
                format!(
                    "{} is before the application started, Timestamp {start}{start_at}: the log's times \
                     are inconsistent",
                    job.submitted_ms
                ),
            ));
        }
        let submitted = (job.submitted_ms - start) as f64 / 1000.0;
        crate::limits::check_seconds(submitted, &format!("job {} (line {at}) Submission Time", job.id), "arrival")?;
        let ran = |id: i64| ran_by.contains(&(id, job.id));
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
            tasks_made += by_stage.get(&s.id).map_or(0, |t| t.len() as u64);
            limits.check_tasks(tasks_made, "tasks of the log's jobs (a stage run by several jobs counts in each)")?;
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
        jobs.push(SparkJob { id: job.id, submitted, queue: job.pool.clone().unwrap_or_else(|| "default".into()), dag });
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
                // Spark's job ids fit an i64 (an int, in fact); a larger one is in no log.
                let Ok(id) = i64::try_from(id) else {
                    return Err(Error::Usage(format!("the log has no Spark job {id} (job ids are 0 to {})", i64::MAX)));
                };
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

    fn stage(id: usize, parents: &str) -> String {
        format!(r#"{{"Stage ID":{id},"Number of Tasks":1,"Parent IDs":[{parents}]}}"#)
    }

    fn task_end(id: usize) -> String {
        format!(
            r#"{{"Event":"SparkListenerTaskEnd","Stage ID":{id},"Task End Reason":{{"Reason":"Success"}},"Task Info":{{"Task ID":{id},"Index":0,"Launch Time":{},"Finish Time":{}}}}}"#,
            2000 + id,
            2010 + id
        )
    }

    const START: &str = r#"{"Event":"SparkListenerApplicationStart","App Name":"scale","Timestamp":1000}"#;

    /// Each event costs the same however many jobs or stages came before it: these logs took
    /// seconds when every job start and stage submission searched the jobs read so far.
    #[test]
    fn many_jobs_and_a_long_stage_chain_read_whole() {
        let n = 20_000;
        let mut lines = vec![START.to_string()];
        for j in 0..n {
            lines.push(format!(
                r#"{{"Event":"SparkListenerJobStart","Job ID":{j},"Submission Time":{},"Stage Infos":[{}]}}"#,
                2000 + j,
                stage(j, "")
            ));
            lines.push(format!(r#"{{"Event":"SparkListenerStageSubmitted","Stage Info":{}}}"#, stage(j, "")));
            lines.push(task_end(j));
            lines.push(format!(
                r#"{{"Event":"SparkListenerJobEnd","Job ID":{j},"Job Result":{{"Result":"JobSucceeded"}}}}"#
            ));
        }
        let app = parse(&lines.join("\n"), "jobs").unwrap();
        assert_eq!(app.report.jobs_read, n);
        let last = app.jobs.last().unwrap();
        assert_eq!((last.id, last.submitted, last.dag.tasks.len()), (n as i64 - 1, (1000 + n - 1) as f64 / 1000.0, 1));

        let n = 40_000;
        let parent = |i: usize| if i == 0 { String::new() } else { (i - 1).to_string() };
        let infos: Vec<String> = (0..n).map(|i| stage(i, &parent(i))).collect();
        let mut lines = vec![
            START.to_string(),
            format!(
                r#"{{"Event":"SparkListenerJobStart","Job ID":0,"Submission Time":2000,"Stage Infos":[{}]}}"#,
                infos.join(",")
            ),
        ];
        for (i, info) in infos.iter().enumerate() {
            lines.push(format!(r#"{{"Event":"SparkListenerStageSubmitted","Stage Info":{info}}}"#));
            lines.push(task_end(i));
        }
        lines.push(r#"{"Event":"SparkListenerJobEnd","Job ID":0,"Job Result":{"Result":"JobSucceeded"}}"#.into());
        let dag = parse(&lines.join("\n"), "chain").unwrap().dags(Some(0)).unwrap().remove(0);
        assert_eq!((dag.stages.len(), dag.tasks.len()), (n, n));
        assert!(dag.stages.iter().skip(1).all(|s| s.parents.len() == 1));
        let path = crate::lowerbound::critical_path(&dag);
        assert!((path - n as f64 * 0.01).abs() < 1e-6, "{path}");
    }

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
