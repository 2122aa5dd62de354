//! Key lookups served from memory, for both backends; what keeps them
//! exact is each backend's (`postgres/key_cache.rs`, `sqlite/key_cache.rs`).
//!
//! Every authenticated request looks its key up: without a cache that is a
//! read of the store on every call, the same answer each time. So found
//! keys are kept here and dropped, all of them, when the keys change. The
//! process that made a change drops its cache before its call returns;
//! other processes learn of it from their backend's signal (a notification,
//! a marker file) or, at worst, from a count of changes that a trigger on
//! the keys table keeps and that is polled every [`POLL_EVERY`].
//!
//! The cache answers only while it is vouched for: until [`HEARD_WITHIN`]
//! after the last sign that nothing was missed (a listener hearing its own
//! ping, or the start of a poll of the change count that answered; a poll
//! that starts after a change commits sees it). While no sign comes,
//! lookups go to the store, and the cache starts empty again once one
//! does. So a change is seen by every process within `HEARD_WITHIN` of its
//! commit at worst.
//!
//! A lookup that raced a change (its read ran before the change committed,
//! its answer came after the clear) is not cached: every clear bumps a
//! generation, and an answer is kept only if the generation it started
//! under is still current.
//!
//! Unknown keys are never cached (a client sending random keys must not be
//! able to fill memory); the cache holds at most [`MAX_KEYS`] entries and is
//! emptied when full.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::KeyRecord;

/// How long one sign that nothing was missed lets the cache answer: the
/// bound on how stale a cached key can be.
pub(crate) const HEARD_WITHIN: Duration = Duration::from_millis(1500);

/// How often the change count is read: a third of [`HEARD_WITHIN`], so one
/// slow or lost poll does not yet turn the cache off.
pub(crate) const POLL_EVERY: Duration = Duration::from_millis(500);

/// Cached keys at most; a full cache is emptied (keys are few in practice).
const MAX_KEYS: usize = 10_000;

/// Found keys by hash, and whether they may be trusted right now.
#[derive(Debug, Default)]
pub(crate) struct KeyCache {
    keys: Mutex<HashMap<Vec<u8>, KeyRecord>>,
    /// Bumped by every clear: an answer read under an older generation may
    /// predate a change and is not kept.
    generation: AtomicU64,
    /// Until when (ms after `epoch`) the cache may answer.
    live_until: AtomicU64,
    epoch: OnceLock<Instant>,
    /// Signs heard (pings, polls answered) so far (for tests).
    heard: AtomicU64,
}

/// Stops the task that keeps a cache exact when dropped (with the store).
#[derive(Debug)]
pub(crate) struct Watch(tokio::task::AbortHandle);

