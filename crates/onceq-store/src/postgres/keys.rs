//! API keys: stored by hash, looked up on every request.

use tokio_postgres::Row;

use onceq_types::scope::{Actions, KeyScope, QueuePatterns};

use super::db::GenericClient;
use super::errors::Error;
use super::{PgStore, sql};
use crate::{KeyInsert, KeyRecord, RateLimit, StoreError};

fn key_record(row: &Row) -> Result<KeyRecord, Error> {
    let actions: String = row.get("actions");
    let queues: String = row.get("queue_patterns");
    Ok(KeyRecord {
        key_id: row.get("key_id"),
        project: row.get("project"),
        label: row.get("label"),
        created_at: row.get("created_at"),
        revoked_at: row.get("revoked_at"),
        scope: KeyScope {
            actions: Actions::parse(&actions).map_err(StoreError::internal)?,
            queues: QueuePatterns::parse(&queues).map_err(StoreError::internal)?,
        },
        expires_at: row.get("expires_at"),
        rate: rate(row.get("rate_per_sec"), row.get("rate_burst")),
    })
}

/// A stored rate limit (both columns set, or neither: a CHECK says so).
pub(super) fn rate(per_sec: Option<f64>, burst: Option<i32>) -> Option<RateLimit> {
    Some(RateLimit {
        per_sec: per_sec?,
        burst: u32::try_from(burst?).unwrap_or(1),
    })
}

/// A rate limit as the two columns.
pub(super) fn rate_columns(rate: Option<RateLimit>) -> (Option<f64>, Option<i32>) {
    match rate {
        Some(r) => (
            Some(r.per_sec),
            Some(i32::try_from(r.burst).unwrap_or(i32::MAX)),
        ),
        None => (None, None),
    }
}

impl PgStore {
    pub(super) async fn key_insert_once(&self, p: &KeyInsert) -> Result<KeyRecord, Error> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let ensure = tx.prepare_cached(sql::PROJECT_ENSURE).await?;
        tx.execute(&ensure, &[&p.project, &p.now]).await?;
        let insert = tx.prepare_cached(sql::KEY_INSERT).await?;
        let row = tx
            .query_one(
                &insert,
                &[
                    &p.key_id,
                    &p.project,
                    &p.key_hash,
                    &p.label,
                    &p.now,
                    &p.scope.actions.to_string(),
                    &p.scope.queues.to_string(),
                    &p.expires_at,
                ],
            )
            .await?;
        tx.commit().await?;
        key_record(&row)
    }

    pub(super) async fn key_lookup_once(
        &self,
        key_hash: &[u8],
    ) -> Result<Option<KeyRecord>, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::KEY_LOOKUP).await?;
        let row = client.query_opt(&stmt, &[&key_hash]).await?;
        row.as_ref().map(key_record).transpose()
    }

    pub(super) async fn key_list_once(&self) -> Result<Vec<KeyRecord>, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::KEY_LIST).await?;
        let rows = client.query(&stmt, &[]).await?;
        rows.iter().map(key_record).collect()
    }

    pub(super) async fn key_revoke_once(
        &self,
        key_id: &str,
        now: jiff::Timestamp,
    ) -> Result<bool, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::KEY_REVOKE).await?;
        Ok(client.execute(&stmt, &[&key_id, &now]).await? > 0)
    }

    pub(super) async fn key_get_once(&self, key_id: &str) -> Result<Option<KeyRecord>, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::KEY_GET).await?;
        let row = client.query_opt(&stmt, &[&key_id]).await?;
        row.as_ref().map(key_record).transpose()
    }

    pub(super) async fn key_set_expiry_once(
        &self,
        key_id: &str,
        expires_at: Option<jiff::Timestamp>,
    ) -> Result<bool, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::KEY_SET_EXPIRY).await?;
        Ok(client.execute(&stmt, &[&key_id, &expires_at]).await? > 0)
    }

    pub(super) async fn key_set_rate_once(
        &self,
        key_id: &str,
        rate: Option<RateLimit>,
    ) -> Result<bool, Error> {
        let (per_sec, burst) = rate_columns(rate);
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::KEY_SET_RATE).await?;
        Ok(client.execute(&stmt, &[&key_id, &per_sec, &burst]).await? > 0)
    }
}
