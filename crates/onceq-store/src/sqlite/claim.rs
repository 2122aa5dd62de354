//! Handing messages out under a lease.

use onceq_types::QueueType;
use rusqlite::{Connection, params};

use super::{queues, time};
use crate::rules::finished;
use crate::{ClaimedMessage, MessageClaim, Result};

/// `Store::message_claim`.
pub(super) fn claim(conn: &Connection, p: &MessageClaim) -> Result<Vec<ClaimedMessage>> {
    let queue = queues::get(conn, &p.queue)?;
    let now = time::micros(p.now);
    // Due delayed messages become available first, so they compete for this
    // claim by priority and publish order like any other.
    conn.prepare_cached(sql!("message_promote"))?
        .execute(params![queue.id, now])?;
    let lease_expires_at = match p.visibility_timeout {
        Some(t) => time::after(p.now, t, "visibility timeout")?,
        None => time::after_secs(p.now, queue.record.visibility_timeout_default.into()),
    };
    let next = match queue.record.queue_type {
        QueueType::Standard => sql!("message_next_available"),
        // Only the heads of its groups (see the statement).
        QueueType::Fifo => sql!("message_next_available_fifo"),
    };
    let seqs = {
        let mut stmt = conn.prepare_cached(next)?;
        let rows = stmt.query_map(params![queue.id, i64::from(p.max)], |r| r.get::<_, i64>(0))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()?
    };
    let mut lease = conn.prepare_cached(sql!("message_lease"))?;
    seqs.into_iter()
        .map(|seq| {
            // One receipt per lease, from Rust (`ids::receipt`) rather than
            // SQL, so both backends make them the same way.
            let receipt = finished::receipt(queue.record.completed_retention_seconds > 0);
            let (message_id, payload, delivery_count, created_at, idempotency_key, headers) = lease
                .query_row(params![seq, receipt, lease_expires_at, now], |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        time::get(r, 3)?,
                        r.get(4)?,
                        r.get(5)?,
                    ))
                })?;
            Ok(ClaimedMessage {
                message_id,
                payload,
                delivery_count,
                receipt,
                created_at,
                lease_expires_at: time::to_timestamp(lease_expires_at)?,
                idempotency_key,
                headers,
            })
        })
        .collect()
}
