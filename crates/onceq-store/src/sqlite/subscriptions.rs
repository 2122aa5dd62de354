//! Push subscriptions: add, list, delete, and the dispatcher's scan.

use jiff::Timestamp;
use onceq_types::push::MAX_SUBSCRIPTIONS_PER_QUEUE;
use rusqlite::{Connection, Row, params};

use super::{queues, time};
use crate::{
    QueueRef, Result, StoreError, SubscriptionDelete, SubscriptionDue, SubscriptionInsert,
    SubscriptionRecord, ids,
};

/// `Store::subscription_insert`. The writer thread serialises inserts, so
/// the count and the insert cannot race.
pub(super) fn insert(conn: &Connection, p: &SubscriptionInsert) -> Result<SubscriptionRecord> {
    let queue = queues::get(conn, &p.queue)?;
    let existing: i64 = conn
        .prepare_cached(sql!("subscription_count"))?
        .query_row([queue.id], |r| r.get(0))?;
    if existing >= MAX_SUBSCRIPTIONS_PER_QUEUE as i64 {
        return Err(StoreError::Invalid(format!(
            "queue {:?} already has {MAX_SUBSCRIPTIONS_PER_QUEUE} push subscriptions (the most a queue may have)",
            p.queue.queue
        )));
    }
    let id = ids::subscription_id();
    conn.prepare_cached(sql!("subscription_insert"))?
        .execute(params![
            id,
            queue.id,
            p.url,
            p.secret,
            p.max_in_flight,
            p.timeout_seconds,
            time::micros(p.now)
        ])?;
    Ok(SubscriptionRecord {
        subscription_id: id,
        queue: p.queue.clone(),
        url: p.url.clone(),
        secret: p.secret.clone(),
        max_in_flight: p.max_in_flight,
        timeout_seconds: p.timeout_seconds,
        // As stored, like what a later list returns.
        created_at: time::stored(p.now),
    })
}

/// `Store::subscription_list`.
pub(super) fn list(conn: &Connection, q: &QueueRef) -> Result<Vec<SubscriptionRecord>> {
    let queue = queues::get(conn, q)?;
    let mut stmt = conn.prepare_cached(sql!("subscription_list"))?;
    let rows = stmt.query_map([queue.id], |r| record(r, q.clone(), 1))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// `Store::subscription_delete`.
pub(super) fn delete(conn: &Connection, p: &SubscriptionDelete) -> Result<bool> {
    let queue = queues::get(conn, &p.queue)?;
    let n = conn
        .prepare_cached(sql!("subscription_delete"))?
        .execute(params![queue.id, p.subscription_id])?;
    Ok(n > 0)
}

/// `Store::subscription_scan`.
pub(super) fn scan(conn: &Connection, now: Timestamp) -> Result<Vec<SubscriptionDue>> {
    let mut stmt = conn.prepare_cached(sql!("subscription_scan"))?;
    let rows = stmt.query_map([time::micros(now)], |r| {
        let queue = QueueRef::new(r.get::<_, String>(1)?, r.get::<_, String>(2)?);
        let subscription = record(r, queue, 3)?;
        Ok(SubscriptionDue {
            subscription,
            due: r.get(8)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// A record from a row with the id at column 0 and `url, secret,
/// max_in_flight, timeout_seconds, created_at` from column `url` on.
fn record(r: &Row<'_>, queue: QueueRef, url: usize) -> rusqlite::Result<SubscriptionRecord> {
    Ok(SubscriptionRecord {
        subscription_id: r.get(0)?,
        queue,
        url: r.get(url)?,
        secret: r.get(url + 1)?,
        max_in_flight: r.get(url + 2)?,
        timeout_seconds: r.get(url + 3)?,
        created_at: time::get(r, url + 4)?,
    })
}
