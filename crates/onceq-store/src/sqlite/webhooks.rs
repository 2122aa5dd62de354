//! Account webhooks: their records, the event outbox and the attempts.

use std::collections::HashMap;

use jiff::Timestamp;
use onceq_types::webhook::MAX_ATTEMPTS_KEPT;
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::time;
use crate::{
    Result, StoreError, WebhookAttemptRecord, WebhookDelivery, WebhookDeliveryClaim,
    WebhookDeliverySettle, WebhookEventInsert, WebhookInsert, WebhookRecord, WebhookRef, ids,
};

/// `Store::webhook_insert`. The writer thread serialises inserts, so the
/// count and the insert cannot race.
pub(super) fn insert(conn: &Connection, p: &WebhookInsert) -> Result<WebhookRecord> {
    let existing: i64 = conn
        .prepare_cached(sql!("webhook_count"))?
        .query_row([&p.project], |r| r.get(0))?;
    if existing >= p.max_per_project as i64 {
        return Err(StoreError::Invalid(format!(
            "project {:?} already has {} webhooks (the most a project may have)",
            p.project, p.max_per_project
        )));
    }
    let id = ids::webhook_id();
    let events = serde_json::to_string(&p.events).map_err(StoreError::internal)?;
    conn.prepare_cached(sql!("webhook_insert"))?
        .execute(params![
            id,
            p.project,
            p.url,
            events,
            p.secret,
            p.description,
            p.headers,
            time::micros(p.now)
        ])?;
    Ok(WebhookRecord {
        webhook_id: id,
        project: p.project.clone(),
        url: p.url.clone(),
        events: p.events.clone(),
        secret: p.secret.clone(),
        description: p.description.clone(),
        headers: p.headers.clone(),
        created_at: time::stored(p.now),
    })
}

/// `Store::webhook_list` (a project's) and `Store::webhook_scan` (all).
pub(super) fn list(conn: &Connection, project: Option<&str>) -> Result<Vec<WebhookRecord>> {
    let rows = match project {
        Some(project) => conn
            .prepare_cached(sql!("webhook_list"))?
            .query_map([project], record)?
            .collect::<rusqlite::Result<Vec<_>>>()?,
        None => conn
            .prepare_cached(sql!("webhook_scan"))?
            .query_map([], record)?
            .collect::<rusqlite::Result<Vec<_>>>()?,
    };
    Ok(rows)
}

/// `Store::webhook_delete`.
pub(super) fn delete(conn: &Connection, w: &WebhookRef) -> Result<bool> {
    let n = conn
        .prepare_cached(sql!("webhook_delete"))?
        .execute(params![w.project, w.webhook_id])?;
    Ok(n > 0)
}

