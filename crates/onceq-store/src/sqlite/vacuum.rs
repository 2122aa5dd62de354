//! Giving the file's space back. SQLite keeps a deleted row's pages in the
//! file, on its freelist, for later writes: after a purge the file keeps
//! its peak size forever. With `auto_vacuum = INCREMENTAL` the freelist
//! can be handed back to the file system a few pages at a time
//! (`PRAGMA incremental_vacuum(N)`), inside an ordinary write, without
//! VACUUM's copy of the whole file; the purger does so after each pass
//! (`Store::space_reclaim`). In WAL mode the file itself shrinks at the
//! next checkpoint.
//!
//! The mode is a property of the file, fixed when its first table is made:
//! a new file gets it before the migrations run; a file made before (mode
//! NONE) is converted once, by one `VACUUM` as the server opens it (it
//! rewrites the file: it takes as long as copying it and needs as much
//! free disk again). An admin command opening an existing store leaves the
//! conversion to the server.

use rusqlite::Connection;

use crate::{OpenMode, Result};

/// `PRAGMA auto_vacuum`'s value for INCREMENTAL.
const INCREMENTAL: i64 = 2;

/// The file's `auto_vacuum` mode.
pub(super) fn mode(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("PRAGMA auto_vacuum", [], |r| r.get(0))?)
}

/// Makes the writer's file incremental-vacuum (see the module doc).
pub(super) fn ensure_incremental(conn: &Connection, open: OpenMode) -> Result<()> {
    if mode(conn)? == INCREMENTAL || matches!(open, OpenMode::Existing) {
        return Ok(());
    }
    conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")?;
    // A file without tables takes the mode at once; one with tables only
    // through VACUUM.
    if mode(conn)? == INCREMENTAL {
        return Ok(());
    }
    let before = file_bytes(conn)?;
    tracing::info!(
        bytes = before,
        "sqlite: converting the file to auto_vacuum=INCREMENTAL (one VACUUM, once)"
    );
    conn.execute_batch("VACUUM")?;
    tracing::info!(
        before,
        after = file_bytes(conn)?,
        "sqlite: file converted to auto_vacuum=INCREMENTAL"
    );
    Ok(())
}

/// Pages × page size: the file's size after a checkpoint.
fn file_bytes(conn: &Connection) -> Result<i64> {
    let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    let size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    Ok(pages * size)
}

/// `Store::space_reclaim`: hands back up to `max_pages` free pages; the
/// bytes handed back.
pub(super) fn reclaim(conn: &Connection, max_pages: u32) -> Result<u64> {
    let free = |c: &Connection| -> Result<i64> {
        Ok(c.query_row("PRAGMA freelist_count", [], |r| r.get(0))?)
    };
    let before = free(conn)?;
    if before == 0 {
        return Ok(0);
    }
    // incremental_vacuum answers a row per page freed: step through them.
    let mut stmt = conn.prepare(&format!("PRAGMA incremental_vacuum({max_pages})"))?;
    let mut rows = stmt.query([])?;
    while rows.next()?.is_some() {}
    drop(rows);
    let size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    Ok(u64::try_from((before - free(conn)?) * size).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use jiff::{SignedDuration, Timestamp};

    use super::*;
    use crate::sqlite::{DB_FILE, SqliteStore};
    use crate::{LedgerAnswer, LedgerClaim, LedgerComplete, LedgerKey, Store};

    /// The file's size once the WAL is folded into it (what `ls` shows
    /// after the next checkpoint).
    fn checkpointed_size(dir: &std::path::Path) -> u64 {
        let path = dir.join(DB_FILE);
        let conn = Connection::open(&path).unwrap();
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
        std::fs::metadata(&path).unwrap().len()
    }

    /// 200 answers of 100 KB (20 MB) kept, then purged and given back:
    /// the file grows to hold them and shrinks to near its empty size.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn purged_ledger_space_goes_back_to_the_file_system() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path()).await.unwrap();
        let empty = checkpointed_size(dir.path());
        let now = Timestamp::from_second(1_000_000).unwrap();
        for n in 0..200 {
            let key = LedgerKey {
                project: "p".into(),
                capability: "cron.update".into(),
                key: format!("k{n}"),
            };
            let claim = LedgerClaim {
                key: key.clone(),
                fingerprint: [1; 32],
                token: "t".into(),
                locked_until: now + SignedDuration::from_secs(60),
                expires_at: now + SignedDuration::from_hours(24),
                now,
            };
            store.ledger_claim(claim).await.unwrap();
            let answer = LedgerAnswer {
                status: 200,
                headers: Vec::new(),
                body: vec![b'x'; 100_000],
            };
            let done = LedgerComplete {
                key,
                token: "t".into(),
                answer,
                now,
            };
            assert!(store.ledger_complete(done).await.unwrap());
        }
        let full = checkpointed_size(dir.path());
        let later = now + SignedDuration::from_hours(25);
        assert_eq!(store.ledger_purge(later, 1000).await.unwrap(), 200);
        assert_eq!(
            checkpointed_size(dir.path()),
            full,
            "a purge alone keeps the pages"
        );
        let mut given = 0;
        loop {
            let n = store.space_reclaim(4096).await.unwrap();
            if n == 0 {
                break;
            }
            given += n;
        }
        let after = checkpointed_size(dir.path());
        eprintln!("empty {empty} B, 200 answers kept {full} B, purged and reclaimed {after} B");
        assert!(full > empty + 20_000_000, "{full}");
        assert!(given >= 20_000_000, "{given}");
        assert!(after < empty + 1_000_000, "{after}");
    }

    /// A file made before (auto_vacuum NONE, with tables and rows) is
    /// converted once as the server opens it; an admin open leaves it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_older_file_is_converted_once_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(
                "PRAGMA auto_vacuum = NONE; CREATE TABLE t (x); INSERT INTO t VALUES (1);",
            )
            .unwrap();
            assert_eq!(mode(&conn).unwrap(), 0);
        }
        let conn = Connection::open(&path).unwrap();
        ensure_incremental(&conn, OpenMode::Existing).unwrap();
        assert_eq!(mode(&conn).unwrap(), 0, "an admin command converts nothing");
        ensure_incremental(&conn, OpenMode::Create).unwrap();
        assert_eq!(mode(&conn).unwrap(), INCREMENTAL);
        let rows: i64 = conn
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 1, "VACUUM keeps the rows");
        drop(conn);
        // And a store opened on it keeps the mode.
        let _store = SqliteStore::open(dir.path()).await.unwrap();
        let conn = Connection::open(&path).unwrap();
        assert_eq!(mode(&conn).unwrap(), INCREMENTAL);
    }
}
