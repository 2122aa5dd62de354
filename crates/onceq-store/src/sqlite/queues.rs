//! Queues: lookup, creation (explicit, or implicit on first publish),
//! update, list, delete, purge and stats.

use jiff::Timestamp;
use onceq_types::{QueueRecord, QueueStats, QueueType, RetryBackoff, queue::QueueSettings};
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::{keys, time};
use crate::rules::queue_create::{self, DeadLetterQueue};
use crate::rules::queue_update;
use crate::{QueueCreate, QueueCreated, QueuePause, QueueRef, QueueUpdate, Result, StoreError};

/// A queue as stored: its record plus the ids the other operations need.
#[derive(Debug, Clone)]
pub(super) struct Queue {
    /// Row id, what messages and dedupe keys point at.
    pub(super) id: i64,
    /// Row id of its dead-letter queue.
    pub(super) dlq_id: Option<i64>,
    /// What the API shows.
    pub(super) record: QueueRecord,
    /// The rate's token bucket as stored: tokens as of a time (micros);
    /// `None`: full (`rules::limits`).
    pub(super) bucket: Option<(f64, i64)>,
}

/// The queue `(project, name)`, if it exists.
pub(super) fn find(conn: &Connection, project: &str, name: &str) -> Result<Option<Queue>> {
    Ok(conn
        .prepare_cached(sql!("queue_get"))?
        .query_row(params![project, name], queue)
        .optional()?)
}

/// The queue `q`, or `QueueNotFound`.
pub(super) fn get(conn: &Connection, q: &QueueRef) -> Result<Queue> {
    find(conn, &q.project, &q.queue)?.ok_or(StoreError::QueueNotFound)
}

/// `Store::queue_list`.
pub(super) fn list(conn: &Connection, project: &str) -> Result<Vec<QueueRecord>> {
    let mut stmt = conn.prepare_cached(sql!("queue_list"))?;
    let rows = stmt.query_map([project], queue)?;
    rows.map(|r| Ok(r?.record)).collect()
}

/// `Store::queue_create`.
pub(super) fn create(conn: &Connection, p: &QueueCreate) -> Result<QueueCreated> {
    let QueueRef {
        project,
        queue: name,
    } = &p.queue;
    queue_create::check_not_own_dead_letter_queue(name, &p.settings)?;
    if let Some(existing) = find(conn, project, name)? {
        return queue_create::answer_existing(existing.record, &p.settings);
    }

    keys::project_ensure(conn, project, p.now)?;
    let dlq_name = queue_create::dead_letter_queue_name(name, &p.settings);
    let found = find(conn, project, &dlq_name)?.map(|dlq| (dlq.id, dlq.record.queue_type));
    let dlq_id = match queue_create::dead_letter_queue(&p.settings, &dlq_name, found)? {
        DeadLetterQueue::Existing(id) => id,
        DeadLetterQueue::CreateDefault => insert(
            conn,
            project,
            &dlq_name,
            &QueueSettings::default(),
            None,
            p.now,
        )?,
    };
    insert(conn, project, name, &p.settings, Some(dlq_id), p.now)?;
    let record = get(conn, &p.queue)?.record;
    Ok(QueueCreated {
        record,
        created: true,
    })
}

/// `Store::queue_update`.
pub(super) fn update(conn: &Connection, p: &QueueUpdate) -> Result<QueueRecord> {
    let queue = get(conn, &p.queue)?;
    let c = &p.changes;
    queue_update::check_type(&queue.record, c)?;
    let found = match &c.dead_letter_queue {
        Some(dlq) => find(conn, &p.queue.project, dlq)?.map(|d| (d.id, d.record.queue_type)),
        None => None,
    };
    let dlq_id = queue_update::dead_letter_queue(&p.queue.queue, c, found)?;
    let (initial, multiplier, max, jitter) = backoff_params(c.retry_backoff.flatten().as_ref());
    conn.prepare_cached(sql!("queue_update"))?.execute(params![
        queue.id,
        dlq_id,
        c.max_retries,
        c.message_retention_days,
        c.visibility_timeout_default,
        c.enable_priority,
        c.retry_backoff.is_some(),
        initial,
        multiplier,
        max,
        jitter,
        c.max_in_flight.is_some(),
        c.max_in_flight.flatten(),
        c.rate_per_sec.is_some(),
        c.rate_per_sec.flatten(),
        c.completed_retention_seconds,
    ])?;
    Ok(get(conn, &p.queue)?.record)
}

/// `Store::queue_pause`.
pub(super) fn pause(conn: &Connection, p: &QueuePause) -> Result<QueueRecord> {
    let queue = get(conn, &p.queue)?;
    conn.prepare_cached(sql!("queue_pause"))?
        .execute(params![queue.id, p.paused])?;
    Ok(get(conn, &p.queue)?.record)
}

/// The queue a publish goes to, created with default settings (and its
/// `<name>-dlq`) if missing, and `completed_retention`.
pub(super) fn get_or_create(
    conn: &Connection,
    q: &QueueRef,
    completed_retention: i32,
    now: Timestamp,
) -> Result<Queue> {
    if let Some(queue) = find(conn, &q.project, &q.queue)? {
        return Ok(queue);
    }
    create(
        conn,
        &QueueCreate {
            queue: q.clone(),
            settings: QueueSettings {
                completed_retention_seconds: completed_retention,
                ..QueueSettings::default()
            },
            now,
        },
    )?;
    get(conn, q)
}

