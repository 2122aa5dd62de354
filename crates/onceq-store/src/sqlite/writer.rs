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

use rusqlite::{Connection, Transaction, TransactionBehavior};
use tokio::sync::{mpsc, oneshot};

use super::errors::{GroupFailure, writer_gone};
use crate::{Result, StoreError};

/// The most requests one transaction carries. Bounds the latency a request
/// waits behind others of its group, and the work lost to a failed COMMIT.
pub(super) const MAX_GROUP: usize = 256;

/// Requests that may wait for the thread; beyond that, callers wait to send
/// (backpressure instead of unbounded memory).
const CHANNEL_CAPACITY: usize = 4 * MAX_GROUP;

/// Savepoint each request runs in. One name suffices: savepoints are strictly
/// nested and each is released before the next request starts.
const SAVEPOINT: &str = "SAVEPOINT onceq_request";
const RELEASE: &str = "RELEASE onceq_request";
const ROLLBACK: &str = "ROLLBACK TO onceq_request; RELEASE onceq_request";

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
        F: FnOnce(&Transaction<'_>) -> Result<T> + Send + 'static,
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
    fn run(self: Box<Self>, tx: &Transaction<'_>) -> Box<dyn Done>;
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
    F: FnOnce(&Transaction<'_>) -> Result<T> + Send + 'static,
    T: Send + 'static,
{
    fn run(self: Box<Self>, tx: &Transaction<'_>) -> Box<dyn Done> {
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
fn commit_group(conn: &mut Connection, jobs: impl Iterator<Item = Box<dyn Job>>) {
    // IMMEDIATE takes the write lock now, waiting out `busy_timeout` if
    // another process holds it. A deferred transaction would take it at the
    // first write and could then fail with SQLITE_BUSY without waiting.
    let tx = match conn.transaction_with_behavior(TransactionBehavior::Immediate) {
        Ok(tx) => tx,
        Err(e) => {
            let failure = GroupFailure::new("beginning a transaction", &e);
            tracing::warn!(error = %e, "SQLite group could not begin");
            for job in jobs {
                job.fail(failure.to_error());
            }
            return;
        }
    };

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
        if let Err(e) = tx.execute_batch(SAVEPOINT) {
            let f = GroupFailure::new("opening a savepoint", &e);
            job.fail(f.to_error());
            failure = Some(f);
            continue;
        }
        let done = job.run(&tx);
        let end = if done.succeeded() { RELEASE } else { ROLLBACK };
        if let Err(e) = tx.execute_batch(end) {
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
            let _ = tx.rollback();
            Err(failure)
        }
        // On a failed COMMIT the transaction is still open; dropping it
        // (inside `commit`) rolls it back.
        None => tx.commit().map_err(|e| GroupFailure::new("committing", &e)),
    };
    if let Err(failure) = &commit {
        tracing::warn!(?failure, requests = ran.len(), "SQLite group failed");
    }
    for done in ran {
        done.answer(commit.as_ref().map(|_| ()));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc as std_mpsc;

    use super::*;

    /// A writer on a fresh database with a table `t`, and a table `child`
    /// whose foreign key is checked only at COMMIT: inserting an orphan there
    /// succeeds as a statement and makes the group's COMMIT fail.
    fn setup(dir: &std::path::Path) -> Writer {
        setup_bounded(dir, crate::DEFAULT_OP_TIMEOUT)
    }

    /// [`setup`], callers waiting at most `bound`.
    fn setup_bounded(dir: &std::path::Path, bound: Duration) -> Writer {
        let conn = super::super::conn::open_writer(&dir.join("t.db")).unwrap();
        conn.execute_batch(
            "CREATE TABLE t (v INTEGER NOT NULL UNIQUE);
             CREATE TABLE child (v INTEGER REFERENCES t (v) DEFERRABLE INITIALLY DEFERRED);",
        )
        .unwrap();
        Writer::spawn(conn, bound).unwrap()
    }

    fn count(dir: &std::path::Path) -> i64 {
        let conn = Connection::open(dir.join("t.db")).unwrap();
        conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap()
    }

    /// Holds the thread inside a request until `release` is sent, so the
    /// requests sent meanwhile pile up in the channel and form one group.
    async fn block(writer: &Writer) -> (std_mpsc::Sender<()>, tokio::task::JoinHandle<Result<()>>) {
        let (release, wait) = std_mpsc::channel::<()>();
        let (started, running) = oneshot::channel();
        let w = writer.clone();
        let h = tokio::spawn(async move {
            w.run(move |_| {
                started.send(()).unwrap();
                wait.recv().unwrap();
                Ok(())
            })
            .await
        });
        running.await.unwrap();
        (release, h)
    }

    async fn wait_queued(writer: &Writer, n: usize) {
        while CHANNEL_CAPACITY - writer.jobs.capacity() < n {
            tokio::task::yield_now().await;
        }
    }

    /// Sends `insert v` requests for each `v`, all queued behind a blocker so
    /// they run as one group, and returns their answers in order.
    async fn group<F>(writer: &Writer, values: &[i64], f: F) -> Vec<Result<i64>>
    where
        F: Fn(&Transaction<'_>, i64) -> Result<i64> + Send + Sync + Copy + 'static,
    {
        let (release, blocker) = block(writer).await;
        let mut handles = Vec::new();
        for &v in values {
            let w = writer.clone();
            handles.push(tokio::spawn(async move {
                w.run(move |tx| {
                    tx.execute("INSERT INTO t (v) VALUES (?1)", [v])?;
                    f(tx, v)
                })
                .await
            }));
        }
        wait_queued(writer, values.len()).await;
        release.send(()).unwrap();
        blocker.await.unwrap().unwrap();
        let mut out = Vec::new();
        for h in handles {
            out.push(h.await.unwrap());
        }
        out
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failing_request_does_not_sink_its_group() {
        let dir = tempfile::tempdir().unwrap();
        let writer = setup(dir.path());
        let answers = group(&writer, &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], |tx, v| {
            match v {
                // Inserted, then fails: the insert must be undone.
                3 => Err(StoreError::Invalid("no threes".into())),
                // A constraint error from SQLite itself.
                5 => {
                    tx.execute("INSERT INTO t (v) VALUES (?1)", [v])?;
                    Ok(v)
                }
                7 => panic!("seven"),
                _ => Ok(v),
            }
        })
        .await;
        for (v, r) in answers.into_iter().enumerate() {
            match v {
                3 => assert!(matches!(r, Err(StoreError::Invalid(_))), "{r:?}"),
                5 | 7 => assert!(matches!(r, Err(StoreError::Internal(_))), "{r:?}"),
                _ => assert_eq!(r.unwrap(), v as i64),
            }
        }
        assert_eq!(count(dir.path()), 7);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_commit_fails_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let writer = setup(dir.path());
        let answers = group(&writer, &[1, 2, 3], |tx, v| {
            if v == 2 {
                // Passes now, fails the COMMIT.
                tx.execute("INSERT INTO child (v) VALUES (42)", [])?;
            }
            Ok(v)
        })
        .await;
        for r in answers {
            assert!(matches!(r, Err(StoreError::Internal(_))), "{r:?}");
        }
        assert_eq!(count(dir.path()), 0);
        // The thread goes on: the next group commits.
        let r = writer
            .run(|tx| Ok(tx.execute("INSERT INTO t (v) VALUES (1)", [])?))
            .await;
        assert_eq!(r.unwrap(), 1);
        assert_eq!(count(dir.path()), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn replies_come_after_commit() {
        let dir = tempfile::tempdir().unwrap();
        let writer = setup(dir.path());
        let mut handles = Vec::new();
        for v in 0..50_i64 {
            let w = writer.clone();
            let path = dir.path().join("t.db");
            handles.push(tokio::spawn(async move {
                w.run(move |tx| Ok(tx.execute("INSERT INTO t (v) VALUES (?1)", [v])?))
                    .await
                    .unwrap();
                // Another connection sees the row as soon as we are answered.
                let conn = Connection::open(path).unwrap();
                let n: i64 = conn
                    .query_row("SELECT count(*) FROM t WHERE v = ?1", [v], |r| r.get(0))
                    .unwrap();
                assert_eq!(n, 1);
            }));
        }
        for h in handles {
            h.await.unwrap();
        }
        assert_eq!(count(dir.path()), 50);
    }

    /// A caller that waited out the store timeout behind a stuck group is
    /// answered `Unavailable`, and its write is not done afterwards.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_caller_that_gave_up_is_answered_and_its_write_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let bound = Duration::from_millis(200);
        let writer = setup_bounded(dir.path(), bound);
        let (release, blocker) = block(&writer).await;
        let started = std::time::Instant::now();
        let r = writer
            .run(|tx| Ok(tx.execute("INSERT INTO t (v) VALUES (1)", [])?))
            .await;
        assert!(matches!(r, Err(StoreError::Unavailable(_))), "{r:?}");
        assert!(started.elapsed() < bound * 5, "{:?}", started.elapsed());
        release.send(()).unwrap();
        // The blocker's own caller may have given up too (it waited as
        // long); its request writes nothing either way.
        let _ = blocker.await.unwrap();
        // The thread goes on, and the abandoned insert never ran.
        let r = writer
            .run(|tx| Ok(tx.execute("INSERT INTO t (v) VALUES (2)", [])?))
            .await;
        assert_eq!(r.unwrap(), 1);
        assert_eq!(count(dir.path()), 1);
    }

    #[tokio::test]
    async fn a_stopped_writer_is_unavailable() {
        // A writer whose thread is gone: its receiving end is dropped.
        let (jobs, rx) = mpsc::channel::<Box<dyn Job>>(1);
        drop(rx);
        let dead = Writer {
            jobs,
            bound: crate::DEFAULT_OP_TIMEOUT,
        };
        let r = dead.run(|_| Ok(())).await;
        assert!(matches!(r, Err(StoreError::Unavailable(_))), "{r:?}");
    }
}
