//! API keys (hashes only) and the projects they belong to.

use jiff::Timestamp;
use onceq_types::scope::{Actions, KeyScope, QueuePatterns};
use rusqlite::{Connection, OptionalExtension, Row, params, types::Type};

use super::time;
use crate::{KeyInsert, KeyRecord, RateLimit, Result};

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
        time::micros(p.now),
        p.scope.actions.to_string(),
        p.scope.queues.to_string(),
        p.expires_at.map(time::micros),
    ])?;
    Ok(KeyRecord {
        key_id: p.key_id.clone(),
        project: p.project.clone(),
        label: p.label.clone(),
        // As stored: microseconds, like what a later lookup returns.
        created_at: time::stored(p.now),
        revoked_at: None,
        scope: p.scope.clone(),
        expires_at: p.expires_at.map(time::stored),
        rate: None,
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

/// `Store::key_get`.
pub(super) fn get(conn: &Connection, key_id: &str) -> Result<Option<KeyRecord>> {
    Ok(conn
        .prepare_cached(sql!("key_get"))?
        .query_row([key_id], record)
        .optional()?)
}

/// `Store::key_set_expiry`.
pub(super) fn set_expiry(
    conn: &Connection,
    key_id: &str,
    expires_at: Option<Timestamp>,
) -> Result<bool> {
    let n = conn
        .prepare_cached(sql!("key_set_expiry"))?
        .execute(params![key_id, expires_at.map(time::micros)])?;
    Ok(n > 0)
}

/// `Store::key_set_rate`.
pub(super) fn set_rate(conn: &Connection, key_id: &str, rate: Option<RateLimit>) -> Result<bool> {
    let n = conn.prepare_cached(sql!("key_set_rate"))?.execute(params![
        key_id,
        rate.map(|r| r.per_sec),
        rate.map(|r| r.burst)
    ])?;
    Ok(n > 0)
}

fn record(row: &Row<'_>) -> rusqlite::Result<KeyRecord> {
    Ok(KeyRecord {
        key_id: row.get(0)?,
        project: row.get(1)?,
        label: row.get(2)?,
        created_at: time::get(row, 3)?,
        revoked_at: time::get_opt(row, 4)?,
        scope: KeyScope {
            actions: parsed(row, 5, Actions::parse)?,
            queues: parsed(row, 6, QueuePatterns::parse)?,
        },
        expires_at: time::get_opt(row, 7)?,
        rate: rate(row.get(8)?, row.get(9)?),
    })
}

/// A text column in its parsed form.
fn parsed<T>(
    row: &Row<'_>,
    idx: usize,
    parse: fn(&str) -> Result<T, String>,
) -> rusqlite::Result<T> {
    let text: String = row.get(idx)?;
    parse(&text).map_err(|e| rusqlite::Error::FromSqlConversionFailure(idx, Type::Text, e.into()))
}

/// A stored rate limit (both columns set, or neither: a CHECK says so).
pub(super) fn rate(per_sec: Option<f64>, burst: Option<u32>) -> Option<RateLimit> {
    Some(RateLimit {
        per_sec: per_sec?,
        burst: burst?,
    })
}
