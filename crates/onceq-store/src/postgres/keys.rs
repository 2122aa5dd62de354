//! API keys: stored by hash, looked up on every request.

use tokio_postgres::Row;

use super::errors::Error;
use super::{PgStore, sql};
use crate::{KeyInsert, KeyRecord};

fn key_record(row: &Row) -> KeyRecord {
    KeyRecord {
        key_id: row.get("key_id"),
        project: row.get("project"),
        label: row.get("label"),
        created_at: row.get("created_at"),
        revoked_at: row.get("revoked_at"),
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
                &[&p.key_id, &p.project, &p.key_hash, &p.label, &p.now],
            )
            .await?;
        tx.commit().await?;
        Ok(key_record(&row))
    }

    pub(super) async fn key_lookup_once(
        &self,
        key_hash: &[u8],
    ) -> Result<Option<KeyRecord>, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::KEY_LOOKUP).await?;
        let row = client.query_opt(&stmt, &[&key_hash]).await?;
        Ok(row.as_ref().map(key_record))
    }

    pub(super) async fn key_list_once(&self) -> Result<Vec<KeyRecord>, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::KEY_LIST).await?;
        let rows = client.query(&stmt, &[]).await?;
        Ok(rows.iter().map(key_record).collect())
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
}
