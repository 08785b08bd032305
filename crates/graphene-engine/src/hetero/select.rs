//! Task-selection policies that LACHESIS pairs with DEFT as baselines (section V-B): which
//! ready task (all parents placed) is allocated next.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use serde::Serialize;

use super::deft;
use super::instance::Instance;
use super::plan::Plan;
use super::rank;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Policy {
    /// The order in which tasks became ready (jobs in submission order, tasks in id order,
    /// for those ready at the start).
    Fifo,
    /// Shortest mean run time first.
    Sjf,
    /// Highest response ratio (wait + run) / run, where wait is the time from the task's data
    /// being ready (its parents' earliest finish) to the latest start placed so far.
    Hrrn,
    /// Highest upward rank first (HEFT's priority), LACHESIS's "HighRank_up".
    RankUp,
}

/// A ready task under a fixed key: the largest key first, then the smaller id.
pub(crate) struct ByKey {
    pub key: f64,
    pub task: u32,
}

impl PartialEq for ByKey {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for ByKey {}
impl PartialOrd for ByKey {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for ByKey {
    fn cmp(&self, o: &Self) -> Ordering {
        self.key.total_cmp(&o.key).then(o.task.cmp(&self.task))
    }
}

enum Queue {
    Fifo(VecDeque<u32>),
    Keyed(BinaryHeap<ByKey>, Vec<f64>),
    Hrrn(Vec<u32>),
}

/// Runs DEFT with `policy` choosing the next task.
pub fn schedule(inst: &Instance, policy: Policy) -> Plan {
    let n = inst.len();
    let mean = rank::mean_costs(inst);
    let mut queue = match policy {
        Policy::Fifo => Queue::Fifo(VecDeque::new()),
        Policy::Sjf => Queue::Keyed(BinaryHeap::new(), mean.iter().map(|c| -c).collect()),
        Policy::RankUp => Queue::Keyed(BinaryHeap::new(), rank::upward(inst)),
        Policy::Hrrn => Queue::Hrrn(Vec::new()),
    };
    let push = |q: &mut Queue, t: u32| match q {
        Queue::Fifo(d) => d.push_back(t),
        Queue::Keyed(h, key) => h.push(ByKey { key: key[t as usize], task: t }),
        Queue::Hrrn(v) => v.push(t),
    };
    let mut plan = Plan::new(inst);
    let mut waiting: Vec<usize> = (0..n as u32).map(|t| inst.parents(t).len()).collect();
    // Earliest finish over a task's runs, and when each ready task's inputs all exist.
    let mut done = vec![f64::INFINITY; n];
    let mut ready_time = vec![0.0f64; n];
    let mut clock = 0.0f64;
    for t in 0..n as u32 {
        if waiting[t as usize] == 0 {
            push(&mut queue, t);
        }
    }
    loop {
        let t = match &mut queue {
            Queue::Fifo(d) => d.pop_front(),
            Queue::Keyed(h, _) => h.pop().map(|k| k.task),
            Queue::Hrrn(v) => {
                let ratio = |t: u32| {
                    let run = mean[t as usize];
                    let wait = (clock - ready_time[t as usize]).max(0.0);
                    if run > 0.0 {
                        (wait + run) / run
                    } else {
                        f64::INFINITY
                    }
                };
                let pick = (0..v.len()).max_by(|&a, &b| ratio(v[a]).total_cmp(&ratio(v[b])).then(v[b].cmp(&v[a])));
                pick.map(|i| v.swap_remove(i))
            }
        };
        let Some(t) = t else { break };
        let a = deft::allocate(inst, &plan, t);
        if let Some((p, c)) = a.duplicate {
            done[p as usize] = done[p as usize].min(c.end);
        }
        deft::commit(inst, &mut plan, t, &a);
        done[t as usize] = done[t as usize].min(a.task.end);
        clock = clock.max(a.task.start);
        for &(c, _) in inst.children(t) {
            let c = c as usize;
            ready_time[c] = ready_time[c].max(done[t as usize]);
            waiting[c] -= 1;
            if waiting[c] == 0 {
                push(&mut queue, c as u32);
            }
        }
    }
    plan
}
