//! A discrete-event cluster simulator: jobs arrive, machines heartbeat their free resources, an
//! online policy picks tasks, tasks run and finish.
//!
//! * Time advances from event to event (arrivals, task ends, periodic heartbeats); nothing is
//!   sampled on a clock, so results do not depend on a step size.
//! * Machines heartbeat every `heartbeat` seconds (phases staggered across machines, as real
//!   node managers drift apart) and right after a task on them ends (unless `periodic_only`).
//! * Resources that may be overbooked (disk and network bandwidth by default) slow the tasks on
//!   an overloaded machine: every task there progresses at rate 1 / max(1, load / capacity) over
//!   those resources, so overbooking costs time in proportion to the overload and loses no work.
//! * With misestimation, policies see durations and demands scaled by a random factor per stage;
//!   allocation uses what the policy saw (the "request"), execution the true values.
//!
//! Deterministic: ties between events at the same time resolve by insertion order, and every
//! random draw comes from the seed.

mod end_heap;
mod events;
pub mod fit_index;
mod policy;
mod state;
// The waves sidecar and its duration model live with the readers (the TPC-H reader and the
// trace generators make its samples); the simulator draws from it.
pub use crate::formats::waves;

use end_heap::EndHeap;
use events::{Event, EventQueue, Key, Timed};
use fit_index::FitIndex;
pub use policy::{Policy, TaskRef};
pub use state::{JobState, TaskState};

use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::model::{Cluster, Dag, ResVec, Task, TaskId, Workload, MAX_RESOURCES};

#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Seconds between periodic heartbeats of a machine.
    pub heartbeat: f64,
    /// Policies see durations and demands multiplied by 1 + U(low, high), drawn per stage.
    pub misestimate: Option<(f64, f64)>,
    /// Which of the two estimates `misestimate` falsifies.
    pub misestimate_what: Misestimated,
    pub seed: u64,
    /// Speed of each machine (a task runs for duration / speed there); empty means all 1.
    /// Policies may read them ([`View::speed`]); only `heft` does: the others plan in
    /// durations, as YARN's schedulers do.
    pub speeds: Vec<f64>,
    /// When the replay must give up (`replay --time-limit`); polled every few thousand events.
    pub deadline: crate::Deadline,
    /// Machines heartbeat only on their period (`replay --periodic-heartbeats`), as YARN's node
    /// managers, which report a finished container at their next heartbeat; by default a
    /// machine also heartbeats the moment a task on it ends.
    pub periodic_only: bool,
    /// Seconds every task holds its machine (and keeps its children waiting) beyond its
    /// duration (`replay --container-overhead`): YARN's container life past the task, from the
    /// heartbeats between allocation, launch, completion and the AM learning of it (SLS with
    /// 50 ms heartbeats measured 0.1 s, BENCHMARKS.md). 0 by default.
    pub container_overhead: f64,
    /// Wave- and parallelism-dependent realized durations (`replay --waves`, [`waves`]): off
    /// (`None`) by default, when every task runs its trace duration.
    pub waves: Option<waves::Waves>,
    /// Resources no scheduler accounts (`replay --graphene-rm`: every resource but memory, as
    /// YARN's ResourceManager under graphene's scheduler or a memory-only calculator): when the
    /// cluster lets them be overbooked, the overload slows no task (SLS's containers only sleep).
    /// None by default: an overbooked resource slows the tasks on its machine.
    pub unaccounted: [bool; MAX_RESOURCES],
    /// Whether to time each decision ([`SimResult::decision_us`]); `replay --no-timing` does
    /// not, which saves two clock reads per heartbeat. True by default.
    pub time_decisions: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            heartbeat: 1.0,
            misestimate: None,
            misestimate_what: Misestimated::Both,
            seed: 0,
            speeds: Vec::new(),
            deadline: crate::Deadline::none(),
            periodic_only: false,
            container_overhead: 0.0,
            waves: None,
            unaccounted: [false; MAX_RESOURCES],
            time_decisions: true,
        }
    }
}

/// What `SimConfig::misestimate` falsifies. Both factors are drawn in every mode, so a stage's
/// duration factor under `Durations` is the one it gets under `Both` (same seed): the modes
/// differ only in what is left exact.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Misestimated {
    /// Durations only (demands exact): isolates what duration estimates are worth.
    Durations,
    /// Demands only (durations exact).
    Demands,
    #[default]
    Both,
}

/// What a policy may read about the simulation.
pub struct View<'a> {
    pub now: f64,
    pub dims: usize,
    /// Resources held to capacity (the others may be overbooked).
    pub hard: [bool; MAX_RESOURCES],
    pub caps: &'a [ResVec],
    workload: &'a Workload,
    jobs: &'a [JobState],
    active: &'a [u32],
    job_fits: Option<&'a FitIndex>,
    queue_of: &'a [u32],
    factors: &'a [Vec<(f64, f64)>],
    machines: &'a [Machine],
    speeds: &'a [f64],
    /// In a [`Policy::launched`] call, the machine the task was launched on; `None` elsewhere.
    pub launched_on: Option<usize>,
}

impl<'a> View<'a> {
    /// Speed of machine `m` (a task runs for duration / speed there).
    pub fn speed(&self, m: usize) -> f64 {
        speed_of(self.speeds, m)
    }

    /// What machine `m` has not allocated to running tasks (negative on an overbooked
    /// resource): a speed-aware policy compares machines before it takes a task.
    pub fn free(&self, m: usize) -> ResVec {
        let mach = &self.machines[m];
        let mut f = mach.cap;
        f.sub_assign(&mach.allocated);
        f
    }

    /// Jobs that have arrived and not finished, in arrival order.
    pub fn active(&self) -> &[u32] {
        self.active
    }

