//! graphene's native workload trace: a CSV file with one row per stage.
//!
//! ```text
//! job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations
//! j0000,0,q0,scan,40,12,1,4,50,0,,
//! j0000,0,q0,agg,8,30,2,8,0,100,scan,
//! j0000,0,q0,fix,2,6.25,1,2,0,0,agg,5;7.5
//! j0000,0,q0,out,2,1,1,0,0,0,~fix,
//! j0001,3.5,q1,scan,10,4,1,2,20,0,,
//! ```
//!
//! * `job`: the job's name, unique in the trace. A job's rows need not be adjacent: rows are
//!   grouped by job, and every row of a job must give the same `arrival` and `queue`.
//! * `arrival`: seconds from the start of the trace (a finite number >= 0). Jobs are replayed in
//!   arrival order; jobs arriving together keep the order of their first rows.
//! * `queue`: the queue the job is submitted to.
//! * `stage`: the stage's name, unique within its job.
//! * `tasks`: how many tasks the stage runs (>= 0; a job needs at least one task in all).
//! * `duration`: seconds each task runs; when `durations` is given, their mean.
//! * `cpu`, `mem`, `disk`, `net`: what each task of the stage demands, the same for all of them
//!   (units are those of the cluster: cores, GB or Alibaba's 1/100 of a machine, MB/s).
//! * `parents`: `;`-separated names of stages of the same job this stage waits for. A bare name
//!   is an all-to-all edge (every task waits for every task of the parent, a shuffle); a `~`
//!   prefix (`~map`) is a one-to-one edge (task i waits for task i of the parent, which must have
//!   as many tasks). Empty for a source stage.
//! * `durations` (optional column; the cell may be empty): `;`-separated per-task durations
//!   when the tasks of the stage differ (stragglers). Their count must be `tasks`, and `duration`
//!   must be their mean (up to a relative 1e-6), which keeps a reader that ignores this column
//!   right on average. Empty: every task runs `duration`.
//!
//! Columns are matched by header name, in any order; surrounding spaces are ignored, and fields
//! holding commas or quotes are quoted the CSV way (`"a,b"`, `"say ""hi"""`).
//!
//! # Round trip
//!
//! [`write`] emits what [`read`] accepts, and `read(write(w))` is `w`: the same jobs, arrivals,
//! queues, stages in the same order, task counts, per-task durations, demands and edges
//! (numbers are printed with Rust's shortest round-trip formatting, so they parse back exactly).
//! Two things of a [`Dag`] have no column and are not kept: task groups (a read stage is its own
//! group) and demands that differ between tasks of one stage. For the latter the writer takes,
//! per resource, the maximum over the stage's tasks: conservative, as a scheduler packing by
//! those demands never overcommits a machine. What the writer emits then round-trips exactly.

use std::collections::{HashMap, HashSet};

use crate::error::{Error, Result};
use crate::model::{Dag, DagBuilder, EdgeKind, Job, ResVec, StageSpec, TaskSpec, Workload};

use super::{field_position, resources, MAX_TASKS_PER_STAGE, RESOURCES};

/// The columns, in the order the writer emits them. All but `durations` are required.
pub const HEADER: [&str; 12] =
    ["job", "arrival", "queue", "stage", "tasks", "duration", "cpu", "mem", "disk", "net", "parents", "durations"];

const JOB: usize = 0;
const ARRIVAL: usize = 1;
const QUEUE: usize = 2;
const STAGE: usize = 3;
const TASKS: usize = 4;
const DURATION: usize = 5;
const CPU: usize = 6;
const PARENTS: usize = 10;
const DURATIONS: usize = 11;

/// Relative tolerance between `duration` and the mean of `durations` (hand-written files round).
const MEAN_TOLERANCE: f64 = 1e-6;

/// One stage row, checked field by field.
struct Row {
    line: u64,
    byte: u64,
    stage: String,
    tasks: u32,
    duration: f64,
    demand: ResVec,
    parents: Vec<(String, EdgeKind)>,
    durations: Option<Vec<f64>>,
}

struct JobRows {
    name: String,
    arrival: f64,
    queue: String,
    rows: Vec<Row>,
}

/// Positions and messages for one file: the text (to find columns) and where each header
/// column sits in the records.
struct Ctx<'a> {
    text: &'a str,
    /// Record field index of each `HEADER` column; None for an absent optional column.
    cols: [Option<usize>; HEADER.len()],
}

