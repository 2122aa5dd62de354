//! Background maintenance: lease expiry, dedupe-key purge, retention.

use std::collections::HashMap;

use jiff::{SignedDuration, Timestamp};
use onceq_types::AttemptOutcome;
use rusqlite::{Connection, params};

use super::{
    lease::{self, Ending, Failure, Held},
    time,
};
use crate::{LeaseExpiry, QueueLeaseExpiry, QueueRef, Result};

/// `Store::lease_expire`: at most `limit` leases per call, so one pass is a
/// bounded write that does not hold up the writer's other requests.
pub(super) fn lease_expire(conn: &Connection, now: Timestamp, limit: u32) -> Result<LeaseExpiry> {
    let expired = {
        let mut stmt = conn.prepare_cached(sql!("lease_expire"))?;
        let rows = stmt.query_map(params![time::micros(now), i64::from(limit)], |r| {
            Ok((
                Held::from_row(r)?,
                QueueRef::new(r.get::<_, String>(12)?, r.get::<_, String>(13)?),
            ))
        })?;
        rows.collect::<rusqlite::Result<Vec<_>>>()?
    };
    // (requeued, dead-lettered) per (project, queue)
    let mut counts: HashMap<(String, String), (u64, u64)> = HashMap::new();
    for (held, queue) in expired {
        // An expired lease is a failure without a delay of its own: the
        // queue's retry backoff, if any, decides.
        let error = held.lease_expired_error();
        let failure = Failure {
            outcome: AttemptOutcome::LeaseExpired,
            error: Some(&error),
        };
        let ending = lease::end(conn, &held, true, now, SignedDuration::ZERO, true, failure)?;
        let c = counts.entry((queue.project, queue.queue)).or_default();
        match ending {
            Ending::DeadLettered => c.1 += 1,
            Ending::Requeued | Ending::Dropped => c.0 += 1,
        }
    }
    let by_queue = counts
        .into_iter()
        .map(
            |((project, queue), (requeued, dead_lettered))| QueueLeaseExpiry {
                queue: QueueRef::new(project, queue),
                requeued,
                dead_lettered,
            },
        )
        .collect();
    Ok(LeaseExpiry::from_queues(by_queue))
}

/// `Store::dedupe_purge`.
pub(super) fn dedupe_purge(conn: &Connection, now: Timestamp) -> Result<u64> {
    let n = conn
        .prepare_cached(sql!("dedupe_purge"))?
        .execute([time::micros(now)])?;
    Ok(n as u64)
}

/// `Store::message_retention_purge`.
pub(super) fn retention_purge(conn: &Connection, now: Timestamp) -> Result<u64> {
    let n = conn
        .prepare_cached(sql!("message_retention_purge"))?
        .execute([time::micros(now)])?;
    Ok(n as u64)
}
