//! The writer thread: the one connection that writes, and group commit.
//!
//! SQLite allows one writer at a time, and with `synchronous=FULL` every
//! COMMIT costs an fsync. Instead of one transaction per request, the thread
//! takes every request waiting in its channel (up to [`MAX_GROUP`]), runs them
//! all in one transaction, each inside its own SAVEPOINT, and COMMITs once:
//! many concurrent HTTP requests share one fsync.
//!
//! Guarantees:
//! - A request that fails rolls back to its savepoint: only its own changes
//!   are undone; the rest of the group commits.
//! - No reply is sent before the COMMIT that made it durable has returned.
//! - If the group cannot commit (or SQLite rolled it back on its own), every
//!   request that had succeeded gets an error instead of its result.
//! - A request that panics is answered with `Internal`; the thread lives on.
//! - A caller waits at most the store timeout (then `Unavailable`); a
//!   request whose caller has gone by the time its group runs is skipped.
//!   One already running when its caller gave up is committed with its
//!   group: `Unavailable` after a timeout means "unknown".

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use rusqlite::Connection;
use tokio::sync::{mpsc, oneshot};

use super::control::{self, BEGIN_IMMEDIATE, COMMIT, RELEASE, ROLLBACK_TO, SAVEPOINT};
use super::errors::{GroupFailure, writer_gone};
use crate::{Result, StoreError};

/// The most requests one transaction carries. Bounds the latency a request
/// waits behind others of its group, and the work lost to a failed COMMIT.
pub(super) const MAX_GROUP: usize = 256;

/// Requests that may wait for the thread; beyond that, callers wait to send
/// (backpressure instead of unbounded memory).
const CHANNEL_CAPACITY: usize = 4 * MAX_GROUP;

/// Sends requests to the writer thread. The thread stops once every `Writer`
/// is dropped and the requests already sent are done.
#[derive(Debug, Clone)]
pub(super) struct Writer {
    jobs: mpsc::Sender<Box<dyn Job>>,
    /// The store timeout: the longest a caller waits for its answer.
    bound: Duration,
}

impl Writer {
    /// Starts the thread; it owns `conn` from now on. Callers wait at most
    /// `bound` for their answers.
    pub(super) fn spawn(conn: Connection, bound: Duration) -> Result<Writer> {
        let (jobs, rx) = mpsc::channel(CHANNEL_CAPACITY);
        std::thread::Builder::new()
            .name("onceq-sqlite-writer".into())
            .spawn(move || run(conn, rx))
            .map_err(|e| StoreError::Unavailable(Box::new(e)))?;
        Ok(Writer { jobs, bound })
    }

    /// The writer as a pool of one connection: `waiting` is the requests
    /// queued for the thread (beyond the one group it may be running).
    pub(super) fn stats(&self) -> crate::PoolStats {
        let waiting = self.jobs.max_capacity() - self.jobs.capacity();
        crate::PoolStats {
            pool: "sqlite_writer",
            max_size: Some(1),
            size: 1,
            available: usize::from(waiting == 0),
            waiting,
        }
    }

    /// Runs `f` in the next group's transaction and answers once that
    /// transaction is committed. If `f` fails, its changes are rolled back
    /// and its error returned. `Unavailable` when no answer came within
    /// the store timeout (queueing included).
    pub(super) async fn run<T, F>(&self, f: F) -> Result<T>
    where
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
        T: Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        // One timer per request, around its whole wait; dropped at the
        // bound, the receiver tells the thread to skip the request.
        let waited = tokio::time::timeout(self.bound, async {
            self.jobs
                .send(Box::new(Request { f, reply }))
                .await
                .map_err(|_| writer_gone())?;
            // The sender is dropped unanswered only if the thread died.
            answer.await.map_err(|_| writer_gone())?
        })
        .await;
        waited.unwrap_or_else(|_| Err(super::errors::stalled("writer", self.bound)))
    }
}

/// A request as the thread sees it, whatever its result type.
trait Job: Send {
    /// Runs the request inside the group's transaction (and its savepoint).
    fn run(self: Box<Self>, tx: &Connection) -> Box<dyn Done>;
    /// Answers without running: the group failed before its turn.
    fn fail(self: Box<Self>, e: StoreError);
    /// Whether the caller has stopped waiting (the store timeout, or its
    /// request was cancelled): nobody would hear the answer.
    fn abandoned(&self) -> bool;
}

/// A request that ran and awaits the group's COMMIT to be answered.
trait Done: Send {
    /// Whether the request succeeded (and its savepoint is to be kept).
    fn succeeded(&self) -> bool;
    /// Answers the caller with the group's fate.
    fn answer(self: Box<Self>, commit: Result<(), &GroupFailure>);
}

struct Request<F, T> {
    f: F,
    reply: oneshot::Sender<Result<T>>,
}

