//! Handing messages out under a lease.

use jiff::SignedDuration;

use super::errors::Error;
use super::{PgStore, sql};
use crate::{ClaimedMessage, MessageClaim, StoreError};

/// Due delayed messages one claim promotes at most. Well above a claim's
/// 10, so a backlog of due messages drains in few claims; bounded so a claim
/// never locks an unbounded number of rows.
const PROMOTE_LIMIT: i64 = 1000;

impl PgStore {
    pub(super) async fn claim_once(&self, p: &MessageClaim) -> Result<Vec<ClaimedMessage>, Error> {
        let mut client = self.client().await?;
        // One transaction: the claim must see the messages just promoted,
        // and a failure must leave them as they were.
        let tx = client.transaction().await?;
        let promote = tx.prepare_cached(sql::MESSAGE_PROMOTE).await?;
        // The settings (see `sql::HOT_SETTINGS`) go in one pipeline with the
        // promotion: no round trip of their own.
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] =
            [&p.queue.project, &p.queue.queue, &p.now, &PROMOTE_LIMIT];
        let (set, queue) = tokio::join!(
            tx.batch_execute(sql::HOT_SETTINGS),
            tx.query_opt(&promote, &params)
        );
        set?;
        let Some(queue) = queue? else {
            return Err(StoreError::QueueNotFound.into());
        };
        let queue_id: i64 = queue.get("id");
        let timeout = match p.visibility_timeout {
            Some(t) => t,
            None => {
                SignedDuration::from_secs(queue.get::<_, i32>("visibility_timeout_default").into())
            }
        };
        let lease_expires_at = p
            .now
            .checked_add(timeout)
            .map_err(|_| StoreError::Invalid("visibility timeout is out of range".into()))?;

        // A FIFO queue hands out only its groups' heads (see the statement
        // for why that holds under concurrent claimers).
        let statement = match queue.get::<_, &str>("queue_type") {
            "fifo" => sql::MESSAGE_CLAIM_FIFO,
            _ => sql::MESSAGE_CLAIM,
        };
        let claim = tx.prepare_cached(statement).await?;
        let mut rows = tx
            .query(&claim, &[&queue_id, &i64::from(p.max), &lease_expires_at])
            .await?;
        tx.commit().await?;

        // UPDATE ... RETURNING does not keep the order of the rows it picked.
        rows.sort_by_key(|r| {
            (
                std::cmp::Reverse(r.get::<_, i32>("priority")),
                r.get::<_, i64>("seq"),
            )
        });
        Ok(rows
            .iter()
            .map(|r| ClaimedMessage {
                message_id: r.get("id"),
                payload: r.get("payload"),
                delivery_count: r.get("delivery_count"),
                receipt: r.get("receipt"),
                created_at: r.get("created_at"),
                lease_expires_at: r.get("lease_expires_at"),
                idempotency_key: r.get("idempotency_key"),
            })
            .collect())
    }
}
