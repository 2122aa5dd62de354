//! Background upkeep the server runs periodically: lease expiry, forgetting
//! old idempotency keys, retention.

use super::db::GenericClient;
use super::errors::Error;
use super::{PgStore, sql};
use crate::{LeaseExpiry, QueueLeaseExpiry, QueueRef};

impl PgStore {
    pub(super) async fn lease_expire_once(
        &self,
        now: jiff::Timestamp,
        limit: u32,
    ) -> Result<LeaseExpiry, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::LEASE_EXPIRE).await?;
        let keep = onceq_types::attempt::MAX_ATTEMPTS_KEPT as i32;
        let rows = client
            .query(&stmt, &[&now, &i64::from(limit), &keep])
            .await?;
        let n = |row: &tokio_postgres::Row, col: &str| {
            u64::try_from(row.get::<_, i64>(col)).unwrap_or(0)
        };
        Ok(LeaseExpiry::from_queues(
            rows.iter()
                .map(|row| QueueLeaseExpiry {
                    queue: QueueRef::new(
                        row.get::<_, String>("project"),
                        row.get::<_, String>("name"),
                    ),
                    requeued: n(row, "requeued"),
                    dead_lettered: n(row, "dead_lettered"),
                })
                .collect(),
        ))
    }

    pub(super) async fn dedupe_purge_once(&self, now: jiff::Timestamp) -> Result<u64, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::DEDUPE_PURGE).await?;
        Ok(client.execute(&stmt, &[&now]).await?)
    }

    pub(super) async fn retention_purge_once(&self, now: jiff::Timestamp) -> Result<u64, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::MESSAGE_RETENTION_PURGE).await?;
        Ok(client.execute(&stmt, &[&now]).await?)
    }

    pub(super) async fn finished_purge_once(
        &self,
        now: jiff::Timestamp,
        limit: u32,
    ) -> Result<u64, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::FINISHED_PURGE).await?;
        Ok(client.execute(&stmt, &[&now, &i64::from(limit)]).await?)
    }
}
