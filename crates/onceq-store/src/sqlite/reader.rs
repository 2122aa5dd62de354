//! Reads (`key_lookup`, `key_list`, `queue_get`, `queue_list`,
//! `queue_stats`, `message_list`, `message_get`, `subscription_list`,
//! `subscription_scan`) go through read connections
//! on blocking tasks, not through the writer thread.
//!
//! Why: `key_lookup` runs on every authenticated HTTP request; queueing it
//! behind a group of writes (and its fsync) would add the commit latency to
//! every call. In WAL mode readers run concurrently with the writer and see
//! the last committed state, and the writer answers only after its COMMIT, so
//! a read that starts after a write's answer sees that write (read your
//! writes holds). Each read runs in its own read transaction, so the several
//! statements of `queue_stats` see one snapshot.
//!
//! A caller waits at most the store timeout for its read (a disk that
//! hangs, the blocking pool saturated), then gets `Unavailable`; the read
//! itself finishes on its thread and is thrown away.

use std::{
    path::PathBuf,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use rusqlite::Connection;

use super::{conn, control};
use crate::{PoolStats, Result, StoreError};

/// Idle read connections kept open; more are opened on demand under load
/// and closed when returned beyond this number. Every request reads (its
/// key's lookup), so the pool must hold as many connections as requests
/// run at once: opening one parses the whole schema and prepares each
/// statement again, which with 4 kept happened many times a second under
/// 16 concurrent clients. 32 covers the bench's 8 producers and 8 workers
/// with room; a connection costs little until its page cache fills.
const MAX_IDLE: usize = 32;

/// A small pool of read connections to one database file.
#[derive(Debug, Clone)]
pub(super) struct Readers {
    path: Arc<PathBuf>,
    idle: Arc<Mutex<Vec<Connection>>>,
    /// Connections open, idle or in use (for `pool_stats`).
    open: Arc<AtomicUsize>,
    /// The store timeout: the longest a caller waits for its read.
    bound: Duration,
}

impl Readers {
    /// Reads from the database at `path` (already created and migrated),
    /// each caller waiting at most `bound`.
    pub(super) fn new(path: PathBuf, bound: Duration) -> Self {
        Self {
            path: Arc::new(path),
            idle: Arc::default(),
            open: Arc::default(),
            bound,
        }
    }

    /// Runs `f` on a read connection, inside a read transaction.
    pub(super) async fn run<T, F>(&self, f: F) -> Result<T>
    where
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
        T: Send + 'static,
    {
        let this = self.clone();
        let read = tokio::task::spawn_blocking(move || {
            let conn = this.checkout()?;
            // A read transaction (one snapshot for the whole read), begun
            // and ended through the statement cache (`control`).
            let result = control::run(&conn, control::BEGIN)
                .map_err(StoreError::from)
                .and_then(|()| f(&conn));
            // Rolling the read transaction back: nothing to keep, and it
            // ends the snapshot.
            let ended = control::rollback(&conn);
            // A connection that hit an I/O or lock problem may be in a bad
            // state; open a fresh one next time instead.
            if !ended || matches!(result, Err(StoreError::Unavailable(_))) {
                this.close(conn);
            } else {
                this.checkin(conn);
            }
            result
        });
        match tokio::time::timeout(self.bound, read).await {
            Ok(done) => {
                done.map_err(|e| StoreError::internal(format!("a SQLite read task failed: {e}")))?
            }
            Err(_) => Err(super::errors::stalled("reader", self.bound)),
        }
    }

    /// Open and idle connections; nobody ever waits (another connection is
    /// opened instead), so `waiting` is 0.
    pub(super) fn stats(&self) -> PoolStats {
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).len();
        PoolStats {
            pool: "sqlite_readers",
            max_size: None,
            size: self.open.load(Ordering::Relaxed),
            available: idle,
            waiting: 0,
        }
    }

    fn checkout(&self) -> Result<Connection> {
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        match idle {
            Some(conn) => Ok(conn),
            None => {
                let conn = conn::open_reader(&self.path)?;
                self.open.fetch_add(1, Ordering::Relaxed);
                Ok(conn)
            }
        }
    }

    fn checkin(&self, conn: Connection) {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < MAX_IDLE {
            idle.push(conn);
        } else {
            drop(idle);
            self.close(conn);
        }
    }

    fn close(&self, conn: Connection) {
        drop(conn);
        self.open.fetch_sub(1, Ordering::Relaxed);
    }
}
