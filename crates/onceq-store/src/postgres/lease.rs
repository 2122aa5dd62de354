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
use crate::rules::{attempts, backoff, visibility};
use crate::{
    AckOutcome, ExtendOutcome, LeaseRef, MessageAck, MessageCancel, MessageExtend, MessageNack,
    NackOutcome, StoreError,
};

/// One ack in a transaction of its own (acks usually go in groups, see
/// [`super::ack_group`]).
pub(super) async fn ack_alone(pool: &Db, p: &MessageAck) -> Result<AckOutcome, Error> {
    let l = &p.lease;
    let client = pool.get().await?;
    let stmt = client.prepare_cached(sql::MESSAGE_ACK).await?;
    let deleted = client
        .query_opt(
            &stmt,
            &[&l.queue.project, &l.queue.queue, &l.message_id, &l.receipt],
        )
        .await?;
    Ok(AckOutcome {
        acked: deleted.is_some(),
        consumed_at: deleted.and_then(|row| row.get("consumed_at")),
    })
}

/// An ack that may keep its message (`rules::finished`) in a transaction of
/// its own: one statement, `sql/message_ack_keep.sql` (the group's falls
/// back to it, as [`ack_alone`] for the others).
pub(super) async fn ack_keeping(pool: &Db, p: &MessageAck) -> Result<AckOutcome, Error> {
    let l = &p.lease;
    let client = pool.get().await?;
    let stmt = client.prepare_cached(sql::MESSAGE_ACK_KEEP).await?;
    let deleted = client
        .query_opt(
            &stmt,
            &[
                &l.queue.project,
                &l.queue.queue,
                &l.message_id,
                &l.receipt,
                &p.now,
                &p.result,
            ],
        )
        .await?;
    Ok(AckOutcome {
        acked: deleted.is_some(),
        consumed_at: deleted.and_then(|row| row.get("consumed_at")),
    })
}

impl PgStore {
    /// `Store::message_cancel`: the batch form's one statement
    /// (`sql/message_cancel_ids.sql`), for one id.
    pub(super) async fn cancel_once(&self, p: &MessageCancel) -> Result<bool, Error> {
        let ids = super::browse::one(&p.queue, &p.message_id, p.now);
        Ok(self.cancel_many_once(&ids).await?[0] == crate::SingleOutcome::Done)
    }

    pub(super) async fn nack_once(&self, p: &MessageNack) -> Result<NackOutcome, Error> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let outcome = nack_in(&tx, p).await?;
        tx.commit().await?;
        Ok(outcome)
    }

    pub(super) async fn hand_back_once(&self, l: &LeaseRef) -> Result<bool, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::MESSAGE_HAND_BACK).await?;
        let n = client
            .execute(
                &stmt,
                &[&l.queue.project, &l.queue.queue, &l.message_id, &l.receipt],
            )
            .await?;
        Ok(n > 0)
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

/// A nack inside `tx` (its caller commits): the message locked, its
/// ending decided and done (`nack_once` alone, `Store::message_nack_many`
/// for a batch).
pub(super) async fn nack_in(
    tx: &impl GenericClient,
    p: &MessageNack,
) -> Result<NackOutcome, Error> {
    let l = &p.lease;
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
        && (l.receipt.is_none() || row.get::<_, Option<&str>>("receipt") == l.receipt.as_deref());
    if !held {
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
    let ending = dead_letter::ending(p.requeue, delivery_count, max_retries, dlq.is_some());
    let before = attempts::History {
        delivery_count,
        consumed_at: row.get("consumed_at"),
        attempts: row.get("attempts"),
        last_error: row.get("last_error"),
    };
    let (attempts, last_error) = attempts::after_nack(&before, ending, p)?;

    let mut outcome = NackOutcome {
        nacked: true,
        requeued: false,
        dead_lettered: false,
        delivery_count,
    };
    match (ending, dlq) {
        (Ending::DeadLettered, Some(dlq)) => {
            let stmt = tx.prepare_cached(sql::MESSAGE_DEAD_LETTER).await?;
            let moved = tx
                .execute(
                    &stmt,
                    &[&l.message_id, &dlq, &p.now, &attempts, &last_error],
                )
                .await?;
            // The message is ours (locked above): nothing moved means the
            // DLQ was deleted since; the retry finds the queue without one.
            if moved == 0 {
                return Err(Error::Race("dead-letter queue deleted during nack"));
            }
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
            tx.execute(
                &stmt,
                &[
                    &l.message_id,
                    &state.as_str(),
                    &visible_at,
                    &attempts,
                    &last_error,
                ],
            )
            .await?;
            outcome.requeued = true;
        }
    }
    Ok(outcome)
}