impl Watch {
    pub(crate) fn new(task: tokio::task::AbortHandle) -> Self {
        Self(task)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Where a lookup stands: served from memory, or to be read and offered back.
enum Lookup {
    Hit(KeyRecord),
    Miss(Ticket),
}

/// A miss's permission to cache what the store answers.
struct Ticket {
    generation: u64,
}

impl KeyCache {
    /// A cache kept by polling `read` (the keys' change count) every
    /// [`POLL_EVERY`]; polling stops when the returned guard is dropped.
    pub(crate) fn polled<F, Fut, E>(read: F) -> (Arc<KeyCache>, Watch)
    where
        F: Fn() -> Fut + Send + 'static,
        Fut: Future<Output = Result<i64, E>> + Send + 'static,
        E: std::fmt::Debug + 'static,
    {
        let cache = Arc::new(KeyCache::default());
        let task = tokio::spawn(poll_changes(read, cache.clone()));
        (cache, Watch::new(task.abort_handle()))
    }

    /// Milliseconds since this cache's first look at the clock.
    pub(crate) fn now_ms(&self) -> u64 {
        let epoch = self.epoch.get_or_init(Instant::now);
        u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Whether the cache is vouched for right now.
    fn live(&self) -> bool {
        self.now_ms() < self.live_until.load(Ordering::SeqCst)
    }

    /// A sign that nothing was missed up to `since` (ms after `epoch`): the
    /// cache may answer until [`HEARD_WITHIN`] after it. A cache that had
    /// stepped aside starts empty (a change may have gone unseen).
    pub(crate) fn heard(&self, since: u64) {
        self.heard.fetch_add(1, Ordering::Relaxed);
        if !self.live() {
            self.clear();
        }
        let until = since + u64::try_from(HEARD_WITHIN.as_millis()).unwrap_or(0);
        self.live_until.fetch_max(until, Ordering::SeqCst);
    }

    /// The key with this hash: from memory if the cache may answer, else
    /// from `read` (kept for the next lookup if nothing changed meanwhile).
    pub(crate) async fn lookup<E>(
        &self,
        key_hash: &[u8],
        read: impl Future<Output = Result<Option<KeyRecord>, E>>,
    ) -> Result<Option<KeyRecord>, E> {
        let ticket = match self.get(key_hash) {
            Lookup::Hit(found) => return Ok(Some(found)),
            Lookup::Miss(ticket) => ticket,
        };
        let found = read.await?;
        if let Some(record) = &found {
            self.offer(ticket, key_hash, record);
        }
        Ok(found)
    }

    /// The key with this hash, if the cache may answer.
    fn get(&self, key_hash: &[u8]) -> Lookup {
        // Read the generation first: a clear after this point makes the
        // ticket stale, whatever the map held.
        let generation = self.generation.load(Ordering::SeqCst);
        if self.live()
            && let Some(found) = self.lock().get(key_hash)
        {
            return Lookup::Hit(found.clone());
        }
        Lookup::Miss(Ticket { generation })
    }

    /// Keeps `record`, read from the store after `ticket` was issued,
    /// unless the keys changed (or the cache stepped aside) since.
    fn offer(&self, ticket: Ticket, key_hash: &[u8], record: &KeyRecord) {
        let mut keys = self.lock();
        // Checked under the lock that `clear` takes, so a clear either
        // happened before (stale ticket) or empties the map after.
        if !self.live() || self.generation.load(Ordering::SeqCst) != ticket.generation {
            return;
        }
        if keys.len() >= MAX_KEYS {
            keys.clear();
        }
        keys.insert(key_hash.to_vec(), record.clone());
    }

    /// Drops every cached key: when the keys changed, and when this
    /// process changed one (it must not wait for a signal to see it).
    pub(crate) fn clear(&self) {
        let mut keys = self.lock();
        self.generation.fetch_add(1, Ordering::SeqCst);
        keys.clear();
    }

    /// What vouched for the cache is gone (a listener lost its connection):
    /// nothing cached may outlive a missed change.
    pub(crate) fn deaf(&self) {
        self.live_until.store(0, Ordering::SeqCst);
        self.clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Vec<u8>, KeyRecord>> {
        // A panic while holding the lock cannot leave the map half-changed
        // in a way that matters: at worst it lacks an entry.
        self.keys.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether lookups are being served from memory (for tests).
    #[cfg(test)]
    pub(crate) fn is_live(&self) -> bool {
        self.live()
    }

    /// Signs heard so far (for tests).
    #[cfg(test)]
    pub(crate) fn pings_heard(&self) -> u64 {
        self.heard.load(Ordering::Relaxed)
    }
}

/// Reads the change count every [`POLL_EVERY`] until aborted: a count
/// other than the last one seen clears the cache, and each answer vouches
/// for the cache from the poll's start.
async fn poll_changes<F, Fut, E>(read: F, cache: Arc<KeyCache>)
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<i64, E>>,
    E: std::fmt::Debug,
{
    let mut every = tokio::time::interval(POLL_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut seen = None;
    loop {
        every.tick().await;
        // Taken before the read is sent: it sees every change committed
        // before this instant.
        let started = cache.now_ms();
        match tokio::time::timeout(HEARD_WITHIN, read()).await {
            Ok(Ok(changes)) => {
                // A count that moved, or (out of caution: a database
                // restored from a backup may count again from lower) one
                // read after the cache had stepped aside.
                if seen != Some(changes) || !cache.live() {
                    cache.clear();
                    seen = Some(changes);
                }
                cache.heard(started);
            }
            // The cache steps aside by itself once its last vouch runs out.
            Ok(Err(e)) => tracing::debug!(error = ?e, "key change count unread"),
            Err(_) => tracing::debug!("key change count unread within the bound"),
        }
    }
}
