//! Background maintenance: lease expiry, dedupe-key purge, retention.

use jiff::{SignedDuration, Timestamp};
use rusqlite::{Connection, params};

use super::{
    leases::{self, Ending, Held},
    time,
};
use crate::{LeaseExpiry, Result};

/// `Store::lease_expire`: at most `limit` leases per call, so one pass is a
/// bounded write that does not hold up the writer's other requests.
pub(super) fn lease_expire(conn: &Connection, now: Timestamp, limit: u32) -> Result<LeaseExpiry> {
    let expired = {
        let mut stmt = conn.prepare_cached(sql!("lease_expired"))?;
        let rows = stmt.query_map(params![time::micros(now), i64::from(limit)], Held::from_row)?;
        rows.collect::<rusqlite::Result<Vec<_>>>()?
    };
    let mut out = LeaseExpiry::default();
    for held in &expired {
        match leases::end(conn, held, now, SignedDuration::ZERO)? {
            Ending::DeadLettered => out.dead_lettered += 1,
            Ending::Requeued | Ending::Dropped => out.requeued += 1,
        }
    }
    Ok(out)
}

/// `Store::dedupe_purge`.
pub(super) fn dedupe_purge(conn: &Connection, now: Timestamp) -> Result<u64> {
    let n = conn
        .prepare_cached(sql!("dedupe_purge"))?
        .execute([time::micros(now)])?;
    Ok(n as u64)
}

/// `Store::message_retention_purge`.
pub(super) fn retention_purge(conn: &Connection, now: Timestamp) -> Result<u64> {
    let n = conn
        .prepare_cached(sql!("message_retention_purge"))?
        .execute([time::micros(now)])?;
    Ok(n as u64)
}