    pub fn dag(&self, job: u32) -> &'a Dag {
        &self.workload.jobs[job as usize].dag
    }

    pub fn job_state(&self, job: u32) -> &JobState {
        &self.jobs[job as usize]
    }

    pub fn queue(&self, job: u32) -> u32 {
        self.queue_of[job as usize]
    }

    pub fn arrival(&self, job: u32) -> f64 {
        self.workload.jobs[job as usize].arrival
    }

    /// The lowest runnable stage `>= from` of `job` whose lowest runnable task's requested
    /// demand fits the query `free` on every resource (+inf where the caller's fit test does
    /// not look: [`crate::online::FitQuery`]), found in logarithmic time by the job's
    /// [`fit_index::FitIndex`]; `None` when there is none or the job keeps no index (see
    /// [`JobState::fit_index`]).
    pub fn next_fitting_stage(&self, job: u32, from: u32, free: &ResVec) -> Option<u32> {
        self.jobs[job as usize].fit_index().and_then(|idx| idx.next_fitting(from, free))
    }

    /// The lowest active job `>= from`, in arrival order, that may have a runnable stage whose
    /// lowest task fits the query `free` (by the componentwise minimum over its stages, as
    /// [`JobState::may_fit`]: a job it passes over has none), found in logarithmic time by the
    /// replay's index of jobs; every active job `>= from` when the replay keeps none. So a
    /// policy that walks the jobs in arrival order pays for the ones that can take something.
    pub fn next_job_may_fit(&self, from: u32, free: &ResVec) -> Option<u32> {
        match self.job_fits {
            Some(idx) => idx.next_fitting(from, free),
            None => {
                let i = self.active.partition_point(|&j| j < from);
                self.active.get(i).copied()
            }
        }
    }

    /// The demand the policy believes `t` has (and will be allocated).
    pub fn requested(&self, job: u32, t: TaskId) -> ResVec {
        requested(&self.dag(job).tasks[t as usize], &self.factors[job as usize])
    }

    /// The duration the policy believes `t` has.
    pub fn estimated_duration(&self, job: u32, t: TaskId) -> f64 {
        let dag = self.dag(job);
        let task = &dag.tasks[t as usize];
        match self.factors[job as usize].get(task.stage as usize) {
            Some(f) => task.duration * f.0,
            None => task.duration,
        }
    }
}

/// The demand a task asks for: its true one scaled by the factor its job's policy saw for its
/// stage (`factors`: the job's (duration, demand) factors by stage, empty when the estimates are
/// exact: scaling by 1 gives the same bits, and skipping it skips a load from memory the task's
/// end would otherwise wait for on a deep workload).
fn requested(task: &Task, factors: &[(f64, f64)]) -> ResVec {
    if factors.is_empty() {
        return task.demand;
    }
    task.demand.scale(factors[task.stage as usize].1)
}

#[derive(Clone, Debug, Serialize)]
pub struct JobOutcome {
    pub name: String,
    pub queue: String,
    pub arrival: f64,
    pub finish: f64,
    pub tasks: usize,
}

impl JobOutcome {
    pub fn jct(&self) -> f64 {
        self.finish - self.arrival
    }
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct TaskRun {
    pub job: u32,
    pub task: TaskId,
    pub machine: u32,
    pub start: f64,
    pub end: f64,
}

pub struct SimResult {
    pub jobs: Vec<JobOutcome>,
    pub runs: Vec<TaskRun>,
    /// Wall-clock microseconds the policy spent per heartbeat it was asked about (heartbeats
    /// skipped as idle, see [`Policy::idle_is_stable`], are not decisions).
    pub decision_us: Vec<f32>,
    /// Heartbeats that came while some job had runnable work, skipped ones included.
    pub heartbeats: usize,
    pub makespan: f64,
    /// Per job and stage, the (duration, demand) factors policies saw (1 without
    /// misestimation); a task's allocation was its demand times the second.
    pub factors: Vec<Vec<(f64, f64)>>,
}

struct Running {
    job: u32,
    task: TaskId,
    start: f64,
    /// Seconds of work left at full speed, as of `since`.
    remaining: f64,
    since: f64,
    rate: f64,
    // What the task holds (its requested demand) and loads (its true one) are not kept here:
    // its end recomputes them from the job, which it reads anyway, and a running task of 40
    // bytes instead of 168 keeps a busy machine's tasks in a few cache lines.
}

/// Speed `k` of `speeds`, 1 where absent or not a positive number.
fn speed_of(speeds: &[f64], k: usize) -> f64 {
    speeds.get(k).copied().filter(|s| s.is_finite() && *s > 0.0).unwrap_or(1.0)
}

struct Machine {
    cap: ResVec,
    allocated: ResVec,
    load: ResVec,
    running: Vec<Running>,
    /// `Sim::changes` when this machine's last heartbeat launched nothing under a policy whose
    /// idle answer is stable: until the count moves, its heartbeats are skipped.
    idle_at: Option<u64>,
    /// With waves: the (job, stage) of the last task launched here, the job the machine is
    /// local to ([`waves`] rule 2).
    last: Option<(u32, u32)>,
    /// With waves: when the machine last became empty.
    freed_at: f64,
    /// The progress rate every running task has (but one just launched, before
    /// [`Sim::rerate`] sets it): a rerate that keeps it touches only the new task.
    rate: f64,
    /// Beside `running`, task by task: when it ends at its rate and the sequence number its
    /// end event would have had; the machine queues the earliest ([`EventQueue::set_end`]).
    ends: EndHeap,
}

/// The state of the wave model during a replay ([`SimConfig::waves`]).
struct WaveState {
    waves: waves::Waves,
    /// Per job: machines local to it.
    local: Vec<u32>,
    rng: ChaCha8Rng,
}

struct Sim<'w> {
    workload: &'w Workload,
    cluster: &'w Cluster,
    /// The cluster's resources held to capacity ([`Cluster::hard_mask`]), read at every
    /// heartbeat, launch and rerate.
    hard: [bool; MAX_RESOURCES],
    cfg: SimConfig,
    now: f64,
    events: EventQueue,
    jobs: Vec<JobState>,
    active: Vec<u32>,
    /// The active jobs by the componentwise minimum of their runnable stages' first demands
    /// (each job's fit index's root): [`View::next_job_may_fit`]. `None` when the jobs keep no
    /// fit index.
    job_fits: Option<FitIndex>,
    queue_of: Vec<u32>,
    factors: Vec<Vec<(f64, f64)>>,
    machines: Vec<Machine>,
    runs: Vec<TaskRun>,
    decision_us: Vec<f32>,
    runnable_jobs: usize,
    done_jobs: usize,
    scratch: Vec<TaskRef>,
    /// Consecutive heartbeats that launched nothing while nothing else could change.
    stalled: usize,
    /// Counts every change a policy can see (arrivals, launches, finishes): a machine whose
    /// heartbeat came back empty at one count gets the same answer until the count moves.
    changes: u64,
    /// Heartbeats that came while some job had runnable work.
    heartbeats: usize,
    wave: Option<WaveState>,
    /// (`changes` count, machines whose last heartbeat came back empty and stable at it).
    stable: (u64, usize),
}

/// A machine's heartbeats that can launch nothing are skipped up to the next arrival or finish
/// by adding the period this many times at most (the same sums the heartbeats would have made,
/// so the times are the same to the bit); a longer quiet stretch is crossed by one
/// multiplication first. Without the skip, one task of 10^12 s running alone kept the replay
/// popping 10^12 empty heartbeats per machine.
const QUIET_STEPS: u32 = 1 << 20;

/// Replays `workload` on `cluster` under `policy`.
pub fn run(workload: &Workload, cluster: &Cluster, policy: &mut dyn Policy, cfg: &SimConfig) -> Result<SimResult> {
    run_with_progress(workload, cluster, policy, cfg, &mut |_, _| {})
}

