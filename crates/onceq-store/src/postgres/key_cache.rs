//! Key lookups served from memory, kept exact by LISTEN/NOTIFY or, behind
//! a pooler, by a change count.
//!
//! Every authenticated request looks its key up: without a cache that is a
//! round trip and a statement for PostgreSQL on every call, the same answer
//! each time. So found keys are kept here, and dropped, all of them, when
//! the keys table changes. A statement trigger (`migrations/V7`, `V18`)
//! fires on every insert, update or delete, whoever makes it (this server,
//! another one, `onceq keys revoke` from the CLI, an operator in psql): it
//! sends `NOTIFY onceq_keys` and, in the same transaction, adds one to the
//! count in `onceq_key_changes`. The process that made the change drops its
//! cache before its call returns, without waiting for either.
//!
//! **Connected directly**, a listener connection of this store clears the
//! cache when the notification arrives: a revoked or re-scoped key is
//! refused by every server as soon as its notification is delivered
//! (sub-millisecond on one host). The cache is used only while the listener
//! is known to hear: a pooled connection notifies a channel of the
//! listener's own every [`PING_EVERY`] (another connection, as every
//! change's notification comes from another connection), and the cache
//! answers only while the last of those reached the listener less than
//! [`HEARD_WITHIN`] ago. With the listener down, or connected but deaf (a
//! half-dead TCP connection), lookups go to the database, and the cache
//! starts empty again once it hears.
//!
//! **Behind a pooler in transaction mode** (`pgbouncer=transaction`) LISTEN
//! succeeds and then hears nothing (it lands on a server connection that is
//! handed to others), so the store polls the change count instead: every
//! [`POLL_EVERY`] one statement through the pool ([`sql::KEY_CHANGES`]),
//! and a count other than the last one seen clears the cache. The cache
//! answers only until [`HEARD_WITHIN`] after the start of the last poll that
//! answered: a poll that starts after a change commits sees it (each
//! statement reads what was committed before it began), so a poll that did
//! not see it started before the change, and nothing it vouched for is
//! served later than `HEARD_WITHIN` after the change. While polls fail or
//! lag, lookups go to the database. Nothing needs a session: several servers
//! on one database each poll the same row.
//!
//! Either way, a change is seen by every server within `HEARD_WITHIN`
//! (1.5 s) of its commit at worst, and directly at once while notifications
//! flow. A lookup that raced a change (its query ran before the change
//! committed, its answer came after the clear) is not cached: every clear
//! bumps a generation, and an answer is kept only if the generation it
//! started under is still current.
//!
//! Unknown keys are never cached (a client sending random keys must not be
//! able to fill memory); the cache holds at most [`MAX_KEYS`] entries and is
//! emptied when full.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use onceq_pg::PgConnect;

use super::db::{Db, GenericClient};
use super::errors::Error;
use super::sql;
use tokio_postgres::AsyncMessage;

use crate::KeyRecord;

/// The channel the trigger of migration V7 notifies.
const CHANNEL: &str = "onceq_keys";

/// How often the listener notifies itself, to know it still hears.
const PING_EVERY: Duration = Duration::from_millis(500);

/// How recently the listener must have heard its own ping (or a poll of the
/// change count have started) for the cache to answer: the bound on how
/// stale a cached key can be.
pub(super) const HEARD_WITHIN: Duration = Duration::from_millis(1500);

/// How often the change count is read behind a pooler: a third of
/// [`HEARD_WITHIN`], so one slow or lost poll does not yet turn the cache
/// off.
const POLL_EVERY: Duration = Duration::from_millis(500);

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
    /// Pings heard, or polls of the change count answered, so far (for
    /// tests).
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

    /// Starts polling the change count through `pool` (behind a pooler,
    /// where no LISTEN hears); it stops when the returned guard is dropped.
    pub(super) fn poll(pool: Db) -> (Arc<KeyCache>, Listener) {
        let cache = Arc::new(KeyCache::default());
        let task = tokio::spawn(poll_changes(pool, cache.clone()));
        (cache, Listener(Some(task.abort_handle())))
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
        self.vouch(self.now_ms());
    }

    /// Lets the cache answer until [`HEARD_WITHIN`] after `since` (ms after
    /// `epoch`), when everything committed before `since` is known to be
    /// reflected in it.
    fn vouch(&self, since: u64) {
        let until = since + u64::try_from(HEARD_WITHIN.as_millis()).unwrap_or(0);
        self.live_until.fetch_max(until, Ordering::SeqCst);
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

    /// Pings heard, or polls answered, so far (for tests).
    #[cfg(test)]
    pub(super) fn pings_heard(&self) -> u64 {
        self.heard.load(Ordering::Relaxed)
    }
}

/// Reads the change count every [`POLL_EVERY`] until aborted (when the
/// store is dropped): a count other than the last one seen clears the
/// cache, and each answer vouches for the cache from the poll's start.
async fn poll_changes(pool: Db, cache: Arc<KeyCache>) {
    let mut every = tokio::time::interval(POLL_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut seen = None;
    loop {
        every.tick().await;
        // Taken before the statement is sent: it reads every change
        // committed before this instant.
        let started = cache.now_ms();
        match tokio::time::timeout(HEARD_WITHIN, read_changes(&pool)).await {
            Ok(Ok(changes)) => {
                // A count that moved, or (out of caution: a database
                // restored from a backup may count again from lower) one
                // read after the cache had stepped aside.
                if seen != Some(changes) || !cache.live() {
                    cache.clear();
                    seen = Some(changes);
                }
                cache.heard.fetch_add(1, Ordering::Relaxed);
                cache.vouch(started);
            }
            // The cache steps aside by itself once its last vouch runs out.
            Ok(Err(e)) => tracing::debug!(error = ?e, "postgres: key change count unread"),
            Err(_) => tracing::debug!("postgres: key change count unread within the bound"),
        }
    }
}

/// The keys' change count (migration V18).
async fn read_changes(pool: &Db) -> Result<i64, Error> {
    let client = pool.get().await?;
    let stmt = client.prepare_cached(sql::KEY_CHANGES).await?;
    Ok(client.query_one(&stmt, &[]).await?.get(0))
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
