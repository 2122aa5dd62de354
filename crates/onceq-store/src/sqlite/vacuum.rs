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
