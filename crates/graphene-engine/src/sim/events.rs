//! The replay's event queue: events ordered by time, then by the order they were pushed.
//!
//! Heartbeats are most of a replay's events where tasks are long against the heartbeat (a deep
//! workflow keeps every machine beating for a long simulated span per task), and each one is
//! popped and pushed again. They live apart from arrivals and finishes, in a deque kept sorted:
//! a machine's next beat is one period after the beat just taken, so it almost always belongs at
//! the back, where pushing and popping cost O(1) instead of a heap's O(log n) sift. Both halves
//! share one sequence counter and every pop takes the smaller (time, sequence) of their heads, so
//! the events come out in exactly the order a single heap gave. The heap then holds exactly the
//! events that can make progress, so it also answers when the next one is due.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use crate::model::TaskId;

#[derive(Clone, Copy, Debug)]
pub(super) enum Event {
    Arrival(u32),
    Heartbeat(u32),
    Finish { machine: u32, job: u32, task: TaskId, version: u32 },
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Timed {
    pub time: f64,
    pub seq: u64,
    pub event: Event,
}

impl Timed {
    /// Earliest first, then first pushed (sequence numbers are unique, so this is a total order).
    fn key_cmp(&self, other: &Self) -> Ordering {
        self.time.total_cmp(&other.time).then(self.seq.cmp(&other.seq))
    }
}

/// Reversed in the heap so that the max-heap pops the earliest event, then the first pushed.
struct Rev(Timed);

impl PartialEq for Rev {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Rev {}
impl PartialOrd for Rev {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Rev {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.key_cmp(&self.0)
    }
}

#[derive(Default)]
pub(super) struct EventQueue {
    seq: u64,
    /// Arrivals and finishes.
    others: BinaryHeap<Rev>,
    /// Heartbeats, sorted by (time, sequence).
    beats: VecDeque<Timed>,
}

impl EventQueue {
    pub fn push(&mut self, time: f64, event: Event) {
        self.seq += 1;
        let t = Timed { time, seq: self.seq, event };
        if !matches!(event, Event::Heartbeat(_)) {
            self.others.push(Rev(t));
        } else if self.beats.back().is_none_or(|b| b.key_cmp(&t) == Ordering::Less) {
            self.beats.push_back(t);
        } else {
            // A beat that lands before another machine's (after a quiet stretch was skipped, or
            // by rounding): its sorted place.
            let at = self.beats.partition_point(|b| b.key_cmp(&t) == Ordering::Less);
            self.beats.insert(at, t);
        }
    }

    /// Arrival and finish events still queued (stale finishes included): none left means that
    /// only heartbeats remain.
    pub fn progress_events(&self) -> usize {
        self.others.len()
    }

    /// The time of the earliest queued arrival or finish (stale finishes included), so that a
    /// heartbeat finds the next event that can make work runnable without searching the queue.
    pub fn next_progress(&self) -> Option<f64> {
        self.others.peek().map(|r| r.0.time)
    }

    pub fn pop(&mut self) -> Option<Timed> {
        let beat_first = match (self.beats.front(), self.others.peek()) {
            (Some(b), Some(o)) => b.key_cmp(&o.0) == Ordering::Less,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if beat_first {
            self.beats.pop_front()
        } else {
            self.others.pop().map(|r| r.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The queue pops in the order one heap of (time, sequence) would, whatever mix of beats and
    /// other events, ties and out-of-order beats it is given.
    #[test]
    fn pops_in_time_then_push_order() {
        let mut q = EventQueue::default();
        let mut all = Vec::new();
        let mut x: u64 = 7;
        for i in 0..2000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            // Few distinct times, so that ties are common.
            let time = ((x >> 33) % 50) as f64 * 0.5;
            let event = if x.is_multiple_of(3) { Event::Arrival(i) } else { Event::Heartbeat(i) };
            q.push(time, event);
            all.push((time, i));
            if x.is_multiple_of(5) {
                let got = q.pop().unwrap();
                all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                let want = all.remove(0);
                let id = match got.event {
                    Event::Arrival(j) | Event::Heartbeat(j) => j,
                    Event::Finish { .. } => unreachable!(),
                };
                assert_eq!((got.time, id), want);
            }
        }
        all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for want in all {
            let got = q.pop().unwrap();
            let id = match got.event {
                Event::Arrival(j) | Event::Heartbeat(j) => j,
                Event::Finish { .. } => unreachable!(),
            };
            assert_eq!((got.time, id), want);
        }
        assert!(q.pop().is_none());
    }
}