impl Ctx<'_> {
    /// An error at column `col` (a `HEADER` index) of the record at (`line`, `byte`).
    fn at(&self, line: u64, byte: u64, col: usize, message: impl Into<String>) -> Error {
        let field = self.cols[col].unwrap_or(0);
        let (line, column) = field_position(self.text, line, byte, field);
        Error::Syntax { line, column, message: format!("{}: {}", HEADER[col], message.into()) }
    }
}

/// Reads a native trace. Errors are positioned (line, column, field); wrap them with the file.
pub fn read(text: &str) -> Result<Workload> {
    let mut rdr =
        csv::ReaderBuilder::new().has_headers(false).flexible(true).trim(csv::Trim::All).from_reader(text.as_bytes());
    let mut record = csv::StringRecord::new();
    if !rdr.read_record(&mut record).map_err(csv_error)? {
        return Err(Error::Syntax {
            line: 1,
            column: 1,
            message: format!("empty trace: expected the header `{}`", HEADER.join(",")),
        });
    }
    let ctx = header(text, &record)?;

    let mut jobs: Vec<JobRows> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    let limits = crate::limits::current();
    let mut total_tasks = 0u64;
    while rdr.read_record(&mut record).map_err(csv_error)? {
        let (line, byte) = record.position().map_or((0, 0), |p| (p.line(), p.byte()));
        // A line of only spaces reads as one empty field: nothing to say, skip it.
        if record.len() == 1 && record[0].is_empty() {
            continue;
        }
        let get = |col: usize| -> Result<&str> {
            let i = ctx.cols[col].expect("required columns are present");
            record.get(i).ok_or_else(|| {
                ctx.at(
                    line,
                    byte,
                    col,
                    format!("missing: the row has {} fields, the header {}", record.len(), ctx.field_count()),
                )
            })
        };
        let err = |col: usize, m: String| ctx.at(line, byte, col, m);
        if let Some(max) = ctx.cols.iter().flatten().max() {
            if record.len() > max + 1 {
                let (l, c) = field_position(text, line, byte, max + 1);
                return Err(Error::Syntax {
                    line: l,
                    column: c,
                    message: format!("the row has {} fields, the header {}", record.len(), ctx.field_count()),
                });
            }
        }

        let job = get(JOB)?;
        if job.is_empty() {
            return Err(err(JOB, "a job name must not be empty".into()));
        }
        let arrival = seconds(get(ARRIVAL)?, "arrival").map_err(|m| err(ARRIVAL, m))?;
        let queue = get(QUEUE)?;
        if queue.is_empty() {
            return Err(err(QUEUE, "a queue name must not be empty".into()));
        }
        let stage = get(STAGE)?;
        if stage.is_empty() {
            return Err(err(STAGE, "a stage name must not be empty".into()));
        }
        let tasks_text = get(TASKS)?;
        let tasks: u64 =
            tasks_text.parse().map_err(|_| err(TASKS, format!("'{tasks_text}' is not a whole number >= 0")))?;
        if tasks == 0 {
            return Err(err(TASKS, "a stage needs at least one task".into()));
        }
        if tasks > MAX_TASKS_PER_STAGE {
            return Err(err(TASKS, format!("{tasks} tasks in one stage; at most {MAX_TASKS_PER_STAGE} are supported")));
        }
        // The whole trace's tasks, checked row by row before any job's tasks are laid out.
        total_tasks = crate::limits::add(total_tasks, tasks);
        if let Err(e) = limits.check_tasks(total_tasks, "tasks in the trace so far") {
            return Err(err(TASKS, e.to_string()));
        }
        let duration = seconds(get(DURATION)?, "duration").map_err(|m| err(DURATION, m))?;
        let mut demand = ResVec::ZERO;
        for r in 0..RESOURCES.len() {
            demand.0[r] = number(get(CPU + r)?).map_err(|m| err(CPU + r, m))?;
        }
        let parents = parse_parents(get(PARENTS)?).map_err(|m| err(PARENTS, m))?;
        let durations = match ctx.cols[DURATIONS].and_then(|i| record.get(i)) {
            None | Some("") => None,
            Some(list) => {
                let ds = list
                    .split(';')
                    .map(|d| seconds(d.trim(), "duration"))
                    .collect::<std::result::Result<Vec<f64>, String>>()
                    .map_err(|m| err(DURATIONS, m))?;
                if ds.len() as u64 != tasks {
                    return Err(err(DURATIONS, format!("{} durations for {tasks} tasks", ds.len())));
                }
                let mean = ds.iter().sum::<f64>() / ds.len() as f64;
                if (mean - duration).abs() > MEAN_TOLERANCE * mean.abs().max(1.0) {
                    return Err(err(DURATION, format!("{duration} is not the mean of the stage's durations ({mean})")));
                }
                Some(ds)
            }
        };

        let row =
            Row { line, byte, stage: stage.to_string(), tasks: tasks as u32, duration, demand, parents, durations };
        match by_name.get(job) {
            Some(&j) => {
                let first = &jobs[j];
                let first_line = first.rows[0].line;
                if first.arrival != arrival {
                    return Err(err(
                        ARRIVAL,
                        format!("job '{job}' arrives at {arrival} here but at {} on line {first_line}", first.arrival),
                    ));
                }
                if first.queue != queue {
                    return Err(err(
                        QUEUE,
                        format!("job '{job}' is in queue '{queue}' here but in '{}' on line {first_line}", first.queue),
                    ));
                }
                jobs[j].rows.push(row);
            }
            None => {
                if let Err(e) = limits.check_jobs(jobs.len() as u64 + 1, "jobs in the trace") {
                    return Err(err(JOB, e.to_string()));
                }
                by_name.insert(job.to_string(), jobs.len());
                jobs.push(JobRows { name: job.to_string(), arrival, queue: queue.to_string(), rows: vec![row] });
            }
        }
    }

    let mut out = Vec::with_capacity(jobs.len());
    for job in jobs {
        let dag = build_job(&ctx, &job)?;
        out.push(Job { name: job.name, arrival: job.arrival, queue: job.queue, dag });
    }
    // Stable: jobs arriving together keep the order of their first rows.
    out.sort_by(|a, b| a.arrival.total_cmp(&b.arrival));
    Ok(Workload { jobs: out })
}

