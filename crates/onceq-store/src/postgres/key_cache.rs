//! Key lookups served from memory, kept exact by LISTEN/NOTIFY.
//!
//! Every authenticated request looks its key up: without a cache that is a
//! round trip and a statement for PostgreSQL on every call, the same answer
//! each time. So found keys are kept here, and dropped, all of them, when
//! the keys table changes: a statement trigger (`migrations/V7`) sends
//! `NOTIFY onceq_keys` on every insert, update or delete, whoever makes it
//! (this server, another one, `onceq keys revoke` from the CLI, an operator
//! in psql), and a listener connection of this store clears the cache when
//! the notification arrives. A revoked or re-scoped key is thus refused by
//! every server as soon as its notification is delivered (sub-millisecond
//! on one host), not after a TTL; the process that made the change drops
//! its cache before its call returns, without waiting for the notification.
//!
//! The cache is used only while the listener is known to hear: a pooled
//! connection notifies a channel of the listener's own every [`PING_EVERY`]
//! (another connection, as every change's notification comes from another
//! connection), and the cache answers only while the last of those reached
//! the listener less than [`HEARD_WITHIN`] ago. With
//! the listener down, or connected but deaf (LISTEN through a pooler in
//! transaction mode succeeds and then hears nothing; a half-dead TCP
//! connection), lookups go to the database, and the cache starts empty
//! again once it hears. So a change is seen by every server within
//! `HEARD_WITHIN` (1.5 s) at worst, and at once while notifications flow. A lookup
//! that raced a change (its query ran before the change committed, its
//! answer came after the notification) is not cached: every clear bumps a
//! generation, and an answer is kept only if the generation it started
//! under is still current.
//!
//! Unknown keys are never cached (a client sending random keys must not be
//! able to fill memory); the cache holds at most [`MAX_KEYS`] entries and is
//! emptied when full.
//!
//! With `pgbouncer=transaction` in the URL no listener is started at all
//! ([`KeyCache::off`]): every lookup goes to the database.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use onceq_pg::PgConnect;

use super::db::{Db, GenericClient};
use tokio_postgres::AsyncMessage;

use crate::KeyRecord;

/// The channel the trigger of migration V7 notifies.
const CHANNEL: &str = "onceq_keys";

/// How often the listener notifies itself, to know it still hears.
const PING_EVERY: Duration = Duration::from_millis(500);

/// How recently the listener must have heard its own ping for the cache
/// to answer: the bound on how stale a cached key can be.
pub(super) const HEARD_WITHIN: Duration = Duration::from_millis(1500);

/// Cached keys at most; a full cache is emptied (keys are few in practice).
const MAX_KEYS: usize = 10_000;

/// Wait before reconnecting a dropped listener, doubled up to the maximum.
const RECONNECT_MIN: Duration = Duration::from_millis(100);
const RECONNECT_MAX: Duration = Duration::from_secs(5);

/// Found keys by hash, and whether they may be trusted right now.
#[derive(Debug, Default)]
pub(super) struct KeyCache {
    keys: Mutex<HashMap<Vec<u8>, KeyRecord>>,
    /// Bumped by every clear: an answer read under an older generation may
    /// predate a change and is not kept.
    generation: AtomicU64,
    /// Until when (ms after `epoch`) the cache may answer: pushed on by
    /// each ping the listener hears.
    live_until: AtomicU64,
    epoch: std::sync::OnceLock<std::time::Instant>,
    /// Pings heard so far (for tests).
    heard: AtomicU64,
}

/// Stops the listener (and closes its connection) when dropped.
#[derive(Debug)]
pub(super) struct Listener(Option<tokio::task::AbortHandle>);

impl Drop for Listener {
    fn drop(&mut self) {
        if let Some(task) = &self.0 {
            task.abort();
        }
    }
}

/// Where a lookup stands: served from memory, or to be read and offered back.
pub(super) enum Lookup {
    Hit(KeyRecord),
    Miss(Ticket),
}

/// A miss's permission to cache what the database answers.
pub(super) struct Ticket {
    generation: u64,
}

impl KeyCache {
    /// Starts the listener for `config`'s database; it stops when the
    /// returned guard is dropped.
    /// `pinger` sends the listener's pings.
    pub(super) fn start(pg: PgConnect, pinger: Db) -> (Arc<KeyCache>, Listener) {
        let cache = Arc::new(KeyCache::default());
        let task = tokio::spawn(listen(pg, pinger, cache.clone()));
        (cache, Listener(Some(task.abort_handle())))
    }

