//! Redrive: dead-lettered messages back to their queue.

use super::errors::Error;
use super::queues::count;
use super::{PgStore, publish, sql};
use crate::postgres::db::GenericClient;
use crate::{DlqRedrive, RedriveOutcome, StoreError};
use onceq_types::QueueType;

/// Where a redrive of `queue` moves messages from and to.
pub(super) struct RedriveTarget {
    /// The queue redriven into.
    pub queue_id: i64,
    /// Its dead-letter queue's id and name.
    pub dlq_id: i64,
    pub dlq_name: String,
    /// Whether the queue is FIFO (moves take its group order into account).
    pub fifo: bool,
}

/// `queue`'s id and its DLQ's: `QueueNotFound`, or `Invalid` for a queue
/// without a DLQ. Run in the redrive's transaction: it locks the queue
/// against a delete until the transaction ends (sql/dlq_redrive_target.sql).
pub(super) async fn redrive_target(
    client: &impl GenericClient,
    queue: &crate::QueueRef,
) -> Result<RedriveTarget, Error> {
    let target = client.prepare_cached(sql::DLQ_REDRIVE_TARGET).await?;
    let Some(row) = client
        .query_opt(&target, &[&queue.project, &queue.queue])
        .await?
    else {
        return Err(StoreError::QueueNotFound.into());
    };
    let (Some(dlq_id), Some(dlq_name)) = (
        row.get::<_, Option<i64>>("dlq_id"),
        row.get::<_, Option<String>>("dlq_name"),
    ) else {
        return Err(StoreError::Invalid(format!(
            "queue {:?} has no dead-letter queue",
            queue.queue
        ))
        .into());
    };
    Ok(RedriveTarget {
        queue_id: row.get("id"),
        dlq_id,
        dlq_name,
        fifo: row.get::<_, &str>("queue_type") == QueueType::Fifo.as_str(),
    })
}

impl PgStore {
    pub(super) async fn redrive_once(&self, p: &DlqRedrive) -> Result<RedriveOutcome, Error> {
        let mut client = self.client().await?;
        // One transaction: the target's lock (`redrive_target`) holds
        // until the messages have moved.
        let tx = client.transaction().await?;
        let RedriveTarget {
            queue_id,
            dlq_id,
            dlq_name,
            fifo,
        } = redrive_target(&tx, &p.queue).await?;
        let max = p.max.map(|m| m.max(0));
        let moved = if fifo {
            redrive_into_fifo(&tx, dlq_id, queue_id, max, p.now).await?
        } else {
            let redrive = tx.prepare_cached(sql::DLQ_REDRIVE).await?;
            count(
                tx.execute(&redrive, &[&dlq_id, &queue_id, &max, &p.now])
                    .await?,
            )
        };
        tx.commit().await?;
        Ok(RedriveOutcome {
            dead_letter_queue: dlq_name,
            redriven: moved,
        })
    }
}

/// Redrive into a FIFO queue: the dead letters are appended at their groups'
/// tails, oldest first, each with a fresh `seq` taken under its group's lock
/// (as a publish does), so a claim never sees a lower seq appear in a group
/// behind a head it may be handing out.
async fn redrive_into_fifo(
    tx: &impl GenericClient,
    dlq_id: i64,
    queue_id: i64,
    max: Option<i64>,
    now: jiff::Timestamp,
) -> Result<i64, Error> {
    let pick = tx.prepare_cached(sql::DLQ_REDRIVE_PICK).await?;
    let rows = tx.query(&pick, &[&dlq_id, &max]).await?;
    if rows.is_empty() {
        return Ok(0);
    }
    let ids: Vec<&str> = rows.iter().map(|r| r.get("id")).collect();
    let groups: Vec<&str> = rows.iter().map(|r| r.get("group_id")).collect();
    publish::lock_groups(tx, queue_id, groups.iter().map(|g| Some(*g))).await?;
    let redrive = tx.prepare_cached(sql::DLQ_REDRIVE_FIFO).await?;
    let moved = tx
        .execute(&redrive, &[&ids, &groups, &queue_id, &now])
        .await?;
    Ok(count(moved))
}
