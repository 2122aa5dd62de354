//! Background upkeep the server runs periodically: lease expiry, forgetting
//! old idempotency keys, retention.

use super::errors::Error;
use super::{PgStore, sql};
use crate::LeaseExpiry;

impl PgStore {
    pub(super) async fn lease_expire_once(
        &self,
        now: jiff::Timestamp,
        limit: u32,
    ) -> Result<LeaseExpiry, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::LEASE_EXPIRE).await?;
        let row = client.query_one(&stmt, &[&now, &i64::from(limit)]).await?;
        let n = |col: &str| u64::try_from(row.get::<_, i64>(col)).unwrap_or(0);
        Ok(LeaseExpiry {
            requeued: n("requeued"),
            dead_lettered: n("dead_lettered"),
        })
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
}
