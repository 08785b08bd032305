//! YARN's Capacity Scheduler as the papers use it: each queue is guaranteed a share of the
//! cluster; the next container goes to the queue furthest below its share (running tasks over
//! guaranteed share), within it to the earliest job, and within the job to its runnable tasks
//! in breadth-first (stage) order.
//!
//! The queue and job choice ([`CsQueues`]) takes the choice inside a job as a parameter, so
//! that `cp` (critical-path order) and `graphene+cs` (Graphene's order) change only that.
//!
//! How a queue's use is measured, and whether a queue may grow past its share, follow YARN's
//! settings as options ([`CsAccounting`], `--cs-accounting`, `--cs-user-limit-factor`):
//! * `containers` (the default here, kept for comparability with earlier figures): running
//!   containers over the share.
//! * `memory`: YARN's `DefaultResourceCalculator`, the shipped default: allocated memory over the
//!   queue's share of the cluster's memory.
//! * `dominant`: YARN's `DominantResourceCalculator`: the larger of the cpu and memory shares.
//!
//! YARN's user limit: with one user per queue (our traces carry no users; a queue's jobs are
//! taken to be one service account's) a user gets no new container once it holds more than
//! `user-limit-factor` x the queue's capacity (YARN's default factor is 1: no elasticity past
//! the share for a single user); like YARN's `canAssignToUser`, the check is on what the user
//! holds before the request, so the last container may go past the limit. Without
//! the option queues are elastic up to the whole cluster, as with a large factor. In every mode
//! a container is placed only where it fits on cores and memory (the resources YARN knows).
//!
//! Two mechanics of the real CapacityScheduler (Hadoop 3.4.x) are options ([`CsYarn`]), off by
//! default so that earlier figures stay reproducible; `scripts/bench-cs-fidelity` measures what
//! they change against YARN's own scheduler in SLS (BENCHMARKS.md, "Fidelity of the cs simulator"):
//! * **Application masters** (`--cs-am cpu=1,mem=0.001`): every YARN application first runs its
//!   master in a container. The AM container is the application's first request: it is granted
//!   in the same queue and FIFO order as tasks (`AbstractLeafQueue.assignContainers` walks the
//!   queue's applications in its ordering policy, FIFO by priority then submission), counts
//!   towards the queue's use and the user limit, and is held until the job's last task ends. The
//!   job's tasks are requested only after it is granted (the AM must start and register first):
//!   here from the next instant on, never in the heartbeat that granted it.
//! * **Containers per node heartbeat** (`--cs-assignments-per-heartbeat N`): YARN allocates on a
//!   node's heartbeat, and `CapacityScheduler.allocateContainersToNode` stops after
//!   `per-node-heartbeat.maximum-offswitch-assignments` off-switch containers (default **1**);
//!   every request of a job that does not ask for a host or rack is off-switch, so a node gets at
//!   most one new container per heartbeat. Pair it with `replay --heartbeat` (YARN's node
//!   heartbeat, `yarn.resourcemanager.nodemanagers.heartbeat-interval-ms`, default 1 s) and
//!   `--periodic-heartbeats` (a node manager reports a finished container at its next periodic
//!   heartbeat; the simulator otherwise offers the machine again the moment a task ends).
//! * **Reservations** (`--cs-reservations`): YARN serves a queue's applications strictly in
//!   FIFO order. The first application with a pending request looks at its best request only
//!   (`RegularContainerAllocator.allocate` stops at the first scheduler key it neither skips nor
//!   fails); when that does not fit the node, the node is *reserved* for it
//!   (`AllocationState.RESERVED`) and the heartbeat ends. A reserved node's later heartbeats try
//!   that request first and assign nothing else (`CapacityScheduler.allocateContainerOnSingleNode`:
//!   "Do not schedule if there are any reservations to fulfill on the node"); the request may
//!   still be granted on another node that has room, which drops the reservation
//!   (`reservations-continue-looking`). Without the option the next job's fitting task takes
//!   the space, so a large task can wait behind a stream of small ones. A request is never
//!   reserved on a node too small for it, nor on two nodes; an AM container's request is not
//!   reserved (YARN would), and a reservation does not count towards the queue's use (YARN's
//!   does).

use std::collections::HashMap;

use super::{fit_query, fits, next_job_to_try, relative, serve_queues, FittingStages, Policy, TaskRef};
use crate::model::{paths, ResVec, MAX_RESOURCES};
use crate::sim::{TaskState, View};

