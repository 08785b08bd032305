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

thread_local! {
    /// Calls of [`poll`] on this thread, for the tests that readers poll per element.
    static TOTAL_POLLS: Cell<u64> = const { Cell::new(0) };
}

/// Calls of [`poll`] on this thread so far (the readers' tests count their polls with it).
#[doc(hidden)]
pub fn total_polls() -> u64 {
    TOTAL_POLLS.with(Cell::get)
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
