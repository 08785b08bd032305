//! A policy decided outside the library: the Python package's policies, written as a class with
//! one method. At each heartbeat with runnable work, a [`Snapshot`] of the machine and of every
//! runnable task goes to the caller's `decide`; the launches it returns are checked here by the
//! simulator's own rule before they reach the simulator, so that a policy's mistake is an error
//! naming the launch, not a silently shortened heartbeat (the simulator stops at the first
//! launch that does not fit and says nothing). Everything else (events, heartbeats, the
//! validation of the realized schedule, the outputs) is the built-in policies'.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use super::{fits, Policy, TaskRef};
use crate::error::{Error, Result};
use crate::model::{Cluster, ResVec, Workload};
use crate::sim::{self, SimConfig, SimResult, TaskState, View};

/// A runnable task as a policy sees it: what it believes of the task (requested demand and
/// estimated duration, which `--misestimate` changes), not the truth the simulator runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Runnable {
    pub job: u32,
    pub task: u32,
    pub stage: u32,
    pub demand: ResVec,
    pub duration: f64,
}

/// A runnable stage in a [`Snapshot`]: its tasks are `runnable[start..start + len]`, lowest id
/// first. A policy that goes stage by stage (most do: a stage's tasks are alike) reads one
/// entry per stage and only the tasks of the stages it takes from, so what it costs follows
/// the stages and the launches, not every runnable task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StageSpan {
    pub job: u32,
    pub stage: u32,
    pub start: usize,
    pub len: usize,
}

/// What a policy sees at one heartbeat.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub now: f64,
    /// The machine whose free resources are handed out.
    pub machine: usize,
    /// Its capacity minus what its running tasks were allocated (negative on an overbooked
    /// resource).
    pub free: ResVec,
    pub capacity: ResVec,
    /// Resources held to capacity; the others may be overbooked.
    pub hard: Vec<bool>,
    /// Every runnable task: jobs in arrival order, each job's runnable stages in stage order,
    /// each stage's tasks lowest id first (the order `fifo` takes them in).
    pub runnable: Vec<Runnable>,
    /// The runnable stages in the same order, each with its span of `runnable`.
    pub stages: Vec<StageSpan>,
}

/// The marker a stopped run unwinds its simulator with.
struct Stop;

/// A policy whose choices come from `decide`; `name` is what the outputs record.
pub struct External<F> {
    name: String,
    decide: F,
    error: Option<Error>,
    stable_idle: bool,
}

impl<F> External<F>
where
    F: FnMut(Snapshot) -> Result<Vec<(u32, u32)>>,
{
    pub fn new(name: impl Into<String>, decide: F) -> External<F> {
        External { name: name.into(), decide, error: None, stable_idle: false }
    }

    /// Declares that an empty answer of `decide` depends on nothing but the snapshot (not on the
    /// clock, a random stream or state the call changed), so that the simulator may skip asking
    /// a machine again until a job arrives or a task launches or ends ([`Policy::idle_is_stable`]).
    /// The replay is then the same, with fewer calls.
    pub fn with_stable_idle(mut self, stable: bool) -> Self {
        self.stable_idle = stable;
        self
    }

    fn snapshot(view: &View, machine: usize, free: &ResVec) -> Snapshot {
        let mut runnable = Vec::new();
        let mut stages = Vec::new();
        for &job in view.active() {
            let st = view.job_state(job);
            let dag = view.dag(job);
            for &s in &st.runnable_stages {
                let tasks = st.runnable_in(s);
                stages.push(StageSpan { job, stage: s, start: runnable.len(), len: tasks.len() });
                for &t in tasks.iter().rev() {
                    runnable.push(Runnable {
                        job,
                        task: t,
                        stage: dag.tasks[t as usize].stage,
                        demand: view.requested(job, t),
                        duration: view.estimated_duration(job, t),
                    });
                }
            }
        }
        Snapshot {
            now: view.now,
            machine,
            free: *free,
            capacity: view.caps[machine],
            hard: view.hard[..view.dims].to_vec(),
            runnable,
            stages,
        }
    }

    /// The launches, checked: each names a runnable task of an active job, once, and fits what
    /// the earlier ones left of `free` on every hard resource.
    fn check(view: &View, free: &ResVec, launches: &[(u32, u32)], now: f64) -> Result<Vec<TaskRef>> {
        let mut left = *free;
        let mut out: Vec<TaskRef> = Vec::with_capacity(launches.len());
        for (i, &(job, task)) in launches.iter().enumerate() {
            let at = |what: String| Error::Usage(format!("launch {i} (job {job}, task {task}) at time {now}: {what}"));
            if !view.active().contains(&job) {
                return Err(at("the job is not in the system (not arrived, or finished)".into()));
            }
            let st = view.job_state(job);
            match st.state.get(task as usize) {
                None => return Err(at(format!("the job has {} tasks", st.state.len()))),
                Some(TaskState::Runnable) => {}
                Some(s) => return Err(at(format!("the task is {s:?}, not runnable"))),
            }
            let t = TaskRef { job, task };
            if out.contains(&t) {
                return Err(at("the task is launched twice".into()));
            }
            let d = view.requested(job, task);
            if !fits(view, &d, &left) {
                return Err(at(format!(
                    "its demand {:?} does not fit what is left of the machine, {:?}",
                    &d.0[..view.dims],
                    &left.0[..view.dims]
                )));
            }
            left.sub_assign(&d);
            out.push(t);
        }
        Ok(out)
    }
}

