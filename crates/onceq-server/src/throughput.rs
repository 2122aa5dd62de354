//! Recent traffic per queue, for the dashboard's charts: how many messages
//! were published, acked, failed (nacked, or their lease expired) and
//! dead-lettered in each 10-second bucket of the last 15 minutes.
//!
//! Kept in memory, per process, and fed by the publish, ack and nack
//! handlers (push deliveries' included) and the lease reaper with one call
//! each: no database write per request. The cost on the hot path is
//! one hash, one uncontended-in-practice mutex of one of [`SHARDS`] shards
//! and four integer writes. Memory is bounded: at most [`MAX_QUEUES`] rings of
//! [`BUCKETS`] buckets; a ring idle for the whole window is dropped when its
//! shard needs room, and a queue that finds its shard full of active rings is
//! not charted (its depths, which come from the database, still show).
//!
//! With several server processes sharing one database, each process charts
//! only the traffic it served itself; depths and dead-letter counts come from
//! the database and are the same everywhere.

use std::{
    collections::HashMap,
    hash::{BuildHasher, RandomState},
    sync::{Mutex, PoisonError},
};

use jiff::Timestamp;

/// Seconds per bucket.
pub const BUCKET_SECS: i64 = 10;
/// Buckets per ring: 15 minutes.
pub const BUCKETS: usize = 90;
/// Shards of the map; a publish locks one.
pub const SHARDS: usize = 16;
/// Queues charted per process at most.
pub const MAX_QUEUES: usize = 10_000;

#[derive(Clone, Copy, Default)]
struct Bucket {
    /// Which 10-second slot of time this bucket counts (it is reused every
    /// `BUCKETS` slots; a stale slot reads as zero).
    slot: i64,
    published: u64,
    acked: u64,
    failed: u64,
    dead_lettered: u64,
}

struct Ring {
    buckets: [Bucket; BUCKETS],
    last_slot: i64,
}

#[derive(Default)]
struct Shard {
    queues: HashMap<String, HashMap<String, Ring>>,
    len: usize,
}

/// What one call counts on a queue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Messages stored by publishes (replays excluded).
    pub published: u64,
    /// Messages acked.
    pub acked: u64,
    /// Hand-outs that failed: nacks, and leases that expired (whether the
    /// message went back or to the dead-letter queue).
    pub failed: u64,
    /// Of those failures, the ones that dead-lettered the message.
    pub dead_lettered: u64,
}

/// Counts per bucket, oldest first; the last bucket is the current, still
/// filling one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Series {
    /// Messages stored by publishes (replays excluded).
    pub published: Vec<u64>,
    /// Messages acked.
    pub acked: Vec<u64>,
    /// Failed hand-outs (nacks and lease expiries).
    pub failed: Vec<u64>,
    /// Messages dead-lettered by a failed hand-out.
    pub dead_lettered: Vec<u64>,
}

impl Series {
    /// Sums of the last `n` buckets: (published, acked).
    pub fn recent(&self, n: usize) -> (u64, u64) {
        (tail(&self.published, n), tail(&self.acked, n))
    }

    /// Sums of the last `n` buckets: (failed, dead-lettered).
    pub fn recent_failures(&self, n: usize) -> (u64, u64) {
        (tail(&self.failed, n), tail(&self.dead_lettered, n))
    }
}

fn tail(v: &[u64], n: usize) -> u64 {
    v.iter().rev().take(n).sum()
}

/// Per-queue rings of recent traffic (see the module docs).
pub struct Throughput {
    shards: Vec<Mutex<Shard>>,
    hasher: RandomState,
}

impl Default for Throughput {
    fn default() -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            hasher: RandomState::new(),
        }
    }
}

fn slot_of(now: Timestamp) -> i64 {
    now.as_second().div_euclid(BUCKET_SECS)
}

impl Throughput {
    /// Counts `n` messages published to the queue at `now`.
    pub fn published(&self, project: &str, queue: &str, now: Timestamp, n: u64) {
        let counts = Counts {
            published: n,
            ..Counts::default()
        };
        self.record(project, queue, now, counts);
    }

    /// Counts `n` messages acked on the queue at `now`.
    pub fn acked(&self, project: &str, queue: &str, now: Timestamp, n: u64) {
        let counts = Counts {
            acked: n,
            ..Counts::default()
        };
        self.record(project, queue, now, counts);
    }

    /// Counts `failed` failed hand-outs on the queue at `now`, of which
    /// `dead_lettered` dead-lettered their message.
    pub fn failed(
        &self,
        project: &str,
        queue: &str,
        now: Timestamp,
        failed: u64,
        dead_lettered: u64,
    ) {
        let counts = Counts {
            failed,
            dead_lettered,
            ..Counts::default()
        };
        self.record(project, queue, now, counts);
    }

    fn shard(&self, project: &str, queue: &str) -> std::sync::MutexGuard<'_, Shard> {
        let h = self.hasher.hash_one((project, queue));
        self.shards[(h as usize) % SHARDS]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn record(&self, project: &str, queue: &str, now: Timestamp, counts: Counts) {
        if counts == Counts::default() {
            return;
        }
        let slot = slot_of(now);
        let mut shard = self.shard(project, queue);
        let known = shard
            .queues
            .get(project)
            .is_some_and(|queues| queues.contains_key(queue));
        if !known {
            if shard.len >= MAX_QUEUES / SHARDS && shard.evict_idle(slot) == 0 {
                return;
            }
            shard.len += 1;
            shard.queues.entry(project.to_owned()).or_default().insert(
                queue.to_owned(),
                Ring {
                    buckets: [Bucket::default(); BUCKETS],
                    last_slot: slot,
                },
            );
        }
        // Known queues (every call but a queue's first) allocate nothing.
        let Some(ring) = shard
            .queues
            .get_mut(project)
            .and_then(|queues| queues.get_mut(queue))
        else {
            return;
        };
        let bucket = &mut ring.buckets[slot.rem_euclid(BUCKETS as i64) as usize];
        if bucket.slot != slot {
            *bucket = Bucket {
                slot,
                ..Bucket::default()
            };
        }
        bucket.published += counts.published;
        bucket.acked += counts.acked;
        bucket.failed += counts.failed;
        bucket.dead_lettered += counts.dead_lettered;
        ring.last_slot = ring.last_slot.max(slot);
    }

