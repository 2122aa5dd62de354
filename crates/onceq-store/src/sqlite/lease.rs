//! Ending or stretching a lease: ack, nack, extend, and the ending a failed
//! hand-out shares with lease expiry.
//!
//! Each acts only on the current lease: the message must be in flight and,
//! when the caller gives a receipt, under that receipt.

use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::time;
pub(super) use crate::rules::dead_letter::Ending;
use crate::rules::{attempts, backoff, dead_letter, visibility};
use crate::{
    AckOutcome, ExtendOutcome, LeaseRef, MessageAck, MessageExtend, MessageNack, NackOutcome,
    Result,
};
use onceq_types::AttemptOutcome;

/// `Store::message_ack`.
pub(super) fn ack(conn: &Connection, p: &MessageAck) -> Result<AckOutcome> {
    let l = &p.lease;
    let deleted = conn
        .prepare_cached(sql!("message_ack"))?
        .query_row(
            params![l.queue.project, l.queue.queue, l.message_id, l.receipt],
            |r| time::get_opt(r, 0),
        )
        .optional()?;
    Ok(AckOutcome {
        acked: deleted.is_some(),
        consumed_at: deleted.flatten(),
    })
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
    let failure = Failure {
        outcome: attempts::nack_outcome(p.by),
        error: p.error.as_deref(),
    };
    let ending = end(
        conn,
        &held,
        p.requeue,
        p.now,
        p.delay,
        p.by_backoff,
        failure,
    )?;
    Ok(NackOutcome {
        nacked: true,
        requeued: ending == Ending::Requeued,
        dead_lettered: ending == Ending::DeadLettered,
        delivery_count: held.delivery_count,
    })
}

/// `Store::message_extend`.
/// `Store::message_hand_back`.
pub(super) fn hand_back(conn: &Connection, l: &LeaseRef) -> Result<bool> {
    let n = conn
        .prepare_cached(sql!("message_hand_back"))?
        .execute(params![
            l.queue.project,
            l.queue.queue,
            l.message_id,
            l.receipt
        ])?;
    Ok(n > 0)
}

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
#[derive(Debug, Clone)]
pub(super) struct Held {
    seq: i64,
    delivery_count: i32,
    max_retries: i32,
    dlq_id: Option<i64>,
    backoff: Option<onceq_types::RetryBackoff>,
    consumed_at: Option<Timestamp>,
    lease_expires_at: Option<Timestamp>,
    attempts: Option<String>,
    last_error: Option<String>,
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
            consumed_at: time::get_opt(r, 8)?,
            lease_expires_at: time::get_opt(r, 9)?,
            attempts: r.get(10)?,
            last_error: r.get(11)?,
        })
    }

    /// What its lease's expiry records as the error.
    pub(super) fn lease_expired_error(&self) -> String {
        let expired_at = self.lease_expires_at.unwrap_or(Timestamp::UNIX_EPOCH);
        attempts::lease_expired_error(self.consumed_at, expired_at)
    }

    fn history(&self) -> attempts::History<'_> {
        attempts::History {
            delivery_count: self.delivery_count,
            consumed_at: self.consumed_at,
            attempts: self.attempts.as_deref(),
            last_error: self.last_error.as_deref(),
        }
    }
}

/// How a hand-out failed: recorded as its attempt.
#[derive(Debug, Clone, Copy)]
pub(super) struct Failure<'a> {
    /// `nacked`, `lease_expired` or `push_failed`.
    pub(super) outcome: AttemptOutcome,
    /// Why, if known.
    pub(super) error: Option<&'a str>,
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
    failure: Failure<'_>,
) -> Result<Ending> {
    let ending = dead_letter::ending(
        requeue,
        held.delivery_count,
        held.max_retries,
        held.dlq_id.is_some(),
    );
    let (attempts, last_error) =
        attempts::after_failure(&held.history(), ending, failure.outcome, failure.error, now)?;
    match (ending, held.dlq_id) {
        (Ending::DeadLettered, Some(dlq_id)) => {
            conn.prepare_cached(sql!("message_dead_letter"))?
                .execute(params![
                    held.seq,
                    dlq_id,
                    time::micros(now),
                    attempts,
                    last_error
                ])?;
        }
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
                .execute(params![
                    held.seq,
                    state.as_str(),
                    time::micros(visible_at),
                    attempts,
                    last_error
                ])?;
        }
    }
    Ok(ending)
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