pub struct CapacityScheduler {
    queues: CsQueues,
    /// With `yarn.tez_order`: each job's stage depths (`paths::stage_depths`, the order
    /// `export-trace --order natural` gives the SLS AM), computed at its first pick, and the
    /// runnable stages in that order (one buffer, refilled per pick).
    depths: HashMap<u32, Vec<u32>>,
    order: Vec<u32>,
}

impl CapacityScheduler {
    /// `shares`: guaranteed share per queue index (sums to 1).
    pub fn new(shares: Vec<f64>) -> CapacityScheduler {
        CapacityScheduler { queues: CsQueues::new(shares), depths: HashMap::new(), order: Vec::new() }
    }

    /// As YARN measures queues (`accounting`) and limits one user (`user_limit_factor`).
    pub fn with_accounting(mut self, accounting: CsAccounting, user_limit_factor: Option<f64>) -> CapacityScheduler {
        self.queues.accounting = accounting;
        self.queues.user_limit = user_limit_factor.filter(|f| f.is_finite() && *f > 0.0);
        self
    }

    /// YARN's application masters and containers per node heartbeat (see the module docs).
    pub fn with_yarn(mut self, yarn: &CsYarn) -> CapacityScheduler {
        self.queues.yarn = yarn.clone();
        self
    }
}

/// The real CapacityScheduler's mechanics beyond the queue and job order (module docs); the
/// default is off in both.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CsYarn {
    /// Demand of every job's application-master container, in the cluster's resource order.
    pub am: Option<ResVec>,
    /// Most containers (AM containers included) a machine gets per heartbeat.
    pub per_heartbeat: Option<usize>,
    /// Strict FIFO with node reservations.
    pub reserve: bool,
    /// `cs` only: a job's runnable stages in Tez's natural order (`DAGSchedulerNaturalOrder`:
    /// by the stage's distance from the roots, then stage index), the priorities `export-trace
    /// --order natural` gives graphene's SLS AM, instead of by stage index. The two differ on
    /// DAGs whose file order is not by depth (BENCHMARKS.md, "Fidelity of the cs simulator").
    pub tez_order: bool,
}

/// How the Capacity Scheduler measures a queue's use (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CsAccounting {
    #[default]
    Containers,
    Memory,
    Dominant,
}

impl CsAccounting {
    pub fn by_name(name: &str) -> crate::Result<CsAccounting> {
        match name {
            "containers" => Ok(CsAccounting::Containers),
            "memory" => Ok(CsAccounting::Memory),
            "dominant" => Ok(CsAccounting::Dominant),
            other => {
                Err(crate::Error::Usage(format!("--cs-accounting '{other}' must be containers, memory or dominant")))
            }
        }
    }
}

impl Policy for CapacityScheduler {
    fn name(&self) -> String {
        "cs".into()
    }

    /// See [`CsQueues::idle_is_stable`].
    fn idle_is_stable(&self) -> bool {
        self.queues.idle_is_stable()
    }

    fn assign(&mut self, view: &View, machine: usize, free: &ResVec, out: &mut Vec<TaskRef>) {
        if self.queues.yarn.tez_order {
            let (depths, order) = (&mut self.depths, &mut self.order);
            self.queues.assign(view, machine, free, out, true, |v, job, left, chosen| {
                let depth = depths.entry(job).or_insert_with(|| paths::stage_depths(v.dag(job)));
                order.clear();
                order.extend_from_slice(&v.job_state(job).runnable_stages);
                order.sort_by_key(|&s| (depth[s as usize], s));
                first_fitting_among(v, job, order, left, chosen)
            });
        } else {
            self.queues.assign(view, machine, free, out, true, first_fitting);
        }
    }

    fn job_arrived(&mut self, view: &View, job: u32) {
        self.queues.job_arrived(view, job);
    }

    fn launched(&mut self, view: &View, t: TaskRef) {
        self.queues.launched(view, t);
    }

    fn finished(&mut self, view: &View, t: TaskRef) {
        self.queues.finished(view, t);
    }
}

/// The job's first runnable task in stage order that fits `left` and is not in `chosen`.
/// Tasks of a stage share their requested demand in most traces, so a stage is left at its
/// first task that does not fit rather than scanned to the end.
fn first_fitting(view: &View, job: u32, left: &ResVec, chosen: &[TaskRef]) -> Option<TaskRef> {
    let query = fit_query::hard(view, left);
    let mut stages = FittingStages::new(view, job, chosen, &query);
    std::iter::from_fn(|| stages.next(view, &query)).find_map(|s| first_in_stage(view, job, s, left, chosen))
}

