//! `dlq_redrive`: moving dead letters back to the queue they failed in.

use onceq_types::QueueType;
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
    let now = time::micros(p.now);
    if queue.record.queue_type == QueueType::Fifo {
        // Appended at their groups' tails, oldest dead letter first, as
        // publishes would be (see the statement).
        let seqs = {
            let mut pick = conn.prepare_cached(sql!("dlq_redrive_pick"))?;
            let rows = pick.query_map(params![dlq_id, limit], |r| r.get::<_, i64>(0))?;
            rows.collect::<rusqlite::Result<Vec<_>>>()?
        };
        let mut redrive = conn.prepare_cached(sql!("dlq_redrive_fifo"))?;
        for seq in &seqs {
            redrive.execute(params![seq, queue.id, now])?;
        }
        return Ok(RedriveOutcome {
            dead_letter_queue: dlq_name,
            redriven: seqs.len() as i64,
        });
    }
    let redriven = conn
        .prepare_cached(sql!("dlq_redrive"))?
        .execute(params![dlq_id, queue.id, now, limit])?;
    Ok(RedriveOutcome {
        dead_letter_queue: dlq_name,
        redriven: redriven as i64,
    })
}
