//! What `/metrics` reads: every queue's depth.

use jiff::Timestamp;
use rusqlite::{Connection, params};

use super::time;
use crate::depths::{DepthRow, with_dead_letters};
use crate::{QueueDepth, QueueRef, Result};

/// `Store::queue_depths`.
pub(super) fn queue_depths(conn: &Connection, now: Timestamp) -> Result<Vec<QueueDepth>> {
    let mut stmt = conn.prepare_cached(sql!("queue_depths"))?;
    let rows = stmt.query_map(params![time::micros(now)], |r| {
        Ok(DepthRow {
            id: r.get(0)?,
            dlq_id: r.get(3)?,
            depth: QueueDepth {
                queue: QueueRef::new(r.get::<_, String>(1)?, r.get::<_, String>(2)?),
                available: r.get::<_, i64>(4)? + r.get::<_, i64>(5)?,
                delayed: r.get(6)?,
                in_flight: r.get(7)?,
                dead_lettered: 0,
                oldest_created_at: time::get_opt(r, 8)?,
            },
        })
    })?;
    let rows = rows.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(with_dead_letters(rows))
}
