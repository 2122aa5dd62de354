//! Cron schedules: insert (with create's own dedupe), get, list, update,
//! pause, delete, the firing loop's due scan, and the advance that records
//! a run and moves its schedule on in one transaction.

use onceq_types::cron::{OverlapPolicy, RECENT_RUNS, RunOutcome};
use tokio_postgres::Row;

use super::db::GenericClient;
use super::errors::Error;
use super::{PgStore, sql};
use crate::{
    CronAdvance, CronDue, CronInsert, CronInserted, CronPause, CronRecord, CronRef, CronRunOutcome,
    CronRunRecord, CronSpec, CronTarget, CronUpdate, StoreError,
};

/// A schedule from a row of the statements' shared column list.
fn record(r: &Row) -> Result<CronRecord, Error> {
    let target = match (r.get::<_, Option<String>>("queue"), r.get("task_url")) {
        (Some(q), _) => CronTarget::Queue(q),
        (None, Some(url)) => CronTarget::Task(url),
        (None, None) => return Err(StoreError::internal("cron job without a target").into()),
    };
    let overlap_policy = match r.get::<_, &str>("overlap_policy") {
        "skip" => OverlapPolicy::Skip,
        _ => OverlapPolicy::Allow,
    };
    Ok(CronRecord {
        job: CronRef {
            project: r.get("project"),
            job_id: r.get("id"),
        },
        spec: CronSpec {
            name: r.get("name"),
            cron_expr: r.get("cron_expr"),
            run_at: r.get("run_at"),
            timezone: r.get("timezone"),
            target,
            payload: r.get("payload"),
            headers: r.get("headers"),
            max_runs: r.get("max_runs"),
            overlap_policy,
        },
        next_run_at: r.get("next_run_at"),
        run_count: r.get("run_count"),
        paused: r.get("paused"),
        created_at: r.get("created_at"),
        last_message_id: r.get("last_message_id"),
        runs: Vec::new(),
    })
}

fn run_record(r: &Row) -> Result<CronRunRecord, Error> {
    let outcome = r.get::<_, &str>("outcome");
    Ok(CronRunRecord {
        scheduled_at: r.get("scheduled_at"),
        fired_at: r.get("fired_at"),
        message_id: r.get("message_id"),
        outcome: RunOutcome::parse(outcome)
            .ok_or_else(|| StoreError::internal(format!("cron run outcome {outcome:?}")))?,
        error: r.get("error"),
    })
}

/// The target as its two nullable columns.
fn target_columns(t: &CronTarget) -> (Option<&str>, Option<&str>) {
    match t {
        CronTarget::Queue(q) => (Some(q), None),
        CronTarget::Task(url) => (None, Some(url)),
    }
}

