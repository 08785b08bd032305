//! YARN Scheduler Load Simulator (SLS) traces for graphene's SLS application master
//! (`integrations/yarn-sls`, `am.type: graphene`): one schedule's job (`export --format sls`) or
//! a whole workload with a chosen order (`export-trace --format sls`).
//!
//! SLS reads a stream of JSON job objects (`SLSRunner -tracetype SLS -tracelocation FILE`); we
//! write one per line. The AM receives, per task, only what SLS's `ContainerSimulator` keeps of
//! the entry (resource, duration, priority, type, allocation id, ...): keys SLS does not know are
//! dropped in `AMDefinitionSLS.getTaskContainers`. So each entry carries:
//!
//! | key | value |
//! |---|---|
//! | `count` | 1 (one container per task) |
//! | `container.type` | `stage[index]`, then `<` and the stage's parents separated by `;` (`~p`: one-to-one), e.g. `agg[3]<scan;~fix`: the only free-form string SLS passes to the AM |
//! | `container.allocation.id` | the entry's position in the job; the AM sends it as the YARN `allocationRequestId`, so every granted container names its task |
//! | `container.priority` | the task's priority, lower = served first |
//! | `container.duration.ms` | the task's duration x `time_ms` (at least 1: SLS refuses 0) |
//! | `container.vcores`, `container.memory-mb` | ceil(cpu), ceil(mem x `mem_mb`), both at least 1 |
//!
//! and each job `am.type` `graphene`, `job.id` (the trace's job name), `job.user` `default`,
//! `job.queue.name`, `job.start.ms` (arrival x `time_ms`) and `job.end.ms` (arrival plus the
//! job's critical path, which SLS only reports). Entries are listed by priority, ties in task
//! order, so the file reads in precedence order.
//!
//! Orders for a workload ([`TraceOrder`]): `graphene` ranks the priScore of the library's
//! online priority rule ([`PriorityCache`]: the offline constructor per job, the cheap BFS rule
//! for small jobs), exactly what `replay --scheduler graphene+cs` uses inside a job; `cp` ranks
//! the critical path to the job's end (what `replay --scheduler cp` uses); `natural` is Tez's
//! `DAGSchedulerNaturalOrder`: every task of a vertex at distance `d` from the roots gets
//! `(d + 1) * 3`. All three put every parent ahead of its children.

use std::collections::BTreeMap;

use serde::Serialize;

use super::levels::Priorities;
use super::schedule::ScheduleIn;
use super::yarn::{duration_ms, Columns};
use super::Units;
use crate::error::{Error, Result};
use crate::model::{paths, Cluster, Dag, EdgeKind, Workload};
use crate::online::PriorityCache;

/// The `am.type` our AM simulator is registered under (`yarn.sls.am.type.graphene`).
pub const AM_TYPE: &str = "graphene";
/// The manifest's format tag.
pub const MANIFEST_FORMAT: &str = "graphene-sls/1";

crate::named_enum! {
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
    #[serde(rename_all = "lowercase")]
    pub enum TraceOrder {
        /// Graphene's priScore (offline constructor per job; BFS rule below 8 tasks).
        Graphene = "graphene",
        /// Tez DAGSchedulerNaturalOrder: by the vertex's distance from the roots.
        Natural = "natural",
        /// Critical path: longest chain of durations to the job's end first.
        Cp = "cp",
    }
}

impl TraceOrder {
    pub fn name(self) -> &'static str {
        match self {
            TraceOrder::Graphene => "graphene",
            TraceOrder::Natural => "natural",
            TraceOrder::Cp => "cp",
        }
    }
}

#[derive(Serialize)]
struct Job {
    #[serde(rename = "am.type")]
    am_type: &'static str,
    #[serde(rename = "job.id")]
    id: String,
    #[serde(rename = "job.user")]
    user: &'static str,
    #[serde(rename = "job.queue.name")]
    queue: String,
    #[serde(rename = "job.start.ms")]
    start_ms: u64,
    #[serde(rename = "job.end.ms")]
    end_ms: u64,
    #[serde(rename = "job.tasks")]
    tasks: Vec<Container>,
}

#[derive(Serialize)]
struct Container {
    count: u32,
    #[serde(rename = "container.type")]
    kind: String,
    #[serde(rename = "container.allocation.id")]
    allocation_id: u64,
    #[serde(rename = "container.priority")]
    priority: u32,
    #[serde(rename = "container.duration.ms")]
    duration_ms: u64,
    #[serde(rename = "container.vcores")]
    vcores: u32,
    #[serde(rename = "container.memory-mb")]
    memory_mb: u64,
}

