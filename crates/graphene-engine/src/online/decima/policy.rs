//! The `decima` online policy: at a heartbeat, freed resources first go back to the stages
//! earlier actions picked (up to their job's limit), then the agent takes ⟨stage, limit⟩
//! actions until nothing runnable fits the machine.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::cache::{self, EmbedCache};
use super::features::{any_fits, cluster_total, next_task, observe_scaled, take, JobTrack, Obs, Scaling, Tracks};
use super::memo::NoFit;
use super::model::Model;
use super::net::{self, level_value, Arch};
pub use super::setting::Freed;
use crate::model::ResVec;
use crate::online::{Policy, TaskRef};
use crate::sim::View;

/// How actions are chosen.
enum Mode {
    /// The highest score (ties: the first candidate, i.e. earlier job then lower stage).
    Greedy,
    /// Sampled from the softmax (training rollouts), seeded.
    Sample(Box<ChaCha8Rng>),
}

/// One action as training needs it: the observation, the candidate and the position of the
/// level among the allowed ones, and when it was taken.
#[derive(Clone, Debug)]
pub struct Step {
    pub obs: Obs,
    pub stage: usize,
    pub level: usize,
    pub time: f64,
}

/// What one action did (tests check the ≥1-task rule with this).
#[derive(Clone, Copy, Debug)]
pub struct ActionLog {
    pub job: u32,
    pub stage: u32,
    pub limit: f64,
    pub launched: usize,
    pub was_runnable: bool,
}

pub struct Decima {
    arch: Arch,
    params: Vec<f64>,
    /// How features are scaled (the model file's `trained.features`).
    scaling: Scaling,
    freed: Freed,
    /// Under [`Freed::OwnJob`]: the job that last picked tasks on each machine.
    owner: Vec<Option<u32>>,
    mode: Mode,
    jobs: Tracks,
    /// Jobs with tasks picked in the current heartbeat (their `pend` is reset at its end).
    touched: Vec<u32>,
    total: Option<ResVec>,
    cache: EmbedCache,
    nofit: NoFit,
    /// Filled during training rollouts.
    pub steps: Option<Vec<Step>>,
    /// Filled when asked (tests).
    pub actions: Option<Vec<ActionLog>>,
}

impl Decima {
    /// Greedy inference with `model`.
    pub fn new(model: &Model) -> Decima {
        Decima {
            arch: Arch::new(),
            params: model.params.clone(),
            // A model that failed to say would have been refused when parsed.
            scaling: model.scaling().unwrap_or_default(),
            freed: model.freed().unwrap_or_default(),
            owner: Vec::new(),
            mode: Mode::Greedy,
            jobs: Tracks::default(),
            touched: Vec::new(),
            total: None,
            cache: EmbedCache::default(),
            nofit: NoFit::default(),
            steps: None,
            actions: None,
        }
    }

    /// Sampling actions with `seed` and recording every step (a training rollout).
    pub fn sampling(model: &Model, seed: u64) -> Decima {
        let mut d = Decima::new(model);
        d.mode = Mode::Sample(Box::new(ChaCha8Rng::seed_from_u64(seed)));
        d.steps = Some(Vec::new());
        d
    }

    fn pick(&mut self, scores: &[f64]) -> usize {
        match &mut self.mode {
            Mode::Greedy => crate::learn::argmax(scores),
            Mode::Sample(rng) => crate::learn::sample(scores, rng.gen()),
        }
    }
}

impl Policy for Decima {
    fn name(&self) -> String {
        "decima".into()
    }

    fn job_arrived(&mut self, view: &View, job: u32) {
        self.jobs.insert(job, JobTrack::new(view, job));
        self.nofit.clear();
    }