struct Ran<T> {
    result: Result<T>,
    reply: oneshot::Sender<Result<T>>,
}

impl<F, T> Job for Request<F, T>
where
    F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    T: Send + 'static,
{
    fn run(self: Box<Self>, tx: &Connection) -> Box<dyn Done> {
        let Request { f, reply } = *self;
        // AssertUnwindSafe: on a panic the savepoint is rolled back, so no
        // half-done state of the request survives it.
        let result = catch_unwind(AssertUnwindSafe(|| f(tx))).unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(StoreError::internal(format!(
                "a SQLite request panicked: {what}"
            )))
        });
        Box::new(Ran { result, reply })
    }

    fn fail(self: Box<Self>, e: StoreError) {
        // The caller may have gone away (request cancelled): nothing to do.
        let _ = self.reply.send(Err(e));
    }

    fn abandoned(&self) -> bool {
        self.reply.is_closed()
    }
}

impl<T: Send> Done for Ran<T> {
    fn succeeded(&self) -> bool {
        self.result.is_ok()
    }

    fn answer(self: Box<Self>, commit: Result<(), &GroupFailure>) {
        let result = match (self.result, commit) {
            // A failed request keeps its own error: it changed nothing anyway.
            (Err(e), _) => Err(e),
            (Ok(v), Ok(())) => Ok(v),
            (Ok(_), Err(failure)) => Err(failure.to_error()),
        };
        let _ = self.reply.send(result);
    }
}

/// The thread's loop: one group per turn until every `Writer` is dropped.
fn run(mut conn: Connection, mut rx: mpsc::Receiver<Box<dyn Job>>) {
    let mut group: Vec<Box<dyn Job>> = Vec::with_capacity(MAX_GROUP);
    while let Some(first) = rx.blocking_recv() {
        group.push(first);
        // Whatever arrived while the last group was committing joins this one.
        while group.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(job) => group.push(job),
                Err(_) => break,
            }
        }
        commit_group(&mut conn, group.drain(..));
    }
    tracing::debug!("SQLite writer stopped");
}

/// Runs one group in one transaction, commits it, then answers every request.
///
/// The transaction and savepoint statements go through the statement cache
/// ([`control`]), like every other statement: parsed once per connection,
/// not once per group and twice per request.
fn commit_group(conn: &mut Connection, jobs: impl Iterator<Item = Box<dyn Job>>) {
    // A transaction a failed ROLLBACK left open would make BEGIN fail.
    control::rollback(conn);
    // IMMEDIATE takes the write lock now, waiting out `busy_timeout` if
    // another process holds it. A deferred transaction would take it at the
    // first write and could then fail with SQLITE_BUSY without waiting.
    if let Err(e) = control::run(conn, BEGIN_IMMEDIATE) {
        let failure = GroupFailure::new("beginning a transaction", &e);
        tracing::warn!(error = %e, "SQLite group could not begin");
        for job in jobs {
            job.fail(failure.to_error());
        }
        return;
    }
    let tx: &Connection = conn;

    let mut ran: Vec<Box<dyn Done>> = Vec::new();
    let mut failure: Option<GroupFailure> = None;
    for job in jobs {
        if let Some(failure) = &failure {
            job.fail(failure.to_error());
            continue;
        }
        if job.abandoned() {
            // Answered `Unavailable` already: doing it now would make that
            // answer wrong for no one's benefit.
            continue;
        }
        if let Err(e) = control::run(tx, SAVEPOINT) {
            let f = GroupFailure::new("opening a savepoint", &e);
            job.fail(f.to_error());
            failure = Some(f);
            continue;
        }
        let done = job.run(tx);
        let end = if done.succeeded() {
            control::run(tx, RELEASE)
        } else {
            control::run(tx, ROLLBACK_TO).and_then(|()| control::run(tx, RELEASE))
        };
        if let Err(e) = end {
            failure = Some(GroupFailure::new("ending a savepoint", &e));
        } else if tx.is_autocommit() {
            // SQLite rolled the whole transaction back (it may on I/O or
            // full-disk errors); later statements would run in autocommit
            // mode and be durable on their own, outside the group's fate.
            failure = Some(GroupFailure::rolled_back());
        }
        ran.push(done);
    }

    let commit = match failure {
        Some(failure) => {
            control::rollback(tx);
            Err(failure)
        }
        // On a failed COMMIT the transaction is still open: roll it back.
        None => control::run(tx, COMMIT).map_err(|e| {
            control::rollback(tx);
            GroupFailure::new("committing", &e)
        }),
    };
    if let Err(failure) = &commit {
        tracing::warn!(?failure, requests = ran.len(), "SQLite group failed");
    }
    for done in ran {
        done.answer(commit.as_ref().map(|_| ()));
    }
}

#[cfg(test)]
mod tests;
