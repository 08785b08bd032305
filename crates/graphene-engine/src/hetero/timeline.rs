//! One machine's busy intervals, for insertion-based placement: a task may go into an idle gap
//! between tasks placed earlier, not only after the last one.

#[derive(Clone, Debug, Default)]
pub struct Timeline {
    /// Busy (start, end) intervals sorted by start, never overlapping.
    busy: Vec<(f64, f64)>,
}

impl Timeline {
    /// The earliest start >= `ready` of a run of length `dur` that overlaps no busy interval.
    pub fn earliest(&self, ready: f64, dur: f64) -> f64 {
        let mut s = ready;
        let from = self.busy.partition_point(|iv| iv.1 <= ready);
        for &(a, b) in &self.busy[from..] {
            if s + dur <= a {
                return s;
            }
            s = s.max(b);
        }
        s
    }

    /// As `earliest`, with one more busy interval `extra` (a tentative duplicate) that is not
    /// stored.
    pub fn earliest_with(&self, ready: f64, dur: f64, extra: (f64, f64)) -> f64 {
        let mut s = ready;
        let from = self.busy.partition_point(|iv| iv.1 <= ready);
        let mut pending = extra.1 > ready || (extra.0 == extra.1 && extra.0 >= ready);
        let mut i = from;
        loop {
            let next = match (pending, self.busy.get(i)) {
                (true, Some(&iv)) if extra.0 <= iv.0 => {
                    pending = false;
                    extra
                }
                (_, Some(&iv)) => {
                    i += 1;
                    iv
                }
                (true, None) => {
                    pending = false;
                    extra
                }
                (false, None) => return s,
            };
            if s + dur <= next.0 {
                return s;
            }
            s = s.max(next.1);
        }
    }

    pub fn insert(&mut self, start: f64, end: f64) {
        let at = self.busy.partition_point(|iv| iv.0 <= start);
        self.busy.insert(at, (start, end));
    }

    /// When the machine last becomes idle.
    pub fn end(&self) -> f64 {
        self.busy.iter().map(|iv| iv.1).fold(0.0, f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_the_first_gap_that_is_long_enough() {
        let mut t = Timeline::default();
        t.insert(0.0, 2.0);
        t.insert(3.0, 5.0);
        t.insert(9.0, 10.0);
        assert_eq!(t.earliest(0.0, 1.0), 2.0);
        assert_eq!(t.earliest(0.0, 2.0), 5.0);
        assert_eq!(t.earliest(6.0, 3.0), 6.0);
        assert_eq!(t.earliest(6.0, 3.5), 10.0);
        assert_eq!(t.earliest(11.0, 1.0), 11.0);
        assert_eq!(t.earliest_with(0.0, 1.0, (2.0, 2.5)), 5.0);
        assert_eq!(t.earliest_with(0.0, 0.5, (2.0, 2.5)), 2.5);
        assert_eq!(t.earliest_with(5.0, 3.0, (5.0, 6.0)), 6.0);
        assert_eq!(t.earliest_with(5.0, 3.5, (5.0, 6.0)), 10.0);
        assert_eq!(t.earliest_with(10.0, 1.0, (10.0, 12.0)), 12.0);
    }
}