impl Ctx<'_> {
    fn field_count(&self) -> usize {
        self.cols.iter().flatten().count()
    }
}

/// Maps header names to columns: every required column once, nothing unknown.
fn header<'a>(text: &'a str, record: &csv::StringRecord) -> Result<Ctx<'a>> {
    let (line, byte) = record.position().map_or((1, 0), |p| (p.line(), p.byte()));
    let mut cols = [None; HEADER.len()];
    for (i, name) in record.iter().enumerate() {
        let name = name.trim_start_matches('\u{feff}');
        let at = |message: String| {
            let (line, column) = field_position(text, line, byte, i);
            Error::Syntax { line, column, message }
        };
        match HEADER.iter().position(|h| *h == name) {
            Some(k) if cols[k].is_some() => return Err(at(format!("column '{name}' appears twice in the header"))),
            Some(k) => cols[k] = Some(i),
            None => return Err(at(format!("unknown column '{name}' in the header (expected `{}`)", HEADER.join(",")))),
        }
    }
    if let Some(k) = (0..HEADER.len()).find(|&k| k != DURATIONS && cols[k].is_none()) {
        let (line, column) = field_position(text, line, byte, record.len());
        return Err(Error::Syntax {
            line,
            column,
            message: format!("the header lacks column '{}' (expected `{}`)", HEADER[k], HEADER.join(",")),
        });
    }
    Ok(Ctx { text, cols })
}

/// A finite number >= 0.
fn number(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        Ok(_) => Err(format!("{s} is not a finite number >= 0")),
        Err(_) if s.is_empty() => Err("empty; expected a number".into()),
        Err(_) => Err(format!("'{s}' is not a number")),
    }
}

/// A time in seconds: a finite number in `[0, limits::MAX_SECONDS]`.
fn seconds(s: &str, what: &str) -> std::result::Result<f64, String> {
    let v = number(s)?;
    if v > crate::limits::MAX_SECONDS {
        return Err(format!(
            "{what} {} is above the largest accepted, {:e} s",
            crate::limits::show(v),
            crate::limits::MAX_SECONDS
        ));
    }
    Ok(v)
}