/// `stage<p1;~p2`'s tail for every stage: the parents as the AM reads them. Refuses stage
/// names that the encoding cannot carry.
fn parent_specs(dag: &Dag) -> Result<Vec<String>> {
    for s in &dag.stages {
        if s.name.is_empty() || s.name.contains('<') || s.name.contains(';') || s.name.starts_with('~') {
            return Err(Error::field(
                format!("stage '{}'", s.name),
                "an SLS trace cannot carry this stage name (it must be non-empty, hold no '<' or ';' and not start with '~')",
            ));
        }
    }
    Ok(dag
        .stages
        .iter()
        .map(|s| {
            let ps: Vec<String> = s
                .parents
                .iter()
                .map(|e| {
                    let name = &dag.stages[e.stage as usize].name;
                    match e.kind {
                        EdgeKind::AllToAll => name.clone(),
                        EdgeKind::OneToOne => format!("~{name}"),
                    }
                })
                .collect();
            if ps.is_empty() {
                String::new()
            } else {
                format!("<{}", ps.join(";"))
            }
        })
        .collect())
}

/// One job record: `entries` are (task, priority) in the order they are listed.
fn job_record(
    dag: &Dag,
    name: &str,
    queue: &str,
    start_ms: u64,
    end_ms: u64,
    entries: &[(u32, u32)],
    units: &Units,
) -> Result<Job> {
    let cols = Columns::find(dag, units)?;
    let specs = parent_specs(dag)?;
    let tasks = entries
        .iter()
        .enumerate()
        .map(|(pos, &(t, priority))| {
            let task = &dag.tasks[t as usize];
            let stage = dag.stage_of(t);
            let cap = cols.capability(dag, t, units)?;
            Ok(Container {
                count: 1,
                kind: format!("{}[{}]{}", stage.name, task.index, specs[task.stage as usize]),
                allocation_id: pos as u64,
                priority,
                duration_ms: duration_ms(dag, t, units)?.max(1),
                vcores: cap.vcores,
                memory_mb: cap.memory_mb,
            })
        })
        .collect::<Result<_>>()?;
    Ok(Job {
        am_type: AM_TYPE,
        id: name.to_string(),
        user: "default",
        queue: queue.to_string(),
        start_ms,
        end_ms: end_ms.max(start_ms + 1),
        tasks,
    })
}

/// `export --format sls`: the schedule's one job, priorities from its precedence order.
pub fn write(
    schedule: &ScheduleIn,
    dag: &Dag,
    order: &[usize],
    pri: &Priorities,
    units: &Units,
    queue: &str,
) -> Result<Vec<u8>> {
    let entries: Vec<(u32, u32)> = order
        .iter()
        .map(|&i| {
            let id = dag.task_by_name(&schedule.tasks[i].id).expect("schedule checked against the DAG");
            (id, pri.task[i])
        })
        .collect();
    units.check()?;
    let makespan = schedule.tasks.iter().map(|t| t.end).fold(0.0, f64::max);
    let end_ms = super::whole(
        makespan,
        units.time_ms,
        f64::round,
        super::MAX_LONG,
        || "job.end.ms".into(),
        "makespan",
        "--time-ms",
    )?;
    let job = job_record(dag, &format!("job_{}", schedule.name()), queue, 0, end_ms, &entries, units)?;
    let mut out = serde_json::to_vec(&job).expect("SLS records always serialize");
    out.push(b'\n');
    Ok(out)
}

/// Options of `export-trace --format sls`.
#[derive(Clone, Debug)]
pub struct TraceExportOptions {
    pub order: TraceOrder,
    pub units: Units,
    /// The scheduler's queues; a job in any other queue is an error. None accepts every queue
    /// of the trace (the runner then creates exactly those).
    pub queues: Option<Vec<String>>,
}

/// What `export-trace` writes: the SLS trace, its Rumen stand-ins and a manifest.
pub struct TraceExport {
    /// `sls-jobs.json`: one job object per line.
    pub trace: Vec<u8>,
    /// `rumen-jobs.json`: one Rumen job per graphene job (see [`rumen_stand_in`]).
    pub rumen: Vec<u8>,
    /// `manifest.json`.
    pub manifest: Vec<u8>,
    pub jobs: usize,
    pub tasks: usize,
}

#[derive(Serialize)]
struct Manifest<'a> {
    format: &'static str,
    order: TraceOrder,
    am_type: &'static str,
    jobs: usize,
    tasks: usize,
    queues: Vec<String>,
    time_ms: f64,
    mem_mb: f64,
    machines: usize,
    /// Largest vcores and memory-mb of any machine, as the size check used them.
    largest_node: BTreeMap<&'a str, u64>,
}

