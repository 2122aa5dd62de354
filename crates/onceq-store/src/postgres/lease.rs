//! Ending or stretching a lease: ack, nack, extend.
//!
//! Each acts only on the current lease: the message must be in flight and,
//! when the caller gives a receipt, under that receipt. A lease that has
//! expired but was not reaped yet is still its holder's (no one else can
//! have the message).

use crate::postgres::db::Db;
use onceq_types::MessageStatus;

use super::db::GenericClient;
use super::errors::Error;
use super::{PgStore, sql};
use crate::rules::dead_letter::{self, Ending};
use crate::rules::{backoff, visibility};
use crate::{ExtendOutcome, MessageAck, MessageExtend, MessageNack, NackOutcome, StoreError};

/// One ack in a transaction of its own (acks usually go in groups, see
/// [`super::ack_group`]).
pub(super) async fn ack_alone(pool: &Db, p: &MessageAck) -> Result<bool, Error> {
    let l = &p.lease;
    let client = pool.get().await?;
    let stmt = client.prepare_cached(sql::MESSAGE_ACK).await?;
    let deleted = client
        .execute(
            &stmt,
            &[&l.queue.project, &l.queue.queue, &l.message_id, &l.receipt],
        )
        .await?;
    Ok(deleted > 0)
}

impl PgStore {
    pub(super) async fn nack_once(&self, p: &MessageNack) -> Result<NackOutcome, Error> {
        let l = &p.lease;
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let lock = tx.prepare_cached(sql::MESSAGE_LOCK).await?;
        let Some(row) = tx
            .query_opt(&lock, &[&l.queue.project, &l.queue.queue, &l.message_id])
            .await?
        else {
            return Ok(NackOutcome {
                nacked: false,
                requeued: false,
                dead_lettered: false,
                delivery_count: 0,
            });
        };
        let delivery_count: i32 = row.get("delivery_count");
        let held = row.get::<_, &str>("state") == MessageStatus::InFlight.as_str()
            && (l.receipt.is_none()
                || row.get::<_, Option<&str>>("receipt") == l.receipt.as_deref());
        if !held {
            tx.commit().await?;
            return Ok(NackOutcome {
                nacked: false,
                requeued: false,
                dead_lettered: false,
                delivery_count,
            });
        }
        let max_retries: i32 = row.get("max_retries");
        let dlq: Option<i64> = row.get("dead_letter_queue_id");
        let retry_backoff = super::queues::backoff(&row, "retry_backoff_initial_seconds");

        let mut outcome = NackOutcome {
            nacked: true,
            requeued: false,
            dead_lettered: false,
            delivery_count,
        };
        match (
            dead_letter::ending(p.requeue, delivery_count, max_retries, dlq.is_some()),
            dlq,
        ) {
            (Ending::DeadLettered, Some(dlq)) => {
                let stmt = tx.prepare_cached(sql::MESSAGE_DEAD_LETTER).await?;
                tx.execute(&stmt, &[&l.message_id, &dlq, &p.now]).await?;
                outcome.dead_lettered = true;
            }
            (Ending::Dropped, _) => {
                let stmt = tx.prepare_cached(sql::MESSAGE_DELETE).await?;
                tx.execute(&stmt, &[&l.message_id]).await?;
            }
            // Requeued (`DeadLettered` comes only with a DLQ).
            _ => {
                let delay = backoff::requeue_delay(
                    retry_backoff.as_ref(),
                    p.by_backoff,
                    delivery_count,
                    p.delay,
                );
                let (state, visible_at) = visibility::visible_after(p.now, delay)?;
                let stmt = tx.prepare_cached(sql::MESSAGE_REQUEUE).await?;
                tx.execute(&stmt, &[&l.message_id, &state.as_str(), &visible_at])
                    .await?;
                outcome.requeued = true;
            }
        }
        tx.commit().await?;
        Ok(outcome)
    }

    pub(super) async fn extend_once(&self, p: &MessageExtend) -> Result<ExtendOutcome, Error> {
        let l = &p.lease;
        let until = p
            .now
            .checked_add(p.visibility_timeout)
            .map_err(|_| StoreError::Invalid("visibility timeout is out of range".into()))?;
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::MESSAGE_EXTEND).await?;
        let row = client
            .query_one(
                &stmt,
                &[
                    &l.queue.project,
                    &l.queue.queue,
                    &l.message_id,
                    &l.receipt,
                    &until,
                ],
            )
            .await?;
        let extended: Option<jiff::Timestamp> = row.get("extended");
        let current: Option<jiff::Timestamp> = row.get("current");
        Ok(ExtendOutcome {
            extended: extended.is_some(),
            lease_expires_at: extended.or(current),
        })
    }
}
