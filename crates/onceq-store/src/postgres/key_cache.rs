//! What keeps the key cache (`crate::key_cache`) exact on PostgreSQL:
//! LISTEN/NOTIFY or, behind a pooler, a change count.
//!
//! A statement trigger (`migrations/V7`, `V18`) fires on every insert,
//! update or delete of the keys table, whoever makes it (this server,
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
//! `HEARD_WITHIN` ago ([`crate::key_cache::HEARD_WITHIN`]). With the
//! listener down, or connected but deaf (a half-dead TCP connection),
//! lookups go to the database, and the cache starts empty again once it
//! hears.
//!
//! **Behind a pooler in transaction mode** (`pgbouncer=transaction`) LISTEN
//! succeeds and then hears nothing (it lands on a server connection that is
//! handed to others), so the store polls the change count instead
//! ([`sql::KEY_CHANGES`] through the pool, [`KeyCache::polled`]). Nothing
//! needs a session: several servers on one database each poll the same row.
//!
//! Either way, a change is seen by every server within `HEARD_WITHIN`
//! (1.5 s) of its commit at worst, and directly at once while notifications
//! flow.

use std::sync::Arc;
use std::time::Duration;

use onceq_pg::PgConnect;
use tokio_postgres::AsyncMessage;

use super::db::{Db, GenericClient};
use super::errors::Error;
use super::sql;
pub(super) use crate::key_cache::{KeyCache, Watch};

/// The channel the trigger of migration V7 notifies.
const CHANNEL: &str = "onceq_keys";

/// How often the listener notifies itself, to know it still hears.
const PING_EVERY: Duration = Duration::from_millis(500);

/// Wait before reconnecting a dropped listener, doubled up to the maximum.
const RECONNECT_MIN: Duration = Duration::from_millis(100);
const RECONNECT_MAX: Duration = Duration::from_secs(5);

/// A cache cleared by a listener on `pg`'s database; `pinger` sends the
/// listener's pings. The listener stops when the guard is dropped.
pub(super) fn listened(pg: PgConnect, pinger: Db) -> (Arc<KeyCache>, Watch) {
    let cache = Arc::new(KeyCache::default());
    let task = tokio::spawn(listen(pg, pinger, cache.clone()));
    (cache, Watch::new(task.abort_handle()))
}

/// A cache kept by polling the change count through `pool` (behind a
/// pooler, where no LISTEN hears).
pub(super) fn polled(pool: Db) -> (Arc<KeyCache>, Watch) {
    KeyCache::polled(move || {
        let pool = pool.clone();
        async move { read_changes(&pool).await }
    })
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
                            cache.heard(cache.now_ms());
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
