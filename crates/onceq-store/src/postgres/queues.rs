//! Queues: explicit and implicit creation, update, lookup, delete, purge,
//! stats.

use crate::postgres::db::GenericClient;
use onceq_types::queue::QueueSettings;
use onceq_types::{QueueRecord, QueueStats, QueueType, RetryBackoff, names};
use tokio_postgres::Row;

use super::errors::Error;
use super::{PgStore, sql};
use crate::rules::queue_create::{self, DeadLetterQueue};
use crate::rules::queue_update;
use crate::{QueueCreate, QueueCreated, QueuePause, QueueRef, QueueUpdate, StoreError};

/// The retry backoff stored in four columns, the first named `initial`
/// and the others after it; all NULL: none (the CHECK keeps them whole).
pub(super) fn backoff(row: &Row, initial: &str) -> Option<RetryBackoff> {
    let at = row.columns().iter().position(|c| c.name() == initial)?;
    Some(RetryBackoff {
        initial_seconds: row.get::<_, Option<i32>>(at)?,
        multiplier: row.get(at + 1),
        max_seconds: row.get(at + 2),
        jitter: row.get(at + 3),
    })
}

/// A retry backoff as the four columns' parameters (all NULL: none).
fn backoff_params(
    b: Option<&RetryBackoff>,
) -> (Option<i32>, Option<f64>, Option<i32>, Option<f64>) {
    (
        b.map(|b| b.initial_seconds),
        b.map(|b| b.multiplier),
        b.map(|b| b.max_seconds),
        b.map(|b| b.jitter),
    )
}

fn queue_record(row: &Row) -> Result<QueueRecord, Error> {
    let queue_type: &str = row.get("queue_type");
    Ok(QueueRecord {
        name: row.get("name"),
        queue_type: QueueType::parse(queue_type).ok_or_else(|| {
            StoreError::internal(format!("unknown queue_type {queue_type:?} in the database"))
        })?,
        dead_letter_queue: row.get("dead_letter_queue"),
        max_retries: row.get("max_retries"),
        message_retention_days: row.get("message_retention_days"),
        visibility_timeout_default: row.get("visibility_timeout_default"),
        enable_priority: row.get("enable_priority"),
        paused: row.get("paused"),
        retry_backoff: backoff(row, "retry_backoff_initial_seconds"),
        max_in_flight: row.get("max_in_flight"),
        rate_per_sec: row.get("rate_per_sec"),
        completed_retention_seconds: row.get("completed_retention_seconds"),
        created_at: row.get("created_at"),
    })
}

async fn get_record(c: &impl GenericClient, q: &QueueRef) -> Result<Option<QueueRecord>, Error> {
    let stmt = c.prepare_cached(sql::QUEUE_GET).await?;
    match c.query_opt(&stmt, &[&q.project, &q.queue]).await? {
        Some(row) => Ok(Some(queue_record(&row)?)),
        None => Ok(None),
    }
}

/// The queue's id and type.
pub(super) async fn lookup(
    c: &impl GenericClient,
    project: &str,
    name: &str,
) -> Result<Option<(i64, QueueType)>, Error> {
    let stmt = c.prepare_cached(sql::QUEUE_LOOKUP).await?;
    let Some(row) = c.query_opt(&stmt, &[&project, &name]).await? else {
        return Ok(None);
    };
    let queue_type: &str = row.get(1);
    let queue_type = QueueType::parse(queue_type).ok_or_else(|| {
        StoreError::internal(format!("unknown queue_type {queue_type:?} in the database"))
    })?;
    Ok(Some((row.get(0), queue_type)))
}

async fn ensure_project(
    c: &impl GenericClient,
    project: &str,
    now: jiff::Timestamp,
) -> Result<(), Error> {
    let stmt = c.prepare_cached(sql::PROJECT_ENSURE).await?;
    c.execute(&stmt, &[&project, &now]).await?;
    Ok(())
}

/// Inserts a queue unless one of that name exists; its id when we made it.
async fn insert(
    c: &impl GenericClient,
    project: &str,
    name: &str,
    settings: &QueueSettings,
    dead_letter_queue_id: Option<i64>,
    now: jiff::Timestamp,
) -> Result<Option<i64>, Error> {
    let stmt = c.prepare_cached(sql::QUEUE_INSERT).await?;
    let (initial, multiplier, max, jitter) = backoff_params(settings.retry_backoff.as_ref());
    let row = c
        .query_opt(
            &stmt,
            &[
                &project,
                &name,
                &settings.queue_type.as_str(),
                &dead_letter_queue_id,
                &settings.max_retries,
                &settings.message_retention_days,
                &settings.visibility_timeout_default,
                &settings.enable_priority,
                &now,
                &initial,
                &multiplier,
                &max,
                &jitter,
                &settings.max_in_flight,
                &settings.rate_per_sec,
                &settings.completed_retention_seconds,
            ],
        )
        .await?;
    Ok(row.map(|r| r.get(0)))
}