/// The Rumen job standing in for job `k` of the SLS trace.
///
/// Hadoop 3.4.2's SLS cannot load SLS-format jobs that have tasks: `AMRunner` parses each job
/// as `Map<String, String>` and jackson-databind refuses the `job.tasks` array. Its Rumen reader
/// is typed and works, so the runner gives SLS one Rumen job per graphene job, `job_0_<k>`, with
/// one token map task; SLS starts the AM registered for Rumen's fixed `am.type` (`mapreduce`,
/// mapped to graphene's AM), which reads job `k` (line `k` of `sls-jobs.json`) for everything
/// else. The arrival is there too: SLS rebases every Rumen job on its own submit time (all start
/// at 0), so the AM submits at the graphene arrival itself.
fn rumen_stand_in(k: usize, queue: &str, start_ms: u64, end_ms: u64) -> serde_json::Value {
    let id = format!("{k:04}");
    serde_json::json!({
        "jobID": format!("job_0_{id}"),
        "user": "default",
        "queue": queue,
        "jobName": format!("graphene-{id}"),
        "submitTime": start_ms,
        "launchTime": start_ms,
        "finishTime": end_ms,
        "outcome": "SUCCESS",
        "jobtype": "JAVA",
        "totalMaps": 1,
        "totalReduces": 0,
        "mapTasks": [{
            "taskID": format!("task_0_{id}_m_000000"),
            "taskType": "MAP",
            "taskStatus": "SUCCESS",
            "startTime": start_ms,
            "finishTime": start_ms + 1,
            "attempts": [{
                "attemptID": format!("attempt_0_{id}_m_000000_0"),
                "hostName": "/default-rack/node0",
                "startTime": start_ms,
                "finishTime": start_ms + 1,
                "result": "SUCCESS"
            }]
        }],
        "reduceTasks": [],
        "otherTasks": []
    })
}

/// Each task's priority under `order` (lower = first; parents always below their children).
pub fn task_priorities(dag: &Dag, order: TraceOrder, cluster: &Cluster, cache: &mut PriorityCache) -> Vec<u32> {
    match order {
        TraceOrder::Natural => {
            // Tez's vertex distance from the roots: the longest chain of parent vertices.
            let depth = paths::stage_depths(dag);
            dag.tasks.iter().map(|t| (depth[t.stage as usize] + 1) * 3).collect()
        }
        TraceOrder::Cp => rank_desc(&paths::bottom_levels(dag)),
        TraceOrder::Graphene => {
            let scores = cache.scores(
                dag,
                |t| (dag.tasks[t as usize].duration, dag.tasks[t as usize].demand),
                &cluster.machines,
                cluster.overbook,
            );
            crate::online::yarn_priorities(&scores)
        }
    }
}

/// 1 for the highest score, then 2, ...; equal scores go in task order (a topological order,
/// so a parent tied with its child still comes first).
fn rank_desc(score: &[f64]) -> Vec<u32> {
    let mut ids: Vec<usize> = (0..score.len()).collect();
    ids.sort_by(|&a, &b| score[b].total_cmp(&score[a]).then(a.cmp(&b)));
    let mut pri = vec![0u32; score.len()];
    for (r, &t) in ids.iter().enumerate() {
        pri[t] = r as u32 + 1;
    }
    pri
}

/// Each machine's (vcores, memory-mb) as SLS nodes: rounded down, refused (naming the machine)
/// beyond what YARN holds.
fn node_sizes(cluster: &Cluster, ci: usize, mi: usize, units: &Units) -> Result<Vec<(u64, u64)>> {
    let floor = |v: f64| v.floor().max(0.0);
    cluster
        .machines
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let field = || format!("machine {i}");
            Ok((
                super::whole(m.0[ci], 1.0, floor, super::MAX_INT, field, "vcores", "")?,
                super::whole(m.0[mi], units.mem_mb, floor, super::MAX_LONG, field, "memory", "--mem-mb")?,
            ))
        })
        .collect()
}

/// Refuses a task that no machine of `cluster` can hold once rounded as YARN sees it
/// (ceil vcores, ceil memory-mb), naming the job and the task.
fn check_fits(dag: &Dag, job: &str, cluster: &Cluster, units: &Units) -> Result<()> {
    let cols = Columns::find(dag, units)?;
    let (ci, mi) = (
        cluster.resources.iter().position(|r| *r == units.cpu),
        cluster.resources.iter().position(|r| *r == units.mem),
    );
    let (Some(ci), Some(mi)) = (ci, mi) else {
        return Err(Error::Usage(format!(
            "the cluster has no '{}' or '{}' resource to size SLS nodes by",
            units.cpu, units.mem
        )));
    };
    let nodes = node_sizes(cluster, ci, mi, units)?;
    let big = nodes.iter().fold((0, 0), |a, n| (a.0.max(n.0), a.1.max(n.1)));
    for t in 0..dag.len() as u32 {
        let cap = cols.capability(dag, t, units).map_err(|e| match e {
            Error::Usage(m) => Error::Usage(format!("job {job}: {m}")),
            other => other,
        })?;
        if !nodes.iter().any(|&(v, m)| cap.vcores as u64 <= v && cap.memory_mb <= m) {
            return Err(Error::field(
                format!("job {job}: task {}", dag.task_name(t)),
                format!(
                    "asks for {} vcores, {} MB: larger than any node (the largest has {} vcores, {} MB)",
                    cap.vcores, cap.memory_mb, big.0, big.1
                ),
            ));
        }
    }
    Ok(())
}