/// As [`first_fitting`], over the runnable `stages` in the order given.
fn first_fitting_among(view: &View, job: u32, stages: &[u32], left: &ResVec, chosen: &[TaskRef]) -> Option<TaskRef> {
    stages.iter().find_map(|&s| first_in_stage(view, job, s, left, chosen))
}

/// Stage `s`'s lowest runnable task not in `chosen`, if it fits `left`.
fn first_in_stage(view: &View, job: u32, s: u32, left: &ResVec, chosen: &[TaskRef]) -> Option<TaskRef> {
    for &t in view.job_state(job).runnable_in(s).iter().rev() {
        let tr = TaskRef { job, task: t };
        if chosen.contains(&tr) {
            continue;
        }
        return fits(view, &view.requested(job, t), left).then_some(tr);
    }
    None
}

/// Capacity Scheduler queue accounting, with the task choice inside a job left to the caller.
pub(crate) struct CsQueues {
    shares: Vec<f64>,
    running: Vec<u64>,
    /// Requested demand of the running containers per queue.
    used: Vec<ResVec>,
    accounting: CsAccounting,
    /// YARN's user-limit-factor (one user per queue); None: elastic to the whole cluster.
    user_limit: Option<f64>,
    pub(crate) yarn: CsYarn,
    /// Per job (by id): where and when its AM container was granted (with `yarn.am`).
    am_at: Vec<Option<(usize, f64)>>,
    /// AM containers' demand held on each machine (the simulator does not know them, so they
    /// are taken off the free resources a heartbeat reports).
    am_on: Vec<ResVec>,
    /// With `yarn.reserve`: the task each machine is reserved for, and where each reserved
    /// task's reservation is.
    reserved: Vec<Option<TaskRef>>,
    reserved_at: HashMap<TaskRef, usize>,
    /// The last `assign` changed nothing (no AM granted, no reservation made or dropped) and
    /// passed over no job only because its master was granted that very instant.
    idle_stable: bool,
    /// The copies of `running` and `used` a heartbeat works on, kept for the next one.
    scratch: (Vec<u64>, Vec<ResVec>),
}

impl CsQueues {
    pub(crate) fn new(shares: Vec<f64>) -> CsQueues {
        let n = shares.len();
        CsQueues {
            shares,
            running: vec![0; n],
            used: vec![ResVec::ZERO; n],
            accounting: CsAccounting::Containers,
            user_limit: None,
            yarn: CsYarn::default(),
            am_at: Vec::new(),
            am_on: Vec::new(),
            reserved: Vec::new(),
            reserved_at: HashMap::new(),
            idle_stable: false,
            scratch: (Vec::new(), Vec::new()),
        }
    }

    /// The settings `cs` takes, for the policies that share its queue and job choice.
    pub(crate) fn configured(mut self, accounting: CsAccounting, user_limit: Option<f64>, yarn: &CsYarn) -> CsQueues {
        self.accounting = accounting;
        self.user_limit = user_limit.filter(|f| f.is_finite() && *f > 0.0);
        self.yarn = yarn.clone();
        self
    }

    /// Where cpu and memory sit among the resources (traces: cpu, mem, disk, net).
    fn cpu_mem(view: &View, job: u32) -> (Option<usize>, Option<usize>) {
        let r = &view.dag(job).resources;
        (r.iter().position(|x| x == "cpu"), r.iter().position(|x| x == "mem"))
    }

    /// A queue's use of the cluster as YARN's resource calculator measures it: the fraction of
    /// the cluster's memory (`memory`) or the larger of the cpu and memory fractions (also for
    /// the user limit under `containers`).
    fn share_of(&self, view: &View, used: &ResVec, cm: (Option<usize>, Option<usize>)) -> f64 {
        let total = view.caps.iter().fold(ResVec::ZERO, |a, c| a.add(c));
        let frac = |i: Option<usize>| i.map_or(0.0, |i| if total.0[i] > 0.0 { used.0[i] / total.0[i] } else { 0.0 });
        match self.accounting {
            CsAccounting::Memory => frac(cm.1),
            _ => frac(cm.0).max(frac(cm.1)),
        }
    }

