//! The replay's event queue: events ordered by time, then by the order they were pushed.
//!
//! Heartbeats are most of a replay's events where tasks are long against the heartbeat (a deep
//! workflow keeps every machine beating for a long simulated span per task), and each one is
//! popped and pushed again. They live apart from arrivals and finishes, in a deque kept sorted:
//! a machine's next beat is one period after the beat just taken, so it almost always belongs at
//! the back, where pushing and popping cost O(1) instead of a heap's O(log n) sift. A beat that
//! belongs before the back (a machine whose quiet stretch was skipped) goes to a second sorted
//! deque, or to a heap when it fits behind neither ([`Beats`]). All of them share one sequence
//! counter and every pop takes the smallest (time, sequence) of their heads, so the events come
//! out in exactly the order a single heap gave.
//!
//! Task ends are kept per machine. Every task on a machine progresses at the machine's one rate
//! (see [`super::Sim::rerate`]), so a launch or an end there moves the end of every task on it;
//! one event per task made each such change leave the old ends in the heap, stale (21 stale
//! ends per task on a deep workload of overbooked machines, a third of its replay). Each task
//! still gets its end's (time, sequence) key as if it had been pushed ([`EventQueue::take_seq`]),
//! but only each machine's earliest end is queued, in an indexed heap with one entry per machine
//! ([`super::end_heap`]) that is rekeyed when that end moves. (A heap of every machine's ends as
//! pushed left the old entry of a moved end behind, stale until it surfaced; on a deep workload
//! they outnumbered the live ones, and popping that heap cost a tenth of the replay.)

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use super::end_heap::EndHeap;

#[derive(Clone, Copy, Debug)]
pub(super) enum Event {
    Arrival(u32),
    Heartbeat(u32),
    /// The earliest end among the tasks running on this machine.
    Finish(u32),
}

/// A popped event with its key unpacked.
#[derive(Clone, Copy, Debug)]
pub(super) struct Timed {
    pub time: f64,
    /// Read by the tests, which check the order of pops.
    #[cfg(test)]
    pub seq: u64,
    pub event: Event,
}

/// A (time, sequence) key as two integers whose order is [`key_cmp`]'s: the time's bits mapped
/// so that unsigned order is `f64::total_cmp`'s, then the sequence number. Every queue here and
/// every machine's heap of task ends ([`super::end_heap`]) compares keys at each sift step:
/// two integer comparisons instead of a float's total order and a third comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Key {
    // Field order is comparison order (the derived `Ord` is lexicographic).
    time: u64,
    seq: u64,
}

impl Key {
    /// Above every key made by [`Key::new`] (whose sequence numbers stay below `u64::MAX`):
    /// what a machine that runs nothing has as its earliest end.
    pub const NONE: Key = Key { time: u64::MAX, seq: u64::MAX };

    pub fn new(time: f64, seq: u64) -> Key {
        let bits = time.to_bits();
        // Negative times (sign bit set) reverse their order and go below every positive one.
        let ordered = if bits >> 63 == 1 { !bits } else { bits ^ (1 << 63) };
        Key { time: ordered, seq }
    }

    /// The time it was made from, bit for bit.
    pub fn time(self) -> f64 {
        let ordered = self.time;
        f64::from_bits(if ordered >> 63 == 1 { ordered ^ (1 << 63) } else { !ordered })
    }

    /// The (time, sequence) it was made from, bit for bit.
    #[cfg(test)]
    pub fn unpack(self) -> (f64, u64) {
        (self.time(), self.seq)
    }
}

/// An event in one of the queues, with its packed key.
#[derive(Clone, Copy, Debug)]
struct Queued {
    key: Key,
    event: Event,
}

impl Queued {
    fn timed(self) -> Timed {
        Timed {
            time: self.key.time(),
            #[cfg(test)]
            seq: self.key.seq,
            event: self.event,
        }
    }
}

/// The queue's order of (time, sequence) keys: earliest first, then first pushed (sequence
/// numbers are unique, so this is a total order). [`Key`]'s order, tested against it.
#[cfg(test)]
fn key_cmp(a: (f64, u64), b: (f64, u64)) -> Ordering {
    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))
}

/// Reversed in the heap so that the max-heap pops the earliest event, then the first pushed.
struct Rev(Queued);

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
        other.0.key.cmp(&self.0.key)
    }
}

#[derive(Default)]
pub(super) struct EventQueue {
    seq: u64,
    /// Arrivals.
    others: BinaryHeap<Rev>,
    /// Each machine's earliest task end, slot = machine ([`Key::NONE`]: it runs nothing).
    ends: EndHeap,
    /// In debug builds: the machine whose end was popped, until its next end is set.
    ending: Option<u32>,
    beats: Beats,
}

