//! Queues: explicit and implicit creation, lookup, delete, purge, stats.

use deadpool_postgres::GenericClient;
use onceq_types::queue::QueueSettings;
use onceq_types::{QueueRecord, QueueStats, QueueType, names};
use tokio_postgres::Row;

use super::errors::Error;
use super::{PgStore, sql};
use crate::{QueueCreate, QueueCreated, QueueRef, StoreError};

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
        created_at: row.get("created_at"),
    })
}

/// The settings a stored queue has, its DLQ by name.
fn settings_of(record: &QueueRecord) -> QueueSettings {
    QueueSettings {
        queue_type: record.queue_type,
        dead_letter_queue: record.dead_letter_queue.clone(),
        max_retries: record.max_retries,
        message_retention_days: record.message_retention_days,
        visibility_timeout_default: record.visibility_timeout_default,
        enable_priority: record.enable_priority,
    }
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

/// The id of `dlq`, which is to become a dead-letter queue: it must be a
/// standard queue. Dead letters arrive out of any group's order, and a FIFO
/// queue only takes new messages at its groups' tails under their locks
/// (see `sql/message_claim.sql`).
fn dead_letter_target(dlq: &str, found: (i64, QueueType)) -> Result<i64, Error> {
    match found {
        (id, QueueType::Standard) => Ok(id),
        (_, QueueType::Fifo) => Err(StoreError::Invalid(format!(
            "dead-letter queue {dlq:?} is a FIFO queue; a dead-letter queue must be a standard queue"
        ))
        .into()),
    }
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
        Some(found) => dead_letter_target(dlq, found),
        // Deleted between our insert and our read: go again.
        None => Err(Error::Race("default dead-letter queue vanished")),
    }
}

/// Makes sure the queue exists, creating it (and its `<name>-dlq`) with
/// default settings as a first publish does. Returns its id and type.
pub(super) async fn ensure(
    c: &impl GenericClient,
    q: &QueueRef,
    now: jiff::Timestamp,
) -> Result<(i64, QueueType), Error> {
    if let Some(found) = lookup(c, &q.project, &q.queue).await? {
        return Ok(found);
    }
    ensure_project(c, &q.project, now).await?;
    let dlq_id = ensure_default_dlq(c, &q.project, &names::default_dlq_name(&q.queue), now).await?;
    let settings = QueueSettings::default();
    if let Some(id) = insert(c, &q.project, &q.queue, &settings, Some(dlq_id), now).await? {
        return Ok((id, settings.queue_type));
    }
    // A concurrent publish or create won; use its queue.
    lookup(c, &q.project, &q.queue)
        .await?
        .ok_or(Error::Race("queue vanished while being created"))
}

/// `created: false` when `existing` has exactly the settings asked for,
/// `QueueAlreadyExists` otherwise.
fn same_or_conflict(existing: QueueRecord, wanted: &QueueSettings) -> Result<QueueCreated, Error> {
    if settings_of(&existing) == *wanted {
        Ok(QueueCreated {
            record: existing,
            created: false,
        })
    } else {
        Err(StoreError::QueueAlreadyExists(Box::new(existing)).into())
    }
}

impl PgStore {
    pub(super) async fn queue_create_once(&self, p: &QueueCreate) -> Result<QueueCreated, Error> {
        let q = &p.queue;
        // Compared by name, as the record shows it: None means `<name>-dlq`.
        let wanted = QueueSettings {
            dead_letter_queue: Some(
                p.settings
                    .dead_letter_queue
                    .clone()
                    .unwrap_or_else(|| names::default_dlq_name(&q.queue)),
            ),
            ..p.settings.clone()
        };

        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        if let Some(existing) = get_record(&tx, q).await? {
            return same_or_conflict(existing, &wanted);
        }
        ensure_project(&tx, &q.project, p.now).await?;
        let dlq_id = match &p.settings.dead_letter_queue {
            Some(dlq) => {
                let found = lookup(&tx, &q.project, dlq)
                    .await?
                    .ok_or_else(|| StoreError::DeadLetterQueueNotFound(dlq.clone()))?;
                dead_letter_target(dlq, found)?
            }
            None => {
                let dlq = names::default_dlq_name(&q.queue);
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
            return same_or_conflict(record, &wanted);
        }
        tx.commit().await?;
        Ok(QueueCreated {
            record,
            created: true,
        })
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
        let Some(row) = client
            .query_opt(&stmt, &[&q.project, &q.queue, &now])
            .await?
        else {
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
