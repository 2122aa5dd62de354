//! The group's new messages: FIFO groups' locks, then one insert per kind
//! of queue.

use std::collections::HashMap;

use crate::postgres::db::GenericClient;
use onceq_types::QueueType;

use super::Pending;
use super::plan::Work;
use crate::postgres::errors::Error;
use crate::postgres::publish::{self, Stored};
use crate::rules::dedupe::Plan;

/// Takes the group locks of every FIFO queue the new messages go to, queue
/// by queue in id order (see `publish::lock_groups`).
pub(super) async fn lock_fifo_groups(
    c: &impl GenericClient,
    group: &[Pending],
    work: &[Work],
) -> Result<(), Error> {
    let mut fifo: Vec<i64> = work
        .iter()
        .filter(|w| w.queue_type == QueueType::Fifo && w.failed.is_none())
        .map(|w| w.queue_id)
        .collect();
    fifo.sort_unstable();
    fifo.dedup();
    for queue_id in fifo {
        // Collected first: an iterator of borrows held across the awaits
        // below would keep the future from being `Send`.
        let groups: Vec<Option<&str>> = group
            .iter()
            .zip(work)
            .filter(|(_, w)| w.queue_id == queue_id && w.failed.is_none())
            .flat_map(|(pending, w)| {
                pending
                    .p
                    .messages
                    .iter()
                    .zip(&w.plans)
                    .filter(|(_, plan)| matches!(plan, Plan::New))
                    .map(|(m, _)| m.group_id.as_deref())
            })
            .collect();
        publish::lock_groups(c, queue_id, groups).await?;
    }
    Ok(())
}

/// Inserts the new messages bound for queues of `queue_type` of the
/// publishes that did not fail (a keyed one only if its key was taken).
pub(super) async fn insert_new(
    c: &impl GenericClient,
    stmt: &crate::postgres::db::Stmt,
    group: &[Pending],
    work: &[Work],
    queue_type: QueueType,
) -> Result<HashMap<String, Stored>, Error> {
    let mut ids = Vec::new();
    let mut queue_ids = Vec::new();
    let mut payloads = Vec::new();
    let mut priorities = Vec::new();
    let mut groups = Vec::new();
    let mut keys = Vec::new();
    let mut visible_at = Vec::new();
    let mut created = Vec::new();
    let mut headers = Vec::new();
    // A waiting consumer's hand-out (`HandOut`), and its lease's end when
    // the consumer gave a timeout (else the statement takes the queue's).
    let mut hand_out = Vec::new();
    let mut lease_ends = Vec::new();
    for (pending, w) in group.iter().zip(work) {
        if w.failed.is_some() || w.queue_type != queue_type {
            continue;
        }
        for (i, (m, plan)) in pending.p.messages.iter().zip(&w.plans).enumerate() {
            if !matches!(plan, Plan::New) {
                continue;
            }
            ids.push(pending.batch.ids[i].as_str());
            queue_ids.push(w.queue_id);
            payloads.push(m.payload.as_str());
            priorities.push(m.priority);
            groups.push(m.group_id.as_deref());
            keys.push(m.idempotency_key.as_deref());
            visible_at.push(pending.batch.visible_at[i]);
            created.push(pending.p.now);
            headers.push(m.headers.as_deref());
            hand_out.push(m.hand_out.is_some());
            lease_ends.push(publish::lease_end(pending.p.now, m.hand_out)?);
        }
    }
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let rows = c
        .query(
            stmt,
            &[
                &ids,
                &queue_ids,
                &payloads,
                &priorities,
                &groups,
                &keys,
                &visible_at,
                &created,
                &headers,
                &hand_out,
                &lease_ends,
            ],
        )
        .await?;
    Stored::from_rows(&rows)
}
