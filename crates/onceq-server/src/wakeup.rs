//! Wakes long-polling consumers when their queue may have work.
//!
//! Queues hash onto a fixed set of shards, each a [`Notify`]: memory stays
//! bounded whatever queue names clients invent, and a wake-up on a shard
//! only costs the other queues of that shard a spurious re-check.
//! Wake-ups are local to this process; consumers also re-check the store
//! every `long_poll_recheck` to see publishes made on other servers.

use std::hash::{BuildHasher, RandomState};

use tokio::sync::Notify;

const SHARDS: usize = 64;

/// A fixed set of wake-up channels keyed by (project, queue).
pub struct Wakeups {
    shards: Vec<Notify>,
    hasher: RandomState,
}

impl Default for Wakeups {
    fn default() -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Notify::new()).collect(),
            hasher: RandomState::new(),
        }
    }
}

impl Wakeups {
    /// The channel of a queue.
    pub fn channel(&self, project: &str, queue: &str) -> &Notify {
        let h = self.hasher.hash_one((project, queue));
        &self.shards[(h as usize) % SHARDS]
    }

    /// Wakes every consumer waiting on the queue's shard.
    pub fn wake(&self, project: &str, queue: &str) {
        self.channel(project, queue).notify_waiters();
    }
}