    /// The queue's last [`BUCKETS`] buckets up to `now` (zeros when this
    /// process saw no traffic on it).
    pub fn series(&self, project: &str, queue: &str, now: Timestamp) -> Series {
        let end = slot_of(now);
        let mut series = Series {
            published: vec![0; BUCKETS],
            acked: vec![0; BUCKETS],
            failed: vec![0; BUCKETS],
            dead_lettered: vec![0; BUCKETS],
        };
        let shard = self.shard(project, queue);
        let Some(ring) = shard.queues.get(project).and_then(|q| q.get(queue)) else {
            return series;
        };
        for (i, slot) in (end - BUCKETS as i64 + 1..=end).enumerate() {
            let b = &ring.buckets[slot.rem_euclid(BUCKETS as i64) as usize];
            if b.slot == slot {
                series.published[i] = b.published;
                series.acked[i] = b.acked;
                series.failed[i] = b.failed;
                series.dead_lettered[i] = b.dead_lettered;
            }
        }
        series
    }
}

impl Shard {
    /// Drops the rings that saw nothing in the whole window; how many.
    fn evict_idle(&mut self, now_slot: i64) -> usize {
        let before = self.len;
        for queues in self.queues.values_mut() {
            queues.retain(|_, ring| ring.last_slot > now_slot - BUCKETS as i64);
        }
        self.queues.retain(|_, queues| !queues.is_empty());
        self.len = self.queues.values().map(HashMap::len).sum();
        before - self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(secs: i64) -> Timestamp {
        Timestamp::from_second(1_900_000_000 + secs).unwrap()
    }

    #[test]
    fn counts_land_in_their_bucket_and_age_out() {
        let tp = Throughput::default();
        tp.published("p", "q", t(0), 3);
        tp.published("p", "q", t(9), 2);
        tp.acked("p", "q", t(10), 4);
        tp.published("p", "other", t(10), 7);
        tp.published("p2", "q", t(10), 9);

        let s = tp.series("p", "q", t(10));
        assert_eq!(s.published.len(), BUCKETS);
        assert_eq!(&s.published[BUCKETS - 2..], &[5, 0]);
        assert_eq!(&s.acked[BUCKETS - 2..], &[0, 4]);
        assert_eq!(s.recent(6), (5, 4));

        // 15 minutes later the first bucket has left the window...
        let later = t(10 * BUCKETS as i64);
        let s = tp.series("p", "q", later);
        assert_eq!(s.published.iter().sum::<u64>(), 0);
        assert_eq!(s.acked[0], 4);
        // ...and a bucket reused by a new slot starts from zero.
        tp.published("p", "q", later, 1);
        assert_eq!(tp.series("p", "q", later).acked[BUCKETS - 1], 0);
        assert_eq!(tp.series("p", "q", later).published[BUCKETS - 1], 1);
        assert_eq!(tp.series("nobody", "q", later).published, vec![0; BUCKETS]);
    }

    #[test]
    fn failures_and_dead_letters_are_counted_apart() {
        let tp = Throughput::default();
        tp.failed("p", "q", t(0), 1, 0);
        tp.failed("p", "q", t(5), 3, 2);
        tp.acked("p", "q", t(5), 1);
        let s = tp.series("p", "q", t(5));
        assert_eq!(s.failed[BUCKETS - 1], 4);
        assert_eq!(s.dead_lettered[BUCKETS - 1], 2);
        assert_eq!(s.recent_failures(6), (4, 2));
        assert_eq!(s.recent(6), (0, 1));
        // Nothing to count creates no ring.
        tp.failed("p", "idle", t(5), 0, 0);
        let charted = |q: &str| {
            tp.shards.iter().any(|sh| {
                sh.lock()
                    .unwrap()
                    .queues
                    .get("p")
                    .is_some_and(|p| p.contains_key(q))
            })
        };
        assert!(charted("q"));
        assert!(!charted("idle"));
    }

    #[test]
    fn memory_is_bounded_and_idle_rings_make_room() {
        let tp = Throughput::default();
        let total =
            |tp: &Throughput| -> usize { tp.shards.iter().map(|s| s.lock().unwrap().len).sum() };
        for i in 0..MAX_QUEUES * 2 {
            tp.published("p", &format!("q{i}"), t(0), 1);
        }
        assert!(total(&tp) <= MAX_QUEUES, "{}", total(&tp));
        // Once the old ones have been idle for the whole window, new queues
        // are charted again.
        let later = t(10 * BUCKETS as i64 + 10);
        for i in 0..100 {
            tp.published("p", &format!("new{i}"), later, 1);
        }
        for i in 0..100 {
            assert_eq!(tp.series("p", &format!("new{i}"), later).recent(1), (1, 0));
        }
        assert!(total(&tp) <= MAX_QUEUES);
    }
}
