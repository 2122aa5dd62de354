//! Opening connections: the PRAGMAs every connection needs.

use std::{path::Path, time::Duration};

use rusqlite::{Connection, OpenFlags, config::DbConfig};

use crate::{Result, StoreError};

/// How long a statement waits for a lock another connection (or process)
/// holds before it fails with `SQLITE_BUSY`.
const BUSY_TIMEOUT: Duration = Duration::from_millis(5000);

/// Statements kept prepared per connection: more than every statement the
/// store runs (its `.sql` files, the shared ledger's and the transaction
/// control of `control`: about 120), so none is ever evicted and prepared
/// again. rusqlite's default is 16; the test below fails when the
/// statements outgrow this.
const STATEMENT_CACHE: usize = 160;

/// Opens the write connection: WAL (readers never block the writer nor the
/// writer readers), `synchronous=FULL` (a COMMIT is on disk before it
/// returns, so an acknowledged write survives a power cut), foreign keys on
/// (the schema's CASCADE and SET NULL rely on them), temporary storage in
/// memory: a group's savepoints keep the pages they change in a
/// sub-journal, which past 64 KiB spilled to a new temporary file in
/// `/var/tmp`, opened and removed about 60 times a second under the
/// 8-producer enqueue (docs/performance.md, session 17).
pub(super) fn open_writer(path: &Path) -> Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::internal(format!(
            "SQLite refused WAL mode (journal_mode is {mode})"
        )));
    }
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    keep_plans(&conn)?;
    Ok(conn)
}

/// Keeps every statement prepared once: a cache sized for all of them, and
/// the query planner stability guarantee (QPSG). Without QPSG, SQLite marks
/// a statement for re-preparing when the plan it chose might depend on a
/// bound value (a `col = ?` filter, whose 0/1 values it estimates
/// differently), and rusqlite's cache clears the bindings of every
/// statement it takes back, which then re-prepares it at its next step:
/// the profile of a publish showed `queue_get` parsed again on every call
/// (`sqlite3Reprepare`, a third of the server's instructions). With QPSG a
/// statement keeps the plan it was prepared with whatever is bound; no
/// statement here relies on a bound value for its plan (the partial
/// indexes' conditions are literals in the statements; the plan tests
/// check the indexes used).
fn keep_plans(conn: &Connection) -> Result<()> {
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    Ok(())
}

/// Opens a read connection. `query_only` makes a write through it an error
/// rather than a second writer racing the writer thread for the lock.
pub(super) fn open_reader(path: &Path) -> Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI,
    )?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.pragma_update(None, "query_only", "ON")?;
    keep_plans(&conn)?;
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `.sql` files of a directory.
    fn statements_in(dir: &str) -> usize {
        std::fs::read_dir(format!("{}/{dir}", env!("CARGO_MANIFEST_DIR")))
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                let name = name.to_str().unwrap();
                // The ledger's schema is a migration, not a statement.
                name.ends_with(".sql") && name != "schema.sql"
            })
            .count()
    }

    /// `queue_get` run four times through the cache, for different
    /// queues: how many times SQLite re-prepared it.
    fn queue_get_reprepares(conn: &Connection) -> i32 {
        for name in ["a", "b", "a", "c"] {
            let mut stmt = conn.prepare_cached(sql!("queue_get")).unwrap();
            assert!(!stmt.exists(rusqlite::params!["p", name]).unwrap());
        }
        let stmt = conn.prepare_cached(sql!("queue_get")).unwrap();
        stmt.get_status(rusqlite::StatementStatus::RePrepare)
    }

    fn migrated(dir: &std::path::Path) -> Connection {
        let mut conn = open_writer(&dir.join("t.db")).unwrap();
        super::super::migrate::run(&mut conn, crate::OpenMode::Create).unwrap();
        conn
    }

    #[test]
    fn cached_statements_are_not_prepared_again_on_each_use() {
        let dir = tempfile::tempdir().unwrap();
        let conn = migrated(dir.path());
        assert_eq!(queue_get_reprepares(&conn), 0);
    }

    #[test]
    fn the_statement_cache_holds_every_statement() {
        let all = statements_in("src/sqlite/sql")
            + statements_in("../onceq/sql/ledger/sqlite")
            + super::super::control::ALL.len();
        assert!(all > 100, "counted {all}: the directories moved?");
        assert!(
            all <= STATEMENT_CACHE,
            "{all} statements, a cache of {STATEMENT_CACHE}: raise STATEMENT_CACHE"
        );
    }
}