impl PgStore {
    pub(super) async fn cron_insert_once(
        &self,
        p: &CronInsert,
        id: &str,
    ) -> Result<CronInserted, Error> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        if let Some(max) = p.max_per_project {
            let lock = tx.prepare_cached(sql::CRON_LOCK).await?;
            tx.execute(&lock, &[&p.project]).await?;
            let count = tx.prepare_cached(sql::CRON_COUNT).await?;
            let existing: i64 = tx.query_one(&count, &[&p.project]).await?.get(0);
            if existing >= i64::from(max) {
                // A key naming a schedule already is answered with it.
                if let Some(job) = self.cron_by_key(&tx, p).await? {
                    return Ok(job);
                }
                return Err(StoreError::Invalid(crate::cron_cap_message(&p.project, max)).into());
            }
        }
        let s = &p.spec;
        let (queue, task) = target_columns(&s.target);
        let insert = tx.prepare_cached(sql::CRON_INSERT).await?;
        let row = tx
            .query_opt(
                &insert,
                &[
                    &id,
                    &p.project,
                    &s.name,
                    &s.cron_expr,
                    &s.run_at,
                    &s.timezone,
                    &queue,
                    &task,
                    &s.payload,
                    &s.headers,
                    &s.max_runs,
                    &s.overlap_policy.as_str(),
                    &p.idempotency_key,
                    &p.next_run_at,
                    &p.now,
                ],
            )
            .await?;
        if let Some(row) = row {
            let job = record(&row)?;
            tx.commit().await?;
            return Ok(CronInserted { job, created: true });
        }
        // The key named a schedule already: answer it.
        let job = self.cron_by_key(&tx, p).await?;
        job.ok_or_else(|| {
            StoreError::internal("cron insert conflicted on a key no schedule has").into()
        })
    }

    /// The schedule `p`'s idempotency key names, with its runs.
    async fn cron_by_key(
        &self,
        c: &impl GenericClient,
        p: &CronInsert,
    ) -> Result<Option<CronInserted>, Error> {
        if p.idempotency_key.is_none() {
            return Ok(None);
        }
        let get = c.prepare_cached(sql::CRON_GET_BY_KEY).await?;
        let Some(row) = c.query_opt(&get, &[&p.project, &p.idempotency_key]).await? else {
            return Ok(None);
        };
        let mut job = record(&row)?;
        job.runs = self.cron_runs(c, &job.job.job_id).await?;
        Ok(Some(CronInserted {
            job,
            created: false,
        }))
    }

    async fn cron_runs(
        &self,
        c: &impl GenericClient,
        job_id: &str,
    ) -> Result<Vec<CronRunRecord>, Error> {
        let runs = c.prepare_cached(sql::CRON_RUNS).await?;
        c.query(&runs, &[&job_id])
            .await?
            .iter()
            .take(RECENT_RUNS)
            .map(run_record)
            .collect()
    }

    pub(super) async fn cron_get_once(&self, job: &CronRef) -> Result<Option<CronRecord>, Error> {
        let client = self.client().await?;
        let get = client.prepare_cached(sql::CRON_GET).await?;
        let Some(row) = client.query_opt(&get, &[&job.project, &job.job_id]).await? else {
            return Ok(None);
        };
        let mut record = record(&row)?;
        record.runs = self.cron_runs(&client, &job.job_id).await?;
        Ok(Some(record))
    }

    pub(super) async fn cron_list_once(&self, project: &str) -> Result<Vec<CronRecord>, Error> {
        let client = self.client().await?;
        let list = client.prepare_cached(sql::CRON_LIST).await?;
        client
            .query(&list, &[&project])
            .await?
            .iter()
            .map(record)
            .collect()
    }

    pub(super) async fn cron_update_once(
        &self,
        p: &CronUpdate,
    ) -> Result<Option<CronRecord>, Error> {
        let client = self.client().await?;
        let s = &p.spec;
        let (queue, task) = target_columns(&s.target);
        let update = client.prepare_cached(sql::CRON_UPDATE).await?;
        let row = client
            .query_opt(
                &update,
                &[
                    &p.job.project,
                    &p.job.job_id,
                    &s.name,
                    &s.cron_expr,
                    &s.run_at,
                    &s.timezone,
                    &queue,
                    &task,
                    &s.payload,
                    &s.headers,
                    &s.max_runs,
                    &s.overlap_policy.as_str(),
                    &p.next_run_at,
                    &p.now,
                ],
            )
            .await?;
        self.with_runs(&client, row).await
    }

    pub(super) async fn cron_pause_once(&self, p: &CronPause) -> Result<Option<CronRecord>, Error> {
        let client = self.client().await?;
        let pause = client.prepare_cached(sql::CRON_PAUSE).await?;
        let row = client
            .query_opt(
                &pause,
                &[
                    &p.job.project,
                    &p.job.job_id,
                    &p.paused,
                    &p.next_run_at,
                    &p.now,
                ],
            )
            .await?;
        self.with_runs(&client, row).await
    }

    /// A changed schedule's record, with its runs as `get` shows them.
    async fn with_runs(
        &self,
        c: &impl GenericClient,
        row: Option<Row>,
    ) -> Result<Option<CronRecord>, Error> {
        let Some(row) = row else { return Ok(None) };
        let mut record = record(&row)?;
        record.runs = self.cron_runs(c, &record.job.job_id).await?;
        Ok(Some(record))
    }

    pub(super) async fn cron_delete_once(&self, job: &CronRef) -> Result<bool, Error> {
        let client = self.client().await?;
        let delete = client.prepare_cached(sql::CRON_DELETE).await?;
        Ok(client
            .execute(&delete, &[&job.project, &job.job_id])
            .await?
            > 0)
    }

    pub(super) async fn cron_due_once(
        &self,
        now: jiff::Timestamp,
        limit: u32,
        per_project: u32,
    ) -> Result<CronDue, Error> {
        let client = self.client().await?;
        let due = client.prepare_cached(sql::CRON_DUE).await?;
        let next = client.prepare_cached(sql::CRON_NEXT).await?;
        let (limit, per_project) = (i64::from(limit), i64::from(per_project));
        let (due_params, next_params) = ([&now as _, &limit as _, &per_project as _], [&now as _]);
        // Pipelined: one round trip for both.
        let (due, next) = tokio::try_join!(
            client.query(&due, &due_params),
            client.query_one(&next, &next_params)
        )?;
        Ok(CronDue {
            due: due.iter().map(record).collect::<Result<_, _>>()?,
            next_at: next.get(0),
        })
    }

    pub(super) async fn cron_advance_once(&self, p: &CronAdvance) -> Result<bool, Error> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let advance = tx.prepare_cached(sql::CRON_ADVANCE).await?;
        let counted = i64::from(p.counted);
        let moved = tx
            .execute(
                &advance,
                &[
                    &p.job_id,
                    &p.scheduled_at,
                    &p.next_run_at,
                    &counted,
                    &p.run.message_id,
                    &p.run.fired_at,
                ],
            )
            .await?;
        if moved == 0 {
            // Another firing of this tick advanced it first (or the
            // schedule changed or went): nothing to record.
            return Ok(false);
        }
        let insert = tx.prepare_cached(sql::CRON_RUN_INSERT).await?;
        let r = &p.run;
        tx.execute(
            &insert,
            &[
                &p.job_id,
                &r.scheduled_at,
                &r.fired_at,
                &r.message_id,
                &r.outcome.as_str(),
                &r.error,
            ],
        )
        .await?;
        let trim = tx.prepare_cached(sql::CRON_RUNS_TRIM).await?;
        tx.execute(&trim, &[&p.job_id]).await?;
        tx.commit().await?;
        Ok(true)
    }

    pub(super) async fn cron_run_outcome_once(&self, p: &CronRunOutcome) -> Result<bool, Error> {
        let client = self.client().await?;
        let set = client.prepare_cached(sql::CRON_RUN_OUTCOME).await?;
        Ok(client
            .execute(
                &set,
                &[
                    &p.job_id,
                    &p.scheduled_at,
                    &p.outcome.as_str(),
                    &p.error,
                    &p.now,
                    &p.message_id,
                ],
            )
            .await?
            > 0)
    }
}
