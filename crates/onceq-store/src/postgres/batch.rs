//! The batch forms (`Store::message_ack_many` and the others), each one
//! transaction: acks join the ack committer's next group as one request
//! (never split, so one statement per kind, see [`super::ack_group`]);
//! cancel, delete and a redrive into a standard queue are one statement
//! over `id = ANY($ids)`; nacks and a redrive into a FIFO queue are one
//! transaction of the single form's statements.

use onceq_types::MessageStatus;

use super::browse::queue_id;
use super::db::GenericClient;
use super::dlq::{RedriveTarget, redrive_target};
use super::errors::Error;
use super::{PgStore, lease, publish, sql};
use crate::params::check_batch;
use crate::{MessageIds, MessageNack, NackOutcome, RedriveManyOutcome, SingleOutcome, StoreError};

impl PgStore {
    /// `Store::message_nack_many`: each nack as alone, in one transaction.
    pub(super) async fn nack_many_once(
        &self,
        nacks: &[MessageNack],
    ) -> Result<Vec<NackOutcome>, Error> {
        check_batch(nacks.len())?;
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let mut outcomes = Vec::with_capacity(nacks.len());
        for nack in nacks {
            outcomes.push(lease::nack_in(&tx, nack).await?);
        }
        tx.commit().await?;
        Ok(outcomes)
    }

    /// `Store::message_cancel_many` (`sql/message_cancel_ids.sql`).
    pub(super) async fn cancel_many_once(
        &self,
        p: &MessageIds,
    ) -> Result<Vec<SingleOutcome>, Error> {
        p.checked()?;
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::MESSAGE_CANCEL_IDS).await?;
        let row = client
            .query_one(
                &stmt,
                &[&p.queue.project, &p.queue.queue, &p.message_ids, &p.now],
            )
            .await?;
        if !row.get::<_, bool>("has_queue") {
            return Err(StoreError::QueueNotFound.into());
        }
        let cancelled: Vec<&str> = row.get("cancelled");
        Ok(p.outcomes(cancelled, []))
    }

    /// `Store::message_delete_many` (`sql/message_delete_ids.sql`).
    pub(super) async fn delete_many_once(
        &self,
        p: &MessageIds,
    ) -> Result<Vec<SingleOutcome>, Error> {
        p.checked()?;
        let client = self.client().await?;
        let queue_id = queue_id(&client, &p.queue).await?;
        let stmt = client.prepare_cached(sql::MESSAGE_DELETE_IDS).await?;
        let row = client
            .query_one(&stmt, &[&queue_id, &p.message_ids])
            .await?;
        let (done, held): (Vec<&str>, Vec<&str>) = (row.get("done"), row.get("held"));
        Ok(p.outcomes(done, held))
    }

    /// `Store::dlq_redrive_many`.
    pub(super) async fn redrive_many_once(
        &self,
        p: &MessageIds,
    ) -> Result<RedriveManyOutcome, Error> {
        p.checked()?;
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
        let outcomes = if fifo {
            redrive_into_fifo(&tx, dlq_id, queue_id, p).await?
        } else {
            let stmt = tx.prepare_cached(sql::DLQ_REDRIVE_IDS).await?;
            let row = tx
                .query_one(&stmt, &[&dlq_id, &queue_id, &p.message_ids, &p.now])
                .await?;
            let (done, held): (Vec<&str>, Vec<&str>) = (row.get("done"), row.get("held"));
            p.outcomes(done, held)
        };
        tx.commit().await?;
        Ok(RedriveManyOutcome {
            dead_letter_queue: dlq_name,
            outcomes,
        })
    }
}

/// The named dead letters into a FIFO queue, each at its group's tail (in
/// the order given), under their groups' locks: as `dlq_redrive_one` does
/// each.
async fn redrive_into_fifo(
    tx: &impl GenericClient,
    dlq_id: i64,
    queue_id: i64,
    p: &MessageIds,
) -> Result<Vec<SingleOutcome>, Error> {
    let pick = tx.prepare_cached(sql::DLQ_REDRIVE_IDS_PICK).await?;
    let rows = tx.query(&pick, &[&dlq_id, &p.message_ids]).await?;
    let in_flight = MessageStatus::InFlight.as_str();
    let state = |id: &str| {
        rows.iter()
            .find(|r| r.get::<_, &str>("id") == id)
            .map(|r| (r.get::<_, &str>("group_id"), r.get::<_, &str>("state")))
    };
    // In the order given, each id once (a repeat answers NotFound).
    let mut ids: Vec<&str> = Vec::new();
    let mut groups: Vec<&str> = Vec::new();
    for id in &p.message_ids {
        if let Some((group, state)) = state(id)
            && state != in_flight
            && !ids.contains(&id.as_str())
        {
            ids.push(id);
            groups.push(group);
        }
    }
    if !ids.is_empty() {
        publish::lock_groups(tx, queue_id, groups.iter().map(|g| Some(*g))).await?;
        let redrive = tx.prepare_cached(sql::DLQ_REDRIVE_FIFO).await?;
        tx.execute(&redrive, &[&ids, &groups, &queue_id, &p.now])
            .await?;
    }
    let held = rows
        .iter()
        .filter(|r| r.get::<_, &str>("state") == in_flight)
        .map(|r| r.get::<_, &str>("id"));
    Ok(p.outcomes(ids.iter().copied(), held))
}
