//! Push subscriptions: add, list, delete, and the dispatcher's scan.

use onceq_types::push::MAX_SUBSCRIPTIONS_PER_QUEUE;
use tokio_postgres::Row;

use super::db::GenericClient;
use super::errors::Error;
use super::{PgStore, queues, sql};
use crate::{
    QueueRef, StoreError, SubscriptionDelete, SubscriptionDue, SubscriptionInsert,
    SubscriptionRecord,
};

fn record(queue: &QueueRef, row: &Row) -> SubscriptionRecord {
    SubscriptionRecord {
        subscription_id: row.get("id"),
        queue: queue.clone(),
        url: row.get("url"),
        secret: row.get("secret"),
        max_in_flight: row.get("max_in_flight"),
        timeout_seconds: row.get("timeout_seconds"),
        created_at: row.get("created_at"),
    }
}

async fn queue_id(c: &impl crate::postgres::db::GenericClient, q: &QueueRef) -> Result<i64, Error> {
    match queues::lookup(c, &q.project, &q.queue).await? {
        Some((id, _)) => Ok(id),
        None => Err(StoreError::QueueNotFound.into()),
    }
}

impl PgStore {
    pub(super) async fn subscription_insert_once(
        &self,
        p: &SubscriptionInsert,
        id: &str,
    ) -> Result<SubscriptionRecord, Error> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let lock = tx.prepare_cached(sql::SUBSCRIPTION_QUEUE_LOCK).await?;
        let Some(queue) = tx
            .query_opt(&lock, &[&p.queue.project, &p.queue.queue])
            .await?
        else {
            return Err(StoreError::QueueNotFound.into());
        };
        let queue_id: i64 = queue.get(0);
        let count = tx.prepare_cached(sql::SUBSCRIPTION_COUNT).await?;
        let existing: i64 = tx.query_one(&count, &[&queue_id]).await?.get(0);
        if existing >= MAX_SUBSCRIPTIONS_PER_QUEUE as i64 {
            return Err(StoreError::Invalid(format!(
                "queue {:?} already has {MAX_SUBSCRIPTIONS_PER_QUEUE} push subscriptions (the most a queue may have)",
                p.queue.queue
            ))
            .into());
        }
        let insert = tx.prepare_cached(sql::SUBSCRIPTION_INSERT).await?;
        let row = tx
            .query_one(
                &insert,
                &[
                    &id,
                    &queue_id,
                    &p.url,
                    &p.secret,
                    &p.max_in_flight,
                    &p.timeout_seconds,
                    &p.now,
                ],
            )
            .await?;
        tx.commit().await?;
        Ok(SubscriptionRecord {
            subscription_id: id.to_owned(),
            queue: p.queue.clone(),
            url: p.url.clone(),
            secret: p.secret.clone(),
            max_in_flight: p.max_in_flight,
            timeout_seconds: p.timeout_seconds,
            created_at: row.get(0),
        })
    }

    pub(super) async fn subscription_list_once(
        &self,
        q: &QueueRef,
    ) -> Result<Vec<SubscriptionRecord>, Error> {
        let client = self.client().await?;
        let queue_id = queue_id(&client, q).await?;
        let list = client.prepare_cached(sql::SUBSCRIPTION_LIST).await?;
        let rows = client.query(&list, &[&queue_id]).await?;
        Ok(rows.iter().map(|r| record(q, r)).collect())
    }

    pub(super) async fn subscription_delete_once(
        &self,
        p: &SubscriptionDelete,
    ) -> Result<bool, Error> {
        let client = self.client().await?;
        let queue_id = queue_id(&client, &p.queue).await?;
        let delete = client.prepare_cached(sql::SUBSCRIPTION_DELETE).await?;
        Ok(client
            .execute(&delete, &[&queue_id, &p.subscription_id])
            .await?
            > 0)
    }

    pub(super) async fn subscription_scan_once(
        &self,
        now: jiff::Timestamp,
    ) -> Result<Vec<SubscriptionDue>, Error> {
        let client = self.client().await?;
        let scan = client.prepare_cached(sql::SUBSCRIPTION_SCAN).await?;
        let rows = client.query(&scan, &[&now]).await?;
        Ok(rows
            .iter()
            .map(|r| {
                let queue =
                    QueueRef::new(r.get::<_, String>("project"), r.get::<_, String>("queue"));
                SubscriptionDue {
                    subscription: record(&queue, r),
                    due: r.get("due"),
                }
            })
            .collect())
    }
}
