//! Rate limits: a token bucket per key and per project, in memory.
//!
//! A bucket holds up to `burst` tokens and refills at `per_sec` tokens a
//! second; a call takes one token from its key's bucket and one from its
//! project's, or is refused (429) if either is empty. Time is the server's
//! clock, so tests move it instead of sleeping.
//!
//! Several servers sharing a database each enforce `1/N` of every limit,
//! where `N` is the number of live servers their heartbeats show
//! ([`Limiter::set_servers`]). With requests spread evenly (a round-robin
//! load balancer) the sum stays at the limit; see docs/security.md for the
//! tolerance.

use std::{
    collections::HashMap,
    sync::{
        Mutex,
        atomic::{AtomicU32, Ordering},
    },
};

use jiff::Timestamp;
use onceq_store::RateLimit;

/// A refused call: retry after this many seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limited {
    /// Whole seconds until a token is back (at least 1).
    pub retry_after_secs: u64,
    /// Which limit refused it.
    pub scope: LimitScope,
}

/// Which bucket was empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitScope {
    /// The key's.
    Key,
    /// The project's.
    Project,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at_micros: i64,
    /// When it will be full again if left alone: then it can be forgotten.
    full_at_micros: i64,
}

#[derive(Debug, Default)]
struct Buckets {
    keys: HashMap<String, Bucket>,
    projects: HashMap<String, Bucket>,
    /// Projects' own limits, from the last refresh.
    project_limits: HashMap<String, RateLimit>,
}

/// This process's rate limiter.
#[derive(Debug)]
pub struct Limiter {
    buckets: Mutex<Buckets>,
    servers: AtomicU32,
}

impl Default for Limiter {
    fn default() -> Self {
        Self {
            buckets: Mutex::default(),
            servers: AtomicU32::new(1),
        }
    }
}

/// A limit as this process enforces it: its share of the configured one.
fn share(limit: RateLimit, servers: u32) -> Option<(f64, f64)> {
    if limit.per_sec <= 0.0 {
        return None;
    }
    let n = f64::from(servers.max(1));
    // Never below one token, or a small burst split N ways would refuse
    // everything.
    Some((limit.per_sec / n, (f64::from(limit.burst) / n).max(1.0)))
}

/// Refills `b` to `now` and says whether a token is there; if not, how
/// long until one is.
fn check(b: &mut Bucket, (rate, cap): (f64, f64), now_micros: i64) -> Result<(), u64> {
    let elapsed = (now_micros - b.at_micros).max(0) as f64 / 1e6;
    b.tokens = (b.tokens + elapsed * rate).min(cap);
    b.at_micros = b.at_micros.max(now_micros);
    // After the token this call may take.
    let refill_secs = ((cap - b.tokens + 1.0) / rate).min(1e9);
    b.full_at_micros = b.at_micros + (refill_secs * 1e6) as i64;
    if b.tokens >= 1.0 {
        Ok(())
    } else {
        Err((((1.0 - b.tokens) / rate).ceil() as u64).max(1))
    }
}

impl Limiter {
    /// How many servers share the limits (at least 1).
    pub fn set_servers(&self, n: u32) {
        self.servers.store(n.max(1), Ordering::Relaxed);
    }

    /// The number of servers last seen.
    pub fn servers(&self) -> u32 {
        self.servers.load(Ordering::Relaxed)
    }

    /// Replaces the projects' own limits, and forgets buckets that are
    /// full again at `now` (a fresh bucket is full: nothing is lost).
    pub fn refresh(&self, limits: HashMap<String, RateLimit>, now: Timestamp) {
        let now = now.as_microsecond();
        let mut b = self.lock();
        b.project_limits = limits;
        b.keys.retain(|_, k| k.full_at_micros > now);
        b.projects.retain(|_, p| p.full_at_micros > now);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Buckets> {
        self.buckets.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes a token from the key's and the project's bucket, or neither.
    /// `key_limit` and `project_default` are `None` for "unlimited".
    pub fn admit(
        &self,
        key_id: &str,
        key_limit: Option<RateLimit>,
        project: &str,
        project_default: Option<RateLimit>,
        now: Timestamp,
    ) -> Result<(), Limited> {
        let servers = self.servers();
        let now = now.as_microsecond();
        let mut guard = self.lock();
        let b = &mut *guard;
        let project_limit = b.project_limits.get(project).copied().or(project_default);
        let key_share = key_limit.and_then(|l| share(l, servers));
        let project_share = project_limit.and_then(|l| share(l, servers));
        if key_share.is_none() && project_share.is_none() {
            return Ok(());
        }
        let fresh = |cap: f64| Bucket {
            tokens: cap,
            at_micros: now,
            full_at_micros: now,
        };
        if let Some(s) = key_share {
            let bucket = bucket(&mut b.keys, key_id, fresh(s.1));
            check(bucket, s, now).map_err(|secs| Limited {
                retry_after_secs: secs,
                scope: LimitScope::Key,
            })?;
        }
        if let Some(s) = project_share {
            let bucket = bucket(&mut b.projects, project, fresh(s.1));
            check(bucket, s, now).map_err(|secs| Limited {
                retry_after_secs: secs,
                scope: LimitScope::Project,
            })?;
            bucket.tokens -= 1.0;
        }
        if key_share.is_some()
            && let Some(k) = b.keys.get_mut(key_id)
        {
            k.tokens -= 1.0;
        }
        Ok(())
    }
}

fn bucket<'a>(map: &'a mut HashMap<String, Bucket>, name: &str, fresh: Bucket) -> &'a mut Bucket {
    if !map.contains_key(name) {
        map.insert(name.to_owned(), fresh);
    }
    map.get_mut(name).expect("just inserted")
}

