//! One WARN per database outage, not a line per failed request.
//!
//! While the store is unreachable every request answers 503 and every
//! background pass fails; logging each would bury the one line that says
//! what happened. The first failure of an outage is logged at WARN with its
//! cause; later ones at DEBUG. An outage is over once no failure has been
//! seen for [`QUIET`]: the next failure after that starts a new outage and
//! is logged at WARN again.

use std::{
    sync::{
        Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

/// Failure-free time that ends an outage.
pub const QUIET: Duration = Duration::from_secs(10);

/// The outage state of one process.
#[derive(Debug, Default)]
pub struct Outage {
    /// Fast path: no outage seen yet (skips the lock).
    seen: AtomicBool,
    last_failure: Mutex<Option<Instant>>,
}

static PROCESS: Outage = Outage {
    seen: AtomicBool::new(false),
    last_failure: Mutex::new(None),
};

/// Reports a store-unavailable failure of `what` (a route, a service).
pub fn unavailable(what: &str, cause: &dyn std::fmt::Display) {
    if PROCESS.is_new(Instant::now()) {
        tracing::warn!(%what, %cause, quiet_after = ?QUIET,
            "store unavailable: answering 503 until it is back; further failures are logged at DEBUG until it has been quiet");
    } else {
        tracing::debug!(%what, %cause, "store unavailable");
    }
}

impl Outage {
    /// Records a failure at `now`; true when it starts a new outage.
    pub fn is_new(&self, now: Instant) -> bool {
        self.seen.store(true, Ordering::Relaxed);
        let mut last = self.last_failure.lock().unwrap_or_else(|e| e.into_inner());
        let new = last.is_none_or(|at| now.saturating_duration_since(at) >= QUIET);
        *last = Some(now);
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_outage_is_one_new_failure_until_it_has_been_quiet() {
        let o = Outage::default();
        let t0 = Instant::now();
        assert!(o.is_new(t0));
        for s in 1..30 {
            assert!(!o.is_new(t0 + Duration::from_secs(s)), "second {s}");
        }
        // Quiet for QUIET: the next failure is another outage.
        assert!(o.is_new(t0 + Duration::from_secs(29) + QUIET));
    }
}
