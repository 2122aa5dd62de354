//! Finished messages (`rules::finished`): an ack that may keep its
//! message, cancel, and the purge of those whose time is up.

use jiff::Timestamp;
use onceq_types::MessageStatus;
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::{queues, time};
use crate::rules::{attempts, finished};
use crate::{AckOutcome, FinishedState, MessageAck, MessageCancel, Result};

/// A row being finished (`message_finishing.sql`).
struct Finishing {
    seq: i64,
    id: String,
    queue_id: i64,
    in_flight: bool,
    payload: String,
    priority: i32,
    group_id: Option<String>,
    idempotency_key: Option<String>,
    headers: Option<String>,
    delivery_count: i32,
    created_at: i64,
    visible_at: i64,
    consumed_at: Option<Timestamp>,
    last_error: Option<String>,
    attempts: Option<String>,
    keep_secs: i64,
}

impl Finishing {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<Finishing> {
        Ok(Finishing {
            seq: r.get(0)?,
            id: r.get(1)?,
            queue_id: r.get(2)?,
            in_flight: r.get::<_, String>(3)? == MessageStatus::InFlight.as_str(),
            payload: r.get(4)?,
            priority: r.get(5)?,
            group_id: r.get(6)?,
            idempotency_key: r.get(7)?,
            headers: r.get(8)?,
            delivery_count: r.get(9)?,
            created_at: r.get(10)?,
            visible_at: r.get(11)?,
            consumed_at: time::get_opt(r, 12)?,
            last_error: r.get(13)?,
            attempts: r.get(14)?,
            keep_secs: r.get(15)?,
        })
    }

    /// Deletes the row, first moving it into onceq_finished as `state`
    /// when its queue keeps finished messages, with the attempt its lease's
    /// end records when it was in flight (`rules::finished`).
    fn finish(
        self,
        conn: &Connection,
        state: FinishedState,
        result: Option<&str>,
        now: Timestamp,
    ) -> Result<()> {
        if self.keep_secs > 0 {
            let history = match self.in_flight {
                true => Some(attempts::append(
                    self.attempts.as_deref(),
                    finished::closing_attempt(state, self.delivery_count, self.consumed_at, now),
                )?),
                false => self.attempts,
            };
            conn.prepare_cached(sql!("finished_insert"))?
                .execute(params![
                    self.id,
                    self.queue_id,
                    state.as_str(),
                    self.payload,
                    self.priority,
                    self.group_id,
                    self.idempotency_key,
                    self.headers,
                    self.delivery_count,
                    self.created_at,
                    self.visible_at,
                    time::micros(now),
                    time::after_secs(now, self.keep_secs),
                    result,
                    self.last_error,
                    history,
                ])?;
        }
        conn.prepare_cached(sql!("message_delete"))?
            .execute([self.seq])?;
        Ok(())
    }
}

fn finishing(
    conn: &Connection,
    q: &crate::QueueRef,
    id: &str,
    lease: Option<Option<&str>>,
) -> Result<Option<Finishing>> {
    let (state, receipt) = match lease {
        Some(receipt) => (Some(MessageStatus::InFlight.as_str()), receipt),
        None => (None, None),
    };
    Ok(conn
        .prepare_cached(sql!("message_finishing"))?
        .query_row(
            params![q.project, q.queue, id, state, receipt],
            Finishing::from_row,
        )
        .optional()?)
}

/// `Store::message_ack` for an ack that may keep its message.
pub(super) fn ack(conn: &Connection, p: &MessageAck) -> Result<AckOutcome> {
    let l = &p.lease;
    let Some(row) = finishing(conn, &l.queue, &l.message_id, Some(l.receipt.as_deref()))? else {
        return Ok(AckOutcome {
            acked: false,
            consumed_at: None,
        });
    };
    let consumed_at = row.consumed_at;
    row.finish(conn, FinishedState::Completed, p.result.as_deref(), p.now)?;
    Ok(AckOutcome {
        acked: true,
        consumed_at,
    })
}

/// `Store::message_cancel`.
pub(super) fn cancel(conn: &Connection, p: &MessageCancel) -> Result<bool> {
    // QueueNotFound for an unknown queue.
    queues::get(conn, &p.queue)?;
    let Some(row) = finishing(conn, &p.queue, &p.message_id, None)? else {
        return Ok(false);
    };
    row.finish(conn, FinishedState::Cancelled, None, p.now)?;
    Ok(true)
}

/// `Store::finished_purge`.
pub(super) fn purge(conn: &Connection, now: Timestamp, limit: u32) -> Result<u64> {
    let n = conn
        .prepare_cached(sql!("finished_purge"))?
        .execute(params![time::micros(now), i64::from(limit)])?;
    Ok(n as u64)
}
