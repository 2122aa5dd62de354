//! The call ledger (`Store::ledger_*`): the shared request ledger's
//! statements (`crates/onceq/sql/ledger/postgres/`) on the server's
//! database, scoped as `rules/ledger.rs` says.

use super::db::GenericClient;
use super::errors::Error;
use super::{PgStore, sql};
use crate::rules::ledger::{self, Entry};
use crate::{
    LedgerAnswer, LedgerClaim, LedgerClaimOutcome, LedgerComplete, LedgerRelease, LedgerUsage,
};

impl PgStore {
    /// One claim + read. An entry that changed between the two is a
    /// [`Error::Race`]: the retry loop claims again.
    pub(super) async fn ledger_claim_once(
        &self,
        p: &LedgerClaim,
    ) -> Result<LedgerClaimOutcome, Error> {
        let client = self.client().await?;
        let scope = ledger::scope(&p.key);
        let key = &p.key.key;
        let claim = client.prepare_cached(sql::LEDGER_CLAIM).await?;
        let claimed = client
            .query_opt(
                &claim,
                &[
                    &scope,
                    key,
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
        let select = client.prepare_cached(sql::LEDGER_SELECT).await?;
        let Some(row) = client.query_opt(&select, &[&scope, key]).await? else {
            return Err(Error::Race("ledger entry vanished"));
        };
        let status: Option<i32> = row.get("status");
        let answer = match status {
            Some(status) => Some(LedgerAnswer {
                status: u16::try_from(status).unwrap_or(500),
                headers: ledger::headers_from_json(row.get("headers"))?,
                body: row.get("body"),
            }),
            None => None,
        };
        let entry = Entry {
            fingerprint: row.get("fingerprint"),
            answer,
            locked_until: row.get("locked_until"),
            expires_at: row.get("expires_at"),
        };
        entry
            .judge(&p.fingerprint, p.now)
            .map(ledger::outcome)
            .ok_or(Error::Race("ledger entry changed under its claim"))
    }

    pub(super) async fn ledger_complete_once(&self, p: &LedgerComplete) -> Result<bool, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::LEDGER_COMPLETE).await?;
        let n = client
            .execute(
                &stmt,
                &[
                    &ledger::scope(&p.key),
                    &p.key.key,
                    &p.token,
                    &i32::from(p.answer.status),
                    &ledger::headers_json(&p.answer),
                    &p.answer.body,
                    &p.now,
                ],
            )
            .await?;
        Ok(n > 0)
    }

    pub(super) async fn ledger_release_once(&self, p: &LedgerRelease) -> Result<bool, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::LEDGER_RELEASE).await?;
        let n = client
            .execute(&stmt, &[&ledger::scope(&p.key), &p.key.key, &p.token])
            .await?;
        Ok(n > 0)
    }

    /// One `purge.sql`: at most `limit` entries.
    pub(super) async fn ledger_purge_once(
        &self,
        now: jiff::Timestamp,
        limit: u32,
    ) -> Result<u64, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::LEDGER_PURGE).await?;
        Ok(client.execute(&stmt, &[&now, &i64::from(limit)]).await?)
    }

    /// One `ledger_usage.sql`.
    pub(super) async fn ledger_usage_once(&self, project: &str) -> Result<LedgerUsage, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::LEDGER_USAGE).await?;
        let row = client.query_one(&stmt, &[&project]).await?;
        let count = |name| u64::try_from(row.get::<_, i64>(name)).unwrap_or(0);
        Ok(LedgerUsage {
            entries: count("entries"),
            bytes: count("bytes"),
        })
    }

    /// One `ledger_first_expiry.sql`.
    pub(super) async fn ledger_first_expiry_once(
        &self,
        project: &str,
        now: jiff::Timestamp,
    ) -> Result<Option<jiff::Timestamp>, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::LEDGER_FIRST_EXPIRY).await?;
        let row = client.query_opt(&stmt, &[&project, &now]).await?;
        Ok(row.map(|r| r.get("expires_at")))
    }
}
