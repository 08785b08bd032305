//! When long work must give up: a wall-clock deadline and a flag another thread can raise.
//!
//! The offline search, the simulator and the service's jobs poll a [`Deadline`] at coarse steps
//! (per candidate, per batch of events), so a request answered 503 after `--timeout` also frees
//! its CPU, and `build-schedule --time-limit` can return the best schedule found so far.
//! Polling is one relaxed atomic load plus, when a time is set, one clock read.
//!
//! Reading an input has no deadline parameter (every reader would need one); instead a caller
//! that bounds the work runs the reading in [`scope`], and the readers call [`poll`] per element
//! (stage, task, line, edge) as they go. Outside a scope `poll` costs one thread-local read.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// A deadline that never expires unless given a time or cancelled through its flag.
#[derive(Clone, Debug, Default)]
pub struct Deadline {
    at: Option<Instant>,
    cancel: Option<Arc<AtomicBool>>,
    /// What the limit was, for messages ("after 10s").
    limit: Option<Duration>,
}

impl Deadline {
    /// No limit at all.
    pub fn none() -> Deadline {
        Deadline::default()
    }

    /// Expires `limit` from now.
    pub fn after(limit: Duration) -> Deadline {
        Deadline { at: Instant::now().checked_add(limit), cancel: None, limit: Some(limit) }
    }

    /// Also expires as soon as `flag` is set (by a watchdog or a dropped request).
    pub fn with_cancel(mut self, flag: Arc<AtomicBool>) -> Deadline {
        self.cancel = Some(flag);
        self
    }

    /// A flag that cancels this deadline (and every clone of it) when set.
    pub fn cancel_flag(&mut self) -> Arc<AtomicBool> {
        self.cancel.get_or_insert_with(|| Arc::new(AtomicBool::new(false))).clone()
    }

    /// True when the work should stop now.
    pub fn expired(&self) -> bool {
        if let Some(flag) = &self.cancel {
            if flag.load(Ordering::Relaxed) {
                return true;
            }
        }
        matches!(self.at, Some(at) if Instant::now() >= at)
    }

    /// True when neither a time nor a flag is set (the check can be skipped).
    pub fn is_unbounded(&self) -> bool {
        self.at.is_none() && self.cancel.is_none()
    }

    /// `Err(Error::TimedOut)` once expired.
    pub fn check(&self, what: &str) -> Result<()> {
        if self.expired() {
            return Err(Error::TimedOut { what: what.to_string(), limit: self.limit });
        }
        Ok(())
    }
}

thread_local! {
    /// The deadline of the work this thread is doing for a [`scope`], if any.
    static AMBIENT: RefCell<Option<Deadline>> = const { RefCell::new(None) };
    /// Calls of [`poll`] since the clock was last read.
    static POLLS: Cell<u32> = const { Cell::new(0) };
}

#[cfg(test)]
thread_local! {
    /// Calls of [`poll`] on this thread, for the tests that readers poll per element.
    static TOTAL_POLLS: Cell<u64> = const { Cell::new(0) };
}

/// Polls between clock reads: a few microseconds of reading at most, so that a cancelled read
/// stops within microseconds while polling stays invisible in the readers' profiles.
const POLL_EVERY: u32 = 256;

/// Runs `f` with `deadline` as this thread's ambient deadline, the one [`poll`] checks: the
/// readers inside `f` stop with [`Error::TimedOut`] soon after it expires or is cancelled. The
/// previous ambient deadline is restored afterwards (also when `f` panics).
pub fn scope<T>(deadline: &Deadline, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<Deadline>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            AMBIENT.with(|a| *a.borrow_mut() = previous);
        }
    }
    let previous = AMBIENT.with(|a| a.replace(Some(deadline.clone())));
    let _restore = Restore(previous);
    POLLS.with(|p| p.set(0));
    f()
}