    fn assign(&mut self, view: &View, machine: usize, free: &ResVec, out: &mut Vec<TaskRef>) {
        let total = *self.total.get_or_insert_with(|| cluster_total(view));
        let Some(cap) = view.caps.get(machine).copied() else { return };
        let mut left = *free;
        self.nofit.settle(&view.hard, view.dims);
        // Freed resources go back to the committed stages first: of every job, in arrival
        // order, or only of the machine's own job.
        let own = match self.freed {
            Freed::AnyJob => None,
            Freed::OwnJob => Some(self.owner.get(machine).copied().flatten()),
        };
        let own_job: [u32; 1];
        let jobs: &[u32] = match own {
            None => view.active(),
            Some(None) => &[],
            Some(Some(j)) => {
                own_job = [j];
                &own_job
            }
        };
        self.jobs.refill_committed(view, jobs, &total, &mut left, out, &mut self.touched);
        loop {
            // Only before any pick: a pick exposes the task behind it, which may ask for less.
            if out.is_empty() && self.nofit.covers(&left, &view.hard, view.dims) {
                break;
            }
            if !any_fits(view, &self.jobs, &left, out) {
                self.nofit.record(left, out.len());
                break;
            }
            let obs = observe_scaled(view, &self.jobs, &total, &cap, &left, self.scaling);
            if obs.cand.is_empty() {
                break;
            }
            let mut pass = cache::forward(&self.arch, &self.params, &obs, &mut self.cache);
            let c = self.pick(&pass.gnn.q);
            let v = obs.cand[c] as usize;
            net::score_limits(&self.arch, &self.params, &obs, &mut pass, obs.job_of[v] as usize);
            let k = self.pick(&pass.w);
            let limit = level_value(pass.levels[k]);
            let (job, stage) = obs.stage[v];
            let tr = self.jobs.get_mut(job).expect("observed jobs are tracked");
            let was_runnable = next_task(view, tr, job, stage).is_some();
            let n = take(view, tr, &total, job, stage, limit, true, &mut left, out);
            tr.commit(stage, limit);
            self.touched.push(job);
            if let Some(a) = &mut self.actions {
                a.push(ActionLog { job, stage, limit, launched: n, was_runnable });
            }
            if let Some(steps) = &mut self.steps {
                steps.push(Step { obs, stage: c, level: k, time: view.now });
            }
            if n == 0 {
                // Cannot happen (candidates fit and the level exceeds the share); never loop.
                break;
            }
        }
        if self.freed == Freed::OwnJob {
            if let Some(last) = out.last() {
                if self.owner.len() <= machine {
                    self.owner.resize(machine + 1, None);
                }
                self.owner[machine] = Some(last.job);
            }
        }
        // Picks are launched (or not) by the simulator next; `launched` books them. Only jobs
        // with picks have anything to reset.
        self.jobs.clear_picks(&mut self.touched);
    }

    fn launched(&mut self, view: &View, t: TaskRef) {
        self.nofit.launched();
        if let Some(tr) = self.jobs.get_mut(t.job) {
            let s = tr.book_launch(view, t);
            tr.runnable_seen = view.job_state(t.job).runnable_count;
            // Scans look at each stage's next task only: if the task behind the launched one
            // asks for less on some resource, it may fit where the launched one did not.
            if let Some(next) = next_task(view, tr, t.job, s as u32) {
                let (d, nd) = (view.requested(t.job, t.task), view.requested(t.job, next));
                if !(0..view.dims).all(|r| !view.hard[r] || d.0[r] <= nd.0[r]) {
                    self.nofit.clear();
                }
            }
        }
    }

    fn finished(&mut self, view: &View, t: TaskRef) {
        if view.job_state(t.job).left == 0 {
            self.jobs.remove(t.job);
            self.cache.forget(t.job);
            return;
        }
        if let Some(tr) = self.jobs.get_mut(t.job) {
            tr.book_finish(view, t);
            let runnable = view.job_state(t.job).runnable_count;
            if runnable > tr.runnable_seen {
                self.nofit.clear();
            }
            tr.runnable_seen = runnable;
        }
    }
}
