//! Workload traces: jobs (each a DAG) arriving over time into queues, as `replay` consumes them
//! and `gen-trace` writes them.
//!
//! * [`native_csv`]: graphene's own CSV, one row per stage; what `gen-trace` writes and every
//!   workload can be saved as (round trip: `read(write(w))` is `w`).
//! * [`alibaba`]: Alibaba cluster-trace-v2018 batch jobs, both the raw `batch_task.csv` layout
//!   and the spar one-hour sample; DAGs come from task names, broken DAGs are skipped and counted
//!   in a [`SkipReport`].
//! * [`generate`](mod@generate): a synthetic workload drawn from DAG files with a seeded arrival process.
//! * [`load`]: the load a workload offers a cluster, and arrivals calibrated to a target load.
//! * [`spark_sched_sim`]: spark-sched-sim's TPC-H job mix (one-slot tasks at stage means).
//!
//! [`load`] reads either format, telling them apart by content: a native CSV starts with its
//! header line (`job,arrival,...`); an Alibaba file has no header (or the raw trace's own
//! `task_name,...` one) and 9 (raw) or 7 (spar) columns. `--trace-format` overrides the guess.
//!
//! Every parse error names the file, then the line and column (1-based, columns counted in
//! characters), then the field and what is wrong with it.

pub mod alibaba;
pub mod generate;
pub mod load;
pub mod native_csv;
pub mod spark_sched_sim;

pub use alibaba::{SkipReason, SkipReport};
pub use generate::{generate, generate_from, ArrivalProcess};

use std::path::Path;

use crate::error::{Error, Result};
use crate::model::Workload;

/// The resources of every trace, in this order. Alibaba traces record only the first two.
pub const RESOURCES: [&str; 4] = ["cpu", "mem", "disk", "net"];

/// More tasks in one stage than any real trace holds; guards against a typo (or a corrupt
/// count) allocating without bound.
pub const MAX_TASKS_PER_STAGE: u64 = 10_000_000;

pub(crate) fn resources() -> Vec<String> {
    RESOURCES.iter().map(|s| s.to_string()).collect()
}

crate::named_enum! {
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum TraceFormat {
        /// graphene's CSV, one row per stage (header `job,arrival,queue,stage,...`).
        Native = "native",
        /// Alibaba cluster-trace-v2018 `batch_task.csv` (9 columns) or the spar sample (7 columns).
        Alibaba = "alibaba",
        /// A Spark event log (file, compressed file or rolling directory): the application's jobs
        /// that succeeded, at their submission times, in their scheduler pools.
        Spark = "spark",
    }
}

/// How to read a trace file.
#[derive(Clone, Debug, Default)]
pub struct TraceOptions {
    /// The format; guessed from the content when None.
    pub format: Option<TraceFormat>,
    /// Spread the jobs round-robin (in arrival order) over queues `q0..q(K-1)`, replacing the
    /// queues the file gives. None keeps them (Alibaba traces have one queue, `default`).
    pub queues: Option<usize>,
}

/// Guesses the format of a trace from its first non-empty line.
pub fn detect(text: &str) -> Result<TraceFormat> {
    if crate::formats::spark::looks_like_spark_text(text) {
        return Ok(TraceFormat::Spark);
    }
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let first = first.trim_start_matches('\u{feff}');
    let head: Vec<&str> = first.split(',').map(str::trim).collect();
    if head.first() == Some(&"job") {
        return Ok(TraceFormat::Native);
    }
    if head.len() == alibaba::RAW_COLUMNS || head.len() == alibaba::SPAR_COLUMNS {
        return Ok(TraceFormat::Alibaba);
    }
    Err(Error::Syntax {
        line: 1 + text.lines().take_while(|l| l.trim().is_empty()).count(),
        column: 1,
        message: format!(
            "cannot tell the trace format: expected the native header `{}`, or {} (Alibaba batch_task) \
             or {} (Alibaba spar sample) comma-separated columns, found {}; use --trace-format",
            native_csv::HEADER.join(","),
            alibaba::RAW_COLUMNS,
            alibaba::SPAR_COLUMNS,
            head.len()
        ),
    })
}

/// The jobs of a workload trace as DAGs to draw new workloads from (`gen-trace --trace-dags`):
/// arrivals and queues are dropped. With a demand `profile` every task's demands are cleared and
/// drawn from it (an Alibaba trace's cpu and memory are in its own machine's units, not those of
/// the cluster the new workload is for); without one they are kept as read.
pub fn job_dags(path: &Path, profile: Option<&str>, seed: u64) -> Result<Vec<crate::model::Dag>> {
    let profile = profile.map(crate::formats::profile::Profile::by_name).transpose()?;
    let (w, report) = load(path, &TraceOptions::default())?;
    if !report.is_empty() {
        crate::formats::note(&format!("{}: {report}", path.display()));
    }
    Ok(w.jobs
        .into_iter()
        .map(|j| match profile {
            None => j.dag,
            Some(p) => {
                let mut dag = j.dag;
                for t in &mut dag.tasks {
                    t.demand = crate::model::ResVec::ZERO;
                }
                p.apply(&dag, seed)
            }
        })
        .collect())
}

