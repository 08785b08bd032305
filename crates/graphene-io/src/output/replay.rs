//! A replay's tables as CSV, written with a real CSV writer: a job or stage name holding a comma,
//! a quote or a line break is quoted, so `plot cdf` and any CSV reader read back what was written.
//! Numbers are written as Rust prints them (shortest round-trip form), as before.

use crate::error::{Error, Result};
use crate::model::Workload;
use crate::sim::SimResult;

fn writer() -> csv::Writer<Vec<u8>> {
    csv::WriterBuilder::new().from_writer(Vec::new())
}

fn finish(w: csv::Writer<Vec<u8>>) -> Result<Vec<u8>> {
    w.into_inner().map_err(|e| Error::Io(std::io::Error::other(e.to_string())))
}

fn io(e: csv::Error) -> Error {
    Error::Io(std::io::Error::other(e.to_string()))
}

/// `jobs.csv`: job, queue, arrival, finish, jct, tasks.
pub fn jobs_csv(result: &SimResult) -> Result<Vec<u8>> {
    let mut w = writer();
    w.write_record(["job", "queue", "arrival", "finish", "jct", "tasks"]).map_err(io)?;
    for j in &result.jobs {
        w.write_record([
            j.name.as_str(),
            j.queue.as_str(),
            &j.arrival.to_string(),
            &j.finish.to_string(),
            &j.jct().to_string(),
            &j.tasks.to_string(),
        ])
        .map_err(io)?;
    }
    finish(w)
}

/// `schedule.csv`: job, task (`stage[index]`), machine, start, end.
pub fn schedule_csv(workload: &Workload, result: &SimResult) -> Result<Vec<u8>> {
    use std::fmt::Write;
    let mut w = writer();
    w.write_record(["job", "task", "machine", "start", "end"]).map_err(io)?;
    // One buffer per field, reused row after row (millions of rows for a large trace).
    let (mut task, mut machine, mut start, mut end) = (String::new(), String::new(), String::new(), String::new());
    for r in &result.runs {
        let job = &workload.jobs[r.job as usize];
        task.clear();
        machine.clear();
        start.clear();
        end.clear();
        job.dag.write_task_name(r.task, &mut task);
        let _ = write!(machine, "{}", r.machine);
        let _ = write!(start, "{}", r.start);
        let _ = write!(end, "{}", r.end);
        w.write_record([job.name.as_str(), &task, &machine, &start, &end]).map_err(io)?;
    }
    finish(w)
}

/// The replay as a Chrome trace (`replay --trace-out`): jobs' tasks on machines and slots, with
/// what each task held (its true demand) in the resource counters.
pub fn chrome_trace(name: &str, workload: &Workload, machines: usize, result: &SimResult) -> Vec<u8> {
    let slices: Vec<crate::output::chrome::Slice> = result
        .runs
        .iter()
        .map(|r| {
            let job = &workload.jobs[r.job as usize];
            let task = &job.dag.tasks[r.task as usize];
            crate::output::chrome::Slice {
                job: Some(job.name.clone()),
                stage: job.dag.stages[task.stage as usize].name.clone(),
                task: job.dag.task_name(r.task),
                machine: r.machine,
                start: r.start,
                end: r.end,
                demand: Some(task.demand),
            }
        })
        .collect();
    let resources = workload.jobs.first().map(|j| j.dag.resources.clone()).unwrap_or_default();
    crate::output::chrome::write(name, &resources, machines as u32, &slices)
}
