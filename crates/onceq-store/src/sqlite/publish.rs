//! `message_publish`: storing messages, with dedupe by idempotency key.
//!
//! The whole call runs in one writer request, so it is all-or-nothing (an
//! error rolls its savepoint back) and serialised with every other write:
//! "one message per key within the window, however concurrent" holds by
//! construction.

use onceq_types::{MessageStatus, QueueType};
use rusqlite::{Connection, OptionalExtension, params};

use super::{
    queues::{self, Queue},
    time,
};
use crate::rules::dedupe::{self, Plan};
use crate::rules::{finished, hand_out, visibility};
use crate::{DEFAULT_GROUP, HandedOut, MessagePublish, PublishOutcome, Result, StoreError, ids};

/// `Store::message_publish`.
pub(super) fn publish(conn: &Connection, p: &MessagePublish) -> Result<Vec<PublishOutcome>> {
    let queue = queues::get_or_create(conn, &p.queue, p.new_queue_completed_retention, p.now)?;
    let hashes: Vec<[u8; 32]> = p
        .messages
        .iter()
        .map(|m| ids::payload_hash(&m.payload))
        .collect();
    let mut plans = Vec::with_capacity(p.messages.len());
    // Keys are looked up as their messages come, in order (below).
    dedupe::plan(&p.messages, &hashes, &mut plans, |_| {});
    dedupe::outcomes(&p.messages, plans, |i| {
        publish_one(conn, &queue, p, i, &hashes[i])
    })
}

/// Message `i`, planned new: a replay if the store holds its key, else
/// stored (and its key taken).
fn publish_one(
    conn: &Connection,
    queue: &Queue,
    p: &MessagePublish,
    i: usize,
    hash: &[u8; 32],
) -> Result<PublishOutcome> {
    let m = &p.messages[i];
    let now = time::micros(p.now);
    if let Some(key) = &m.idempotency_key {
        let first: Option<(String, Vec<u8>, jiff::Timestamp)> = conn
            .prepare_cached(sql!("dedupe_key_get"))?
            .query_row(params![queue.id, key, now], |r| {
                Ok((r.get(0)?, r.get(1)?, time::get(r, 2)?))
            })
            .optional()?;
        if let Some((message_id, first_hash, created_at)) = first {
            let plan = Plan::held(&first_hash, hash, || {
                let (status, delivery_count) = current_status(conn, &message_id, now)?;
                Ok(PublishOutcome {
                    message_id,
                    payload: m.payload.clone(),
                    status,
                    delivery_count,
                    created_at,
                    replay: true,
                    handed_out: None,
                })
            })?;
            return match plan {
                Plan::Replay(outcome) => Ok(outcome),
                _ => Err(dedupe::reused(&p.messages, i)),
            };
        }
    }

    let message_id = ids::message_id();
    let (status, visible_at) = visibility::visible_after(p.now, m.delay)?;
    // On a FIFO queue the group decides the order and priority is ignored;
    // on a standard queue the group is stored as given, without effect.
    let (priority, group_id) = match queue.record.queue_type {
        QueueType::Fifo => (0, Some(m.group_id.as_deref().unwrap_or(DEFAULT_GROUP))),
        QueueType::Standard if queue.record.enable_priority => (m.priority, m.group_id.as_deref()),
        QueueType::Standard => (0, m.group_id.as_deref()),
    };
    // Handed straight to a waiting consumer where the rule allows it.
    let visible_now = status == MessageStatus::Available;
    let handed_out = match m.hand_out {
        Some(h)
            if hand_out::allowed(&queue.record, visible_now, || {
                ahead(conn, queue.id, priority, now)
            })? =>
        {
            let lease_expires_at = match h.visibility_timeout {
                Some(t) => time::after(p.now, t, "visibility timeout")?,
                None => time::after_secs(p.now, queue.record.visibility_timeout_default.into()),
            };
            let receipt = finished::receipt(queue.record.completed_retention_seconds > 0);
            Some((receipt, lease_expires_at))
        }
        _ => None,
    };
    let common = params![
        message_id,
        queue.id,
        match handed_out {
            Some(_) => "in_flight",
            None => status.as_str(),
        },
        m.payload,
        priority,
        group_id,
        m.idempotency_key,
        time::micros(visible_at),
        now,
        m.headers,
    ];
    match &handed_out {
        None => conn
            .prepare_cached(sql!("message_insert"))?
            .execute(common)?,
        Some((receipt, lease_expires_at)) => {
            let all: Vec<&dyn rusqlite::ToSql> = common
                .iter()
                .copied()
                .chain([receipt as &dyn rusqlite::ToSql, lease_expires_at])
                .collect();
            conn.prepare_cached(sql!("message_insert_handed"))?
                .execute(all.as_slice())?
        }
    };
    if let Some(key) = &m.idempotency_key {
        conn.prepare_cached(sql!("dedupe_key_claim"))?
            .execute(params![
                queue.id,
                key,
                message_id,
                &hash[..],
                now,
                time::after(p.now, p.dedupe_window, "dedupe window")?,
            ])?;
    }
    let handed_out = handed_out
        .map(|(receipt, lease_expires_at)| {
            Ok::<_, StoreError>(HandedOut {
                receipt,
                lease_expires_at: time::to_timestamp(lease_expires_at)?,
            })
        })
        .transpose()?;
    Ok(dedupe::new_outcome(
        message_id,
        m.payload.clone(),
        status,
        time::stored(p.now),
        handed_out,
    ))
}

/// Where the first message of a key is now: its state as reported (see
/// [`visibility::reported`]) and hand-outs, or `gone` and 0 once acked,
/// purged or expired.
fn current_status(conn: &Connection, message_id: &str, now: i64) -> Result<(MessageStatus, i32)> {
    let row: Option<(String, i64, i32)> = conn
        .prepare_cached(sql!("message_status"))?
        .query_row([message_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    let Some((state, visible_at, delivery_count)) = row else {
        return Ok((MessageStatus::Gone, 0));
    };
    let state = MessageStatus::parse(&state)
        .ok_or_else(|| StoreError::internal(format!("unknown message state {state:?}")))?;
    Ok((visibility::reported(state, visible_at, now), delivery_count))
}

/// What a claim would hand out before a new message of `priority` on the
/// queue `queue_id` at `now` (`rules::hand_out::Ahead`).
fn ahead(conn: &Connection, queue_id: i64, priority: i32, now: i64) -> Result<hand_out::Ahead> {
    Ok(conn
        .prepare_cached(sql!("message_hand_out_ahead"))?
        .query_row(params![queue_id, priority, now], |r| {
            Ok(hand_out::Ahead {
                available: r.get(0)?,
                due: r.get(1)?,
            })
        })?)
}
