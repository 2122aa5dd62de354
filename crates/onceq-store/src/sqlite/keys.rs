//! API keys (hashes only) and the projects they belong to.

use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::time;
use crate::{KeyInsert, KeyRecord, Result};

/// Creates the project if it does not exist yet.
pub(super) fn project_ensure(conn: &Connection, project: &str, now: Timestamp) -> Result<()> {
    conn.prepare_cached(sql!("project_ensure"))?
        .execute(params![project, time::micros(now)])?;
    Ok(())
}

/// `Store::key_insert`.
pub(super) fn insert(conn: &Connection, p: &KeyInsert) -> Result<KeyRecord> {
    project_ensure(conn, &p.project, p.now)?;
    conn.prepare_cached(sql!("key_insert"))?.execute(params![
        p.key_id,
        p.project,
        p.key_hash,
        p.label,
        time::micros(p.now)
    ])?;
    Ok(KeyRecord {
        key_id: p.key_id.clone(),
        project: p.project.clone(),
        label: p.label.clone(),
        // As stored: microseconds, like what a later lookup returns.
        created_at: time::stored(p.now),
        revoked_at: None,
    })
}

/// `Store::key_lookup`.
pub(super) fn lookup(conn: &Connection, key_hash: &[u8]) -> Result<Option<KeyRecord>> {
    Ok(conn
        .prepare_cached(sql!("key_lookup"))?
        .query_row([key_hash], record)
        .optional()?)
}

/// `Store::key_list`.
pub(super) fn list(conn: &Connection) -> Result<Vec<KeyRecord>> {
    let mut stmt = conn.prepare_cached(sql!("key_list"))?;
    let rows = stmt.query_map([], record)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// `Store::key_revoke`.
pub(super) fn revoke(conn: &Connection, key_id: &str, now: Timestamp) -> Result<bool> {
    let n = conn
        .prepare_cached(sql!("key_revoke"))?
        .execute(params![key_id, time::micros(now)])?;
    Ok(n > 0)
}

fn record(row: &Row<'_>) -> rusqlite::Result<KeyRecord> {
    Ok(KeyRecord {
        key_id: row.get(0)?,
        project: row.get(1)?,
        label: row.get(2)?,
        created_at: time::get(row, 3)?,
        revoked_at: time::get_opt(row, 4)?,
    })
}
