//! The call ledger (`Store::ledger_*`): claim, complete, release, purge.

use super::db::GenericClient;
use super::errors::Error;
use super::{PgStore, sql};
use crate::rules::ledger::{Entry, PURGE_BATCH};
use crate::{LedgerAnswer, LedgerClaim, LedgerClaimOutcome, LedgerComplete, LedgerRelease};

impl PgStore {
    /// One claim + read. An entry that changed between the two is a
    /// [`Error::Race`]: the retry loop claims again.
    pub(super) async fn ledger_claim_once(
        &self,
        p: &LedgerClaim,
    ) -> Result<LedgerClaimOutcome, Error> {
        let client = self.client().await?;
        let k = &p.key;
        let claim = client.prepare_cached(sql::LEDGER_CLAIM).await?;
        let claimed = client
            .query_opt(
                &claim,
                &[
                    &k.project,
                    &k.capability,
                    &k.key,
                    &p.fingerprint.as_slice(),
                    &p.token,
                    &p.locked_until,
                    &p.now,
                    &p.expires_at,
                ],
            )
            .await?;
        if claimed.is_some() {
            return Ok(LedgerClaimOutcome::Claimed);
        }
        let get = client.prepare_cached(sql::LEDGER_GET).await?;
        let Some(row) = client
            .query_opt(&get, &[&k.project, &k.capability, &k.key])
            .await?
        else {
            return Err(Error::Race("ledger entry vanished"));
        };
        let status: Option<i32> = row.get("status");
        let body: Option<Vec<u8>> = row.get("body");
        let entry = Entry {
            fingerprint: row.get("fingerprint"),
            answer: status.zip(body).map(|(status, body)| LedgerAnswer {
                status: u16::try_from(status).unwrap_or(500),
                body,
            }),
            locked_until: row.get("locked_until"),
            expires_at: row.get("expires_at"),
        };
        entry
            .judge(&p.fingerprint, p.now)
            .ok_or(Error::Race("ledger entry changed under its claim"))
    }

    pub(super) async fn ledger_complete_once(&self, p: &LedgerComplete) -> Result<bool, Error> {
        let client = self.client().await?;
        let k = &p.key;
        let stmt = client.prepare_cached(sql::LEDGER_COMPLETE).await?;
        let n = client
            .execute(
                &stmt,
                &[
                    &k.project,
                    &k.capability,
                    &k.key,
                    &p.token,
                    &i32::from(p.answer.status),
                    &p.answer.body,
                    &p.now,
                ],
            )
            .await?;
        Ok(n > 0)
    }

    pub(super) async fn ledger_release_once(&self, p: &LedgerRelease) -> Result<bool, Error> {
        let client = self.client().await?;
        let k = &p.key;
        let stmt = client.prepare_cached(sql::LEDGER_RELEASE).await?;
        let n = client
            .execute(&stmt, &[&k.project, &k.capability, &k.key, &p.token])
            .await?;
        Ok(n > 0)
    }

    /// Batches until a batch comes back short.
    pub(super) async fn ledger_purge_once(&self, now: jiff::Timestamp) -> Result<u64, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::LEDGER_PURGE).await?;
        let mut total = 0;
        loop {
            let n = client.execute(&stmt, &[&now, &PURGE_BATCH]).await?;
            total += n;
            if n < PURGE_BATCH as u64 {
                return Ok(total);
            }
        }
    }
}
