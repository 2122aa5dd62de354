//! Redrive: dead-lettered messages back to their queue.

use super::errors::Error;
use super::queues::count;
use super::{PgStore, sql};
use crate::{DlqRedrive, RedriveOutcome, StoreError};

impl PgStore {
    pub(super) async fn redrive_once(&self, p: &DlqRedrive) -> Result<RedriveOutcome, Error> {
        let client = self.client().await?;
        let target = client.prepare_cached(sql::DLQ_REDRIVE_TARGET).await?;
        let Some(row) = client
            .query_opt(&target, &[&p.queue.project, &p.queue.queue])
            .await?
        else {
            return Err(StoreError::QueueNotFound.into());
        };
        let queue_id: i64 = row.get("id");
        let (Some(dlq_id), Some(dlq_name)) = (
            row.get::<_, Option<i64>>("dlq_id"),
            row.get::<_, Option<String>>("dlq_name"),
        ) else {
            return Err(StoreError::Invalid(format!(
                "queue {:?} has no dead-letter queue",
                p.queue.queue
            ))
            .into());
        };
        // One statement: no transaction needed. If the queue is deleted in
        // between, the foreign key fails and the retry answers not found.
        let redrive = client.prepare_cached(sql::DLQ_REDRIVE).await?;
        let max = p.max.map(|m| m.max(0));
        let moved = client
            .execute(&redrive, &[&dlq_id, &queue_id, &max, &p.now])
            .await?;
        Ok(RedriveOutcome {
            dead_letter_queue: dlq_name,
            redriven: count(moved),
        })
    }
}
