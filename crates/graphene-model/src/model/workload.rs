//! A workload: jobs (each a DAG) arriving over time into queues, as the online simulator
//! replays them.

use super::dag::Dag;

#[derive(Clone, Debug)]
pub struct Job {
    /// The job's name in the trace (unique within a workload).
    pub name: String,
    /// Arrival time in seconds from the start of the trace.
    pub arrival: f64,
    /// Name of the queue the job is submitted to.
    pub queue: String,
    pub dag: Dag,
}

/// Jobs sorted by arrival time (ties keep trace order).
#[derive(Clone, Debug, Default)]
pub struct Workload {
    pub jobs: Vec<Job>,
}

impl Workload {
    /// Queue names in order of first appearance.
    pub fn queues(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for j in &self.jobs {
            if !out.contains(&j.queue) {
                out.push(j.queue.clone());
            }
        }
        out
    }

    pub fn tasks(&self) -> usize {
        self.jobs.iter().map(|j| j.dag.len()).sum()
    }
}
