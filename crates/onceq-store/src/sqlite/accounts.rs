//! Projects' account settings, usage buckets and server heartbeats. None of
//! these run per request (see the PostgreSQL twin).

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::{keys::rate, time};
use crate::{
    ProjectRecord, RateLimit, Result, ServerHeartbeat, StoreError, UsageQuery, UsageRow, UsageTotal,
};

fn record(row: &Row<'_>) -> rusqlite::Result<ProjectRecord> {
    Ok(ProjectRecord {
        name: row.get(0)?,
        created_at: time::get(row, 1)?,
        credit_limit_micros: row.get::<_, Option<i64>>(2)?.map(unsigned),
        spent_micros: unsigned(row.get(3)?),
        rate: rate(row.get(4)?, row.get(5)?),
    })
}

/// `Store::project_list`.
pub(super) fn project_list(conn: &Connection) -> Result<Vec<ProjectRecord>> {
    let mut stmt = conn.prepare_cached(sql!("project_list"))?;
    let rows = stmt.query_map([], record)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// `Store::project_get`.
pub(super) fn project_get(conn: &Connection, name: &str) -> Result<Option<ProjectRecord>> {
    Ok(conn
        .prepare_cached(sql!("project_get"))?
        .query_row([name], record)
        .optional()?)
}

/// `Store::project_set_credit`.
pub(super) fn project_set_credit(
    conn: &Connection,
    name: &str,
    limit: Option<u64>,
) -> Result<bool> {
    let limit = limit.map(signed).transpose()?;
    let n = conn
        .prepare_cached(sql!("project_set_credit"))?
        .execute(params![name, limit])?;
    Ok(n > 0)
}

/// `Store::project_set_rate`.
pub(super) fn project_set_rate(
    conn: &Connection,
    name: &str,
    rate: Option<RateLimit>,
) -> Result<bool> {
    let n = conn
        .prepare_cached(sql!("project_set_rate"))?
        .execute(params![
            name,
            rate.map(|r| r.per_sec),
            rate.map(|r| r.burst)
        ])?;
    Ok(n > 0)
}

/// `Store::usage_flush`: every bucket, then every project's spend, in the
/// writer's transaction (so all or nothing).
pub(super) fn usage_flush(conn: &Connection, rows: &[UsageRow]) -> Result<()> {
    let mut add = conn.prepare_cached(sql!("usage_add"))?;
    let mut spend = std::collections::BTreeMap::<&str, u64>::new();
    for r in rows {
        add.execute(params![
            r.project,
            r.capability,
            time::micros(r.minute),
            signed(r.calls)?,
            signed(r.billable_calls)?,
            signed(r.cost_micros)?,
        ])?;
        *spend.entry(&r.project).or_default() += r.cost_micros;
    }
    let mut update = conn.prepare_cached(sql!("project_spend"))?;
    for (project, cost) in spend.into_iter().filter(|(_, c)| *c > 0) {
        update.execute(params![project, signed(cost)?])?;
    }
    Ok(())
}

/// `Store::usage_query`.
pub(super) fn usage_query(conn: &Connection, q: &UsageQuery) -> Result<Vec<UsageTotal>> {
    let mut stmt = conn.prepare_cached(sql!("usage_query"))?;
    let rows = stmt.query_map(
        params![q.project, time::micros(q.from), time::micros(q.to)],
        |r| {
            Ok(UsageTotal {
                capability: r.get(0)?,
                calls: unsigned(r.get(1)?),
                billable_calls: unsigned(r.get(2)?),
                cost_micros: unsigned(r.get(3)?),
            })
        },
    )?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// `Store::server_heartbeat`.
pub(super) fn server_heartbeat(conn: &Connection, p: &ServerHeartbeat) -> Result<u32> {
    conn.prepare_cached(sql!("server_forget"))?
        .execute([time::micros(p.live_after)])?;
    conn.prepare_cached(sql!("server_heartbeat"))?
        .execute(params![p.server_id, time::micros(p.now)])?;
    let live: u32 = conn
        .prepare_cached(sql!("server_count"))?
        .query_row([], |r| r.get(0))?;
    Ok(live.max(1))
}

/// `Store::server_leave`.
pub(super) fn server_leave(conn: &Connection, server_id: &str) -> Result<()> {
    conn.prepare_cached(sql!("server_leave"))?
        .execute([server_id])?;
    Ok(())
}

fn signed(v: u64) -> Result<i64> {
    i64::try_from(v).map_err(|_| StoreError::Invalid(format!("{v} is out of range")))
}

/// Counts and money are never negative (CHECKs say so).
fn unsigned(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}
