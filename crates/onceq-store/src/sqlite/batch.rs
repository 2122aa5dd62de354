//! The batch forms (`Store::message_ack_many` and the others): each entry
//! as its single form does it, all in the one writer transaction of the
//! call (SQLite has one writer: a batch is one request of its group, so
//! one COMMIT, and its entries see each other's changes in order).

use rusqlite::Connection;

use super::{browse, finished, lease};
use crate::params::check_batch;
use crate::{
    AckOutcome, DlqRedriveOne, MessageAck, MessageCancel, MessageDelete, MessageIds, MessageNack,
    NackOutcome, RedriveManyOutcome, Result, SingleOutcome,
};

/// `Store::message_ack_many`.
pub(super) fn ack_many(conn: &Connection, acks: &[MessageAck]) -> Result<Vec<AckOutcome>> {
    check_batch(acks.len())?;
    ack_each(conn, acks)
}

/// Each ack in turn, however many (`Store::message_publish_acking`: the
/// acks of every consumer a publish hands messages to).
pub(super) fn ack_each(conn: &Connection, acks: &[MessageAck]) -> Result<Vec<AckOutcome>> {
    acks.iter()
        .map(
            |ack| match crate::rules::finished::may_keep(ack.lease.receipt.as_deref()) {
                true => finished::ack(conn, ack),
                false => lease::ack(conn, ack),
            },
        )
        .collect()
}

/// `Store::message_nack_many`.
pub(super) fn nack_many(conn: &Connection, nacks: &[MessageNack]) -> Result<Vec<NackOutcome>> {
    check_batch(nacks.len())?;
    nacks.iter().map(|nack| lease::nack(conn, nack)).collect()
}

/// `Store::message_cancel_many`.
pub(super) fn cancel_many(conn: &Connection, p: &MessageIds) -> Result<Vec<SingleOutcome>> {
    p.checked()?;
    each(p, |message_id| {
        let cancel = MessageCancel {
            queue: p.queue.clone(),
            message_id,
            now: p.now,
        };
        Ok(match finished::cancel(conn, &cancel)? {
            true => SingleOutcome::Done,
            false => SingleOutcome::NotFound,
        })
    })
}

/// `Store::message_delete_many`.
pub(super) fn delete_many(conn: &Connection, p: &MessageIds) -> Result<Vec<SingleOutcome>> {
    p.checked()?;
    each(p, |message_id| {
        let delete = MessageDelete {
            queue: p.queue.clone(),
            message_id,
            now: p.now,
        };
        browse::delete(conn, &delete)
    })
}

/// `Store::dlq_redrive_many`.
pub(super) fn redrive_many(conn: &Connection, p: &MessageIds) -> Result<RedriveManyOutcome> {
    p.checked()?;
    let mut dead_letter_queue = String::new();
    let outcomes = each(p, |message_id| {
        let one = DlqRedriveOne {
            queue: p.queue.clone(),
            message_id,
            now: p.now,
        };
        let moved = browse::redrive_one(conn, &one)?;
        dead_letter_queue = moved.dead_letter_queue;
        Ok(moved.outcome)
    })?;
    Ok(RedriveManyOutcome {
        dead_letter_queue,
        outcomes,
    })
}

fn each(
    p: &MessageIds,
    mut f: impl FnMut(String) -> Result<SingleOutcome>,
) -> Result<Vec<SingleOutcome>> {
    p.message_ids.iter().map(|id| f(id.clone())).collect()
}
