//! Races made on purpose: an operation run while another session holds a
//! lock it needs, that session's transaction ended the moment the operation
//! waits for it. No sleeps decide the order: the wait is read from
//! `pg_locks` (not from `pg_stat_activity`, whose rows a transaction reads
//! once and keeps).

use std::pin::pin;
use std::time::Duration;

use tokio_postgres::Client;

/// Runs `op` while `holder`'s open transaction holds its locks, and commits
/// that transaction as soon as some session waits for one of them, or,
/// had `op` nothing to wait for, once `op` is done: then `op` ran wholly
/// before the commit, which is what a test of a missing lock looks for.
/// `watch` is a third connection, for reading the waits. `op`'s answer.
pub async fn commit_once_waited_for<T>(
    holder: &Client,
    watch: &Client,
    op: impl Future<Output = T>,
) -> T {
    let pid: i32 = holder
        .query_one("SELECT pg_backend_pid()", &[])
        .await
        .expect("the holder's pid")
        .get(0);
    let mut op = pin!(op);
    let done = loop {
        tokio::select! {
            out = &mut op => break Some(out),
            () = tokio::time::sleep(Duration::from_millis(5)) => {
                if waits_for(watch, pid).await {
                    break None;
                }
            }
        }
    };
    holder
        .batch_execute("COMMIT")
        .await
        .expect("commit the holder");
    match done {
        Some(out) => out,
        None => op.await,
    }
}

/// Whether some session waits for a lock backend `pid` holds.
async fn waits_for(watch: &Client, pid: i32) -> bool {
    watch
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE NOT granted
                            AND $1 = ANY (pg_blocking_pids(pid)))",
            &[&pid],
        )
        .await
        .expect("read the waits")
        .get(0)
}