fn insert(
    conn: &Connection,
    project: &str,
    name: &str,
    s: &QueueSettings,
    dlq_id: Option<i64>,
    now: Timestamp,
) -> Result<i64> {
    let (initial, multiplier, max, jitter) = backoff_params(s.retry_backoff.as_ref());
    Ok(conn.prepare_cached(sql!("queue_insert"))?.query_row(
        params![
            project,
            name,
            s.queue_type.as_str(),
            dlq_id,
            s.max_retries,
            s.message_retention_days,
            s.visibility_timeout_default,
            s.enable_priority,
            time::micros(now),
            initial,
            multiplier,
            max,
            jitter,
            s.max_in_flight,
            s.rate_per_sec,
            s.completed_retention_seconds,
        ],
        |r| r.get(0),
    )?)
}

/// `Store::queue_delete`.
pub(super) fn delete(conn: &Connection, q: &QueueRef) -> Result<i64> {
    let queue = get(conn, q)?;
    // Explicit deletes rather than relying on ON DELETE CASCADE: the count
    // is the answer.
    let messages = purge_id(conn, queue.id)?;
    conn.prepare_cached(sql!("queue_delete_dedupe_keys"))?
        .execute([queue.id])?;
    conn.prepare_cached(sql!("queue_delete"))?
        .execute([queue.id])?;
    Ok(messages)
}

/// `Store::queue_purge`.
pub(super) fn purge(conn: &Connection, q: &QueueRef) -> Result<i64> {
    let queue = get(conn, q)?;
    // The finished messages it kept go too (not counted: not held).
    conn.prepare_cached(sql!("queue_purge_finished"))?
        .execute([queue.id])?;
    purge_id(conn, queue.id)
}

fn purge_id(conn: &Connection, queue_id: i64) -> Result<i64> {
    let n = conn
        .prepare_cached(sql!("queue_purge"))?
        .execute([queue_id])?;
    Ok(n as i64)
}

/// `Store::queue_stats`.
pub(super) fn stats(conn: &Connection, q: &QueueRef, now: Timestamp) -> Result<QueueStats> {
    let queue = get(conn, q)?;
    let (available, delayed, in_flight, oldest): (i64, i64, i64, Option<i64>) = conn
        .prepare_cached(sql!("queue_stats"))?
        .query_row(params![queue.id, time::micros(now)], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?;
    let dead_lettered = match queue.dlq_id {
        Some(dlq_id) => conn
            .prepare_cached(sql!("queue_count"))?
            .query_row([dlq_id], |r| r.get(0))?,
        None => 0,
    };
    Ok(QueueStats {
        queue: queue.record.name,
        message_count: available + delayed + in_flight,
        available,
        delayed,
        in_flight,
        dead_lettered,
        dead_letter_queue: queue.record.dead_letter_queue,
        oldest_message_age_seconds: oldest.map_or(0, |t| time::whole_seconds_since(t, now)),
        paused: queue.record.paused,
    })
}

/// The retry backoff stored in the four columns from `at` (initial,
/// multiplier, max, jitter); all NULL: none (the CHECK keeps them whole).
pub(super) fn backoff_at(row: &Row<'_>, at: usize) -> rusqlite::Result<Option<RetryBackoff>> {
    let Some(initial_seconds) = row.get::<_, Option<i32>>(at)? else {
        return Ok(None);
    };
    Ok(Some(RetryBackoff {
        initial_seconds,
        multiplier: row.get(at + 1)?,
        max_seconds: row.get(at + 2)?,
        jitter: row.get(at + 3)?,
    }))
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

fn queue(row: &Row<'_>) -> rusqlite::Result<Queue> {
    let queue_type: String = row.get(2)?;
    let bucket = match (
        row.get::<_, Option<f64>>(17)?,
        row.get::<_, Option<i64>>(18)?,
    ) {
        (Some(tokens), Some(at)) => Some((tokens, at)),
        _ => None,
    };
    Ok(Queue {
        id: row.get(0)?,
        dlq_id: row.get(3)?,
        bucket,
        record: QueueRecord {
            name: row.get(1)?,
            queue_type: QueueType::parse(&queue_type).ok_or_else(|| {
                rusqlite::Error::FromSqlConversionFailure(
                    2,
                    rusqlite::types::Type::Text,
                    format!("unknown queue type {queue_type:?}").into(),
                )
            })?,
            dead_letter_queue: row.get(4)?,
            max_retries: row.get(5)?,
            message_retention_days: row.get(6)?,
            visibility_timeout_default: row.get(7)?,
            enable_priority: row.get(8)?,
            created_at: time::get(row, 9)?,
            paused: row.get(10)?,
            retry_backoff: backoff_at(row, 11)?,
            max_in_flight: row.get(15)?,
            rate_per_sec: row.get(16)?,
            completed_retention_seconds: row.get(19)?,
        },
    })
}
