//! [`PgLedger`]: the request ledger in the application's PostgreSQL, next
//! to the data the handlers write.

use deadpool_postgres::Pool;
use jiff::Timestamp;

use super::{
    CLAIM_ATTEMPTS, Claim, ClaimOutcome, Entry, Ledger, LedgerError, PURGE_BATCH, StoredResponse,
};

ledger_sql!("postgres");

/// The request ledger in PostgreSQL (table `onceq_request_ledger`).
#[derive(Clone)]
pub struct PgLedger {
    pool: Pool,
}

impl std::fmt::Debug for PgLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgLedger").finish_non_exhaustive()
    }
}

impl PgLedger {
    /// A ledger on `pool`; creates its table if missing (safe when several
    /// processes start at once).
    pub async fn new(pool: Pool) -> Result<Self, LedgerError> {
        let mut client = pool.get().await.map_err(LedgerError::new)?;
        let tx = client.transaction().await.map_err(LedgerError::new)?;
        tx.batch_execute(SCHEMA).await.map_err(LedgerError::new)?;
        tx.commit().await.map_err(LedgerError::new)?;
        drop(client);
        Ok(Self { pool })
    }

    /// Deletes at most `limit` entries past their retention at `now` (one
    /// `purge.sql`); [`Ledger::purge_expired`] calls it until a batch
    /// comes back short.
    pub async fn purge_batch(&self, now: Timestamp, limit: i64) -> Result<u64, LedgerError> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(PURGE)
            .await
            .map_err(LedgerError::new)?;
        client
            .execute(&stmt, &[&now, &limit])
            .await
            .map_err(LedgerError::new)
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, LedgerError> {
        self.pool.get().await.map_err(LedgerError::new)
    }
}

#[async_trait::async_trait]
impl Ledger for PgLedger {
    async fn claim(&self, c: &Claim, now: Timestamp) -> Result<ClaimOutcome, LedgerError> {
        let client = self.client().await?;
        let claim = client
            .prepare_cached(CLAIM)
            .await
            .map_err(LedgerError::new)?;
        let select = client
            .prepare_cached(SELECT)
            .await
            .map_err(LedgerError::new)?;
        let fp: &[u8] = c.fingerprint.as_bytes();
        for _ in 0..CLAIM_ATTEMPTS {
            let params: [&(dyn postgres_types::ToSql + Sync); 7] = [
                &c.scope,
                &c.key,
                &fp,
                &c.token,
                &c.locked_until,
                &now,
                &c.expires_at,
            ];
            if client
                .query_opt(&claim, &params)
                .await
                .map_err(LedgerError::new)?
                .is_some()
            {
                return Ok(ClaimOutcome::Claimed);
            }
            // Not claimed: read what holds the key. Another request may
            // change or delete the entry in between; then claim again.
            let Some(row) = client
                .query_opt(&select, &[&c.scope, &c.key])
                .await
                .map_err(LedgerError::new)?
            else {
                continue;
            };
            let status: Option<i32> = row.get(1);
            let response = match status {
                Some(s) => {
                    let headers: String = row.get(2);
                    Some(StoredResponse::from_columns(
                        s.into(),
                        &headers,
                        row.get(3),
                    )?)
                }
                None => None,
            };
            let entry = Entry {
                fingerprint: row.get(0),
                answer: response,
                locked_until: row.get(4),
                expires_at: row.get(5),
            };
            if let Some(verdict) = entry.judge(c.fingerprint.as_bytes(), now) {
                return Ok(verdict.into());
            }
        }
        Err(LedgerError::new("the entry kept changing during the claim"))
    }

    async fn complete(
        &self,
        scope: &str,
        key: &str,
        token: &str,
        r: &StoredResponse,
        now: Timestamp,
    ) -> Result<bool, LedgerError> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(COMPLETE)
            .await
            .map_err(LedgerError::new)?;
        let status = i32::from(r.status.as_u16());
        let body: &[u8] = &r.body;
        let n = client
            .execute(
                &stmt,
                &[
                    &scope,
                    &key,
                    &token,
                    &status,
                    &r.headers_json(),
                    &body,
                    &now,
                ],
            )
            .await
            .map_err(LedgerError::new)?;
        Ok(n == 1)
    }

    async fn release(
        &self,
        scope: &str,
        key: &str,
        token: &str,
        _now: Timestamp,
    ) -> Result<bool, LedgerError> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(RELEASE)
            .await
            .map_err(LedgerError::new)?;
        let n = client
            .execute(&stmt, &[&scope, &key, &token])
            .await
            .map_err(LedgerError::new)?;
        Ok(n == 1)
    }

    async fn purge_expired(&self, now: Timestamp) -> Result<u64, LedgerError> {
        let mut total = 0;
        loop {
            let n = self.purge_batch(now, PURGE_BATCH).await?;
            total += n;
            if n < PURGE_BATCH as u64 {
                return Ok(total);
            }
        }
    }
}