fn parse_parents(s: &str) -> std::result::Result<Vec<(String, EdgeKind)>, String> {
    let mut out: Vec<(String, EdgeKind)> = Vec::new();
    // The names so far, so that a repeat is found in constant time (not by scanning `out`).
    let mut seen: HashSet<&str> = HashSet::new();
    for part in s.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, kind) = match part.strip_prefix('~') {
            Some(rest) => (rest.trim(), EdgeKind::OneToOne),
            None => (part, EdgeKind::AllToAll),
        };
        if name.is_empty() {
            return Err("'~' must be followed by a stage name".into());
        }
        if !seen.insert(name) {
            return Err(format!("parent '{name}' is listed twice"));
        }
        out.push((name.to_string(), kind));
    }
    Ok(out)
}

/// Checks a job's stages against each other (with positions) and builds its DAG.
fn build_job(ctx: &Ctx, job: &JobRows) -> Result<Dag> {
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(job.rows.len());
    for (i, r) in job.rows.iter().enumerate() {
        if let Some(&j) = index.get(r.stage.as_str()) {
            return Err(ctx.at(
                r.line,
                r.byte,
                STAGE,
                format!("job '{}' already has a stage '{}' (line {})", job.name, r.stage, job.rows[j].line),
            ));
        }
        index.insert(&r.stage, i);
    }
    for r in &job.rows {
        for (p, kind) in &r.parents {
            let Some(&pi) = index.get(p.as_str()) else {
                return Err(ctx.at(r.line, r.byte, PARENTS, format!("job '{}' has no stage '{p}'", job.name)));
            };
            let parent = &job.rows[pi];
            if *kind == EdgeKind::OneToOne && parent.tasks != r.tasks {
                return Err(ctx.at(
                    r.line,
                    r.byte,
                    PARENTS,
                    format!(
                        "one-to-one edge from '{p}' ({} tasks) needs equal task counts; '{}' has {}",
                        parent.tasks, r.stage, r.tasks
                    ),
                ));
            }
        }
    }
    let mut b = DagBuilder::new(job.name.clone(), resources());
    for r in &job.rows {
        let tasks = match &r.durations {
            Some(ds) => ds.iter().map(|&d| TaskSpec { duration: d, demand: r.demand }).collect(),
            None => vec![TaskSpec { duration: r.duration, demand: r.demand }; r.tasks as usize],
        };
        b.stage(StageSpec { name: r.stage.clone(), group: None, tasks, parents: r.parents.clone() });
    }
    b.build().map_err(|e| {
        // Put the error where the user can fix it: a cycle on the parents of its first stage,
        // anything else on the job's first row.
        let first = &job.rows[0];
        match &e {
            Error::Cycle(names) => {
                let r = names.first().and_then(|n| index.get(n.as_str())).map_or(first, |&i| &job.rows[i]);
                ctx.at(r.line, r.byte, PARENTS, format!("job '{}': {e}", job.name))
            }
            _ => ctx.at(first.line, first.byte, JOB, format!("job '{}': {e}", job.name)),
        }
    })
}

fn csv_error(e: csv::Error) -> Error {
    let line = e.position().map_or(0, |p| p.line() as usize);
    Error::Syntax { line, column: 1, message: format!("unreadable CSV: {e}") }
}

