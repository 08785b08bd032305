//! Every machine's answer to a query that repeats, kept in a tournament tree over the machines.
//!
//! Why: the alike tasks of a stage ask the space the same question one after another (same
//! release or deadline, duration and demand). Asked afresh, each such query visits machines in
//! index order until one proves best, and on a large busy cluster that is every machine: a
//! 100,000-task layered DAG on 1,000 machines spent 85% of its build there. Between two such
//! queries only the machine that received the task changes, and usage only grows, so its answer
//! can only move away; every other machine's answer stands. Keeping all answers in a min tree
//! makes each repeat cost one query on one machine and a walk up the tree.
//!
//! The answer is the same as the scan's: the best value, ties to the lowest machine index.

use crate::model::ResVec;

/// Which end a query searches from; part of the key so that an earliest-fit answer is never
/// served to a latest-fit query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Earliest,
    Latest,
}

/// What identifies a query (times by their bits: an answer is reused only for the very same
/// question).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Key {
    pub side: Side,
    pub at: u64,
    pub duration: u64,
    pub demand: ResVec,
}

impl Key {
    pub fn new(side: Side, at: f64, duration: f64, demand: &ResVec) -> Key {
        Key { side, at: at.to_bits(), duration: duration.to_bits(), demand: *demand }
    }
}

/// Every machine's answer to one key, or a lower bound on it, in a min tree over the machines.
/// Values are in "smaller is better" form (an earliest start as is, a latest end negated, see
/// `Space`); a machine the demand never fits holds +inf.
///
/// The tree starts from one scan of the machines like the one it replaces (each machine asked
/// with the best answer so far as a limit), keeping every answer the scan found and every bound
/// it proved. A bound is replaced by the exact answer only when it is the best in the tree, and
/// after a placement the machine's old answer is still a bound (usage only grows), so an update
/// costs nothing until that machine is best again. Two cheaper-looking designs were slower on
/// stages of a few dozen tasks on 1,000 machines: every machine's exact answer up front, and
/// exact answers asked with the runner-up as a limit (bounds then rise a breakpoint at a time).
#[derive(Clone, Debug)]
pub struct Repeat {
    pub key: Key,
    /// Leaves at `size..size + machines`, each node the better of its two children.
    tree: Vec<Entry>,
    size: usize,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    value: f64,
    machine: u32,
    /// `value` is the machine's answer, not only a bound on it.
    exact: bool,
}

impl Repeat {
    /// A tree where machine `m` starts from `start(m)`: `Ok(answer)`, `Err(Some(bound))`, or
    /// `Err(None)` when the demand never fits there.
    pub fn new(key: Key, machines: usize, mut start: impl FnMut(usize) -> Result<f64, Option<f64>>) -> Repeat {
        let size = machines.next_power_of_two().max(1);
        let mut tree = vec![Entry { value: f64::INFINITY, machine: u32::MAX, exact: true }; 2 * size];
        for m in 0..machines {
            tree[size + m] = Entry::from(m, start(m));
        }
        for i in (1..size).rev() {
            tree[i] = better(tree[2 * i], tree[2 * i + 1]);
        }
        Repeat { key, tree, size }
    }

    fn set(&mut self, m: usize, e: Entry) {
        let mut i = self.size + m;
        self.tree[i] = e;
        while i > 1 {
            i /= 2;
            self.tree[i] = better(self.tree[2 * i], self.tree[2 * i + 1]);
        }
    }

    /// Machine `m` changed: its answer is now only a bound.
    pub fn touched(&mut self, m: usize) {
        let e = self.tree[self.size + m];
        if e.value < f64::INFINITY {
            self.set(m, Entry { exact: false, ..e });
        }
    }

    /// The best machine and its answer (None when the demand fits no machine). `answer(m)` is
    /// machine m's exact answer, None when nothing fits there.
    pub fn best(&mut self, mut answer: impl FnMut(usize) -> Option<f64>) -> Option<(usize, f64)> {
        loop {
            let top = self.tree[1];
            if top.value == f64::INFINITY {
                return None;
            }
            let m = top.machine as usize;
            if top.exact {
                return Some((m, top.value));
            }
            self.set(m, Entry::from(m, answer(m).ok_or(None)));
        }
    }
}

impl Entry {
    fn from(m: usize, r: Result<f64, Option<f64>>) -> Entry {
        let machine = m as u32;
        match r {
            Ok(value) => Entry { value, machine, exact: true },
            Err(Some(value)) => Entry { value, machine, exact: false },
            Err(None) => Entry { value: f64::INFINITY, machine, exact: true },
        }
    }
}

/// The smaller value, ties to the lower machine index.
fn better(a: Entry, b: Entry) -> Entry {
    if b.value < a.value || (b.value == a.value && b.machine < a.machine) {
        b
    } else {
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> Key {
        Key::new(Side::Earliest, 0.0, 1.0, &ResVec::from_slice(&[1.0]))
    }

    /// A repeat over fixed true answers, counting how many machines were asked.
    fn best(r: &mut Repeat, truth: &[Option<f64>], asked: &mut usize) -> Option<(usize, f64)> {
        r.best(|m| {
            *asked += 1;
            truth[m]
        })
    }

    fn bound(truth: &[Option<f64>], m: usize, b: f64) -> Result<f64, Option<f64>> {
        truth[m].ok_or(None).and(Err(Some(b)))
    }

    #[test]
    fn best_is_the_smallest_answer_then_the_lowest_index() {
        let mut truth = vec![Some(5.0), None, Some(3.0), Some(3.0), Some(4.0)];
        let mut r = Repeat::new(key(), truth.len(), |m| bound(&truth, m, 0.0));
        let mut asked = 0;
        assert_eq!(best(&mut r, &truth, &mut asked), Some((2, 3.0)));
        truth[2] = Some(6.0);
        r.touched(2);
        assert_eq!(best(&mut r, &truth, &mut asked), Some((3, 3.0)));
        truth[3] = Some(9.0);
        r.touched(3);
        assert_eq!(best(&mut r, &truth, &mut asked), Some((4, 4.0)));
    }

    #[test]
    fn a_machine_whose_bound_cannot_win_is_not_asked() {
        let truth = vec![Some(1.0), Some(8.0), Some(9.0)];
        let mut r = Repeat::new(key(), truth.len(), |m| if m == 0 { Ok(1.0) } else { bound(&truth, m, 2.0) });
        let mut asked = 0;
        assert_eq!(best(&mut r, &truth, &mut asked), Some((0, 1.0)));
        assert_eq!(asked, 0, "an exact best is answered from the tree");
        r.touched(0);
        assert_eq!(best(&mut r, &truth, &mut asked), Some((0, 1.0)));
        assert_eq!(asked, 1, "only the touched machine is asked again");
    }

    #[test]
    fn ties_with_a_higher_index_go_to_the_lower() {
        let truth = vec![Some(2.0), Some(2.0)];
        // Machine 1 starts with the better bound but machine 0 has the same answer.
        let mut r = Repeat::new(key(), 2, |m| bound(&truth, m, if m == 0 { 1.0 } else { 0.0 }));
        let mut asked = 0;
        assert_eq!(best(&mut r, &truth, &mut asked), Some((0, 2.0)));
    }

    #[test]
    fn no_machine_fits() {
        let mut r = Repeat::new(key(), 3, |_| Err(None));
        assert_eq!(r.best(|_| unreachable!()), None);
    }
}