/// Reads a workload trace. Native traces never skip anything (every error is an error);
/// Alibaba traces skip broken DAGs and say how many in the report.
pub fn load(path: &Path, opts: &TraceOptions) -> Result<(Workload, SkipReport)> {
    if let Some(k) = opts.queues {
        check_spread(k)?;
    }
    let spark = opts.format == Some(TraceFormat::Spark)
        || (opts.format.is_none() && crate::formats::spark::looks_like_spark(path));
    let spark_jobs = |app: crate::formats::spark::SparkApp| -> Result<(Workload, SkipReport)> {
        let report = SkipReport { notes: vec![app.report.to_string()], ..SkipReport::default() };
        Ok((app.workload().map_err(|e| e.in_file(path))?, report))
    };
    let (mut workload, report) = if spark {
        spark_jobs(crate::formats::spark::read(path)?)?
    } else {
        let text = crate::formats::read_text(path)?;
        if opts.format.is_none() && crate::formats::spark::looks_like_spark_text(&text) {
            // A plain log known by its content: read as a file (its name says whether it is
            // still being written), not as text.
            spark_jobs(crate::formats::spark::read_plain(path, text)?)?
        } else {
            parse(&text, opts.format).map_err(|e| e.in_file(path))?
        }
    };
    if let Some(k) = opts.queues {
        spread_queues(&mut workload, k)?;
    }
    Ok((workload, report))
}

/// Reads a trace from text; `format` None guesses it.
pub fn parse(text: &str, format: Option<TraceFormat>) -> Result<(Workload, SkipReport)> {
    let format = match format {
        Some(f) => f,
        None => detect(text)?,
    };
    match format {
        TraceFormat::Native => Ok((native_csv::read(text)?, SkipReport::default())),
        TraceFormat::Alibaba => alibaba::read(text),
        TraceFormat::Spark => {
            let app = crate::formats::spark::parse(text, "spark")?;
            let report = SkipReport { notes: vec![app.report.to_string()], ..SkipReport::default() };
            Ok((app.workload()?, report))
        }
    }
}

/// Assigns job `i` (in the workload's arrival order) to queue `q{i mod k}`. Round-robin rather
/// than random so that every queue gets the same share of jobs, at every point of the trace,
/// which is what a fairness experiment over a single-queue trace needs. `k` is checked like a
/// job count (`--limit-jobs`: a queue holds a job) before anything else.
pub fn spread_queues(workload: &mut Workload, k: usize) -> Result<()> {
    check_spread(k)?;
    for (i, job) in workload.jobs.iter_mut().enumerate() {
        job.queue = queue_name(i % k);
    }
    Ok(())
}

/// `--spread-queues K`: at least 1, at most `--limit-jobs`.
fn check_spread(k: usize) -> Result<()> {
    if k == 0 {
        return Err(Error::Usage("--spread-queues must be at least 1".into()));
    }
    crate::limits::current().check_jobs(k as u64, "--spread-queues (each queue of a trace holds a job)")
}

/// Stretches every task's duration to `max(duration x scale, floor)` seconds (deterministic;
/// arrivals and demands unchanged). `gen-trace --duration-scale/--min-duration` applies it before
/// calibrating `--load`, so that a workload whose tasks are short against a real scheduler's
/// heartbeat (TPC-H's median task runs 0.05 s, YARN's node heartbeat is 0.05-1 s) can be made of
/// tasks the heartbeat is small against, at the same offered load.
pub fn stretch_durations(workload: &mut Workload, scale: f64, floor: f64) -> Result<()> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(Error::Usage(format!("--duration-scale {scale}: expected a finite number > 0")));
    }
    crate::limits::check_seconds(floor, "--min-duration", "minimum duration")?;
    for job in &mut workload.jobs {
        for t in &mut job.dag.tasks {
            let d = (t.duration * scale).max(floor);
            crate::limits::check_seconds(d, &format!("job '{}'", job.name), "stretched task duration")?;
            t.duration = d;
        }
    }
    Ok(())
}

/// The name of queue `i` of a generated or spread workload.
pub fn queue_name(i: usize) -> String {
    format!("q{i}")
}

