//! Transaction control (BEGIN, COMMIT, ROLLBACK, savepoints) through the
//! statement cache.
//!
//! Why not rusqlite's `Transaction` and `execute_batch`: they parse the
//! statement again on every call (`sqlite3_prepare` each time), and the
//! writer runs a savepoint and its release around every request and a
//! BEGIN and COMMIT around every group, a reader a BEGIN and ROLLBACK
//! around every read. Prepared once per connection, each is an `execute`
//! of a ready statement. What the statements do is unchanged.

use rusqlite::Connection;

/// The writer's group: takes the write lock at once (see `writer`).
pub(super) const BEGIN_IMMEDIATE: &str = "BEGIN IMMEDIATE";
/// A reader's snapshot: a read transaction from its first read on.
pub(super) const BEGIN: &str = "BEGIN DEFERRED";
pub(super) const COMMIT: &str = "COMMIT";
pub(super) const ROLLBACK: &str = "ROLLBACK";
/// The savepoint each request of a group runs in. One name suffices:
/// savepoints are strictly nested and each is released before the next
/// request starts.
pub(super) const SAVEPOINT: &str = "SAVEPOINT onceq_request";
pub(super) const RELEASE: &str = "RELEASE onceq_request";
/// Undoes the request's changes (a `RELEASE` then ends the savepoint).
pub(super) const ROLLBACK_TO: &str = "ROLLBACK TO onceq_request";

/// Every statement of this module, for the test sizing the statement cache.
#[cfg(test)]
pub(super) const ALL: [&str; 7] = [
    BEGIN_IMMEDIATE,
    BEGIN,
    COMMIT,
    ROLLBACK,
    SAVEPOINT,
    RELEASE,
    ROLLBACK_TO,
];

/// Runs one of this module's statements through the statement cache.
pub(super) fn run(conn: &Connection, sql: &'static str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(|_| ())
}

/// Rolls back the open transaction, if any; whether the connection is out
/// of any transaction afterwards (a failed ROLLBACK may leave it in one).
pub(super) fn rollback(conn: &Connection) -> bool {
    if !conn.is_autocommit()
        && let Err(e) = run(conn, ROLLBACK)
    {
        tracing::warn!(error = %e, "SQLite ROLLBACK failed");
    }
    conn.is_autocommit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let conn = super::super::conn::open_writer(&dir.path().join("t.db")).unwrap();
        conn.execute_batch("CREATE TABLE t (v INTEGER)").unwrap();
        (dir, conn)
    }

    fn count(conn: &Connection) -> i64 {
        conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn savepoints_keep_or_undo_one_request_and_commit_keeps_the_rest() {
        let (_dir, conn) = db();
        run(&conn, BEGIN_IMMEDIATE).unwrap();
        assert!(!conn.is_autocommit());
        for (v, keep) in [(1, true), (2, false), (3, true)] {
            run(&conn, SAVEPOINT).unwrap();
            conn.execute("INSERT INTO t (v) VALUES (?1)", [v]).unwrap();
            if !keep {
                run(&conn, ROLLBACK_TO).unwrap();
            }
            run(&conn, RELEASE).unwrap();
        }
        run(&conn, COMMIT).unwrap();
        assert!(conn.is_autocommit());
        let kept: Vec<i64> = conn
            .prepare("SELECT v FROM t ORDER BY v")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(kept, [1, 3]);
    }

    #[test]
    fn rollback_undoes_the_transaction_and_is_a_no_op_outside_one() {
        let (_dir, conn) = db();
        assert!(rollback(&conn), "nothing to roll back");
        run(&conn, BEGIN).unwrap();
        conn.execute("INSERT INTO t (v) VALUES (1)", []).unwrap();
        assert!(rollback(&conn));
        assert_eq!(count(&conn), 0);
    }
}
