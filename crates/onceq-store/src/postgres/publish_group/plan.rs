//! The group's plan, worked out without the database: each publish's
//! queue and per-message [`Plan`] (the dedupe rule,
//! [`crate::rules::dedupe`]), the keys the group takes and in which order,
//! and each publish's answer once the group committed.

use std::collections::HashMap;

use onceq_types::QueueType;

use super::{Answer, Pending};
use crate::postgres::errors::Error;
use crate::postgres::publish::Stored;
use crate::rules::dedupe::{self, Plan};

/// One publish of the group as the transaction works it out.
pub(super) struct Work {
    pub(super) queue_id: i64,
    pub(super) queue_type: QueueType,
    pub(super) plans: Vec<Plan>,
    /// Set when the publish fails; it then stores nothing.
    pub(super) failed: Option<Error>,
}

/// A key the group takes: which publish, which message.
pub(super) struct Take<'a> {
    pub(super) req: usize,
    pub(super) msg: usize,
    pub(super) queue_id: i64,
    pub(super) key: &'a str,
}

/// Fills each publish's plans for what needs no database (keyless
/// messages, a key twice in one publish) and lists the keys to take, sorted
/// by (queue, key) so that two groups never deadlock on each other.
pub(super) fn plan_keys<'g>(group: &'g [Pending], work: &mut [Work]) -> Vec<Take<'g>> {
    let mut takes = Vec::new();
    for (req, (pending, w)) in group.iter().zip(work.iter_mut()).enumerate() {
        let messages = &pending.p.messages;
        let queue_id = w.queue_id;
        let reused = dedupe::plan(messages, &pending.batch.hashes, &mut w.plans, |msg| {
            takes.push(Take {
                req,
                msg,
                queue_id,
                key: messages[msg].idempotency_key.as_deref().unwrap_or_default(),
            })
        });
        if let Some(msg) = reused {
            w.failed = Some(dedupe::reused(messages, msg).into());
        }
    }
    // A publish that already failed takes no key.
    takes.retain(|t| work[t.req].failed.is_none());
    takes.sort_unstable_by(|a, b| (a.queue_id, a.key).cmp(&(b.queue_id, b.key)));
    takes
}

/// One publish's answer once the group committed.
pub(super) fn answer(pending: &Pending, w: Work, stored: &HashMap<String, Stored>) -> Answer {
    if let Some(failed) = w.failed {
        return Err(failed.into_store());
    }
    dedupe::outcomes(&pending.p.messages, w.plans, |i| {
        Stored::outcome(stored, &pending.p, &pending.batch, i)
    })
    .map_err(Error::into_store)
}
