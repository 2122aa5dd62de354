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
        let (held, delayed, in_flight): (i64, i64, i64) = (r.get(4)?, r.get(5)?, r.get(6)?);
        Ok(DepthRow {
            id: r.get(0)?,
            dlq_id: r.get(3)?,
            depth: QueueDepth {
                queue: QueueRef::new(r.get::<_, String>(1)?, r.get::<_, String>(2)?),
                available: held - delayed - in_flight,
                delayed,
                in_flight,
                dead_lettered: 0,
                oldest_created_at: time::get_opt(r, 7)?,
                paused: r.get(8)?,
            },
        })
    })?;
    let rows = rows.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(with_dead_letters(rows))
}
