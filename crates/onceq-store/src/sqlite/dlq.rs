//! `dlq_redrive`: moving dead letters back to the queue they failed in.

use rusqlite::{Connection, params};

use super::{queues, time};
use crate::{DlqRedrive, RedriveOutcome, Result, StoreError};

/// `Store::dlq_redrive`. The schema does not record which queue a dead letter
/// came from, so a DLQ shared by several queues is drained into whichever
/// queue is redriven. Messages in flight in the DLQ stay with their holder.
pub(super) fn redrive(conn: &Connection, p: &DlqRedrive) -> Result<RedriveOutcome> {
    let queue = queues::get(conn, &p.queue)?;
    let (Some(dlq_id), Some(dlq_name)) = (queue.dlq_id, queue.record.dead_letter_queue) else {
        return Err(StoreError::Invalid(format!(
            "queue {:?} has no dead-letter queue",
            p.queue.queue
        )));
    };
    // SQLite reads a negative LIMIT as "no limit": None maps to -1, and a
    // negative `max` must not.
    let limit = p.max.map_or(-1, |m| m.max(0));
    let redriven = conn.prepare_cached(sql!("dlq_redrive"))?.execute(params![
        dlq_id,
        queue.id,
        time::micros(p.now),
        limit
    ])?;
    Ok(RedriveOutcome {
        dead_letter_queue: dlq_name,
        redriven: redriven as i64,
    })
}