/// Writes a workload as a native trace (header included). Fails, naming the job and stage, on
/// what the format cannot hold: duplicate or empty job names, names with surrounding spaces,
/// names of parent stages holding `;` or starting with `~` (the `parents` syntax), resources other than
/// cpu, mem, disk and net, and negative or non-finite arrivals; and on what [`read`] would
/// refuse: no job, arrivals or durations above [`MAX_SECONDS`](crate::limits::MAX_SECONDS),
/// more jobs or tasks than the limits allow.
pub fn write(workload: &Workload) -> Result<String> {
    if workload.jobs.is_empty() {
        return Err(Error::Usage("the workload holds no jobs, and a trace needs at least one".into()));
    }
    let limits = crate::limits::current();
    limits.check_jobs(workload.jobs.len() as u64, "jobs in the trace")?;
    limits.check_tasks(workload.tasks() as u64, "tasks in the trace")?;
    let mut out = csv::WriterBuilder::new().from_writer(Vec::new());
    let io = |e: csv::Error| Error::Io(std::io::Error::other(e.to_string()));
    out.write_record(HEADER).map_err(io)?;
    let mut seen: HashMap<&str, ()> = HashMap::with_capacity(workload.jobs.len());
    let mut durations = String::new();
    let mut parents = String::new();
    for job in &workload.jobs {
        let at = |what: String| Error::field(format!("job '{}'", job.name), what);
        check_name("job name", &job.name).map_err(at)?;
        check_name("queue name", &job.queue).map_err(at)?;
        if seen.insert(&job.name, ()).is_some() {
            return Err(at("two jobs have this name; a trace needs unique job names".into()));
        }
        crate::limits::check_seconds(job.arrival, &format!("job '{}'", job.name), "arrival")?;
        let dag = &job.dag;
        let mut slot = [None; RESOURCES.len()];
        for (i, r) in dag.resources.iter().enumerate() {
            match RESOURCES.iter().position(|n| n == r) {
                Some(k) => slot[k] = Some(i),
                None => {
                    return Err(at(format!(
                        "resource '{r}' has no column in a trace (it has {})",
                        RESOURCES.join(", ")
                    )))
                }
            }
        }
        let arrival = job.arrival.to_string();
        for stage in &dag.stages {
            check_name("stage name", &stage.name).map_err(|m| at(m.clone()))?;
            // Only a parent's name is written in a parents column; other stages may hold
            // anything a field can (an Alibaba task named `M;` is an independent task).
            if !stage.children.is_empty() && (stage.name.contains(';') || stage.name.starts_with('~')) {
                return Err(at(format!(
                    "stage name '{}' holds ';' or starts with '~', which the parents column cannot name",
                    stage.name
                )));
            }
            let tasks = &dag.tasks[stage.first as usize..(stage.first + stage.len) as usize];
            if tasks.len() as u64 > MAX_TASKS_PER_STAGE {
                return Err(at(format!(
                    "stage '{}' has {} tasks; a trace holds at most {MAX_TASKS_PER_STAGE} per stage",
                    stage.name,
                    tasks.len()
                )));
            }
            for t in tasks {
                crate::limits::check_seconds(
                    t.duration,
                    &format!("job '{}', stage '{}'", job.name, stage.name),
                    "task duration",
                )?;
            }
            let mut demand = [0.0f64; RESOURCES.len()];
            for t in tasks {
                for (k, s) in slot.iter().enumerate() {
                    if let Some(i) = s {
                        demand[k] = demand[k].max(t.demand.0[*i]);
                    }
                }
            }
            durations.clear();
            let duration = match tasks.first() {
                None => 0.0,
                Some(t0) if tasks.iter().all(|t| t.duration == t0.duration) => t0.duration,
                Some(_) => {
                    for (i, t) in tasks.iter().enumerate() {
                        if i > 0 {
                            durations.push(';');
                        }
                        durations.push_str(&t.duration.to_string());
                    }
                    tasks.iter().map(|t| t.duration).sum::<f64>() / tasks.len() as f64
                }
            };
            parents.clear();
            for (i, e) in stage.parents.iter().enumerate() {
                if i > 0 {
                    parents.push(';');
                }
                if e.kind == EdgeKind::OneToOne {
                    parents.push('~');
                }
                parents.push_str(&dag.stages[e.stage as usize].name);
            }
            out.write_record([
                job.name.as_str(),
                &arrival,
                &job.queue,
                &stage.name,
                &stage.len.to_string(),
                &duration.to_string(),
                &demand[0].to_string(),
                &demand[1].to_string(),
                &demand[2].to_string(),
                &demand[3].to_string(),
                &parents,
                &durations,
            ])
            .map_err(io)?;
        }
    }
    let bytes = out.into_inner().map_err(|e| Error::Io(std::io::Error::other(e.to_string())))?;
    String::from_utf8(bytes).map_err(|e| Error::Io(std::io::Error::other(e.to_string())))
}