/// Like [`run`], calling `progress(simulated time, jobs done)` every few thousand events so that
/// long replays can show how far they are.
pub fn run_with_progress(
    workload: &Workload,
    cluster: &Cluster,
    policy: &mut dyn Policy,
    cfg: &SimConfig,
    progress: &mut dyn FnMut(f64, usize),
) -> Result<SimResult> {
    run_inner(workload, cluster, policy, cfg, f64::INFINITY, progress)
}

/// Like [`run`], but stops at simulated time `until`: jobs unfinished then have a NaN finish,
/// tasks still running are left out of `runs`. Training episodes end this way (Decima ends
/// them at a random time so that the agent cannot plan for the end).
pub fn run_until(
    workload: &Workload,
    cluster: &Cluster,
    policy: &mut dyn Policy,
    cfg: &SimConfig,
    until: f64,
) -> Result<SimResult> {
    run_inner(workload, cluster, policy, cfg, until, &mut |_, _| {})
}

fn run_inner(
    workload: &Workload,
    cluster: &Cluster,
    policy: &mut dyn Policy,
    cfg: &SimConfig,
    until: f64,
    progress: &mut dyn FnMut(f64, usize),
) -> Result<SimResult> {
    if !(cfg.heartbeat > 0.0 && cfg.heartbeat.is_finite()) {
        return Err(Error::Usage(format!("heartbeat {} must be a positive number of seconds", cfg.heartbeat)));
    }
    crate::limits::check_seconds(cfg.container_overhead, "--container-overhead", "container overhead")?;
    check_clock(workload, cluster, cfg)?;
    let wave = match &cfg.waves {
        None => None,
        Some(w) => Some(wave_state(w, workload, cfg.seed)?),
    };
    let queues = workload.queues();
    let queue_of: Vec<u32> =
        workload.jobs.iter().map(|j| queues.iter().position(|q| q == &j.queue).unwrap_or(0) as u32).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    // Exact estimates leave every job's factors empty during the replay (see `requested`).
    let factors: Vec<Vec<(f64, f64)>> = workload
        .jobs
        .iter()
        .map(|j| match cfg.misestimate {
            None => Vec::new(),
            Some((lo, hi)) => j
                .dag
                .stages
                .iter()
                .map(|_| {
                    let (d, q) = (1.0 + rng.gen_range(lo..=hi), 1.0 + rng.gen_range(lo..=hi));
                    match cfg.misestimate_what {
                        Misestimated::Durations => (d, 1.0),
                        Misestimated::Demands => (1.0, q),
                        Misestimated::Both => (d, q),
                    }
                })
                .collect(),
        })
        .collect();
    let hard = cluster.hard_mask();
    let biggest = cluster.machines.iter().fold(ResVec::ZERO, |a, c| {
        let mut m = a;
        for r in 0..MAX_RESOURCES {
            m.0[r] = m.0[r].max(c.0[r]);
        }
        m
    });
    for (ji, j) in workload.jobs.iter().enumerate() {
        if j.dag.resources != cluster.resources {
            return Err(Error::Usage(format!(
                "job {} names resources {:?} but the cluster was resolved for {:?}",
                j.name, j.dag.resources, cluster.resources
            )));
        }
        for (t, task) in j.dag.tasks.iter().enumerate() {
            let req = requested(task, &factors[ji]);
            if !cluster.machines.iter().any(|c| (0..MAX_RESOURCES).all(|r| !hard[r] || req.0[r] <= c.0[r])) {
                return Err(Error::TaskTooBig {
                    task: format!("{} of job {}", j.dag.task_name(t as TaskId), j.name),
                    demand: j.dag.format_demand(&req),
                    capacity: format!("largest machine {}", j.dag.format_demand(&biggest)),
                });
            }
        }
    }
    let mut sim = Sim {
        workload,
        cluster,
        hard,
        cfg: cfg.clone(),
        now: 0.0,
        events: EventQueue::default(),
        jobs: Vec::with_capacity(workload.jobs.len()),
        active: Vec::new(),
        job_fits: (!without_fit_index() && !cluster.resources.is_empty())
            .then(|| FitIndex::new(workload.jobs.len(), (0..cluster.resources.len()).collect())),
        queue_of,
        factors,
        machines: cluster
            .machines
            .iter()
            .map(|c| Machine {
                cap: *c,
                allocated: ResVec::ZERO,
                load: ResVec::ZERO,
                running: Vec::new(),
                idle_at: None,
                last: None,
                freed_at: 0.0,
                rate: 1.0,
                ends: EndHeap::default(),
            })
            .collect(),
        runs: Vec::new(),
        decision_us: Vec::new(),
        runnable_jobs: 0,
        done_jobs: 0,
        scratch: Vec::new(),
        stalled: 0,
        changes: 0,
        heartbeats: 0,
        wave,
        stable: (u64::MAX, 0),
    };
    for (i, j) in workload.jobs.iter().enumerate() {
        sim.push(j.arrival, Event::Arrival(i as u32));
    }
    let m = cluster.len();
    for k in 0..m {
        let phase = cfg.heartbeat * k as f64 / m as f64;
        sim.push(phase, Event::Heartbeat(k as u32));
    }
    let mut popped: u64 = 0;
    while let Some(Timed { time, event, .. }) = sim.events.pop() {
        if sim.done_jobs == workload.jobs.len() || time > until {
            break;
        }
        popped += 1;
        // Checked at the first event too, so that a limit already passed (`--time-limit 0`) stops
        // a replay that would end within 16,384 events.
        if popped == 1 || popped.is_multiple_of(16_384) {
            progress(time, sim.done_jobs);
            sim.cfg.deadline.check(&format!("the replay under {} (at simulated time {time} s)", policy.name()))?;
        }
        sim.now = time;
        match event {
            Event::Arrival(j) => sim.arrive(policy, j),
            Event::Heartbeat(k) => {
                let launched = sim.heartbeat(policy, k as usize);
                if launched == 0 && !sim.events.has_progress() {
                    // Only heartbeats are left: if a whole round of them launches nothing, no
                    // later one will either.
                    sim.stalled += 1;
                    if sim.stalled > 2 * m {
                        let waiting: usize = sim.jobs.iter().map(|j| j.left).sum();
                        return Err(Error::Usage(format!(
                            "{} stopped making progress at time {}: {waiting} tasks can never be launched",
                            policy.name(),
                            sim.now
                        )));
                    }
                } else {
                    sim.stalled = 0;
                }
                let mut next = time + sim.cfg.heartbeat;
                if next <= time {
                    return Err(Error::Usage(format!(
                        "heartbeat {} s no longer advances the clock at time {time} s",
                        sim.cfg.heartbeat
                    )));
                }
                // Nothing can change before the next arrival or finish when no job has runnable
                // work, or when every machine's last answer was empty under a policy whose idle
                // answer is stable and nothing has changed since: this machine's heartbeats
                // until then would return at once (counted in the second case, as they were).
                let all_idle = sim.stable.0 == sim.changes && sim.stable.1 == m;
                if sim.runnable_jobs == 0 || all_idle {
                    if let Some(until) = sim.events.next_progress() {
                        let (at, skipped) = quiet_until(next, sim.cfg.heartbeat, until);
                        next = at;
                        if sim.runnable_jobs > 0 {
                            sim.heartbeats += skipped as usize;
                        }
                    }
                }
                sim.push(next, Event::Heartbeat(k));
            }
            Event::Finish(machine) => {
                if sim.finish(policy, machine as usize) && !sim.cfg.periodic_only {
                    sim.heartbeat(policy, machine as usize);
                }
            }
        }
    }
    let jobs = workload
        .jobs
        .iter()
        .zip(&sim.jobs)
        .map(|(j, st)| JobOutcome {
            name: j.name.clone(),
            queue: j.queue.clone(),
            arrival: j.arrival,
            finish: st.finish.unwrap_or(f64::NAN),
            tasks: j.dag.len(),
        })
        .collect::<Vec<_>>();
    let makespan = jobs.iter().map(|j| j.finish).fold(0.0, f64::max);
    Ok(SimResult {
        jobs,
        runs: sim.runs,
        decision_us: sim.decision_us,
        heartbeats: sim.heartbeats,
        makespan,
        factors: if cfg.misestimate.is_none() {
            workload.jobs.iter().map(|j| vec![(1.0, 1.0); j.dag.stages.len()]).collect()
        } else {
            sim.factors
        },
    })
}