    /// A cache that never answers (no listener: behind a pooler).
    pub(super) fn off() -> (Arc<KeyCache>, Listener) {
        (Arc::new(KeyCache::default()), Listener(None))
    }

    fn now_ms(&self) -> u64 {
        let epoch = self.epoch.get_or_init(std::time::Instant::now);
        u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Whether the listener heard itself recently enough.
    fn live(&self) -> bool {
        self.now_ms() < self.live_until.load(Ordering::SeqCst)
    }

    /// The listener heard its own ping.
    fn heard(&self) {
        self.heard.fetch_add(1, Ordering::Relaxed);
        if !self.live() {
            // Deaf until now: a notification may have been missed.
            self.clear();
        }
        let until = self.now_ms() + u64::try_from(HEARD_WITHIN.as_millis()).unwrap_or(0);
        self.live_until.store(until, Ordering::SeqCst);
    }

    /// The key with this hash, if the cache may answer.
    pub(super) fn get(&self, key_hash: &[u8]) -> Lookup {
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

    /// Keeps `record`, read from the database after `ticket` was issued,
    /// unless the keys changed (or the listener dropped) since.
    pub(super) fn offer(&self, ticket: Ticket, key_hash: &[u8], record: &KeyRecord) {
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

    /// Drops every cached key: on a notification, and when this process
    /// changed a key (it must not wait for its own notification to see it).
    pub(super) fn clear(&self) {
        let mut keys = self.lock();
        self.generation.fetch_add(1, Ordering::SeqCst);
        keys.clear();
    }

    /// The listener lost its connection: nothing cached may outlive a
    /// missed notification.
    fn deaf(&self) {
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
    pub(super) fn is_live(&self) -> bool {
        self.live()
    }

    /// Pings heard so far (for tests).
    #[cfg(test)]
    pub(super) fn pings_heard(&self) -> u64 {
        self.heard.load(Ordering::Relaxed)
    }
}

/// Keeps one connection listening on `onceq_keys` until aborted (when the
/// store is dropped), reconnecting with backoff; `pinger` notifies a
/// channel of its own every [`PING_EVERY`], and the cache is told each time
/// the listener hears it.
async fn listen(mut pg: PgConnect, pinger: Db, cache: Arc<KeyCache>) {
    pg.config_mut().application_name("onceq-key-listener");
    let ping_channel = format!("onceq_keys_ping_{}", uuid::Uuid::new_v4().simple());
    let subscribe = format!("LISTEN {CHANNEL}; LISTEN {ping_channel}");
    let ping = format!("NOTIFY {ping_channel}");
    let mut wait = RECONNECT_MIN;
    loop {
        match pg.config().connect(pg.tls()).await {
            Ok((client, mut connection)) => {
                // LISTEN goes out through the connection polled below; the
                // pings through the pool, once it is listening.
                let pings = tokio::spawn({
                    let (pinger, subscribe, ping) =
                        (pinger.clone(), subscribe.clone(), ping.clone());
                    async move {
                        if let Err(e) = client.batch_execute(&subscribe).await {
                            tracing::warn!(error = %e, "postgres: LISTEN failed; key lookups stay uncached");
                            return;
                        }
                        let mut every = tokio::time::interval(PING_EVERY);
                        loop {
                            every.tick().await;
                            // A missed ping only makes the cache step aside.
                            if let Ok(c) = pinger.get().await {
                                let _ = c.batch_execute(&ping).await;
                            }
                        }
                    }
                });
                loop {
                    match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                        Some(Ok(AsyncMessage::Notification(n))) if n.channel() == ping_channel => {
                            cache.heard();
                            wait = RECONNECT_MIN;
                        }
                        Some(Ok(AsyncMessage::Notification(_))) => cache.clear(),
                        Some(Ok(_)) => {}
                        Some(Err(e)) => {
                            tracing::warn!(error = %e, "postgres: key listener connection failed");
                            break;
                        }
                        None => break,
                    }
                }
                pings.abort();
                cache.deaf();
            }
            Err(e) => tracing::debug!(error = %e, "postgres: key listener cannot connect"),
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(RECONNECT_MAX);
    }
}
