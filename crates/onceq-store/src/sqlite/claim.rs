//! Handing messages out under a lease.

use onceq_types::QueueType;
use rusqlite::{Connection, params};

use super::{queues, time};
use crate::rules::{finished, limits};
use crate::{ClaimedMessage, MessageClaim, Result};

/// How many messages the claim may take: `p.max`, or fewer under the
/// queue's limits (`rules::limits`). A queue without limits reads nothing
/// more; one with `max_in_flight` counts its leased messages (one writer:
/// no claim runs between this count and the leases below).
fn limited_max(conn: &Connection, queue: &queues::Queue, p: &MessageClaim) -> Result<u32> {
    let record = &queue.record;
    if record.max_in_flight.is_none() && record.rate_per_sec.is_none() {
        return Ok(p.max);
    }
    let in_flight: i64 = match record.max_in_flight {
        Some(_) => conn
            .prepare_cached(sql!("queue_in_flight"))?
            .query_row([queue.id], |r| r.get(0))?,
        None => 0,
    };
    let tokens = match record.rate_per_sec {
        Some(rate) => Some(limits::tokens_at(rate, bucket(queue)?, p.now)),
        None => None,
    };
    Ok(limits::allowance(
        p.max,
        record.max_in_flight,
        in_flight,
        tokens,
    ))
}

/// The queue's stored bucket, its time as a timestamp.
fn bucket(queue: &queues::Queue) -> Result<Option<(f64, jiff::Timestamp)>> {
    queue
        .bucket
        .map(|(tokens, at)| Ok((tokens, time::to_timestamp(at)?)))
        .transpose()
}

/// `Store::message_claim`.
pub(super) fn claim(conn: &Connection, p: &MessageClaim) -> Result<Vec<ClaimedMessage>> {
    let queue = queues::get(conn, &p.queue)?;
    // A paused queue hands nothing out (queue-api-2.md §6); its record is
    // read anyway, so this costs no statement.
    if queue.record.paused {
        return Ok(Vec::new());
    }
    let now = time::micros(p.now);
    // Due delayed messages become available first, so they compete for this
    // claim by priority and publish order like any other.
    conn.prepare_cached(sql!("message_promote"))?
        .execute(params![queue.id, now])?;
    let lease_expires_at = match p.visibility_timeout {
        Some(t) => time::after(p.now, t, "visibility timeout")?,
        None => time::after_secs(p.now, queue.record.visibility_timeout_default.into()),
    };
    let max = limited_max(conn, &queue, p)?;
    let next = match queue.record.queue_type {
        QueueType::Standard => sql!("message_next_available"),
        // Only the heads of its groups (see the statement).
        QueueType::Fifo => sql!("message_next_available_fifo"),
    };
    let seqs = {
        let mut stmt = conn.prepare_cached(next)?;
        let rows = stmt.query_map(params![queue.id, i64::from(max)], |r| r.get::<_, i64>(0))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()?
    };
    if let Some(rate) = queue.record.rate_per_sec {
        // One token per message handed out, refilled as of this claim.
        let tokens = limits::tokens_at(rate, bucket(&queue)?, p.now) - seqs.len() as f64;
        conn.prepare_cached(sql!("queue_bucket_spend"))?
            .execute(params![queue.id, tokens, now])?;
    }
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
