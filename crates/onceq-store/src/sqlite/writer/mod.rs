//! The writer thread: the one connection that writes, and group commit.
//!
//! SQLite allows one writer at a time, and with `synchronous=FULL` every
//! COMMIT costs an fsync. Instead of one transaction per request, the thread
//! takes every request waiting in its channel (up to [`MAX_GROUP`]), runs them
//! all in one transaction and COMMITs once: many concurrent HTTP requests
//! share one fsync.
//!
//! Each request runs first without a savepoint of its own. A savepoint
//! copies every page a request first touches into a sub-journal, and the
//! requests of a group touch the same pages again and again (the tables'
//! and indexes' last leaves): 10-15 % of the server's CPU per publish and
//! 10-20 % per batched message, measured (docs/performance.md, session 18).
//! Nearly every request succeeds; when one fails, the group is rolled back
//! whole and run again with each request inside its own SAVEPOINT, so only
//! the failed request's changes are undone. Requests are therefore `Fn`:
//! a request may run twice, and only the run that commits is answered. A
//! request the store refuses (an idempotency key reused with another
//! payload, a queue that is gone) so costs its group a second run: at
//! most twice the work, for the groups that hold such a request.
//!
//! Guarantees:
//! - A request that fails changes nothing: only its own changes are
//!   undone; the rest of the group commits.
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
    ///
    /// `f` may run twice (see the module's notes): once in a group that
    /// is then rolled back, and again; its effects outside the transaction
    /// must bear that.
    pub(super) async fn run<T, F>(&self, f: F) -> Result<T>
    where
        F: Fn(&Connection) -> Result<T> + Send + 'static,
        T: Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        // One timer per request, around its whole wait; dropped at the
        // bound, the receiver tells the thread to skip the request.
        let waited = tokio::time::timeout(self.bound, async {
            self.jobs
                .send(Box::new(Request {
                    f,
                    reply,
                    result: None,
                }))
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
    /// Runs the request inside the group's transaction and keeps its
    /// result (a later run replaces it); whether it succeeded.
    fn run(&mut self, tx: &Connection) -> bool;
    /// Answers with the kept result and the group's fate.
    fn answer(self: Box<Self>, commit: Result<(), &GroupFailure>);
    /// Answers without running: the group failed before its turn.
    fn fail(self: Box<Self>, e: StoreError);
    /// Whether the caller has stopped waiting (the store timeout, or its
    /// request was cancelled): nobody would hear the answer.
    fn abandoned(&self) -> bool;
}

struct Request<F, T> {
    f: F,
    reply: oneshot::Sender<Result<T>>,
    /// The last run's result, until answered.
    result: Option<Result<T>>,
}

impl<F, T> Job for Request<F, T>
where
    F: Fn(&Connection) -> Result<T> + Send + 'static,
    T: Send + 'static,
{
    fn run(&mut self, tx: &Connection) -> bool {
        // AssertUnwindSafe: on a panic the request's changes are rolled
        // back, so no half-done state of it survives.
        let result = catch_unwind(AssertUnwindSafe(|| (self.f)(tx))).unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(StoreError::internal(format!(
                "a SQLite request panicked: {what}"
            )))
        });
        let ok = result.is_ok();
        self.result = Some(result);
        ok
    }

    fn answer(self: Box<Self>, commit: Result<(), &GroupFailure>) {
        let result = match (self.result, commit) {
            (None, _) => Err(StoreError::internal("a SQLite request was answered unrun")),
            // A failed request keeps its own error: it changed nothing anyway.
            (Some(Err(e)), _) => Err(e),
            (Some(Ok(v)), Ok(())) => Ok(v),
            (Some(Ok(_)), Err(failure)) => Err(failure.to_error()),
        };
        let _ = self.reply.send(result);
    }

    fn fail(self: Box<Self>, e: StoreError) {
        // The caller may have gone away (request cancelled): nothing to do.
        let _ = self.reply.send(Err(e));
    }

    fn abandoned(&self) -> bool {
        self.reply.is_closed()
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

/// Runs one group in one transaction, commits it, then answers every
/// request: first without savepoints, and again with one per request if a
/// request failed.
///
/// The transaction and savepoint statements go through the statement cache
/// ([`control`]), like every other statement: parsed once per connection,
/// not once per group and twice per request.
fn commit_group(conn: &mut Connection, jobs: impl Iterator<Item = Box<dyn Job>>) {
    let mut jobs: Vec<Box<dyn Job>> = jobs.collect();
    let ran = match begin(conn) {
        Ok(()) => run_plain(conn, &mut jobs),
        Err(failure) => return fail_all(jobs, &failure),
    };
    let commit = if ran {
        commit(conn)
    } else {
        // A request failed: nothing of this run is kept or answered.
        control::rollback(conn);
        if let Err(failure) = begin(conn) {
            return fail_all(jobs, &failure);
        }
        run_with_savepoints(conn, &mut jobs).and_then(|()| commit(conn))
    };
    if let Err(failure) = &commit {
        tracing::warn!(?failure, requests = jobs.len(), "SQLite group failed");
    }
    for job in jobs {
        job.answer(commit.as_ref().map(|_| ()));
    }
}

/// Begins the group's transaction. IMMEDIATE takes the write lock now,
/// waiting out `busy_timeout` if another process holds it; a deferred
/// transaction would take it at the first write and could then fail with
/// SQLITE_BUSY without waiting.
fn begin(conn: &mut Connection) -> Result<(), GroupFailure> {
    // A transaction a failed ROLLBACK left open would make BEGIN fail.
    control::rollback(conn);
    control::run(conn, BEGIN_IMMEDIATE).map_err(|e| {
        tracing::warn!(error = %e, "SQLite group could not begin");
        GroupFailure::new("beginning a transaction", &e)
    })
}

fn fail_all(jobs: Vec<Box<dyn Job>>, failure: &GroupFailure) {
    for job in jobs {
        job.fail(failure.to_error());
    }
}

/// Runs every request with no savepoint; whether all succeeded (and the
/// transaction is still open). Stops at the first failure.
///
/// A request whose caller has gone is skipped, here and with savepoints:
/// answered `Unavailable` already, running it now would make that answer
/// wrong for no one's benefit (its answer goes nowhere).
fn run_plain(tx: &Connection, jobs: &mut [Box<dyn Job>]) -> bool {
    for job in jobs.iter_mut().filter(|job| !job.abandoned()) {
        // SQLite may roll the whole transaction back on its own (on I/O or
        // full-disk errors): later statements would run in autocommit mode.
        if !job.run(tx) || tx.is_autocommit() {
            return false;
        }
    }
    true
}

/// Runs every request inside its own savepoint, rolling a failed one back
/// to it. A savepoint statement that fails, or a transaction SQLite rolled
/// back on its own, fails the group: the requests after it are answered
/// with that failure unrun.
fn run_with_savepoints(tx: &Connection, jobs: &mut Vec<Box<dyn Job>>) -> Result<(), GroupFailure> {
    for i in 0..jobs.len() {
        if jobs[i].abandoned() {
            continue;
        }
        if let Err(e) = control::run(tx, SAVEPOINT) {
            return Err(fail_rest(
                tx,
                jobs,
                i,
                GroupFailure::new("opening a savepoint", &e),
            ));
        }
        let end = if jobs[i].run(tx) {
            control::run(tx, RELEASE)
        } else {
            control::run(tx, ROLLBACK_TO).and_then(|()| control::run(tx, RELEASE))
        };
        let failure = match end {
            Err(e) => GroupFailure::new("ending a savepoint", &e),
            Ok(()) if tx.is_autocommit() => GroupFailure::rolled_back(),
            Ok(()) => continue,
        };
        return Err(fail_rest(tx, jobs, i + 1, failure));
    }
    Ok(())
}

/// Rolls the group back and answers the requests from `from` on with
/// `failure`, unrun; the group's others are answered by the caller.
fn fail_rest(
    tx: &Connection,
    jobs: &mut Vec<Box<dyn Job>>,
    from: usize,
    failure: GroupFailure,
) -> GroupFailure {
    control::rollback(tx);
    for job in jobs.drain(from..) {
        job.fail(failure.to_error());
    }
    failure
}

/// COMMITs the group; on a failed COMMIT the transaction is still open,
/// and is rolled back.
fn commit(tx: &Connection) -> Result<(), GroupFailure> {
    control::run(tx, COMMIT).map_err(|e| {
        control::rollback(tx);
        GroupFailure::new("committing", &e)
    })
}

#[cfg(test)]
mod tests;
