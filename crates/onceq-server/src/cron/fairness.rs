//! How many cron runs a project may fire per second on this server.
//!
//! 2 000 every-second schedules in one project used to take the firing
//! loop whole: ~350 runs/s fired instead of 2 000, every run 5–7 s late,
//! and another project's schedule up to 7.4 s late. Two things now keep
//! one project from delaying another:
//!
//! - the store hands out due schedules **in turns across projects** (each
//!   project's earliest due first, then each one's second, …; the store's
//!   `cron_due` with `per_project`), so a project with one due schedule is
//!   in the first turn of every scan whatever another project has due;
//! - each project has a **token bucket** here of
//!   `cron_project_runs_per_second` runs per second (burst the same): a run
//!   of a project whose bucket is empty is left due, not fired, and fires
//!   at a later pass, its missed ticks collapsing into one as they do after
//!   downtime (docs/cron.md). The loop's time goes to other projects.
//!
//! The buckets are per server: N servers sharing a database fire up to N
//! times the rate for a project, every run still once.

use std::{
    collections::HashMap,
    sync::{
        Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use jiff::Timestamp;

/// Buckets kept before full ones (projects that have not fired lately)
/// are forgotten.
const SWEEP_AT: usize = 1024;

/// The per-project firing buckets of this server.
#[derive(Debug)]
pub struct CronFairness {
    /// Runs per second (and burst); `None`: no cap.
    per_sec: Option<u32>,
    buckets: Mutex<HashMap<String, Bucket>>,
    deferred: AtomicU64,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Timestamp,
}

impl CronFairness {
    /// `per_sec` runs per second per project (0: no cap).
    pub fn new(per_sec: u32) -> Self {
        Self {
            per_sec: (per_sec > 0).then_some(per_sec),
            buckets: Mutex::default(),
            deferred: AtomicU64::new(0),
        }
    }

    /// The cap (runs per second per project), `None` for none.
    pub fn per_sec(&self) -> Option<u32> {
        self.per_sec
    }

    /// Takes one run from `project`'s bucket at `now`; false (and counted
    /// as deferred) when it is empty.
    pub fn take(&self, project: &str, now: Timestamp) -> bool {
        let Some(rate) = self.per_sec else {
            return true;
        };
        let burst = f64::from(rate);
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() >= SWEEP_AT && !buckets.contains_key(project) {
            buckets.retain(|_, b| refilled(*b, rate, now) < burst);
        }
        let bucket = buckets.entry(project.to_owned()).or_insert(Bucket {
            tokens: burst,
            at: now,
        });
        let tokens = refilled(*bucket, rate, now);
        // Never back in time: a pass that read its `now` before another's
        // must not credit the same interval twice.
        let at = bucket.at.max(now);
        if tokens >= 1.0 {
            *bucket = Bucket {
                tokens: tokens - 1.0,
                at,
            };
            true
        } else {
            *bucket = Bucket { tokens, at };
            self.deferred.fetch_add(1, Ordering::Relaxed);
            false
        }
    }

    /// How long until an empty bucket holds a run again.
    pub fn refill(&self) -> Option<Duration> {
        self.per_sec
            .map(|rate| Duration::from_secs_f64(1.0 / f64::from(rate)))
    }

    /// Runs left due because their project's bucket was empty, since start.
    pub fn deferred(&self) -> u64 {
        self.deferred.load(Ordering::Relaxed)
    }
}

/// The bucket's tokens at `now` (refilled since its last change, at most
/// the burst).
fn refilled(b: Bucket, rate: u32, now: Timestamp) -> f64 {
    let elapsed = now.duration_since(b.at).as_secs_f64().max(0.0);
    (b.tokens + elapsed * f64::from(rate)).min(f64::from(rate))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_gets_its_rate_and_no_more_others_theirs() {
        let f = CronFairness::new(3);
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let fired = (0..10).filter(|_| f.take("hostile", t0)).count();
        assert_eq!(fired, 3, "the burst, then nothing");
        assert!(f.take("victim", t0), "another project has its own bucket");
        let later = t0 + jiff::SignedDuration::from_secs(1);
        let fired = (0..10).filter(|_| f.take("hostile", later)).count();
        assert_eq!(fired, 3, "a second later, a second's worth");
        assert_eq!(f.deferred(), 14);
        // A pass whose `now` is older does not credit the second again.
        assert!(!f.take("hostile", t0));
        assert!(!f.take("hostile", later), "nothing refilled twice");
        assert!(CronFairness::new(0).take("any", t0), "0: no cap");
    }
}