    /// A queue the shares did not name gets share 0: it is served only when no named queue
    /// can use the resources.
    pub(crate) fn job_arrived(&mut self, view: &View, job: u32) {
        let q = view.queue(job) as usize;
        if q >= self.shares.len() {
            self.shares.resize(q + 1, 0.0);
            self.running.resize(q + 1, 0);
            self.used.resize(q + 1, ResVec::ZERO);
        }
        if self.am_at.len() <= job as usize {
            self.am_at.resize(job as usize + 1, None);
        }
    }

    pub(crate) fn launched(&mut self, view: &View, t: TaskRef) {
        if let Some(m) = self.reserved_at.remove(&t) {
            self.reserved[m] = None;
        }
        let q = view.queue(t.job) as usize;
        self.running[q] += 1;
        self.used[q] = self.used[q].add(&view.requested(t.job, t.task));
    }

    pub(crate) fn finished(&mut self, view: &View, t: TaskRef) {
        let q = view.queue(t.job) as usize;
        self.running[q] = self.running[q].saturating_sub(1);
        self.used[q].sub_assign(&view.requested(t.job, t.task));
        // The job's last task ended: its application master exits and frees its container.
        if view.job_state(t.job).left == 0 {
            if let (Some(am), Some(slot)) = (self.yarn.am, self.am_at.get_mut(t.job as usize)) {
                if let Some((m, _)) = slot.take() {
                    self.am_on[m].sub_assign(&am);
                    self.running[q] = self.running[q].saturating_sub(1);
                    self.used[q].sub_assign(&am);
                }
            }
        }
    }

    /// Whether the last, empty [`CsQueues::assign`] left everything as it was and would stay
    /// empty until the jobs or machines change: not if it granted an AM container or made or
    /// dropped a reservation (state), nor if it passed over a job whose master was granted that
    /// instant (the job asks for containers at any later one).
    pub(crate) fn idle_is_stable(&self) -> bool {
        self.idle_stable
    }

