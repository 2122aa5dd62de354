//! Ending or stretching a lease: ack, nack, extend, and the ending a failed
//! hand-out shares with lease expiry.
//!
//! Each acts only on the current lease: the message must be in flight and,
//! when the caller gives a receipt, under that receipt.

use jiff::Timestamp;
use onceq_types::MessageStatus;
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::time;
use crate::{ExtendOutcome, LeaseRef, MessageAck, MessageExtend, MessageNack, NackOutcome, Result};

/// `Store::message_ack`.
pub(super) fn ack(conn: &Connection, p: &MessageAck) -> Result<bool> {
    let l = &p.lease;
    let n = conn.prepare_cached(sql!("message_ack"))?.execute(params![
        l.queue.project,
        l.queue.queue,
        l.message_id,
        l.receipt
    ])?;
    Ok(n > 0)
}

/// `Store::message_nack`.
pub(super) fn nack(conn: &Connection, p: &MessageNack) -> Result<NackOutcome> {
    let Some(held) = held(conn, &p.lease)? else {
        return Ok(NackOutcome {
            nacked: false,
            requeued: false,
            dead_lettered: false,
            delivery_count: in_queue(conn, &p.lease)?.map_or(0, |(count, _)| count),
        });
    };
    let ending = if p.requeue {
        end(conn, &held, p.now, p.delay)?
    } else if let Some(dlq_id) = held.dlq_id {
        dead_letter(conn, held.seq, dlq_id, p.now)?;
        Ending::DeadLettered
    } else {
        // Nowhere to dead-letter to: the message is dropped, as asked.
        conn.prepare_cached(sql!("message_delete"))?
            .execute([held.seq])?;
        Ending::Dropped
    };
    Ok(NackOutcome {
        nacked: true,
        requeued: ending == Ending::Requeued,
        dead_lettered: ending == Ending::DeadLettered,
        delivery_count: held.delivery_count,
    })
}

/// `Store::message_extend`.
pub(super) fn extend(conn: &Connection, p: &MessageExtend) -> Result<ExtendOutcome> {
    let l = &p.lease;
    let until = time::after(p.now, p.visibility_timeout, "visibility timeout")?;
    let n = conn
        .prepare_cached(sql!("message_extend"))?
        .execute(params![
            l.queue.project,
            l.queue.queue,
            l.message_id,
            l.receipt,
            until
        ])?;
    if n > 0 {
        return Ok(ExtendOutcome {
            extended: true,
            lease_expires_at: Some(time::to_timestamp(until)?),
        });
    }
    // Not ours (or not in flight): report the lease's end as it stands.
    Ok(ExtendOutcome {
        extended: false,
        lease_expires_at: in_queue(conn, l)?.and_then(|(_, lease)| lease),
    })
}

/// An in-flight message whose lease is ending.
#[derive(Debug, Clone, Copy)]
pub(super) struct Held {
    seq: i64,
    delivery_count: i32,
    max_retries: i32,
    dlq_id: Option<i64>,
}

impl Held {
    /// From `message_held.sql` or `lease_expire.sql`.
    pub(super) fn from_row(r: &Row<'_>) -> rusqlite::Result<Held> {
        Ok(Held {
            seq: r.get(0)?,
            delivery_count: r.get(1)?,
            max_retries: r.get(2)?,
            dlq_id: r.get(3)?,
        })
    }
}

/// How a lease ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ending {
    /// Back in its queue.
    Requeued,
    /// Moved to the dead-letter queue.
    DeadLettered,
    /// Deleted (nack without requeue, no DLQ).
    Dropped,
}

/// Ends a failed hand-out (nack with requeue, or lease expiry): the message
/// goes to the DLQ after its last allowed hand-out (`max_retries + 1`), else
/// back to its queue, held back by `delay` if positive. A queue without a
/// DLQ always requeues.
pub(super) fn end(
    conn: &Connection,
    held: &Held,
    now: Timestamp,
    delay: jiff::SignedDuration,
) -> Result<Ending> {
    if let Some(dlq_id) = held.dlq_id
        && i64::from(held.delivery_count) > i64::from(held.max_retries)
    {
        dead_letter(conn, held.seq, dlq_id, now)?;
        return Ok(Ending::DeadLettered);
    }
    let (state, visible_at) = if delay.is_positive() {
        (MessageStatus::Delayed, time::after(now, delay, "delay")?)
    } else {
        (MessageStatus::Available, time::micros(now))
    };
    conn.prepare_cached(sql!("message_requeue"))?
        .execute(params![held.seq, state.as_str(), visible_at])?;
    Ok(Ending::Requeued)
}

/// Moves the row into the DLQ: same id, payload and delivery count,
/// available there now.
fn dead_letter(conn: &Connection, seq: i64, dlq_id: i64, now: Timestamp) -> Result<()> {
    conn.prepare_cached(sql!("message_dead_letter"))?
        .execute(params![seq, dlq_id, time::micros(now)])?;
    Ok(())
}

/// The in-flight message `lease` names, if it holds it.
fn held(conn: &Connection, l: &LeaseRef) -> Result<Option<Held>> {
    Ok(conn
        .prepare_cached(sql!("message_held"))?
        .query_row(
            params![l.queue.project, l.queue.queue, l.message_id, l.receipt],
            Held::from_row,
        )
        .optional()?)
}

/// The message `lease` names, whatever its state or receipt: its delivery
/// count and lease end, for the answers of a refused nack or extend.
fn in_queue(conn: &Connection, l: &LeaseRef) -> Result<Option<(i32, Option<Timestamp>)>> {
    Ok(conn
        .prepare_cached(sql!("message_in_queue"))?
        .query_row(params![l.queue.project, l.queue.queue, l.message_id], |r| {
            Ok((r.get(0)?, time::get_opt(r, 1)?))
        })
        .optional()?)
}
