//! When long work must give up: a wall-clock deadline and a flag another thread can raise.
//!
//! The offline search, the simulator and the service's jobs poll a [`Deadline`] at coarse steps
//! (per candidate, per batch of events), so a request answered 503 after `--timeout` also frees
//! its CPU, and `build-schedule --time-limit` can return the best schedule found so far.
//! Polling is one relaxed atomic load plus, when a time is set, one clock read.

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
    fn the_flag_cancels_every_clone() {
        let mut d = Deadline::after(Duration::from_secs(3600));
        let flag = d.cancel_flag();
        let copy = d.clone();
        assert!(!copy.expired());
        flag.store(true, Ordering::Relaxed);
        assert!(copy.expired() && d.expired());
    }
}
