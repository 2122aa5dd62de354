//! Account webhooks: their records, the event outbox and the attempts.

use onceq_types::webhook::MAX_ATTEMPTS_KEPT;
use tokio_postgres::Row;

use super::db::GenericClient;
use super::errors::Error;
use super::{PgStore, sql};
use crate::{
    StoreError, WebhookAttemptRecord, WebhookDelivery, WebhookDeliveryClaim, WebhookDeliverySettle,
    WebhookEventInsert, WebhookInsert, WebhookRecord, WebhookRef,
};

fn record(row: &Row) -> WebhookRecord {
    WebhookRecord {
        webhook_id: row.get("id"),
        project: row.get("project"),
        url: row.get("url"),
        events: row.get("events"),
        secret: row.get("secret"),
        description: row.get("description"),
        headers: row.get("headers"),
        created_at: row.get("created_at"),
    }
}

fn delivery(row: &Row) -> WebhookDelivery {
    WebhookDelivery {
        delivery_id: row.get("delivery_id"),
        webhook: record(row),
        event_id: row.get("event_id"),
        event_type: row.get("event_type"),
        body: row.get("body"),
        event_at: row.get("event_at"),
        attempt: row.get("attempts"),
    }
}

impl PgStore {
    pub(super) async fn webhook_insert_once(
        &self,
        p: &WebhookInsert,
        id: &str,
    ) -> Result<WebhookRecord, Error> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let lock = tx.prepare_cached(sql::WEBHOOK_LOCK).await?;
        tx.execute(&lock, &[&p.project]).await?;
        let count = tx.prepare_cached(sql::WEBHOOK_COUNT).await?;
        let existing: i64 = tx.query_one(&count, &[&p.project]).await?.get(0);
        if existing >= p.max_per_project as i64 {
            return Err(StoreError::Invalid(format!(
                "project {:?} already has {} webhooks (the most a project may have)",
                p.project, p.max_per_project
            ))
            .into());
        }
        let insert = tx.prepare_cached(sql::WEBHOOK_INSERT).await?;
        let row = tx
            .query_one(
                &insert,
                &[
                    &id,
                    &p.project,
                    &p.url,
                    &p.events,
                    &p.secret,
                    &p.description,
                    &p.headers,
                    &p.now,
                ],
            )
            .await?;
        tx.commit().await?;
        Ok(WebhookRecord {
            webhook_id: id.to_owned(),
            project: p.project.clone(),
            url: p.url.clone(),
            events: p.events.clone(),
            secret: p.secret.clone(),
            description: p.description.clone(),
            headers: p.headers.clone(),
            created_at: row.get(0),
        })
    }

    pub(super) async fn webhook_list_once(
        &self,
        project: Option<&str>,
    ) -> Result<Vec<WebhookRecord>, Error> {
        let client = self.client().await?;
        let rows = match project {
            Some(project) => {
                let list = client.prepare_cached(sql::WEBHOOK_LIST).await?;
                client.query(&list, &[&project]).await?
            }
            None => {
                let scan = client.prepare_cached(sql::WEBHOOK_SCAN).await?;
                client.query(&scan, &[]).await?
            }
        };
        Ok(rows.iter().map(record).collect())
    }

    pub(super) async fn webhook_delete_once(&self, w: &WebhookRef) -> Result<bool, Error> {
        let client = self.client().await?;
        let delete = client.prepare_cached(sql::WEBHOOK_DELETE).await?;
        Ok(client
            .execute(&delete, &[&w.project, &w.webhook_id])
            .await?
            > 0)
    }

    pub(super) async fn webhook_event_insert_once(
        &self,
        p: &WebhookEventInsert,
    ) -> Result<Vec<WebhookDelivery>, Error> {
        let client = self.client().await?;
        let insert = client.prepare_cached(sql::WEBHOOK_EVENT_INSERT).await?;
        let rows = client
            .query(
                &insert,
                &[
                    &p.project,
                    &p.event_id,
                    &p.event_type,
                    &p.body,
                    &p.now,
                    &p.only_webhook,
                    &p.claim_until,
                ],
            )
            .await?;
        Ok(rows.iter().map(delivery).collect())
    }

    pub(super) async fn webhook_delivery_claim_once(
        &self,
        p: &WebhookDeliveryClaim,
    ) -> Result<Vec<WebhookDelivery>, Error> {
        let client = self.client().await?;
        let claim = client.prepare_cached(sql::WEBHOOK_DELIVERY_CLAIM).await?;
        let rows = client
            .query(
                &claim,
                &[
                    &p.now,
                    &p.claim_until,
                    &i64::from(p.limit),
                    &i64::from(p.per_project),
                    &p.project_room_json(),
                ],
            )
            .await?;
        Ok(rows.iter().map(delivery).collect())
    }

    pub(super) async fn webhook_delivery_settle_once(
        &self,
        p: &WebhookDeliverySettle,
    ) -> Result<bool, Error> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let a = &p.attempt;
        let insert = tx.prepare_cached(sql::WEBHOOK_ATTEMPT_INSERT).await?;
        let recorded = tx
            .execute(
                &insert,
                &[
                    &p.webhook_id,
                    &a.attempted_at,
                    &a.event_id,
                    &a.event_type,
                    &a.attempt,
                    &a.outcome,
                    &a.status,
                    &a.latency_ms,
                    &a.error,
                ],
            )
            .await?;
        let prune = tx.prepare_cached(sql::WEBHOOK_ATTEMPT_PRUNE).await?;
        tx.execute(&prune, &[&p.webhook_id, &(MAX_ATTEMPTS_KEPT as i64)])
            .await?;
        let settled = match p.retry_at {
            Some(at) => {
                let retry = tx.prepare_cached(sql::WEBHOOK_DELIVERY_RETRY).await?;
                tx.execute(&retry, &[&p.delivery_id, &at]).await?
            }
            None => {
                let done = tx.prepare_cached(sql::WEBHOOK_DELIVERY_DONE).await?;
                tx.execute(&done, &[&p.delivery_id]).await?
            }
        };
        tx.commit().await?;
        Ok(recorded > 0 && settled > 0)
    }

    pub(super) async fn webhook_attempts_once(
        &self,
        w: &WebhookRef,
        limit: u32,
    ) -> Result<Option<Vec<WebhookAttemptRecord>>, Error> {
        let client = self.client().await?;
        let exists = client.prepare_cached(sql::WEBHOOK_EXISTS).await?;
        if client
            .query_opt(&exists, &[&w.project, &w.webhook_id])
            .await?
            .is_none()
        {
            return Ok(None);
        }
        let list = client.prepare_cached(sql::WEBHOOK_ATTEMPTS).await?;
        let rows = client
            .query(&list, &[&w.webhook_id, &i64::from(limit)])
            .await?;
        Ok(Some(
            rows.iter()
                .map(|r| WebhookAttemptRecord {
                    attempted_at: r.get("attempted_at"),
                    event_id: r.get("event_id"),
                    event_type: r.get("event_type"),
                    attempt: r.get("attempt"),
                    outcome: r.get("outcome"),
                    status: r.get("status"),
                    latency_ms: r.get("latency_ms"),
                    error: r.get("error"),
                })
                .collect(),
        ))
    }
}
