//! Ending or stretching a lease: ack, nack, extend, and the ending a failed
//! hand-out shares with lease expiry.
//!
//! Each acts only on the current lease: the message must be in flight and,
//! when the caller gives a receipt, under that receipt.

use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::time;
pub(super) use crate::rules::dead_letter::Ending;
use crate::rules::{backoff, dead_letter, visibility};
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
    let ending = end(conn, &held, p.requeue, p.now, p.delay, p.by_backoff)?;
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
    backoff: Option<onceq_types::RetryBackoff>,
}

impl Held {
    /// From `message_held.sql` or `lease_expire.sql`.
    pub(super) fn from_row(r: &Row<'_>) -> rusqlite::Result<Held> {
        Ok(Held {
            seq: r.get(0)?,
            delivery_count: r.get(1)?,
            max_retries: r.get(2)?,
            dlq_id: r.get(3)?,
            backoff: super::queues::backoff_at(r, 4)?,
        })
    }
}

/// Ends a failed hand-out (a nack, `requeue` as asked, or a lease expiry,
/// `requeue: true`) as [`dead_letter::ending`] says: into the DLQ, deleted,
/// or back in its queue, held back by `delay` if positive (or, when
/// `by_backoff` and the queue has one, by its retry backoff).
pub(super) fn end(
    conn: &Connection,
    held: &Held,
    requeue: bool,
    now: Timestamp,
    delay: jiff::SignedDuration,
    by_backoff: bool,
) -> Result<Ending> {
    let ending = dead_letter::ending(
        requeue,
        held.delivery_count,
        held.max_retries,
        held.dlq_id.is_some(),
    );
    match (ending, held.dlq_id) {
        (Ending::DeadLettered, Some(dlq_id)) => dead_letter(conn, held.seq, dlq_id, now)?,
        (Ending::Dropped, _) => {
            conn.prepare_cached(sql!("message_delete"))?
                .execute([held.seq])?;
        }
        // Requeued (`DeadLettered` comes only with a DLQ).
        _ => {
            let delay = backoff::requeue_delay(
                held.backoff.as_ref(),
                by_backoff,
                held.delivery_count,
                delay,
            );
            let (state, visible_at) = visibility::visible_after(now, delay)?;
            conn.prepare_cached(sql!("message_requeue"))?
                .execute(params![held.seq, state.as_str(), time::micros(visible_at)])?;
        }
    }
    Ok(ending)
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
