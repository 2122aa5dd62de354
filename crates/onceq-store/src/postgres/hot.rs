//! What the committer tasks share: the connection each keeps for itself,
//! and how each takes its next group off its queue.

use tokio::sync::mpsc;

use super::db::{Conn, Db, GenericClient};
use super::errors::Error;
use super::sql;

/// A pooled connection a committer ([`super::publish_group`],
/// [`super::ack_group`]) keeps from its first group for as long as it runs, with
/// [`sql::HOT_SESSION`] set once for the whole session rather than per
/// transaction: a committer runs nothing but its group statements, and the
/// settings cost no statement per group. It never goes back to the pool
/// (so the settings never reach other callers): a connection that failed is
/// closed and a new one taken. Each committer thus holds one of the pool's
/// connections for as long as it runs (`/metrics` shows it in use); the
/// pool has room for them on top of its `pool_size` (`pool.rs`).
///
/// Behind a pooler in transaction mode there is no session to set: a `SET`
/// would reach whichever server connection ran it and stay there for the
/// pooler's other clients. Nothing is set then; each transaction begins
/// with the settings instead ([`Conn::hot_begin`]), and the hot statements
/// run as functions that keep their plans (`db.rs`).
pub(super) struct HotConnection {
    pool: Db,
    client: Option<Conn>,
}

impl HotConnection {
    pub(super) fn new(pool: Db) -> HotConnection {
        HotConnection { pool, client: None }
    }

    /// The pool, for work done on a connection of its own.
    pub(super) fn pool(&self) -> &Db {
        &self.pool
    }

    /// The connection, taken from the pool and set up if there is none.
    pub(super) async fn get(&mut self) -> Result<&Conn, Error> {
        if self.client.as_ref().is_some_and(|c| c.is_closed()) {
            self.discard();
        }
        if self.client.is_none() {
            let client = self.pool.get().await?;
            if !client.behind_pooler()
                && let Err(e) = client.batch_execute(sql::HOT_SESSION).await
            {
                client.discard();
                return Err(e.into());
            }
            self.client = Some(client);
        }
        Ok(self.client.as_ref().expect("set just above"))
    }

    /// Closes the connection (after an error that may have left it in an
    /// unknown state); the next [`get`](Self::get) opens another.
    pub(super) fn discard(&mut self) {
        if let Some(client) = self.client.take() {
            client.discard();
        }
    }
}

impl Drop for HotConnection {
    fn drop(&mut self) {
        self.discard();
    }
}

/// The next group: the first request to arrive (waiting for it), then
/// whatever else is already queued, until the group's `size` reaches `max`
/// (a request is never split, so the last one may pass it). `None` once
/// the queue is closed.
pub(super) async fn next_group<T>(
    receiver: &mut mpsc::Receiver<T>,
    max: usize,
    size: impl Fn(&T) -> usize,
) -> Option<Vec<T>> {
    let first = receiver.recv().await?;
    let mut total = size(&first);
    let mut group = vec![first];
    while total < max {
        let Ok(next) = receiver.try_recv() else { break };
        total += size(&next);
        group.push(next);
    }
    Some(group)
}
