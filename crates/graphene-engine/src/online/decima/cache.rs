//! Reusing job embeddings between actions.
//!
//! A job's node embeddings e_v, its job embedding y_i and its term f_g(y_i) of the global sum
//! are functions of that job's node features and unfinished stages alone. Between two actions
//! (and two machines' heartbeats) most jobs' features do not change: only the acted-on job's,
//! and those whose fit flag flips as the machine fills. Recomputing every job's embeddings per
//! action made a heartbeat cost (active jobs x stages x MLPs) per action; on the 1,000-machine
//! Alibaba hour, with thousands of active jobs, that did not finish in minutes.
//!
//! [`forward`] keeps, per job, the features it last embedded and the results, and recomputes a
//! job only when its features differ bit for bit. Every per-job value is computed by the same
//! operations in the same order as [`super::net::forward`] (both are
//! [`crate::learn::gnn::Gnn`]'s node and job levels), and the global sum and the stage scores
//! are recomputed every time in the same job and candidate order, so the scores are the same
//! bits and greedy decisions do not change (the replays' jobs.csv and schedule.csv compare
//! equal; see BENCHMARKS.md). Training's backward pass still uses [`super::net::forward`], which keeps
//! the records it needs.

use super::features::{Obs, F};
use super::net::{Arch, Pass, D};
use crate::learn::gnn::add;

/// One job's last embedding and the features it was computed from.
struct JobEmb {
    stages: Vec<u32>,
    x: Vec<[f64; F]>,
    e: Vec<[f64; D]>,
    y: [f64; D],
    fg: [f64; D],
}

impl JobEmb {
    fn matches(&self, obs: &Obs, nodes: std::ops::Range<usize>) -> bool {
        self.stages.len() == nodes.len()
            && nodes.clone().zip(&self.stages).all(|(v, &s)| obs.stage[v].1 == s)
            && nodes.zip(&self.x).all(|(v, x)| obs.x[v].iter().zip(x).all(|(a, b)| a.to_bits() == b.to_bits()))
    }
}

/// Embeddings kept between actions, indexed by job id (ids are dense: 0, 1, ... in arrival
/// order).
#[derive(Default)]
pub struct EmbedCache {
    jobs: Vec<Option<JobEmb>>,
    /// Scratch for the MLP records of one job, and for an MLP's input.
    scratch: Vec<f64>,
    inp: Vec<f64>,
}

impl EmbedCache {
    /// Drops a finished job's entry.
    pub fn forget(&mut self, job: u32) {
        if let Some(slot) = self.jobs.get_mut(job as usize) {
            *slot = None;
        }
    }

    /// Jobs with an entry (tests).
    pub fn len(&self) -> usize {
        self.jobs.iter().filter(|e| e.is_some()).count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn entry(&self, job: u32) -> &JobEmb {
        self.jobs[job as usize].as_ref().expect("embedded just before")
    }
}

/// Embeds job `i` of `obs` (its nodes are contiguous and their children are among them) with
/// the encoder's own node and job levels, on a scratch record buffer.
fn embed_job(arch: &Arch, p: &[f64], obs: &Obs, i: usize, a: &mut Vec<f64>, inp: &mut Vec<f64>) -> JobEmb {
    let nodes = obs.nodes_of(i);
    a.clear();
    let e = arch.gnn.embed_nodes(p, obs, nodes.clone(), a).e;
    let job = arch.gnn.embed_job(p, obs, nodes.clone(), &e, a, inp);
    JobEmb {
        stages: nodes.clone().map(|v| obs.stage[v].1).collect(),
        x: nodes.map(|v| obs.x[v]).collect(),
        e,
        y: job.y,
        fg: job.fg,
    }
}

/// The stage scores of `obs` (and the job embeddings and summary [`super::net::score_limits`] needs),
/// equal bit for bit to [`super::net::forward`]'s, recomputing only jobs whose features changed.
pub fn forward(arch: &Arch, p: &[f64], obs: &Obs, cache: &mut EmbedCache) -> Pass {
    let jobs = obs.jobs();
    let mut y = Vec::with_capacity(jobs);
    let mut zs = [0.0; D];
    // Each observed job's id, i.e. its entry.
    let mut e_of = Vec::with_capacity(jobs);
    for i in 0..jobs {
        let nodes = obs.nodes_of(i);
        let id = obs.stage[nodes.start].0;
        let slot = id as usize;
        if cache.jobs.len() <= slot {
            cache.jobs.resize_with(slot + 1, || None);
        }
        let hit = cache.jobs[slot].as_ref().is_some_and(|c| c.matches(obs, nodes.clone()));
        if !hit {
            let emb = embed_job(arch, p, obs, i, &mut cache.scratch, &mut cache.inp);
            cache.jobs[slot] = Some(emb);
        }
        let c = cache.entry(id);
        y.push(c.y);
        add(&mut zs, &c.fg);
        e_of.push(id);
    }
    let mut a = Vec::with_capacity(256);
    let (_, z) = arch.gnn.summarize(p, &zs, &mut a);
    // Candidates' records are not kept: each overwrites the last.
    let keep = a.len();
    let mut q = Vec::with_capacity(obs.cand.len());
    let mut inp = std::mem::take(&mut cache.inp);
    for &c in &obs.cand {
        let v = c as usize;
        let i = obs.job_of[v] as usize;
        let emb = cache.entry(e_of[i]);
        a.truncate(keep);
        let (_, s) = arch.gnn.score(p, &obs.x[v], &emb.e[v - obs.nodes_of(i).start], &y[i], &z, &mut a, &mut inp);
        q.push(s);
    }
    cache.inp = inp;
    Pass::new(crate::learn::gnn::Pass::scores_only(a, y, z, q))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::online::decima::net::{self, Arch};

    /// Two jobs: job 0's features scale with `k0` and it keeps `n0` of its three stages; job 1
    /// never changes.
    fn obs(k0: f64, n0: usize) -> Obs {
        let x = |k: f64| -> [f64; F] { std::array::from_fn(|i| ((i as f64 + 1.0) * 0.29 * k).cos().abs()) };
        let edges: Vec<(u32, u32)> = [(0, 1), (1, 2), (0, 2)].into_iter().filter(|&(_, c)| (c as usize) < n0).collect();
        Obs::from_parts(&[
            ((0..n0).map(|v| x(k0 + v as f64)).collect(), edges, vec![0], [0.1, 0.4], 0.1),
            (vec![x(7.0), x(8.0)], vec![(0, 1)], vec![0, 1], [0.2, 0.3], 0.2),
        ])
    }

    /// Whatever the cache holds (hits, a changed job, a job that lost a stage, a change back),
    /// the stage and limit scores are the full pass's, bit for bit.
    #[test]
    fn cached_scores_equal_the_full_pass_bit_for_bit() {
        let arch = Arch::new();
        let p = arch.init(5);
        let mut cache = EmbedCache::default();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for o in [obs(1.0, 3), obs(1.0, 3), obs(2.0, 3), obs(2.0, 2), obs(1.0, 3)] {
            let mut full = net::forward(&arch, &p, &o);
            let mut fast = forward(&arch, &p, &o, &mut cache);
            assert_eq!(bits(&full.gnn.q), bits(&fast.gnn.q));
            for job in 0..2 {
                net::score_limits(&arch, &p, &o, &mut full, job);
                net::score_limits(&arch, &p, &o, &mut fast, job);
                assert_eq!(bits(&full.w), bits(&fast.w));
            }
        }
        assert_eq!(cache.len(), 2);
        cache.forget(0);
        assert_eq!(cache.len(), 1);
    }
}