/// Where field `field` (0-based) of the CSV record starting at byte `record_start` of `text`
/// begins, as a 1-based (line, column), columns counted in characters. Follows the quoting rules
/// the `csv` crate reads with (a `"` opens a quoted section, `""` inside one is a quote), so a
/// quoted field holding commas or newlines does not shift later columns. A record with fewer
/// fields gives the position just past its end, where the missing field would start.
pub(crate) fn field_position(text: &str, record_line: u64, record_start: u64, field: usize) -> (usize, usize) {
    let bytes = text.as_bytes();
    let start = (record_start as usize).min(bytes.len());
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let mut line = record_line as usize;
    let mut col_from = line_start;
    let mut seen = 0usize;
    let mut in_quotes = false;
    let mut i = start;
    let column = |from: usize, to: usize| text[from..to].chars().count() + 1;
    while i < bytes.len() {
        if seen == field && !in_quotes {
            return (line, column(col_from, i));
        }
        let b = bytes[i];
        match b {
            b'"' => in_quotes = !in_quotes,
            b',' if !in_quotes => seen += 1,
            b'\n' if in_quotes => {
                line += 1;
                col_from = i + 1;
            }
            b'\n' | b'\r' if !in_quotes => return (line, column(col_from, i)),
            _ => {}
        }
        i += 1;
    }
    (line, column(col_from, i))
}

/// Formats a count with thousands separators, for messages about large traces.
pub(crate) fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stretch_scales_then_floors_every_task() {
        let text = "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations
a,0,q0,s,2,0.5,1,1,0,0,,0.25;0.75
a,0,q0,t,1,4,1,1,0,0,s,
";
        let (mut w, _) = parse(text, None).unwrap();
        stretch_durations(&mut w, 2.0, 1.0).unwrap();
        let d: Vec<f64> = w.jobs[0].dag.tasks.iter().map(|t| t.duration).collect();
        assert_eq!(d, vec![1.0, 1.5, 8.0]);
        for (scale, floor) in
            [(0.0, 0.0), (-1.0, 0.0), (f64::NAN, 0.0), (f64::INFINITY, 0.0), (1.0, -1.0), (1.0, f64::NAN)]
        {
            assert!(stretch_durations(&mut w, scale, floor).is_err(), "{scale} {floor}");
        }
        // A scale that overflows a duration is refused, not turned into infinity.
        assert!(stretch_durations(&mut w, 1e308, 0.0).is_err());
    }

    /// `--spread-queues` (and Python's `read_trace(spread_queues=...)`) is a queue count checked
    /// like a job count before anything is built for it; within the limit no list of K names is
    /// made, so a million queues for two jobs costs nothing.
    #[test]
    fn spread_queues_is_checked_against_the_job_limit() {
        let text = "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents
a,0,x,s,1,1,1,1,0,0,
b,1,x,s,1,1,1,1,0,0,
";
        let (mut w, _) = parse(text, None).unwrap();
        let err = spread_queues(&mut w, 1_000_000_000).unwrap_err().to_string();
        assert_eq!(
            err,
            "--spread-queues (each queue of a trace holds a job): 1000000000 exceeds the limit of 1000000 \
             (raise it with --limit-jobs)"
        );
        assert_eq!(spread_queues(&mut w, 0).unwrap_err().to_string(), "--spread-queues must be at least 1");
        spread_queues(&mut w, 1_000_000).unwrap();
        assert_eq!([w.jobs[0].queue.as_str(), w.jobs[1].queue.as_str()], ["q0", "q1"]);
        let path = std::env::temp_dir().join(format!("graphene-spread-{}.csv", std::process::id()));
        std::fs::write(&path, text).unwrap();
        let opts = TraceOptions { format: None, queues: Some(2_000_000) };
        let err = load(&path, &opts).unwrap_err().to_string();
        std::fs::remove_file(&path).unwrap();
        assert!(err.starts_with("--spread-queues (each queue of a trace holds a job): 2000000 exceeds"), "{err}");
    }

    #[test]
    fn field_positions_follow_quotes() {
        let text = "a,b,c\nxx,\"y,\"\"y\",zzz\n";
        // Record 2 starts at byte 6, line 2.
        assert_eq!(field_position(text, 2, 6, 0), (2, 1));
        assert_eq!(field_position(text, 2, 6, 1), (2, 4));
        assert_eq!(field_position(text, 2, 6, 2), (2, 12));
        // A missing fourth field would start past the end of the line.
        assert_eq!(field_position(text, 2, 6, 3), (2, 15));
        let multi = "h\n\"a\nb\",c\n";
        assert_eq!(field_position(multi, 2, 2, 1), (3, 4));
    }

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(3056536), "3,056,536");
    }

    #[test]
    fn detect_tells_formats_apart() {
        assert_eq!(detect("job,arrival,queue\n").unwrap(), TraceFormat::Native);
        assert_eq!(detect("0,j_1,M1,10,50.0,0.3,9\n").unwrap(), TraceFormat::Alibaba);
        assert_eq!(detect("M1,1,j_1,1,Terminated,1,2,100,0.5\n").unwrap(), TraceFormat::Alibaba);
        assert!(detect("a,b\n").is_err());
    }
}
