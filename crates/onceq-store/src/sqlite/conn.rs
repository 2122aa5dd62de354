//! Opening connections: the PRAGMAs every connection needs.

use std::{path::Path, time::Duration};

use rusqlite::{Connection, OpenFlags};

use crate::{Result, StoreError};

/// How long a statement waits for a lock another connection (or process)
/// holds before it fails with `SQLITE_BUSY`.
const BUSY_TIMEOUT: Duration = Duration::from_millis(5000);

/// Statements kept prepared per connection: more than the `.sql` files, so
/// none is ever re-prepared.
const STATEMENT_CACHE: usize = 64;

/// Opens the write connection: WAL (readers never block the writer nor the
/// writer readers), `synchronous=FULL` (a COMMIT is on disk before it
/// returns, so an acknowledged write survives a power cut), foreign keys on
/// (the schema's CASCADE and SET NULL rely on them).
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
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    Ok(conn)
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
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    Ok(conn)
}
