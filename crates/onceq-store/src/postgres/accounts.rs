//! Projects' account settings, usage buckets and server heartbeats. None of
//! these run per request: the server calls them from its account sync
//! (about once a second), the account endpoints and the CLI.

use tokio_postgres::Row;

use super::db::GenericClient;
use super::errors::Error;
use super::keys::{rate, rate_columns};
use super::{PgStore, sql};
use crate::{
    ProjectRecord, RateLimit, ServerHeartbeat, StoreError, UsageQuery, UsageRow, UsageTotal,
};

fn project_record(row: &Row) -> ProjectRecord {
    ProjectRecord {
        name: row.get("name"),
        created_at: row.get("created_at"),
        credit_limit_micros: row
            .get::<_, Option<i64>>("credit_limit_micros")
            .map(unsigned),
        spent_micros: unsigned(row.get("spent_micros")),
        rate: rate(row.get("rate_per_sec"), row.get("rate_burst")),
    }
}

/// Counts and money are never negative (CHECKs say so).
fn unsigned(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

fn signed(v: u64) -> Result<i64, Error> {
    i64::try_from(v).map_err(|_| Error::Store(StoreError::Invalid(format!("{v} is out of range"))))
}

impl PgStore {
    pub(super) async fn project_list_once(&self) -> Result<Vec<ProjectRecord>, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::PROJECT_LIST).await?;
        Ok(client
            .query(&stmt, &[])
            .await?
            .iter()
            .map(project_record)
            .collect())
    }

    pub(super) async fn project_get_once(
        &self,
        name: &str,
    ) -> Result<Option<ProjectRecord>, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::PROJECT_GET).await?;
        Ok(client
            .query_opt(&stmt, &[&name])
            .await?
            .as_ref()
            .map(project_record))
    }

    pub(super) async fn project_set_credit_once(
        &self,
        name: &str,
        limit: Option<u64>,
    ) -> Result<bool, Error> {
        let limit = limit.map(signed).transpose()?;
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::PROJECT_SET_CREDIT).await?;
        Ok(client.execute(&stmt, &[&name, &limit]).await? > 0)
    }

    pub(super) async fn project_set_rate_once(
        &self,
        name: &str,
        rate: Option<RateLimit>,
    ) -> Result<bool, Error> {
        let (per_sec, burst) = rate_columns(rate);
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::PROJECT_SET_RATE).await?;
        Ok(client.execute(&stmt, &[&name, &per_sec, &burst]).await? > 0)
    }

    pub(super) async fn usage_flush_once(&self, rows: &[UsageRow]) -> Result<(), Error> {
        if rows.is_empty() {
            return Ok(());
        }
        let mut projects = Vec::with_capacity(rows.len());
        let mut capabilities = Vec::with_capacity(rows.len());
        let mut minutes = Vec::with_capacity(rows.len());
        let (mut calls, mut billable, mut cost) = (Vec::new(), Vec::new(), Vec::new());
        for r in rows {
            projects.push(r.project.as_str());
            capabilities.push(r.capability.as_str());
            minutes.push(r.minute);
            calls.push(signed(r.calls)?);
            billable.push(signed(r.billable_calls)?);
            cost.push(signed(r.cost_micros)?);
        }
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::USAGE_FLUSH).await?;
        client
            .execute(
                &stmt,
                &[&projects, &capabilities, &minutes, &calls, &billable, &cost],
            )
            .await?;
        Ok(())
    }

    pub(super) async fn usage_query_once(&self, q: &UsageQuery) -> Result<Vec<UsageTotal>, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::USAGE_QUERY).await?;
        let rows = client.query(&stmt, &[&q.project, &q.from, &q.to]).await?;
        Ok(rows
            .iter()
            .map(|r| UsageTotal {
                capability: r.get("capability"),
                calls: unsigned(r.get("calls")),
                billable_calls: unsigned(r.get("billable_calls")),
                cost_micros: unsigned(r.get("cost_micros")),
            })
            .collect())
    }

    pub(super) async fn server_heartbeat_once(&self, p: &ServerHeartbeat) -> Result<u32, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::SERVER_HEARTBEAT).await?;
        let row = client
            .query_one(&stmt, &[&p.server_id, &p.now, &p.live_after])
            .await?;
        Ok(u32::try_from(row.get::<_, i32>("live")).unwrap_or(1).max(1))
    }

    pub(super) async fn server_leave_once(&self, server_id: &str) -> Result<(), Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::SERVER_LEAVE).await?;
        client.execute(&stmt, &[&server_id]).await?;
        Ok(())
    }
}