/// The id of `<name>-dlq`, created with default settings and no DLQ of its
/// own if missing. Race-safe: insert-or-nothing, then read.
async fn ensure_default_dlq(
    c: &impl GenericClient,
    project: &str,
    dlq: &str,
    now: jiff::Timestamp,
) -> Result<i64, Error> {
    let settings = QueueSettings {
        dead_letter_queue: None,
        ..QueueSettings::default()
    };
    if let Some(id) = insert(c, project, dlq, &settings, None, now).await? {
        return Ok(id);
    }
    match lookup(c, project, dlq).await? {
        Some((id, queue_type)) => {
            queue_create::check_dead_letter_target(dlq, queue_type)?;
            Ok(id)
        }
        // Deleted between our insert and our read: go again.
        None => Err(Error::Race("default dead-letter queue vanished")),
    }
}

/// Makes sure the queue exists, creating it (and its `<name>-dlq`) with
/// default settings as a first publish does, and `completed_retention`
/// (the publish's `new_queue_completed_retention`). Returns its id and type.
pub(super) async fn ensure(
    c: &impl GenericClient,
    q: &QueueRef,
    completed_retention: i32,
    now: jiff::Timestamp,
) -> Result<(i64, QueueType), Error> {
    if let Some(found) = lookup(c, &q.project, &q.queue).await? {
        return Ok(found);
    }
    ensure_project(c, &q.project, now).await?;
    let dlq_id = ensure_default_dlq(c, &q.project, &names::default_dlq_name(&q.queue), now).await?;
    let settings = QueueSettings {
        completed_retention_seconds: completed_retention,
        ..QueueSettings::default()
    };
    if let Some(id) = insert(c, &q.project, &q.queue, &settings, Some(dlq_id), now).await? {
        return Ok((id, settings.queue_type));
    }
    // A concurrent publish or create won; use its queue.
    lookup(c, &q.project, &q.queue)
        .await?
        .ok_or(Error::Race("queue vanished while being created"))
}

impl PgStore {
    pub(super) async fn queue_create_once(&self, p: &QueueCreate) -> Result<QueueCreated, Error> {
        let q = &p.queue;
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        if let Some(existing) = get_record(&tx, q).await? {
            return Ok(queue_create::answer_existing(existing, &p.settings)?);
        }
        ensure_project(&tx, &q.project, p.now).await?;
        let dlq = queue_create::dead_letter_queue_name(&q.queue, &p.settings);
        // A named one is looked up; the default one is inserted unless it
        // exists (race-safe), not looked up first.
        let found = match &p.settings.dead_letter_queue {
            Some(_) => lookup(&tx, &q.project, &dlq).await?,
            None => None,
        };
        let dlq_id = match queue_create::dead_letter_queue(&p.settings, &dlq, found)? {
            DeadLetterQueue::Existing(id) => id,
            DeadLetterQueue::CreateDefault => {
                ensure_default_dlq(&tx, &q.project, &dlq, p.now).await?
            }
        };
        let inserted = insert(&tx, &q.project, &q.queue, &p.settings, Some(dlq_id), p.now).await?;
        let record = get_record(&tx, q)
            .await?
            .ok_or(Error::Race("queue vanished while being created"))?;
        if inserted.is_none() {
            // A concurrent create (or publish) won the name: judge its queue
            // like any existing one. Dropping the transaction rolls back.
            return Ok(queue_create::answer_existing(record, &p.settings)?);
        }
        tx.commit().await?;
        Ok(QueueCreated {
            record,
            created: true,
        })
    }