/// `Err(Error::TimedOut)` once the ambient deadline of a [`scope`] has expired (checked every
/// 256th call, and at the first); `Ok` outside a scope. Readers call it per element.
pub fn poll() -> Result<()> {
    #[cfg(test)]
    TOTAL_POLLS.with(|t| t.set(t.get() + 1));
    let due = POLLS.with(|p| {
        let n = p.get();
        p.set(if n + 1 == POLL_EVERY { 0 } else { n + 1 });
        n == 0
    });
    if !due {
        return Ok(());
    }
    AMBIENT.with(|a| match &*a.borrow() {
        Some(d) => d.check("reading the input"),
        None => Ok(()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unbounded_never_expires_and_zero_expires_at_once() {
        assert!(!Deadline::none().expired());
        assert!(Deadline::none().check("x").is_ok());
        let d = Deadline::after(Duration::ZERO);
        assert!(d.expired());
        let msg = d.check("the search").unwrap_err().to_string();
        assert!(msg.contains("the search") && msg.contains("0s"), "{msg}");
    }

    #[test]
    fn poll_sees_the_scope_and_only_the_scope() {
        assert!(poll().is_ok());
        let mut d = Deadline::after(Duration::from_secs(3600));
        let flag = d.cancel_flag();
        let polls = scope(&d, || {
            (0..10 * POLL_EVERY).map(|_| poll()).position(|r| r.is_err()).map_or(Ok(()), |_| Err(()))?;
            flag.store(true, Ordering::Relaxed);
            // Within POLL_EVERY polls of the cancellation.
            let stopped = (0..10 * POLL_EVERY).position(|_| poll().is_err());
            Ok::<_, ()>(stopped)
        });
        let stopped = polls.unwrap().expect("a cancelled scope stops the polls");
        assert!(stopped < POLL_EVERY as usize, "{stopped}");
        // Outside the scope again: nothing to stop.
        assert!((0..2 * POLL_EVERY).all(|_| poll().is_ok()));
        let stopped = scope(&Deadline::after(Duration::ZERO), poll).unwrap_err();
        // Not an error of the input: naming the file or line does not wrap it.
        let stopped = stopped.at_line(3).in_file(std::path::Path::new("dag.json"));
        assert!(matches!(stopped, Error::TimedOut { .. }), "{stopped:?}");
        assert_eq!(stopped.to_string(), "reading the input stopped: time limit of 0s reached");
    }

    /// Every reader the service runs polls the ambient deadline per element, and an expired
    /// deadline stops the reading. Building the DAG polls twice per stage; the readers poll per
    /// stage, task, node, edge or element on top (the minimum counts below, for 1,000 of each).
    #[test]
    fn every_reader_polls_the_scope() {
        use crate::formats::{parse_dags, Format, LoadOptions};
        let n = 1000;
        let list = |f: &dyn Fn(usize) -> String, sep: &str| (0..n).map(f).collect::<Vec<_>>().join(sep);
        let native = format!(
            r#"{{"resources": ["cpu"], "stages": [{}]}}"#,
            list(
                &|i| format!(
                    r#"{{"id": "s{i}", "tasks": 1, "duration": 1, "parents": [{}]}}"#,
                    if i > 0 { format!(r#""s{}""#, i - 1) } else { String::new() }
                ),
                ", "
            )
        );
        let wfcommons = format!(
            r#"{{"name": "w", "schemaVersion": "1.4", "workflow": {{"tasks": [{}]}}}}"#,
            list(
                &|i| format!(
                    r#"{{"name": "t{i}", "id": "t{i}", "category": "c", "type": "compute", "parents": [], "files": [], "runtimeInSeconds": 1, "cores": 1}}"#
                ),
                ", "
            )
        );
        let dax = format!(
            r#"<adag name="d">{}</adag>"#,
            list(&|i| format!(r#"<job id="j{i}" name="x" runtime="1"/>"#), "\n")
        );
        let dot = format!("digraph d {{\n{}\n}}", list(&|i| format!("n{i} [runtime=1]"), "\n"));
        let stg = format!("{n}\n0 0 0\n{}\n{} 0 1 {n}\n", list(&|i| format!("{} 1 1 {i}", i + 1), "\n"), n + 1);
        let hetero = format!(
            r#"{{"tasks": [{}], "nodes": [{{"id": "m0"}}], "links": 1}}"#,
            list(&|i| format!(r#"{{"id": "t{i}", "cost": 1}}"#), ", ")
        );
        for (format, per_element, text) in [
            (Format::Native, 3, native),
            (Format::Wfcommons, 3, wfcommons),
            (Format::Dax, 4, dax),
            (Format::Dot, 4, dot),
            (Format::Stg, 4, stg),
            (Format::Hetero, 3, hetero),
        ] {
            let opts = LoadOptions { format: Some(format), ..LoadOptions::default() };
            let before = TOTAL_POLLS.with(Cell::get);
            let dags = scope(&Deadline::after(Duration::from_secs(3600)), || parse_dags(&text, "x", &opts))
                .unwrap_or_else(|e| panic!("{format:?}: {e}"));
            assert_eq!(dags[0].len(), n, "{format:?}");
            let polls = TOTAL_POLLS.with(Cell::get) - before;
            assert!(polls >= per_element * n as u64, "{format:?}: {polls} polls for {n} elements");
            let e = scope(&Deadline::after(Duration::ZERO), || parse_dags(&text, "x", &opts)).unwrap_err();
            assert!(matches!(e, Error::TimedOut { .. }), "{format:?}: {e}");
            // Outside a scope nothing stops it.
            assert_eq!(parse_dags(&text, "x", &opts).unwrap()[0].len(), n);
        }
    }

    #[test]
    fn the_flag_cancels_every_clone() {
        let mut d = Deadline::after(Duration::from_secs(3600));
        let flag = d.cancel_flag();
        let copy = d.clone();
        assert!(!copy.expired());
        flag.store(true, Ordering::Relaxed);
        assert!(copy.expired() && d.expired());
    }
}