    /// One container at a time: the neediest queue that still has a job with a fitting task
    /// gets it; `pick(view, job, left, chosen)` names that job's next task (it must fit `left`
    /// and not be in `chosen`, the tasks taken so far in this heartbeat), or `None`. `chosen`
    /// is the output list itself: a heartbeat fills one machine, so it stays short and a
    /// linear scan beats hashing.
    /// `machine` is the machine heartbeating, `free` what the simulator says it has free.
    /// `heads`: `pick` only ever names a stage's lowest runnable task not chosen yet (so a job
    /// none of whose stages' lowest tasks fits gives nothing, and the index of jobs may pass
    /// over it); false for a pick that looks at every runnable task.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn assign(
        &mut self,
        view: &View,
        machine: usize,
        free: &ResVec,
        out: &mut Vec<TaskRef>,
        heads: bool,
        mut pick: impl FnMut(&View, u32, &ResVec, &[TaskRef]) -> Option<TaskRef>,
    ) {
        self.idle_stable = true;
        let cm = view.active().first().map_or((None, None), |&j| Self::cpu_mem(view, j));
        let mut left = *free;
        if self.yarn.am.is_some() {
            if self.am_on.len() < view.caps.len() {
                self.am_on.resize(view.caps.len(), ResVec::ZERO);
            }
            left.sub_assign(&self.am_on[machine]);
        }
        if self.yarn.reserve {
            if self.reserved.len() < view.caps.len() {
                self.reserved.resize(view.caps.len(), None);
            }
            if let Some(t) = self.reserved[machine] {
                if view.job_state(t.job).state[t.task as usize] == TaskState::Runnable {
                    // A reserved node serves its reservation or nothing.
                    if fits(view, &view.requested(t.job, t.task), &left) {
                        out.push(t);
                    }
                    return;
                }
                self.reserved[machine] = None;
                self.reserved_at.remove(&t);
                self.idle_stable = false;
            }
        }
        // Without AM containers or reservations, and with a pick that takes stages' lowest
        // tasks, a job gives a task only if one of its stages fits (or it holds a task chosen
        // in this heartbeat): the index of jobs passes over the others. Otherwise every job is
        // visited, as a job may ask for its master, reserve the machine, or offer a task
        // behind its stage's first.
        let plain = heads && self.yarn.am.is_none() && !self.yarn.reserve;
        // Then the first job that may give a task while nothing is taken (and `left` is all
        // there is): where every queue's walk starts until one takes something. None: every
        // queue would come back empty (most heartbeats of a deep workload, where little is
        // runnable at a time).
        let first = if plain { next_job_to_try(view, 0, &left, out) } else { None };
        if plain && first.is_none() {
            return;
        }
        let unbounded = ResVec([f64::INFINITY; MAX_RESOURCES]);
        let cap = view.caps[machine];
        // With reservations: the request this heartbeat reserves the machine for.
        let mut reserve_here: Option<TaskRef> = None;
        // The AM containers granted in this heartbeat, as (job, queue).
        let mut granted: Vec<(u32, usize)> = Vec::new();
        let limit = self.yarn.per_heartbeat.unwrap_or(usize::MAX);
        // A job passed over because its master was granted this instant.
        let mut waited = false;
        let (mut running, mut used) = std::mem::take(&mut self.scratch);
        running.clone_from(&self.running);
        used.clone_from(&self.used);
        let this = &*self;
        let mut state = (left, running, used);
        serve_queues(
            this.shares.len(),
            &mut state,
            |(_, running, used), q| match this.accounting {
                CsAccounting::Containers => relative(running[q] as f64, this.shares[q]),
                _ => relative(this.share_of(view, &used[q], cm), this.shares[q]),
            },
            |(left, running, used), q| {
                if out.len() + granted.len() >= limit || reserve_here.is_some() {
                    return false;
                }
                // YARN's user limit: the queue's single user gets no new container once it holds
                // more than f x the queue's capacity (AbstractLeafQueue.canAssignToUser compares
                // what the user holds, before the request, with `>`: the last container may go
                // past the limit, and a first container is always allowed).
                let over_limit = |_: &[u64], used: &[ResVec], _: &ResVec| match this.user_limit {
                    Some(f) => this.share_of(view, &used[q], cm) > f * this.shares[q] + 1e-9,
                    None => false,
                };
                let (mut from, mut pos) = (0u32, 0usize);
                loop {
                    let job = if plain {
                        let next =
                            if from == 0 && out.is_empty() { first } else { next_job_to_try(view, from, left, out) };
                        let Some(j) = next else { break };
                        from = j + 1;
                        j
                    } else {
                        let Some(&j) = view.active().get(pos) else { break };
                        pos += 1;
                        j
                    };
                    if view.queue(job) as usize != q {
                        continue;
                    }
                    if let Some(am) = this.yarn.am {
                        match this.am_at.get(job as usize).copied().flatten() {
                            // Its master was granted this instant: nothing requested yet.
                            Some((_, at)) if at >= view.now => {
                                waited = true;
                                continue;
                            }
                            Some(_) => {}
                            None if granted.iter().any(|g| g.0 == job) => continue,
                            None => {
                                // The application's first request is its master's container.
                                if !fits(view, &am, left) {
                                    continue;
                                }
                                if over_limit(running, used, &am) {
                                    return false;
                                }
                                left.sub_assign(&am);
                                running[q] += 1;
                                used[q] = used[q].add(&am);
                                granted.push((job, q));
                                return true;
                            }
                        }
                    }
                    if this.yarn.reserve {
                        // Strict FIFO: the job's best request, whether it fits or not.
                        let Some(t) = pick(view, job, &unbounded, out) else { continue };
                        let d = view.requested(t.job, t.task);
                        if over_limit(running, used, &d) {
                            return false;
                        }
                        if !fits(view, &d, left) {
                            if this.reserved_at.contains_key(&t) || !fits(view, &d, &cap) {
                                continue;
                            }
                            reserve_here = Some(t);
                            return false;
                        }
                        left.sub_assign(&d);
                        out.push(t);
                        running[q] += 1;
                        used[q] = used[q].add(&d);
                        return true;
                    }
                    if let Some(t) = pick(view, job, left, out) {
                        let d = view.requested(t.job, t.task);
                        if over_limit(running, used, &d) {
                            return false;
                        }
                        debug_assert!(fits(view, &d, left));
                        left.sub_assign(&d);
                        out.push(t);
                        running[q] += 1;
                        used[q] = used[q].add(&d);
                        return true;
                    }
                }
                false
            },
        );
        self.scratch = (state.1, state.2);
        if waited || reserve_here.is_some() || !granted.is_empty() {
            self.idle_stable = false;
        }
        if let Some(t) = reserve_here {
            self.reserved[machine] = Some(t);
            self.reserved_at.insert(t, machine);
        }
        if let Some(am) = self.yarn.am {
            for (job, q) in granted {
                self.am_at[job as usize] = Some((machine, view.now));
                self.am_on[machine] = self.am_on[machine].add(&am);
                self.running[q] += 1;
                self.used[q] = self.used[q].add(&am);
            }
        }
    }
}