impl<F> Policy for External<F>
where
    F: FnMut(Snapshot) -> Result<Vec<(u32, u32)>>,
{
    fn name(&self) -> String {
        self.name.clone()
    }

    fn idle_is_stable(&self) -> bool {
        self.stable_idle
    }

    fn assign(&mut self, view: &View, machine: usize, free: &ResVec, out: &mut Vec<TaskRef>) {
        let snap = Self::snapshot(view, machine, free);
        if snap.runnable.is_empty() {
            return;
        }
        let checked = (self.decide)(snap).and_then(|l| Self::check(view, free, &l, view.now));
        match checked {
            Ok(tasks) => out.extend(tasks),
            Err(e) => {
                self.error = Some(e);
                resume_unwind(Box::new(Stop));
            }
        }
    }
}

/// Replays `workload` under `policy`; an error of its `decide`, or a launch it returns that is
/// not runnable or does not fit, stops the replay and is returned.
pub fn run<F>(workload: &Workload, cluster: &Cluster, policy: &mut External<F>, cfg: &SimConfig) -> Result<SimResult>
where
    F: FnMut(Snapshot) -> Result<Vec<(u32, u32)>>,
{
    match catch_unwind(AssertUnwindSafe(|| sim::run(workload, cluster, policy, cfg))) {
        Ok(r) => r,
        Err(p) if p.is::<Stop>() => Err(policy.error.take().expect("a stopped run has its error")),
        Err(p) => resume_unwind(p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ClusterSpec;

    /// The bundled small trace (4 jobs, 63 stages) on 3 machines of the default capacity.
    fn setup() -> (Workload, Cluster) {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../traces/small.csv")).unwrap();
        let (w, _) = crate::trace::parse(&text, None).unwrap();
        let c = ClusterSpec::uniform(3, ClusterSpec::default_capacity())
            .resolve(&crate::trace::RESOURCES.map(String::from))
            .unwrap();
        (w, c)
    }

    /// FIFO written against the snapshot (take tasks in order while they fit; a stage is left at
    /// its first task that does not fit) gives the built-in `fifo`'s runs exactly.
    #[test]
    fn fifo_from_snapshots_is_the_built_in_fifo() {
        let (w, c) = setup();
        let cfg = SimConfig::default();
        let builtin = sim::run(&w, &c, &mut super::super::Fifo, &cfg).unwrap();
        let mut calls = 0;
        let mut p = External::new("py-fifo", |s: Snapshot| {
            calls += 1;
            let mut left = s.free;
            let mut out = Vec::new();
            let mut skip: Option<(u32, u32)> = None;
            for r in &s.runnable {
                if skip == Some((r.job, r.stage)) {
                    continue;
                }
                let fits = (0..s.hard.len()).all(|k| !s.hard[k] || r.demand.0[k] <= left.0[k] * (1.0 + 1e-9) + 1e-9);
                if fits {
                    left.sub_assign(&r.demand);
                    out.push((r.job, r.task));
                } else {
                    skip = Some((r.job, r.stage));
                }
            }
            Ok(out)
        });
        let ext = run(&w, &c, &mut p, &cfg).unwrap();
        let key = |r: &SimResult| r.runs.iter().map(|x| (x.job, x.task, x.machine, x.start, x.end)).collect::<Vec<_>>();
        assert_eq!(key(&ext), key(&builtin));
        assert!(calls > 0);
    }

    /// FIFO through a snapshot's stage spans: each stage's tasks while they fit, reading only the
    /// tasks of the stages it reaches.
    fn fifo_by_stages(s: &Snapshot) -> Vec<(u32, u32)> {
        let mut left = s.free;
        let mut out = Vec::new();
        for sp in &s.stages {
            for r in &s.runnable[sp.start..sp.start + sp.len] {
                if !(0..s.hard.len()).all(|k| !s.hard[k] || r.demand.0[k] <= left.0[k] * (1.0 + 1e-9) + 1e-9) {
                    break;
                }
                left.sub_assign(&r.demand);
                out.push((r.job, r.task));
            }
        }
        out
    }

    /// The same FIFO going stage by stage through the spans (reading only the tasks of the stages
    /// it reaches) gives the same runs, and the spans cover `runnable` exactly, in order.
    #[test]
    fn fifo_by_stage_spans_is_the_built_in_fifo() {
        let (w, c) = setup();
        let cfg = SimConfig::default();
        let builtin = sim::run(&w, &c, &mut super::super::Fifo, &cfg).unwrap();
        let mut p = External::new("py-fifo-stages", |s: Snapshot| {
            let mut next = 0;
            for sp in &s.stages {
                assert_eq!(sp.start, next);
                assert!(sp.len > 0);
                assert!(s.runnable[sp.start..sp.start + sp.len].iter().all(|r| (r.job, r.stage) == (sp.job, sp.stage)));
                next = sp.start + sp.len;
            }
            assert_eq!(next, s.runnable.len());
            Ok(fifo_by_stages(&s))
        });
        let ext = run(&w, &c, &mut p, &cfg).unwrap();
        let key = |r: &SimResult| r.runs.iter().map(|x| (x.job, x.task, x.machine, x.start, x.end)).collect::<Vec<_>>();
        assert_eq!(key(&ext), key(&builtin));
    }

    /// Declaring the idle answer stable keeps FIFO's runs and asks fewer times.
    #[test]
    fn a_stable_idle_answer_gives_the_same_runs_with_fewer_calls() {
        let (w, c) = setup();
        let cfg = SimConfig::default();
        let fifo = |calls: &mut usize, s: Snapshot| {
            *calls += 1;
            Ok(fifo_by_stages(&s))
        };
        let (mut plain_calls, mut stable_calls) = (0, 0);
        let plain = run(&w, &c, &mut External::new("p", |s: Snapshot| fifo(&mut plain_calls, s)), &cfg).unwrap();
        let stable =
            run(&w, &c, &mut External::new("s", |s: Snapshot| fifo(&mut stable_calls, s)).with_stable_idle(true), &cfg)
                .unwrap();
        let key = |r: &SimResult| r.runs.iter().map(|x| (x.job, x.task, x.machine, x.start, x.end)).collect::<Vec<_>>();
        assert_eq!(key(&plain), key(&stable));
        assert!(stable_calls < plain_calls, "{stable_calls} calls against {plain_calls}");
    }

    fn error_of<F: FnMut(Snapshot) -> Result<Vec<(u32, u32)>>>(
        w: &Workload,
        c: &Cluster,
        p: &mut External<F>,
    ) -> String {
        match run(w, c, p, &SimConfig::default()) {
            Ok(_) => panic!("the replay should have stopped"),
            Err(e) => e.to_string(),
        }
    }

    /// A launch that cannot be made stops the replay with an error that names it.
    #[test]
    fn an_infeasible_launch_is_an_error_naming_it() {
        let (w, c) = setup();
        let mut twice = External::new("twice", |s: Snapshot| {
            let r = &s.runnable[0];
            Ok(vec![(r.job, r.task), (r.job, r.task)])
        });
        let e = error_of(&w, &c, &mut twice);
        assert!(e.starts_with("launch 1 (job 0, task 0) at time 0: the task is launched twice"), "{e}");
        let mut all = External::new("all", |s: Snapshot| Ok(s.runnable.iter().map(|r| (r.job, r.task)).collect()));
        let e = error_of(&w, &c, &mut all);
        assert!(e.contains("does not fit what is left of the machine"), "{e}");
        let mut bad = External::new("bad", |_: Snapshot| Ok(vec![(99, 0)]));
        let e = error_of(&w, &c, &mut bad);
        assert!(e.contains("job 99") && e.contains("not in the system"), "{e}");
        let mut failing = External::new("failing", |_: Snapshot| Err(Error::Usage("the policy raised".into())));
        assert_eq!(error_of(&w, &c, &mut failing), "the policy raised");
    }
}