/// The heartbeats: three sorted sources, popped by their smallest head.
///
/// A machine's next beat is one period after the beat just taken, so it almost always belongs
/// at the back of `on_time`. One that belongs before it comes from a skipped quiet stretch:
/// every machine skipping to the first of its beats after the same arrival or end, in the
/// order they beat, lands in increasing order too, but for one wrap of the period, so such beats
/// mostly follow each other at the back of `late`. Only one that fits behind neither goes to
/// the heap `stray`. (Inserting late beats into the deque moved every beat behind them, a tenth
/// of a deep replay on 2,500 machines; a heap for all of them cost a sift at each pop.)
#[derive(Default)]
struct Beats {
    on_time: VecDeque<Queued>,
    late: VecDeque<Queued>,
    stray: BinaryHeap<Rev>,
}

/// Which of [`Beats`]' sources holds the earliest beat.
#[derive(Clone, Copy)]
enum BeatSource {
    OnTime,
    Late,
    Stray,
}

impl Beats {
    fn push(&mut self, t: Queued) {
        if self.on_time.back().is_none_or(|b| b.key < t.key) {
            self.on_time.push_back(t);
        } else if self.late.back().is_none_or(|b| b.key < t.key) {
            self.late.push_back(t);
        } else {
            self.stray.push(Rev(t));
        }
    }

    /// The earliest beat and where it is.
    fn peek(&self) -> Option<(&Queued, BeatSource)> {
        let mut best = self.on_time.front().map(|b| (b, BeatSource::OnTime));
        for (b, source) in [(self.late.front(), BeatSource::Late), (self.stray.peek().map(|r| &r.0), BeatSource::Stray)]
        {
            if let Some(b) = b {
                if best.is_none_or(|(x, _)| b.key < x.key) {
                    best = Some((b, source));
                }
            }
        }
        best
    }

    fn pop(&mut self, source: BeatSource) -> Option<Queued> {
        match source {
            BeatSource::OnTime => self.on_time.pop_front(),
            BeatSource::Late => self.late.pop_front(),
            BeatSource::Stray => self.stray.pop().map(|r| r.0),
        }
    }
}

impl EventQueue {
    /// The next sequence number, for an event keyed here but queued by its machine
    /// ([`EventQueue::set_end`]).
    pub fn take_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Machine `k`'s earliest task end is now `key` (time, sequence from [`take_seq`]), or it
    /// runs nothing (`None`).
    ///
    /// [`take_seq`]: EventQueue::take_seq
    pub fn set_end(&mut self, k: u32, key: Option<Key>) {
        if cfg!(debug_assertions) && self.ending == Some(k) {
            self.ending = None;
        }
        let k = k as usize;
        while self.ends.len() <= k {
            self.ends.push(Key::NONE);
        }
        self.ends.set(k, key.unwrap_or(Key::NONE));
    }

    /// The machine whose task end is due first, and its key.
    fn first_end(&self) -> Option<(usize, Key)> {
        self.ends.first().filter(|&(_, key)| key != Key::NONE)
    }

    pub fn push(&mut self, time: f64, event: Event) {
        self.seq += 1;
        let t = Queued { key: Key::new(time, self.seq), event };
        debug_assert!(!matches!(event, Event::Finish(_)), "task ends are queued by their machine: set_end");
        if matches!(event, Event::Heartbeat(_)) {
            self.beats.push(t);
        } else {
            self.others.push(Rev(t));
        }
    }

    /// Whether an arrival or a task end is still to come: none means that only heartbeats
    /// remain.
    pub fn has_progress(&self) -> bool {
        !self.others.is_empty() || self.first_end().is_some()
    }

    /// The earliest arrival or task end.
    fn next_progress_event(&self) -> Option<Queued> {
        let end = self.first_end().map(|(k, key)| Queued { key, event: Event::Finish(k as u32) });
        match (self.others.peek(), end) {
            (Some(a), Some(e)) => Some(if a.0.key < e.key { a.0 } else { e }),
            (a, e) => a.map(|r| r.0).or(e),
        }
    }

    /// The time of the earliest arrival or task end, so that a heartbeat finds the next event
    /// that can make work runnable without searching the queue.
    pub fn next_progress(&self) -> Option<f64> {
        self.next_progress_event().map(|t| t.key.time())
    }

