//! Handing messages out under a lease: the statements of one claim
//! ([`Claimer`]), and claims of one queue taken together ([`group`]).

mod group;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_postgres::types::ToSql;

use super::ack_group::CarriedAcks;
use super::db::{Db, GenericClient};
use super::errors::{self, Error};
use super::sql;
use crate::{AckOutcome, ClaimedMessage, MessageAck, MessageClaim, QueueRef, StoreError};

/// Due delayed messages one claim promotes at most. Well above a claim's
/// 10, so a backlog of due messages drains in few claims; bounded so a claim
/// never locks an unbounded number of rows.
const PROMOTE_LIMIT: i64 = 1000;

/// The queues a claim knows not to be plain (FIFO, or with a hand-out
/// limit): their claims go out with the full statement
/// (`sql/message_claim.sql`), every other queue's with the plain one
/// (`sql/message_claim_plain.sql`), whose plan PostgreSQL starts in half
/// the time. Only a guess: the plain statement claims nothing from a queue
/// that is not plain, and the promotion in the same transaction says what
/// the queue is, so a wrong guess costs one more claim and is put right
/// here. Bounded: emptied when full (then each such queue's next claim
/// learns again).
#[derive(Debug, Default)]
struct NotPlain(Mutex<HashSet<QueueRef>>);

impl NotPlain {
    /// At most this many queues are remembered.
    const MAX: usize = 10_000;

    fn contains(&self, queue: &QueueRef) -> bool {
        self.0.lock().expect("not-plain queues").contains(queue)
    }

    /// What the promotion said of `queue`.
    fn learn(&self, queue: &QueueRef, plain: bool) {
        let mut set = self.0.lock().expect("not-plain queues");
        match plain {
            true => {
                set.remove(queue);
            }
            false if !set.contains(queue) => {
                if set.len() >= Self::MAX {
                    set.clear();
                }
                set.insert(queue.clone());
            }
            false => {}
        }
    }
}

pub(in crate::postgres) use group::ClaimGroups;

/// What one claim runs, on connections of the pool.
#[derive(Clone, Debug)]
struct Claimer {
    db: Db,
    not_plain: Arc<NotPlain>,
    /// The store timeout.
    bound: Duration,
}

impl Claimer {
    /// A claim carrying `acks` (none for a plain claim), retried within the
    /// store timeout on a transient failure: with the plain statement
    /// unless the queue is known not to be plain ([`NotPlain`]), and again
    /// with the full one when the promotion says the guess was wrong. The
    /// acks are in the first transaction only.
    async fn claim(
        &self,
        acks: &[MessageAck],
        p: &MessageClaim,
    ) -> crate::Result<(Vec<AckOutcome>, Vec<ClaimedMessage>)> {
        let guess = !self.not_plain.contains(&p.queue);
        let (acked, claimed, plain) =
            errors::retrying(self.bound, || self.claim_once(acks, p, guess)).await?;
        // Only a wrong guess has anything to teach.
        if plain != guess {
            self.not_plain.learn(&p.queue, plain);
        }
        if guess && !plain && claimed.is_empty() {
            let (_, claimed, _) =
                errors::retrying(self.bound, || self.claim_once(&[], p, false)).await?;
            return Ok((acked, claimed));
        }
        Ok((acked, claimed))
    }

    /// One round trip: BEGIN with the hot settings, `acks` (a consume's
    /// acks of its previous batch: none for a plain claim), the promotion
    /// of due messages, the claim and COMMIT go out in one pipeline. One
    /// transaction, so the claim sees the acks done (an in-flight limit
    /// counts them gone) and the messages just promoted, a failure leaves
    /// everything as it was, and the acks cost no commit of their own; the
    /// claim looks its queue up itself (`sql/message_claim.sql`), so nothing
    /// waits for the promotion's answer.
    ///
    /// With `plain_queue`, the claim is `sql/message_claim_plain.sql`, which
    /// hands out nothing unless the queue is plain; the third value is
    /// whether it is (the promotion's answer).
    async fn claim_once(
        &self,
        acks: &[MessageAck],
        p: &MessageClaim,
        plain_queue: bool,
    ) -> Result<(Vec<AckOutcome>, Vec<ClaimedMessage>, bool), Error> {
        let client = self.db.get().await?;
        // Prepared before the pipeline, so that every statement is queued at
        // its first poll, in order.
        let acks = CarriedAcks::prepare(&client, acks).await?;
        // Given a timeout, the lease's end is known here; otherwise the
        // statement adds the queue's default to `now`.
        let lease_expires_at = p
            .visibility_timeout
            .map(|t| p.now.checked_add(t))
            .transpose()
            .map_err(|_| StoreError::Invalid("visibility timeout is out of range".into()))?;
        // Prepared once per connection: after the first claim on it, these
        // are answered from the cache without a round trip.
        let promote = client.prepare_cached(sql::MESSAGE_PROMOTE).await?;
        let claim = client
            .prepare_cached(match plain_queue {
                true => sql::MESSAGE_CLAIM_PLAIN,
                false => sql::MESSAGE_CLAIM,
            })
            .await?;
        let promote_params: [&(dyn ToSql + Sync); 4] =
            [&p.queue.project, &p.queue.queue, &p.now, &PROMOTE_LIMIT];
        let max = i64::from(p.max);
        let claim_params: [&(dyn ToSql + Sync); 5] = [
            &p.queue.project,
            &p.queue.queue,
            &max,
            &p.now,
            &lease_expires_at,
        ];
        // Every request is queued on the connection at the first poll, so
        // they all reach PostgreSQL even if this future is dropped halfway:
        // the transaction always ends with the COMMIT below (which rolls
        // back after a failed statement), never left open on a pooled
        // connection. The first error in statement order is the cause;
        // the later ones only say the transaction is aborted.
        let (began, acked, queue, rows, committed) = tokio::join!(
            client.batch_execute(sql::HOT_BEGIN),
            acks.run(&client),
            client.query_opt(&promote, &promote_params),
            client.query(&claim, &claim_params),
            client.batch_execute("COMMIT"),
        );
        began?;
        let acked = acked?;
        let queue = queue?;
        let mut rows = rows?;
        committed?;
        let Some(queue) = queue else {
            return Err(StoreError::QueueNotFound.into());
        };

        // UPDATE ... RETURNING does not keep the order of the rows it picked.
        rows.sort_by_key(|r| {
            (
                std::cmp::Reverse(r.get::<_, i32>("priority")),
                r.get::<_, i64>("seq"),
            )
        });
        let claimed = rows
            .iter()
            .map(|r| ClaimedMessage {
                message_id: r.get("id"),
                payload: r.get("payload"),
                delivery_count: r.get("delivery_count"),
                receipt: r.get("receipt"),
                created_at: r.get("created_at"),
                lease_expires_at: r.get("lease_expires_at"),
                idempotency_key: r.get("idempotency_key"),
                headers: r.get("headers"),
            })
            .collect();
        Ok((acked, claimed, queue.get("plain")))
    }
}