/// `Store::webhook_event_insert`.
pub(super) fn event_insert(
    conn: &Connection,
    p: &WebhookEventInsert,
) -> Result<Vec<WebhookDelivery>> {
    let listeners = conn
        .prepare_cached(sql!("webhook_listeners"))?
        .query_map(params![p.project, p.event_type, p.only_webhook], record)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let attempt = i32::from(p.claim_until.is_some());
    let due = time::micros(p.claim_until.unwrap_or(p.now));
    let mut insert = conn.prepare_cached(sql!("webhook_delivery_insert"))?;
    let mut made = Vec::new();
    for webhook in listeners {
        let id: Option<i64> = insert
            .query_row(
                params![
                    webhook.webhook_id,
                    p.event_id,
                    p.event_type,
                    p.body,
                    time::micros(p.now),
                    attempt,
                    due
                ],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(delivery_id) = id {
            made.push(WebhookDelivery {
                delivery_id,
                webhook,
                event_id: p.event_id.clone(),
                event_type: p.event_type.clone(),
                body: p.body.clone(),
                event_at: time::stored(p.now),
                attempt,
            });
        }
    }
    Ok(made)
}

/// `Store::webhook_delivery_claim`.
pub(super) fn claim(conn: &Connection, p: &WebhookDeliveryClaim) -> Result<Vec<WebhookDelivery>> {
    struct Taken {
        id: i64,
        webhook_id: String,
        event_id: String,
        event_type: String,
        body: String,
        event_at: Timestamp,
        attempt: i32,
    }
    let taken = conn
        .prepare_cached(sql!("webhook_delivery_claim"))?
        .query_map(
            params![
                time::micros(p.now),
                time::micros(p.claim_until),
                i64::from(p.limit),
                i64::from(p.per_project),
                p.project_room_json()
            ],
            |r| {
                Ok(Taken {
                    id: r.get(0)?,
                    webhook_id: r.get(1)?,
                    event_id: r.get(2)?,
                    event_type: r.get(3)?,
                    body: r.get(4)?,
                    event_at: time::get(r, 5)?,
                    attempt: r.get(6)?,
                })
            },
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut webhooks: HashMap<String, WebhookRecord> = HashMap::new();
    let mut get = conn.prepare_cached(sql!("webhook_get"))?;
    let mut out = Vec::with_capacity(taken.len());
    for t in taken {
        if !webhooks.contains_key(&t.webhook_id) {
            let w = get.query_row([&t.webhook_id], record)?;
            webhooks.insert(t.webhook_id.clone(), w);
        }
        out.push(WebhookDelivery {
            delivery_id: t.id,
            webhook: webhooks[&t.webhook_id].clone(),
            event_id: t.event_id,
            event_type: t.event_type,
            body: t.body,
            event_at: t.event_at,
            attempt: t.attempt,
        });
    }
    out.sort_by_key(|d| d.delivery_id);
    Ok(out)
}

/// `Store::webhook_delivery_settle`.
pub(super) fn settle(conn: &Connection, p: &WebhookDeliverySettle) -> Result<bool> {
    let a = &p.attempt;
    let recorded = conn
        .prepare_cached(sql!("webhook_attempt_insert"))?
        .execute(params![
            p.webhook_id,
            time::micros(a.attempted_at),
            a.event_id,
            a.event_type,
            a.attempt,
            a.outcome,
            a.status,
            a.latency_ms,
            a.error
        ])?;
    conn.prepare_cached(sql!("webhook_attempt_prune"))?
        .execute(params![p.webhook_id, MAX_ATTEMPTS_KEPT as i64])?;
    let settled = match p.retry_at {
        Some(at) => conn
            .prepare_cached(sql!("webhook_delivery_retry"))?
            .execute(params![p.delivery_id, time::micros(at)])?,
        None => conn
            .prepare_cached(sql!("webhook_delivery_done"))?
            .execute([p.delivery_id])?,
    };
    Ok(recorded > 0 && settled > 0)
}

/// `Store::webhook_attempts`.
pub(super) fn attempts(
    conn: &Connection,
    w: &WebhookRef,
    limit: u32,
) -> Result<Option<Vec<WebhookAttemptRecord>>> {
    let exists = conn
        .prepare_cached(sql!("webhook_exists"))?
        .query_row(params![w.project, w.webhook_id], |_| Ok(()))
        .optional()?;
    if exists.is_none() {
        return Ok(None);
    }
    let rows = conn
        .prepare_cached(sql!("webhook_attempts"))?
        .query_map(params![w.webhook_id, i64::from(limit)], |r| {
            Ok(WebhookAttemptRecord {
                attempted_at: time::get(r, 0)?,
                event_id: r.get(1)?,
                event_type: r.get(2)?,
                attempt: r.get(3)?,
                outcome: r.get(4)?,
                status: r.get(5)?,
                latency_ms: r.get(6)?,
                error: r.get(7)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(Some(rows))
}

/// A webhook from `id, project, url, events, secret, description, headers,
/// created_at`.
fn record(r: &Row<'_>) -> rusqlite::Result<WebhookRecord> {
    let events: String = r.get(3)?;
    let events = serde_json::from_str(&events).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(3, rusqlite::types::Type::Text, Box::new(e))
    })?;
    Ok(WebhookRecord {
        webhook_id: r.get(0)?,
        project: r.get(1)?,
        url: r.get(2)?,
        events,
        secret: r.get(4)?,
        description: r.get(5)?,
        headers: r.get(6)?,
        created_at: time::get(r, 7)?,
    })
}