/// The first heartbeat at or after `until` of the series `next`, `next + period`, ... (summed
/// one period at a time, as the replay sums them), or `next` itself when it is there already.
/// Past [`QUIET_STEPS`] additions the rest of a long stretch is crossed by a multiplication.
/// Also returns how many beats were skipped (those before `until`).
fn quiet_until(mut next: f64, period: f64, until: f64) -> (f64, u64) {
    let mut budget = QUIET_STEPS;
    let mut skipped = 0u64;
    while next < until {
        if budget == 0 {
            let n = ((until - next) / period).floor() - 1.0;
            if n >= 1.0 {
                next += n * period;
                skipped += n as u64;
            }
            budget = QUIET_STEPS;
        }
        let after = next + period;
        if after <= next {
            // The period no longer advances the clock here: the replay says so at this beat.
            break;
        }
        next = after;
        skipped += 1;
        budget -= 1;
    }
    (next, skipped)
}

/// Checks the wave option against the workload and starts its stream (stream 1 of the seed).
fn wave_state(w: &waves::Waves, workload: &Workload, seed: u64) -> Result<WaveState> {
    crate::limits::check_seconds(w.moving_delay, "--moving-delay", "moving delay")?;
    crate::limits::check_seconds(w.warmup_delay, "warm-up delay", "warm-up delay")?;
    if w.model.stages.len() != workload.jobs.len() {
        return Err(Error::Usage(format!(
            "the wave model describes {} jobs, the workload has {}",
            w.model.stages.len(),
            workload.jobs.len()
        )));
    }
    for (j, st) in workload.jobs.iter().zip(&w.model.stages) {
        if st.len() != j.dag.stages.len() {
            return Err(Error::Usage(format!(
                "the wave model describes {} stages of job {}, which has {}",
                st.len(),
                j.name,
                j.dag.stages.len()
            )));
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(1);
    Ok(WaveState { waves: w.clone(), local: vec![0; workload.jobs.len()], rng })
}

/// Most heartbeats a replay may be asked to simulate (about ten minutes of work at the
/// simulator's speed); far above any real trace at a 1 s heartbeat (the Alibaba hour on 4,000
/// machines needs about 15 million).
pub const MAX_HEARTBEATS: f64 = 1e10;

/// Refuses a replay whose clock cannot work: arrivals outside `[0, limits::MAX_SECONDS]`, or a
/// heartbeat so short that the replay would need more than [`MAX_HEARTBEATS`] before its last
/// job can possibly end (a lower bound: every machine heartbeats until then) or could not
/// advance the clock at that time.
fn check_clock(workload: &Workload, cluster: &Cluster, cfg: &SimConfig) -> Result<()> {
    // The fastest machine runs a task in duration / speed: the earliest end shrinks by that.
    let top = cfg.speeds.iter().copied().fold(1.0f64, f64::max);
    let mut horizon = 0.0f64;
    for j in &workload.jobs {
        crate::limits::check_seconds(j.arrival, &format!("job '{}'", j.name), "arrival")?;
        horizon = horizon.max(j.arrival + crate::lowerbound::critical_path(&j.dag) / top);
    }
    if horizon + cfg.heartbeat <= horizon {
        return Err(Error::Usage(format!(
            "heartbeat {} s is too short to advance the clock at {horizon} s, when the last job can end at the earliest",
            cfg.heartbeat
        )));
    }
    let beats = cluster.len() as f64 * horizon / cfg.heartbeat;
    if beats > MAX_HEARTBEATS {
        return Err(Error::Usage(format!(
            "heartbeat {} s would take at least {beats:.2e} heartbeats ({} machines until {horizon} s, when the last job can end at the earliest); the limit is {MAX_HEARTBEATS:e}: use a heartbeat of at least {:.3e} s",
            cfg.heartbeat,
            cluster.len(),
            cluster.len() as f64 * horizon / MAX_HEARTBEATS
        )));
    }
    Ok(())
}

impl<'w> Sim<'w> {
    fn push(&mut self, time: f64, event: Event) {
        self.events.push(time, event);
    }

    /// Job `j`'s leaf in the index of jobs follows its fit index's root.
    fn refresh_job_fit(&mut self, j: u32) {
        if let Some(idx) = &mut self.job_fits {
            idx.set(j, Some(&self.jobs[j as usize].fit_root()));
        }
    }

    /// Built for every policy call, several per heartbeat: inlined, a call builds only what
    /// it reads.
    #[inline]
    fn view(&self) -> View<'_> {
        View {
            now: self.now,
            dims: self.cluster.resources.len(),
            hard: self.hard,
            caps: &self.cluster.machines,
            workload: self.workload,
            jobs: &self.jobs,
            active: &self.active,
            job_fits: self.job_fits.as_ref(),
            queue_of: &self.queue_of,
            factors: &self.factors,
            machines: &self.machines,
            speeds: &self.cfg.speeds,
            launched_on: None,
        }
    }

    fn arrive(&mut self, policy: &mut dyn Policy, j: u32) {
        let dag = &self.workload.jobs[j as usize].dag;
        debug_assert_eq!(self.jobs.len(), j as usize, "arrivals are in job order");
        let mut st = JobState::new(dag);
        if !without_fit_index() {
            let dims = (0..self.cluster.resources.len()).collect();
            st.index_fits(dag, self.factors[j as usize].iter().map(|f| f.1).collect(), dims);
        }
        if st.runnable_count > 0 {
            self.runnable_jobs += 1;
        }
        self.jobs.push(st);
        self.refresh_job_fit(j);
        self.active.push(j);
        self.changes += 1;
        policy.job_arrived(&self.view(), j);
    }

    /// Asks the policy for tasks for machine `k`; returns how many were launched.
    fn heartbeat(&mut self, policy: &mut dyn Policy, k: usize) -> usize {
        if self.runnable_jobs == 0 {
            return 0;
        }
        self.heartbeats += 1;
        if self.machines[k].idle_at == Some(self.changes) {
            // Nothing the policy can see has changed since it found nothing for this machine.
            return 0;
        }
        let free = {
            let mach = &self.machines[k];
            let mut f = mach.cap;
            f.sub_assign(&mach.allocated);
            f
        };
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        if self.cfg.time_decisions {
            let started = Instant::now();
            policy.assign(&self.view(), k, &free, &mut out);
            self.decision_us.push(started.elapsed().as_secs_f64() as f32 * 1e6);
        } else {
            policy.assign(&self.view(), k, &free, &mut out);
        }
        let stable = out.is_empty() && policy.idle_is_stable();
        if out.is_empty() && !stable {
            // The policy may have changed its own state (e.g. granted an AM container): the
            // idle answers other machines gave before are void.
            self.changes += 1;
        }
        self.machines[k].idle_at = stable.then_some(self.changes);
        if stable {
            if self.stable.0 != self.changes {
                self.stable = (self.changes, 0);
            }
            self.stable.1 += 1;
        }
        let hard = self.hard;
        let mut launched = 0;
        for &t in &out {
            let req = requested(
                &self.workload.jobs[t.job as usize].dag.tasks[t.task as usize],
                &self.factors[t.job as usize],
            );
            let mach = &self.machines[k];
            let ok = self.jobs[t.job as usize].state[t.task as usize] == TaskState::Runnable
                && (0..MAX_RESOURCES)
                    .all(|r| !hard[r] || mach.allocated.0[r] + req.0[r] <= mach.cap.0[r] * (1.0 + 1e-9) + 1e-9);
            if !ok {
                break;
            }
            self.launch(k, t, req);
            policy.launched(&View { launched_on: Some(k), ..self.view() }, t);
            launched += 1;
        }
        self.scratch = out;
        launched
    }

    fn launch(&mut self, k: usize, t: TaskRef, requested: ResVec) {
        let dag = &self.workload.jobs[t.job as usize].dag;
        let st = &mut self.jobs[t.job as usize];
        let had = st.runnable_count > 0;
        st.start(dag, t.task);
        self.changes += 1;
        if had && st.runnable_count == 0 {
            self.runnable_jobs -= 1;
        }
        self.refresh_job_fit(t.job);
        let task = &dag.tasks[t.task as usize];
        let now = self.now;
        let speed = speed_of(&self.cfg.speeds, k);
        let (duration, delay) = match &mut self.wave {
            None => (task.duration, 0.0),
            Some(w) => wave_duration(w, &mut self.machines[k], t.job, task.stage, task.duration, now),
        };
        let mach = &mut self.machines[k];
        mach.allocated.add_assign(&requested);
        mach.load.add_assign(&task.demand);
        mach.running.push(Running {
            job: t.job,
            task: t.task,
            start: now,
            remaining: duration / speed + delay + self.cfg.container_overhead,
            since: now,
            rate: 1.0,
        });
        mach.ends.push(Key::new(f64::INFINITY, 0));
        self.rerate(k, Some(mach_last(&self.machines[k])));
    }

    /// Recomputes progress rates on machine `k` after its load changed, rescheduling the ends of
    /// tasks whose rate changed (and of the new task, if any), and queues the machine's earliest.
    fn rerate(&mut self, k: usize, new: Option<usize>) {
        let hard = self.hard;
        let dims = self.cluster.resources.len();
        let mach = &self.machines[k];
        let mut over: f64 = 1.0;
        for r in 0..dims {
            if !hard[r] && !self.cfg.unaccounted[r] && mach.cap.0[r] > 0.0 {
                over = over.max(mach.load.0[r] / mach.cap.0[r]);
            }
        }
        let rate = 1.0 / over;
        let now = self.now;
        let mach = &mut self.machines[k];
        // Every task but the new one runs at `mach.rate`: when the rate stays, only the new
        // task needs an event (the loop below would find no other task to change).
        let unchanged = mach.rate == rate;
        mach.rate = rate;
        let (skip, take) = match (unchanged, new) {
            (true, Some(i)) => (i, 1),
            (true, None) => (0, 0),
            (false, _) => (0, usize::MAX),
        };
        for (i, run) in mach.running.iter_mut().enumerate().skip(skip).take(take) {
            if run.rate != rate || Some(i) == new {
                run.remaining -= (now - run.since) * run.rate;
                run.remaining = run.remaining.max(0.0);
                run.since = now;
                run.rate = rate;
                // Keyed in the order the ends used to be pushed, one event each.
                let key = Key::new(now + run.remaining / rate, self.events.take_seq());
                if unchanged {
                    mach.ends.set(i, key);
                } else {
                    mach.ends.set_unordered(i, key);
                }
            }
        }
        if !unchanged {
            mach.ends.rebuild();
        }
        self.events.set_end(k as u32, mach.ends.first().map(|(_, key)| key));
    }

    /// Ends the task of machine `k` whose end is due (the machine's earliest); returns whether
    /// there was one.
    fn finish(&mut self, policy: &mut dyn Policy, k: usize) -> bool {
        let mach = &mut self.machines[k];
        let Some((i, _)) = mach.ends.first() else {
            return false;
        };
        let run = mach.running.swap_remove(i);
        mach.ends.swap_remove(i);
        let (job, task) = (run.job, run.task);
        self.changes += 1;
        let done = &self.workload.jobs[job as usize].dag.tasks[task as usize];
        mach.allocated.sub_assign(&requested(done, &self.factors[job as usize]));
        mach.load.sub_assign(&done.demand);
        if mach.running.is_empty() {
            mach.freed_at = self.now;
        }
        self.runs.push(TaskRun { job, task, machine: k as u32, start: run.start, end: self.now });
        let dag = &self.workload.jobs[job as usize].dag;
        let st = &mut self.jobs[job as usize];
        let had = st.runnable_count > 0;
        st.finish(dag, task, self.now);
        if !had && st.runnable_count > 0 {
            self.runnable_jobs += 1;
        }
        let finished = st.finish.is_some();
        self.refresh_job_fit(job);
        if finished {
            self.done_jobs += 1;
            if let Some(pos) = self.active.iter().position(|&a| a == job) {
                self.active.remove(pos);
            }
        }
        self.rerate(k, None);
        policy.finished(&self.view(), TaskRef { job, task });
        true
    }
}

/// The realized duration and moving delay of a task of `job`'s `stage` launched on `mach` at
/// `now` under the wave model ([`waves`] rules 2-5), updating the machine's locality.
fn wave_duration(w: &mut WaveState, mach: &mut Machine, job: u32, stage: u32, trace: f64, now: f64) -> (f64, f64) {
    let previous = mach.last.replace((job, stage));
    let (category, delay) = match previous {
        Some((j, s)) if j == job => {
            if mach.running.is_empty() && mach.freed_at < now {
                (waves::Category::Fresh, 0.0)
            } else if s == stage {
                (waves::Category::Rest, 0.0)
            } else {
                (waves::Category::First, 0.0)
            }
        }
        other => {
            if let Some((j, _)) = other {
                w.local[j as usize] -= 1;
            }
            w.local[job as usize] += 1;
            (waves::Category::Fresh, w.waves.moving_delay)
        }
    };
    let st = &w.waves.model.stages[job as usize][stage as usize];
    let n = w.local[job as usize];
    let d = waves::sample(st, n, category, w.waves.warmup_delay, &mut w.rng).unwrap_or(trace);
    (d, delay)
}

fn mach_last(m: &Machine) -> usize {
    m.running.len() - 1
}

/// Replays index their jobs' runnable stages ([`fit_index`]); a test may turn that off to
/// compare with the scan of every runnable stage.
#[cfg(not(test))]
fn without_fit_index() -> bool {
    false
}

#[cfg(test)]
fn without_fit_index() -> bool {
    tests::NO_FIT_INDEX.with(|c| c.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        pub(super) static NO_FIT_INDEX: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    /// Replays of every policy that reads the fit index (the stage-order ones: fifo, drf, cs
    /// and its YARN mechanics, graphene+cs, drf and cs also in their check that some job may
    /// fit before they serve any queue; and the scoring ones: tetris with and without
    /// fairness and overbooking, graphene+tetris, graphene with its own and the paper's rules;
    /// and decima, whose "anything fits?" test walks the index of jobs)
    /// give the same runs with the index as with the scan of every runnable stage it replaces:
    /// on wide random DAGs (stages with random parent sets, so hundreds are runnable at once),
    /// tasks of one stage with different demands (so a stage's first task is not every task),
    /// two queues, cpu and memory hard and disk overbookable, with and without misestimation.
    #[test]
    fn the_fit_index_changes_no_replay() {
        use rand::Rng;
        for seed in 0..4u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let w = random_workload(
                &mut rng,
                12,
                3.0,
                |r| r.gen_range(20..120),
                |r| if r.gen_bool(0.7) { 1 } else { r.gen_range(2..=5) },
                1.0..30.0,
                |r, s| (0..s).filter(|_| r.gen_bool(1.0 / (s as f64 + 4.0))).collect(),
            );
            let c = three_resource_cluster(4);
            let settings = crate::env::default_settings(&w);
            let mut yarn = settings.clone();
            yarn.cs_yarn = crate::online::CsYarn {
                am: Some(ResVec::from_slice(&[0.25, 0.001, 0.0])),
                per_heartbeat: Some(1),
                reserve: true,
                tez_order: false,
            };
            let mut tez = settings.clone();
            tez.cs_yarn.tez_order = true;
            let plain = SimConfig { seed, ..SimConfig::default() };
            let periodic = SimConfig { periodic_only: true, ..plain.clone() };
            let mis = SimConfig { misestimate: Some((-0.5, 0.5)), ..plain.clone() };
            let mut fair_tetris = settings.clone();
            fair_tetris.tetris_kappa = Some(0.1);
            fair_tetris.tetris_overbook = 1.2;
            let mut paper = settings.clone();
            paper.graphene.paper_rules = true;
            let cases = [
                ("fifo", &settings, &plain),
                ("fifo", &settings, &mis),
                ("drf", &settings, &plain),
                ("drf", &settings, &mis),
                ("cs", &settings, &plain),
                ("cs", &settings, &mis),
                ("cs", &yarn, &periodic),
                ("cs", &tez, &plain),
                ("graphene+cs", &settings, &plain),
                ("graphene", &settings, &plain),
                ("graphene", &settings, &mis),
                ("graphene", &paper, &plain),
                ("tetris", &settings, &plain),
                ("tetris", &settings, &mis),
                ("tetris", &fair_tetris, &plain),
                ("graphene+tetris", &settings, &plain),
                ("decima", &settings, &plain),
                ("decima", &settings, &mis),
            ];
            let mut launched = 0;
            for (name, s, cfg) in cases {
                let mut p = crate::online::by_name(name, s).unwrap();
                let indexed = run(&w, &c, p.as_mut(), cfg).unwrap();
                NO_FIT_INDEX.with(|f| f.set(true));
                let mut p = crate::online::by_name(name, s).unwrap();
                let scanned = run(&w, &c, p.as_mut(), cfg);
                NO_FIT_INDEX.with(|f| f.set(false));
                let scanned = scanned.unwrap();
                let key = |r: &SimResult| {
                    r.runs.iter().map(|x| (x.job, x.task, x.machine, x.start, x.end)).collect::<Vec<_>>()
                };
                assert_eq!(key(&indexed), key(&scanned), "seed {seed}, {name}: the runs differ");
                launched += indexed.runs.len();
            }
            assert!(launched > 16 * 500, "seed {seed}: {launched} runs");
        }
    }
    use crate::model::{ClusterSpec, DagBuilder, Job, StageSpec, TaskSpec};
    use crate::online::{CapacityScheduler, Fifo};

    /// A random workload on cpu, mem and disk: `jobs` jobs in two queues, one every `gap`
    /// seconds, each of `stages(rng)` stages of `tasks(rng)` tasks (whole-second durations in
    /// `durations`; demands of 1-4 cpu, 1-8 mem and 0-60 disk, task by task, so a stage's first
    /// task is not every task), stage `s` with the parents `parents(rng, s)` (all-to-all).
    fn random_workload(
        rng: &mut ChaCha8Rng,
        jobs: usize,
        gap: f64,
        stages: impl Fn(&mut ChaCha8Rng) -> usize,
        tasks: impl Fn(&mut ChaCha8Rng) -> usize,
        durations: std::ops::Range<f64>,
        parents: impl Fn(&mut ChaCha8Rng, usize) -> Vec<usize>,
    ) -> Workload {
        use crate::model::EdgeKind;
        use rand::Rng;
        let res: Vec<String> = ["cpu", "mem", "disk"].iter().map(|s| s.to_string()).collect();
        let jobs = (0..jobs)
            .map(|j| {
                let mut b = DagBuilder::new(format!("j{j}"), res.clone());
                for s in 0..stages(rng) {
                    let tasks = (0..tasks(rng))
                        .map(|_| TaskSpec {
                            duration: rng.gen_range(durations.clone()).round(),
                            demand: ResVec::from_slice(&[
                                rng.gen_range(1..=4) as f64,
                                rng.gen_range(1..=8) as f64,
                                rng.gen_range(0..=60) as f64,
                            ]),
                        })
                        .collect();
                    let parents = parents(rng, s).into_iter().map(|p| (format!("s{p}"), EdgeKind::AllToAll)).collect();
                    b.stage(StageSpec { name: format!("s{s}"), group: None, tasks, parents });
                }
                let queue = format!("q{}", j % 2);
                Job { name: format!("j{j}"), arrival: j as f64 * gap, queue, dag: b.build().unwrap() }
            })
            .collect();
        Workload { jobs }
    }

    /// `n` machines of cpu 8, mem 16 and disk 100, for [`random_workload`]'s jobs.
    fn three_resource_cluster(n: usize) -> Cluster {
        let res: Vec<String> = ["cpu", "mem", "disk"].iter().map(|s| s.to_string()).collect();
        let cap = [("cpu".to_string(), 8.0), ("mem".to_string(), 16.0), ("disk".to_string(), 100.0)];
        ClusterSpec::uniform(n, cap.into_iter().collect()).resolve(&res).unwrap()
    }

    fn job(name: &str, arrival: f64, queue: &str, tasks: usize, duration: f64) -> Job {
        let mut b = DagBuilder::new(name, vec!["cpu".into(), "mem".into()]);
        b.stage(StageSpec {
            name: "s".into(),
            group: None,
            tasks: vec![TaskSpec { duration, demand: ResVec::from_slice(&[1.0, 1.0]) }; tasks],
            parents: vec![],
        });
        Job { name: name.into(), arrival, queue: queue.into(), dag: b.build().unwrap() }
    }

    fn cluster() -> Cluster {
        let cap = [("cpu".to_string(), 2.0), ("mem".to_string(), 8.0)].into_iter().collect();
        ClusterSpec::uniform(1, cap).resolve(&["cpu".into(), "mem".into()]).unwrap()
    }

    fn jcts(r: &SimResult) -> Vec<f64> {
        r.jobs.iter().map(|j| j.jct()).collect()
    }

    /// A (4 tasks of 10 s) arrives at 0 on a 2-slot machine, B (1 task of 5 s) at 1. FIFO runs
    /// A's first two at 0, its last two when they end at 10, and B only at 20.
    #[test]
    fn fifo_serves_jobs_in_arrival_order() {
        let w = Workload { jobs: vec![job("A", 0.0, "q0", 4, 10.0), job("B", 1.0, "q1", 1, 5.0)] };
        let r = run(&w, &cluster(), &mut Fifo, &SimConfig::default()).unwrap();
        assert_eq!(jcts(&r), vec![20.0, 24.0]);
        assert_eq!(r.makespan, 25.0);
        assert_eq!(r.runs.len(), 5);
    }

    /// Same trace under the Capacity Scheduler with two equal queues: when the first of A's
    /// tasks ends at 10, q0 still runs one task and q1 none, so B gets the slot; A's third task
    /// takes the second slot at 10 and its last one B's slot when B ends at 15.
    #[test]
    fn capacity_scheduler_shares_between_queues() {
        let w = Workload { jobs: vec![job("A", 0.0, "q0", 4, 10.0), job("B", 1.0, "q1", 1, 5.0)] };
        let r = run(&w, &cluster(), &mut CapacityScheduler::new(vec![0.5, 0.5]), &SimConfig::default()).unwrap();
        assert_eq!(jcts(&r), vec![25.0, 14.0]);
        // Shares that name only the first queue: the second still gets served, last.
        let r = run(&w, &cluster(), &mut CapacityScheduler::new(vec![1.0]), &SimConfig::default()).unwrap();
        assert_eq!(jcts(&r), vec![20.0, 24.0]);
    }

    /// Skipping a machine's heartbeats while nothing changed since it came back empty gives the
    /// same replay, run for run, as asking the policy every time: checked for every policy that
    /// claims a stable idle answer, on a saturated random workload of three-stage jobs in two
    /// queues (cpu and memory held to capacity, disk overbookable). The policies are also
    /// asked far less often, so the skip is exercised, not vacuous.
    #[test]
    fn skipped_idle_heartbeats_change_nothing() {
        use rand::Rng;
        struct AlwaysAsk(Box<dyn Policy>);
        impl Policy for AlwaysAsk {
            fn name(&self) -> String {
                self.0.name()
            }
            fn job_arrived(&mut self, view: &View, job: u32) {
                self.0.job_arrived(view, job)
            }
            fn assign(&mut self, view: &View, machine: usize, free: &ResVec, out: &mut Vec<TaskRef>) {
                self.0.assign(view, machine, free, out)
            }
            fn launched(&mut self, view: &View, t: TaskRef) {
                self.0.launched(view, t)
            }
            fn finished(&mut self, view: &View, t: TaskRef) {
                self.0.finished(view, t)
            }
        }
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        let w = random_workload(
            &mut rng,
            30,
            7.0,
            |_| 3,
            |r| r.gen_range(1..=6),
            5.0..60.0,
            |_, s| s.checked_sub(1).into_iter().collect(),
        );
        let c = three_resource_cluster(3);
        let settings = crate::env::default_settings(&w);
        let mut fair_tetris = settings.clone();
        fair_tetris.tetris_kappa = Some(0.1);
        // YARN's mechanics: AM containers, one container per heartbeat, reservations, and
        // machines offered only at their heartbeats.
        let mut yarn = settings.clone();
        yarn.cs_yarn = crate::online::CsYarn {
            am: Some(ResVec::from_slice(&[0.25, 0.001, 0.0])),
            per_heartbeat: Some(1),
            reserve: false,
            tez_order: false,
        };
        let mut yarn_reserve = yarn.clone();
        yarn_reserve.cs_yarn.reserve = true;
        let (plain, periodic) = (SimConfig::default(), SimConfig { periodic_only: true, ..SimConfig::default() });
        let cases = [
            ("graphene", &settings, &plain),
            ("tetris", &settings, &plain),
            ("tetris", &fair_tetris, &plain),
            ("cs", &settings, &plain),
            ("cp", &settings, &plain),
            ("drf", &settings, &plain),
            ("fifo", &settings, &plain),
            ("heft", &settings, &plain),
            ("graphene+cs", &settings, &plain),
            ("cs", &yarn, &periodic),
            ("cs", &yarn_reserve, &periodic),
            ("cp", &yarn, &plain),
            ("graphene", &settings, &periodic),
        ];
        for (name, s, cfg) in cases {
            let mut skipping = crate::online::by_name(name, s).unwrap();
            let fast = run(&w, &c, skipping.as_mut(), cfg).unwrap();
            let mut asking = AlwaysAsk(crate::online::by_name(name, s).unwrap());
            let slow = run(&w, &c, &mut asking, cfg).unwrap();
            let key =
                |r: &SimResult| r.runs.iter().map(|x| (x.job, x.task, x.machine, x.start, x.end)).collect::<Vec<_>>();
            assert_eq!(key(&fast), key(&slow), "{name}: the runs differ");
            assert_eq!(jcts(&fast), jcts(&slow), "{name}: the JCTs differ");
            assert_eq!(fast.heartbeats, slow.heartbeats, "{name}");
            assert_eq!(slow.decision_us.len(), slow.heartbeats, "{name}");
            assert!(
                fast.decision_us.len() * 2 < slow.decision_us.len(),
                "{name}: asked {} of {} times",
                fast.decision_us.len(),
                slow.decision_us.len()
            );
        }
    }

    /// A policy's own state can change without a launch: `cs` granting an AM container on one
    /// machine lets the job ask for containers on another that had found nothing before. By
    /// hand: M0 (cpu 2, mem 1) heartbeats at 0, 1, 2, ..., M1 (cpu 1, mem 4) at 0.5, 1.5, ...
    /// (periodic only); job A (one 10 s task of cpu 2, mem 1) arrives at 0; AM containers take
    /// cpu 1, mem 2, so only M1 can hold A's master and only M0 its task. At 0 M0 finds
    /// nothing (the master does not fit there); at 0.5 M1 grants the master; at 1 M0 must be
    /// asked again although nothing launched or ended: the task runs 1-11, JCT 11.
    #[test]
    fn a_policy_state_change_wakes_the_idle_machines() {
        let mut b = DagBuilder::new("A", vec!["cpu".into(), "mem".into()]);
        b.stage(StageSpec {
            name: "s".into(),
            group: None,
            tasks: vec![TaskSpec { duration: 10.0, demand: ResVec::from_slice(&[2.0, 1.0]) }],
            parents: vec![],
        });
        let w =
            Workload { jobs: vec![Job { name: "A".into(), arrival: 0.0, queue: "q".into(), dag: b.build().unwrap() }] };
        let group = |cpu: f64, mem: f64| crate::model::MachineGroup {
            count: 1,
            capacity: [("cpu".to_string(), cpu), ("mem".to_string(), mem)].into_iter().collect(),
        };
        let spec = ClusterSpec {
            machines: vec![group(2.0, 1.0), group(1.0, 4.0)],
            overbook: vec![],
            speeds: vec![],
            bandwidth: 1.0,
            pair_bandwidth: vec![],
        };
        let c = spec.resolve(&["cpu".into(), "mem".into()]).unwrap();
        let mut s = crate::env::default_settings(&w);
        s.cs_yarn.am = Some(ResVec::from_slice(&[1.0, 2.0]));
        let cfg = SimConfig { periodic_only: true, ..SimConfig::default() };
        let r = run(&w, &c, crate::online::by_name("cs", &s).unwrap().as_mut(), &cfg).unwrap();
        assert_eq!(jcts(&r), vec![11.0]);
        assert_eq!((r.runs[0].machine, r.runs[0].start), (0, 1.0));
    }

    /// Waves (rule 2-3 of `waves`): the executor key follows the machines the job holds. One
    /// job of 10 one-slot tasks on 10 one-slot machines (heartbeat phases k/10), no moving
    /// delay: machine k launches at k/10 as the job's (k+1)-th executor, a fresh one. Fresh
    /// samples are 1 s at key 5 and 9 s at key 10: machines 0-4 (1-5 executors: key 5) run 1 s,
    /// machine 9 (10 executors: key 10) 9 s, machines 5-8 (6-9: 5 or 10 at random) one of the two.
    #[test]
    fn waves_key_follows_the_machines_the_job_holds() {
        use std::sync::Arc;
        use waves::{StageWaves, WaveModel, Waves};
        let w = Workload { jobs: vec![job("A", 0.0, "q", 10, 2.0)] };
        let cap = [("cpu".to_string(), 1.0), ("mem".to_string(), 1.0)].into_iter().collect();
        let c = ClusterSpec::uniform(10, cap).resolve(&["cpu".into(), "mem".into()]).unwrap();
        let one = |a: f64, b: f64| [(5u32, vec![a]), (10, vec![b])].into_iter().collect();
        let st = StageWaves { first: one(0.5, 0.5), rest: Default::default(), fresh: one(1.0, 9.0) };
        let model = WaveModel { stages: vec![vec![Arc::new(st)]] };
        let mut waves = Waves::new(model);
        waves.moving_delay = 0.0;
        let cfg = SimConfig { waves: Some(waves), seed: 4, ..SimConfig::default() };
        let r = run(&w, &c, &mut Fifo, &cfg).unwrap();
        let mut by_machine: Vec<(u32, f64, f64)> =
            r.runs.iter().map(|x| (x.machine, x.start, x.end - x.start)).collect();
        by_machine.sort_by_key(|x| x.0);
        for (k, start, ran) in by_machine {
            assert!((start - f64::from(k) / 10.0).abs() < 1e-12, "machine {k} starts at {start}");
            match k {
                0..=4 => assert!((ran - 1.0).abs() < 1e-12, "machine {k}: {ran}"),
                9 => assert!((ran - 9.0).abs() < 1e-12, "machine {k}: {ran}"),
                _ => assert!((ran - 1.0).abs() < 1e-12 || (ran - 9.0).abs() < 1e-12, "machine {k}: {ran}"),
            }
        }
        // The trace's duration (2 s) is what the policy saw; without waves every task runs it.
        let plain = run(&w, &c, &mut Fifo, &SimConfig::default()).unwrap();
        assert!(plain.runs.iter().all(|x| (x.end - x.start - 2.0).abs() < 1e-12));
    }

    /// Overbooking a fungible resource slows tasks in proportion: two tasks each using the
    /// whole disk bandwidth run at half speed.
    #[test]
    fn overbooked_bandwidth_slows_tasks_down() {
        let mut b = DagBuilder::new("d", vec!["cpu".into(), "disk".into()]);
        b.stage(StageSpec {
            name: "s".into(),
            group: None,
            tasks: vec![TaskSpec { duration: 10.0, demand: ResVec::from_slice(&[1.0, 100.0]) }; 2],
            parents: vec![],
        });
        let w =
            Workload { jobs: vec![Job { name: "J".into(), arrival: 0.0, queue: "q".into(), dag: b.build().unwrap() }] };
        let cap = [("cpu".to_string(), 2.0), ("disk".to_string(), 100.0)].into_iter().collect();
        let c = ClusterSpec::uniform(1, cap).resolve(&["cpu".into(), "disk".into()]).unwrap();
        let r = run(&w, &c, &mut Fifo, &SimConfig::default()).unwrap();
        assert_eq!(r.makespan, 20.0);
    }
}