    /// The next event. A task end stays queued until [`EventQueue::set_end`] gives its
    /// machine's next end (or none), which the caller does when it has ended the task.
    pub fn pop(&mut self) -> Option<Timed> {
        let next = self.next_progress_event();
        let beat = self.beats.peek();
        let beat_first = match (beat, &next) {
            (Some((b, _)), Some(o)) => b.key < o.key,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if let (true, Some((_, source))) = (beat_first, beat) {
            return self.beats.pop(source).map(Queued::timed);
        }
        let t = next?;
        if let Event::Finish(k) = t.event {
            // The machine's entry stays until the caller, having ended the task, sets the
            // machine's next end (or none) in its place: one sift instead of two.
            debug_assert!(self.ending.is_none(), "a popped end was not followed by set_end");
            if cfg!(debug_assertions) {
                self.ending = Some(k);
            }
        } else {
            self.others.pop();
        }
        Some(t.timed())
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
                    Event::Finish(_) => unreachable!(),
                };
                assert_eq!((got.time, id), want);
            }
        }
        all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for want in all {
            let got = q.pop().unwrap();
            let id = match got.event {
                Event::Arrival(j) | Event::Heartbeat(j) => j,
                Event::Finish(_) => unreachable!(),
            };
            assert_eq!((got.time, id), want);
        }
        assert!(q.pop().is_none());
    }

    /// Packed keys order as `key_cmp` orders their (time, sequence), negative, zero,
    /// infinite and NaN times included, and unpack to the same bits.
    #[test]
    fn end_keys_order_as_key_cmp() {
        let times = [
            f64::NEG_INFINITY,
            -3.5,
            -1e-300,
            -0.0,
            0.0,
            1e-300,
            0.25,
            1.0,
            7.125,
            1e300,
            f64::INFINITY,
            f64::NAN,
            -f64::NAN,
        ];
        let keys: Vec<(f64, u64)> =
            times.iter().flat_map(|&t| [0u64, 1, u64::MAX].into_iter().map(move |s| (t, s))).collect();
        for &a in &keys {
            let ka = Key::new(a.0, a.1);
            assert_eq!(ka.unpack().0.to_bits(), a.0.to_bits());
            assert_eq!(ka.unpack().1, a.1);
            for &b in &keys {
                assert_eq!(ka.cmp(&Key::new(b.0, b.1)), key_cmp(a, b), "{a:?} {b:?}");
            }
        }
    }

    /// Per-machine ends pop in the order one heap of every task's latest end would give (the
    /// ends that moved skipped), interleaved with arrivals by (time, sequence), whatever the
    /// updates.
    #[test]
    fn machine_ends_pop_as_the_live_task_events_would() {
        let mut q = EventQueue::default();
        // The reference: every end ever keyed, with the machine's key at that moment live.
        let mut reference: Vec<(f64, u64, u32)> = Vec::new();
        let mut live: Vec<Option<(f64, u64)>> = vec![None; 6];
        let mut x: u64 = 11;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 33
        };
        for i in 0..3000u32 {
            let r = next();
            let time = (r % 40) as f64 * 0.25;
            if r % 7 == 0 {
                q.push(time, Event::Arrival(i));
                reference.push((time, q.seq, u32::MAX - i));
            } else if r % 5 == 0 {
                // A pop: the earliest live event of the reference.
                let want = reference
                    .iter()
                    .copied()
                    .filter(|&(_, s, k)| k > 1000 || live[k as usize].is_some_and(|l| l.1 == s))
                    .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                let got = q.pop();
                match (want, got) {
                    (None, None) => {}
                    (Some((t, s, k)), Some(g)) => {
                        assert_eq!((g.time, g.seq), (t, s), "pop {i}");
                        reference.retain(|e| e.1 != s);
                        if k <= 1000 {
                            assert!(matches!(g.event, Event::Finish(m) if m == k));
                            live[k as usize] = None;
                            q.set_end(k, None);
                        }
                    }
                    (w, g) => panic!("pop {i}: wanted {w:?}, got {:?}", g.map(|g| g.time)),
                }
            } else {
                // Machine k's earliest end moves (or it empties).
                let k = (r % 6) as u32;
                let key = (r % 3 != 0).then(|| (time, q.take_seq()));
                q.set_end(k, key.map(|(t, s)| Key::new(t, s)));
                live[k as usize] = key;
                if let Some((t, s)) = key {
                    reference.push((t, s, k));
                }
                let want = reference
                    .iter()
                    .filter(|&&(_, s, k)| k > 1000 || live[k as usize].is_some_and(|l| l.1 == s))
                    .map(|e| e.0)
                    .min_by(f64::total_cmp);
                assert_eq!(q.next_progress(), want, "after update {i}");
                assert_eq!(q.has_progress(), want.is_some());
            }
        }
    }
}