    pub(super) async fn queue_update_once(&self, p: &QueueUpdate) -> Result<QueueRecord, Error> {
        let q = &p.queue;
        let c = &p.changes;
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        // Locked, so that a concurrent delete or update waits for this one.
        let lock = tx.prepare_cached(sql::QUEUE_LOCK).await?;
        let Some(row) = tx.query_opt(&lock, &[&q.project, &q.queue]).await? else {
            return Err(StoreError::QueueNotFound.into());
        };
        let id: i64 = row.get(0);
        let existing = get_record(&tx, q)
            .await?
            .ok_or(Error::Race("queue vanished while locked"))?;
        queue_update::check_type(&existing, c)?;
        let found = match &c.dead_letter_queue {
            Some(dlq) => lookup(&tx, &q.project, dlq).await?,
            None => None,
        };
        let dlq_id = queue_update::dead_letter_queue(&q.queue, c, found)?;
        let update = tx.prepare_cached(sql::QUEUE_UPDATE).await?;
        let (initial, multiplier, max, jitter) = backoff_params(c.retry_backoff.flatten().as_ref());
        tx.execute(
            &update,
            &[
                &id,
                &dlq_id,
                &c.max_retries,
                &c.message_retention_days,
                &c.visibility_timeout_default,
                &c.enable_priority,
                &c.retry_backoff.is_some(),
                &initial,
                &multiplier,
                &max,
                &jitter,
                &c.max_in_flight.is_some(),
                &c.max_in_flight.flatten(),
                &c.rate_per_sec.is_some(),
                &c.rate_per_sec.flatten(),
                &c.completed_retention_seconds,
            ],
        )
        .await?;
        let record = get_record(&tx, q)
            .await?
            .ok_or(Error::Race("queue vanished while locked"))?;
        tx.commit().await?;
        Ok(record)
    }

    pub(super) async fn queue_pause_once(&self, p: &QueuePause) -> Result<QueueRecord, Error> {
        let q = &p.queue;
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::QUEUE_PAUSE).await?;
        if client
            .query_opt(&stmt, &[&q.project, &q.queue, &p.paused])
            .await?
            .is_none()
        {
            return Err(StoreError::QueueNotFound.into());
        }
        get_record(&client, q)
            .await?
            .ok_or_else(|| StoreError::QueueNotFound.into())
    }

    pub(super) async fn queue_get_once(&self, q: &QueueRef) -> Result<Option<QueueRecord>, Error> {
        let client = self.client().await?;
        get_record(&client, q).await
    }

    pub(super) async fn queue_list_once(&self, project: &str) -> Result<Vec<QueueRecord>, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::QUEUE_LIST).await?;
        let rows = client.query(&stmt, &[&project]).await?;
        rows.iter().map(queue_record).collect()
    }

    pub(super) async fn queue_delete_once(&self, q: &QueueRef) -> Result<i64, Error> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let lock = tx.prepare_cached(sql::QUEUE_LOCK).await?;
        let Some(row) = tx.query_opt(&lock, &[&q.project, &q.queue]).await? else {
            return Err(StoreError::QueueNotFound.into());
        };
        let id: i64 = row.get(0);
        let delete_messages = tx.prepare_cached(sql::QUEUE_DELETE_MESSAGES).await?;
        let deleted = tx.execute(&delete_messages, &[&id]).await?;
        let delete = tx.prepare_cached(sql::QUEUE_DELETE).await?;
        tx.execute(&delete, &[&id]).await?;
        tx.commit().await?;
        Ok(count(deleted))
    }

    pub(super) async fn queue_stats_once(
        &self,
        q: &QueueRef,
        now: jiff::Timestamp,
    ) -> Result<QueueStats, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::QUEUE_STATS).await?;
        // Under the hot settings (sql/queue_stats.sql says why), in one
        // pipeline: the transaction always ends with the COMMIT, even if
        // this future is dropped after the first poll.
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 3] = [&q.project, &q.queue, &now];
        let (began, row, committed) = tokio::join!(
            client.batch_execute(sql::HOT_BEGIN),
            client.query_opt(&stmt, &params),
            client.batch_execute("COMMIT"),
        );
        began?;
        let row = row?;
        committed?;
        let Some(row) = row else {
            return Err(StoreError::QueueNotFound.into());
        };
        let available: i64 = row.get("available");
        let delayed: i64 = row.get("delayed");
        let in_flight: i64 = row.get("in_flight");
        let oldest: Option<jiff::Timestamp> = row.get("oldest");
        Ok(QueueStats {
            queue: row.get("name"),
            message_count: available + delayed + in_flight,
            available,
            delayed,
            in_flight,
            dead_lettered: row.get("dead_lettered"),
            dead_letter_queue: row.get("dead_letter_queue"),
            // Whole seconds, rounded down; never negative, even if a
            // message was stored by a server whose clock runs ahead.
            oldest_message_age_seconds: oldest
                .map(|t| now.duration_since(t).as_secs().max(0))
                .unwrap_or(0),
            paused: row.get("paused"),
        })
    }

    pub(super) async fn queue_purge_once(&self, q: &QueueRef) -> Result<i64, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::QUEUE_PURGE).await?;
        match client.query_opt(&stmt, &[&q.project, &q.queue]).await? {
            Some(row) => Ok(row.get(0)),
            None => Err(StoreError::QueueNotFound.into()),
        }
    }
}

/// A row count as the API reports it.
pub(super) fn count(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