/// A name the reader gives back unchanged: not empty, no surrounding spaces (the reader trims).
fn check_name(what: &str, name: &str) -> std::result::Result<(), String> {
    if name.is_empty() {
        return Err(format!("the {what} is empty"));
    }
    if name.trim() != name {
        return Err(format!("the {what} '{name}' has surrounding spaces, which a trace does not keep"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations
j0000,0,q0,scan,40,12,1,4,50,0,,
j0000,0,q0,agg,8,30,2,8,0,100,scan,
j0000,0,q0,fix,2,6.25,1,2,0,0,agg,5;7.5
j0000,0,q0,out,2,1,1,0,0,0,~fix,
j0001,3.5,q1,scan,10,4,1,2,20,0,,
";

    fn message(r: Result<Workload>) -> String {
        match r {
            Ok(_) => panic!("accepted"),
            Err(e) => e.to_string(),
        }
    }

    /// The writer refuses what the reader would: no job, an arrival or duration past 1e12 s.
    #[test]
    fn writes_only_what_it_reads_back() {
        let mut w = read(SAMPLE).unwrap();
        assert_eq!(
            write(&Workload { jobs: vec![] }).unwrap_err().to_string(),
            "the workload holds no jobs, and a trace needs at least one"
        );
        w.jobs[1].arrival = 2e12;
        assert_eq!(
            write(&w).unwrap_err().to_string(),
            "job 'j0001': arrival 2000000000000 is above the largest accepted, 1e12 s"
        );
        w.jobs[1].arrival = 1e12;
        assert_eq!(read(&write(&w).unwrap()).unwrap().jobs[1].arrival, 1e12);
    }

    #[test]
    fn a_stage_with_many_parents_is_read_and_a_repeat_named() {
        let n = 50_000;
        let mut text = String::from("job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents\n");
        for i in 0..n {
            text.push_str(&format!("j,0,q,p{i},1,1,1,1,0,0,\n"));
        }
        let parents: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
        let all = format!("{text}j,0,q,sink,1,1,1,1,0,0,{}\n", parents.join(";"));
        let w = read(&all).unwrap();
        let d = &w.jobs[0].dag;
        assert_eq!(d.stages[d.stage_by_name("sink").unwrap() as usize].parents.len(), n);
        let again = format!("{text}j,0,q,sink,1,1,1,1,0,0,{};~p777;p9\n", parents.join(";"));
        let e = message(read(&again));
        assert!(e.contains(&format!("line {}", n + 2)) && e.contains("parent 'p777' is listed twice"), "{e}");
    }

    #[test]
    fn reads_the_documented_example() {
        let w = read(SAMPLE).unwrap();
        assert_eq!(w.jobs.len(), 2);
        let d = &w.jobs[0].dag;
        assert_eq!(d.stages.len(), 4);
        assert_eq!(d.len(), 40 + 8 + 2 + 2);
        let fix = &d.stages[d.stage_by_name("fix").unwrap() as usize];
        let ds: Vec<f64> = fix.tasks().map(|t| d.tasks[t as usize].duration).collect();
        assert_eq!(ds, vec![5.0, 7.5]);
        let out = &d.stages[d.stage_by_name("out").unwrap() as usize];
        assert_eq!(out.parents[0].kind, EdgeKind::OneToOne);
        assert_eq!(w.jobs[1].arrival, 3.5);
        assert_eq!(w.jobs[1].queue, "q1");
        assert_eq!(write(&w).unwrap(), SAMPLE);
    }

    #[test]
    fn rows_of_a_job_may_be_apart_and_jobs_are_sorted() {
        let text = "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents
b,5,q,s,1,1,1,1,0,0,
a,2,q,t,1,1,1,1,0,0,s
b,5,q,u,1,1,1,1,0,0,s
a,2,q,s,1,1,1,1,0,0,
";
        let w = read(text).unwrap();
        let names: Vec<&str> = w.jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(w.jobs[0].dag.stages[0].name, "s", "stages in topological order");
    }

    #[test]
    fn errors_are_positioned() {
        let h = "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents\n";
        let m = message(read(&format!("{h}j,0,q,s,1,abc,1,1,0,0,\n")));
        assert!(m.contains("line 2, column 11: duration: 'abc' is not a number"), "{m}");
        let m = message(read(&format!("{h}j,0,q,s,1,1,1,1,0,0\n")));
        assert!(m.contains("line 2, column 20: parents: missing"), "{m}");
        let m = message(read(&format!("{h}j,0,q,s,1,1,1,1,0,0,\nj,1,q,t,1,1,1,1,0,0,s\n")));
        assert!(m.contains("line 3, column 3: arrival: job 'j' arrives at 1 here but at 0 on line 2"), "{m}");
        let m = message(read(&format!("{h}j,0,q,s,1,1,1,1,0,0,nope\n")));
        assert!(m.contains("line 2, column 21: parents: job 'j' has no stage 'nope'"), "{m}");
        let m = message(read(&format!("{h}j,0,q,a,1,1,1,1,0,0,b\nj,0,q,b,1,1,1,1,0,0,a\n")));
        assert!(m.contains("column 21: parents: job 'j': the DAG has a cycle"), "{m}");
        let m = message(read("job,arrival,queue,stage,tasks,duration,cpu,mem,disk,parents\n"));
        assert!(m.contains("line 1, column 60: the header lacks column 'net'"), "{m}");
        let m = message(read(&format!("{h}j,0,q,s,2,1,1,1,0,0,,1;2\n")));
        assert!(m.contains("unknown column") || m.contains("fields"), "{m}");
    }

    #[test]
    fn durations_must_match_tasks_and_mean() {
        let h = "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations\n";
        let m = message(read(&format!("{h}j,0,q,s,3,1,1,1,0,0,,1;1\n")));
        assert!(m.contains("durations: 2 durations for 3 tasks"), "{m}");
        let m = message(read(&format!("{h}j,0,q,s,2,5,1,1,0,0,,1;2\n")));
        assert!(m.contains("duration: 5 is not the mean"), "{m}");
    }

    #[test]
    fn writer_keeps_the_maximum_demand_and_rejects_what_it_cannot_hold() {
        let mut b = DagBuilder::new("d", vec!["mem".into(), "cpu".into()]);
        b.stage(StageSpec {
            name: "s".into(),
            group: None,
            tasks: vec![
                TaskSpec { duration: 1.0, demand: ResVec::from_slice(&[4.0, 1.0]) },
                TaskSpec { duration: 1.0, demand: ResVec::from_slice(&[2.0, 3.0]) },
            ],
            parents: vec![],
        });
        let w =
            Workload { jobs: vec![Job { name: "j".into(), arrival: 0.0, queue: "q".into(), dag: b.build().unwrap() }] };
        let text = write(&w).unwrap();
        assert!(text.ends_with("j,0,q,s,2,1,3,4,0,0,,\n"), "{text}");
        let back = read(&text).unwrap();
        assert_eq!(write(&back).unwrap(), text);

        let mut b = DagBuilder::new("d", vec!["gpu".into()]);
        b.stage(StageSpec {
            name: "s".into(),
            group: None,
            tasks: vec![TaskSpec { duration: 1.0, demand: ResVec::ZERO }],
            parents: vec![],
        });
        let w =
            Workload { jobs: vec![Job { name: "j".into(), arrival: 0.0, queue: "q".into(), dag: b.build().unwrap() }] };
        assert!(write(&w).unwrap_err().to_string().contains("resource 'gpu'"));
    }

    /// Found by the `trace_alibaba` fuzz target: an Alibaba task named `M;` (an independent
    /// task) was read, but the workload could not be written as a native trace.
    #[test]
    fn only_parent_stages_need_names_the_parents_column_can_hold() {
        let job = |leaf: &str, parent: &str| {
            let mut b = DagBuilder::new("d", resources());
            let task = || vec![TaskSpec { duration: 1.0, demand: ResVec::from_slice(&[1.0]) }];
            b.stage(StageSpec { name: parent.into(), group: None, tasks: task(), parents: vec![] });
            b.stage(StageSpec {
                name: leaf.into(),
                group: None,
                tasks: task(),
                parents: vec![(parent.into(), crate::model::EdgeKind::AllToAll)],
            });
            Workload { jobs: vec![Job { name: "j".into(), arrival: 0.0, queue: "q".into(), dag: b.build().unwrap() }] }
        };
        for leaf in ["M;", "~x", "a;b"] {
            let text = write(&job(leaf, "p")).unwrap();
            let back = read(&text).unwrap();
            assert_eq!(back.jobs[0].dag.stages[1].name, leaf);
            assert_eq!(write(&back).unwrap(), text);
        }
        for parent in ["M;", "~x"] {
            let err = write(&job("c", parent)).unwrap_err().to_string();
            assert!(err.contains("which the parents column cannot name"), "{err}");
        }
    }
}
