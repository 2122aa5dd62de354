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
//! The cache is used only while the listener is connected and listening:
//! with it down a notification could be missed, so lookups go to the
//! database, and the cache starts empty again once it is back. A lookup
//! that raced a change (its query ran before the change committed, its
//! answer came after the notification) is not cached: every clear bumps a
//! generation, and an answer is kept only if the generation it started
//! under is still current.
//!
//! Unknown keys are never cached (a client sending random keys must not be
//! able to fill memory); the cache holds at most [`MAX_KEYS`] entries and is
//! emptied when full.
//!
//! A connection pooler in transaction mode (PgBouncer) does not carry
//! LISTEN; with one in front of the database, the listener never starts
//! listening and every lookup goes to the database, as before.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use onceq_pg::PgConnect;
use tokio_postgres::AsyncMessage;

use crate::KeyRecord;

/// Subscribes to the channel the trigger of migration V7 notifies.
const LISTEN: &str = "LISTEN onceq_keys";

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
    /// The listener is connected and listening.
    live: AtomicBool,
}

/// Stops the listener (and closes its connection) when dropped.
#[derive(Debug)]
pub(super) struct Listener(tokio::task::AbortHandle);

impl Drop for Listener {
    fn drop(&mut self) {
        self.0.abort();
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
    pub(super) fn start(pg: PgConnect) -> (Arc<KeyCache>, Listener) {
        let cache = Arc::new(KeyCache::default());
        let task = tokio::spawn(listen(pg, cache.clone()));
        (cache, Listener(task.abort_handle()))
    }

    /// The key with this hash, if the cache may answer.
    pub(super) fn get(&self, key_hash: &[u8]) -> Lookup {
        // Read the generation first: a clear after this point makes the
        // ticket stale, whatever the map held.
        let generation = self.generation.load(Ordering::SeqCst);
        if self.live.load(Ordering::SeqCst)
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
        if !self.live.load(Ordering::SeqCst)
            || self.generation.load(Ordering::SeqCst) != ticket.generation
        {
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

    fn set_live(&self, live: bool) {
        // Cleared both ways: going down, nothing cached may outlive a
        // missed notification; coming up, nothing read while down is kept.
        self.clear();
        self.live.store(live, Ordering::SeqCst);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Vec<u8>, KeyRecord>> {
        // A panic while holding the lock cannot leave the map half-changed
        // in a way that matters: at worst it lacks an entry.
        self.keys.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether lookups are being served from memory (for tests).
    #[cfg(test)]
    pub(super) fn is_live(&self) -> bool {
        self.live.load(Ordering::SeqCst)
    }
}

/// Keeps one connection listening on `onceq_keys` until aborted (when the
/// store is dropped), reconnecting with backoff.
async fn listen(mut pg: PgConnect, cache: Arc<KeyCache>) {
    pg.config_mut().application_name("onceq-key-listener");
    let mut wait = RECONNECT_MIN;
    loop {
        match pg.config().connect(pg.tls()).await {
            Ok((client, mut connection)) => {
                let listen = client.batch_execute(LISTEN);
                tokio::pin!(listen);
                let mut sent = false;
                // The connection must be polled for LISTEN to complete, and
                // afterwards for notifications and for its end.
                loop {
                    tokio::select! {
                        done = &mut listen, if !sent => {
                            sent = true;
                            match done {
                                Ok(()) => {
                                    cache.set_live(true);
                                    wait = RECONNECT_MIN;
                                }
                                Err(e) => tracing::warn!(error = %e, "postgres: LISTEN failed; key lookups stay uncached"),
                            }
                        }
                        message = std::future::poll_fn(|cx| connection.poll_message(cx)) => match message {
                            Some(Ok(AsyncMessage::Notification(_))) => cache.clear(),
                            Some(Ok(_)) => {}
                            Some(Err(e)) => {
                                tracing::warn!(error = %e, "postgres: key listener connection failed");
                                break;
                            }
                            None => break,
                        }
                    }
                }
                cache.set_live(false);
            }
            Err(e) => tracing::debug!(error = %e, "postgres: key listener cannot connect"),
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(RECONNECT_MAX);
    }
}