/// `export-trace --format sls`: every job of `workload` with its arrival and queue, tasks at the
/// priorities of `opts.order` computed for `cluster`.
pub fn write_workload(workload: &Workload, cluster: &Cluster, opts: &TraceExportOptions) -> Result<TraceExport> {
    opts.units.check()?;
    if workload.jobs.is_empty() {
        return Err(Error::field("jobs", "the trace has no jobs"));
    }
    if let Some(qs) = &opts.queues {
        if qs.is_empty() || qs.iter().any(|q| q.trim().is_empty()) {
            return Err(Error::Usage("--queues needs one or more non-empty queue names".into()));
        }
    }
    // The online rule's defaults (GrapheneOnline): bypass below 8 tasks, 10 offline machines.
    let defaults = crate::online::GrapheneOnline::default();
    let mut cache = PriorityCache::new(defaults.bypass_tasks, defaults.offline_machines);
    let mut trace = Vec::new();
    let mut rumen = Vec::new();
    let mut tasks = 0;
    for (k, job) in workload.jobs.iter().enumerate() {
        if let Some(qs) = &opts.queues {
            if !qs.contains(&job.queue) {
                return Err(Error::field(
                    format!("job {}: queue", job.name),
                    format!("'{}' is not a queue of the scheduler (known: {})", job.queue, qs.join(", ")),
                ));
            }
        }
        check_fits(&job.dag, &job.name, cluster, &opts.units)?;
        let pri = task_priorities(&job.dag, opts.order, cluster, &mut cache);
        let mut entries: Vec<(u32, u32)> = (0..job.dag.len() as u32).map(|t| (t, pri[t as usize])).collect();
        entries.sort_by_key(|&(t, p)| (p, t));
        let field = || format!("job {}", job.name);
        let ms = opts.units.time_ms;
        let start_ms = super::whole(job.arrival, ms, f64::round, super::MAX_LONG, field, "arrival", "--time-ms")?;
        let cp = paths::bottom_levels(&job.dag).into_iter().fold(0.0, f64::max);
        let cp_ms = super::whole(cp, ms, f64::round, super::MAX_LONG, field, "critical path", "--time-ms")?;
        let end_ms = start_ms.checked_add(cp_ms).filter(|&e| e <= super::MAX_LONG).ok_or_else(|| {
            Error::Usage(format!(
                "{}: end {start_ms} + {cp_ms} ms (arrival + critical path) is beyond the largest YARN holds ({})",
                field(),
                super::MAX_LONG
            ))
        })?;
        let rec = job_record(&job.dag, &job.name, &job.queue, start_ms, end_ms, &entries, &opts.units).map_err(
            |e| match e {
                Error::Field { field, message } => Error::field(format!("job {}: {field}", job.name), message),
                Error::Usage(m) => Error::Usage(format!("job {}: {m}", job.name)),
                other => other,
            },
        )?;
        serde_json::to_writer(&mut trace, &rec).expect("SLS records always serialize");
        trace.push(b'\n');
        serde_json::to_writer(&mut rumen, &rumen_stand_in(k, &job.queue, start_ms, rec.end_ms))
            .expect("Rumen records always serialize");
        rumen.push(b'\n');
        tasks += job.dag.len();
    }
    let (ci, mi) = (
        cluster.resources.iter().position(|r| *r == opts.units.cpu).unwrap_or(0),
        cluster.resources.iter().position(|r| *r == opts.units.mem).unwrap_or(0),
    );
    let nodes = node_sizes(cluster, ci, mi, &opts.units)?;
    let mut largest = BTreeMap::new();
    largest.insert("vcores", nodes.iter().map(|n| n.0).max().unwrap_or(0));
    largest.insert("memory-mb", nodes.iter().map(|n| n.1).max().unwrap_or(0));
    let manifest = Manifest {
        format: MANIFEST_FORMAT,
        order: opts.order,
        am_type: AM_TYPE,
        jobs: workload.jobs.len(),
        tasks,
        queues: opts.queues.clone().unwrap_or_else(|| workload.queues()),
        time_ms: opts.units.time_ms,
        mem_mb: opts.units.mem_mb,
        machines: cluster.len(),
        largest_node: largest,
    };
    Ok(TraceExport { trace, rumen, manifest: super::to_json(&manifest), jobs: workload.jobs.len(), tasks })
}