#[cfg(test)]
mod tests {
    use jiff::SignedDuration;

    use super::*;

    fn rl(per_sec: f64, burst: u32) -> Option<RateLimit> {
        Some(RateLimit { per_sec, burst })
    }

    #[test]
    fn burst_then_refill() {
        let l = Limiter::default();
        let t0 = Timestamp::from_second(1_800_000_000).unwrap();
        for _ in 0..3 {
            l.admit("k", rl(2.0, 3), "p", None, t0).unwrap();
        }
        let refused = l.admit("k", rl(2.0, 3), "p", None, t0).unwrap_err();
        assert_eq!(refused.scope, LimitScope::Key);
        assert_eq!(refused.retry_after_secs, 1);
        let t1 = t0 + SignedDuration::from_millis(500);
        l.admit("k", rl(2.0, 3), "p", None, t1).unwrap();
        assert!(l.admit("k", rl(2.0, 3), "p", None, t1).is_err());
        // another key is not affected
        l.admit("k2", rl(2.0, 3), "p", None, t1).unwrap();
    }

    #[test]
    fn project_limit_spans_keys_and_refusal_takes_nothing() {
        let l = Limiter::default();
        let t0 = Timestamp::from_second(1_800_000_000).unwrap();
        l.admit("a", rl(100.0, 100), "p", rl(1.0, 2), t0).unwrap();
        l.admit("b", None, "p", rl(1.0, 2), t0).unwrap();
        let refused = l
            .admit("a", rl(100.0, 100), "p", rl(1.0, 2), t0)
            .unwrap_err();
        assert_eq!(refused.scope, LimitScope::Project);
        // slow refill: 0.1/s
        let mut own = HashMap::new();
        own.insert(
            "p".to_owned(),
            RateLimit {
                per_sec: 0.1,
                burst: 1,
            },
        );
        l.refresh(own, t0);
        let t1 = t0 + SignedDuration::from_secs(5);
        let refused = l.admit("b", None, "p", rl(1.0, 2), t1).unwrap_err();
        assert_eq!(refused.retry_after_secs, 5);
        // per_sec 0: unlimited
        let mut own = HashMap::new();
        own.insert(
            "p".to_owned(),
            RateLimit {
                per_sec: 0.0,
                burst: 1,
            },
        );
        l.refresh(own, t1);
        l.admit("b", None, "p", rl(1.0, 2), t1).unwrap();
    }

    #[test]
    fn servers_share_the_limit() {
        let l = Limiter::default();
        l.set_servers(2);
        let t0 = Timestamp::from_second(1_800_000_000).unwrap();
        for _ in 0..5 {
            l.admit("k", rl(10.0, 10), "p", None, t0).unwrap();
        }
        assert!(l.admit("k", rl(10.0, 10), "p", None, t0).is_err());
        // 5/s each: one second brings 5 back
        let t1 = t0 + SignedDuration::from_secs(1);
        for _ in 0..5 {
            l.admit("k", rl(10.0, 10), "p", None, t1).unwrap();
        }
        assert!(l.admit("k", rl(10.0, 10), "p", None, t1).is_err());
        // a refresh keeps the half-empty bucket
        l.refresh(HashMap::new(), t1);
        assert!(l.admit("k", rl(10.0, 10), "p", None, t1).is_err());
        // and forgets it once it is full again
        l.refresh(HashMap::new(), t1 + SignedDuration::from_secs(3));
        assert!(l.lock().keys.is_empty());
    }
}
