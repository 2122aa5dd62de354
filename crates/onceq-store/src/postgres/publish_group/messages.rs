//! The group's new messages: FIFO groups' locks, and their columns for the
//! statement that inserts them (`sql/publish_group.sql`), one per kind of
//! queue.

use crate::postgres::db::GenericClient;
use jiff::Timestamp;
use onceq_types::QueueType;
use tokio_postgres::types::ToSql;

use super::Pending;
use super::plan::Work;
use crate::postgres::errors::Error;
use crate::postgres::publish;
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

/// The messages' parameters of `sql/publish_group.sql` (the last eleven):
/// the new messages bound for queues of one type, of the publishes that did
/// not fail (a keyed one stored only if its key was taken).
pub(super) struct NewColumns<'a> {
    ids: Vec<&'a str>,
    queue_ids: Vec<i64>,
    payloads: Vec<&'a str>,
    priorities: Vec<i32>,
    groups: Vec<Option<&'a str>>,
    keys: Vec<Option<&'a str>>,
    visible_at: Vec<Timestamp>,
    created: Vec<Timestamp>,
    headers: Vec<Option<&'a str>>,
    /// A waiting consumer's hand-out (`HandOut`), and its lease's end when
    /// the consumer gave a timeout (else the statement takes the queue's).
    hand_out: Vec<bool>,
    lease_ends: Vec<Option<Timestamp>>,
}

impl<'a> NewColumns<'a> {
    pub(super) fn of(
        group: &'a [Pending],
        work: &[Work],
        queue_type: QueueType,
    ) -> Result<NewColumns<'a>, Error> {
        let mut c = NewColumns {
            ids: Vec::new(),
            queue_ids: Vec::new(),
            payloads: Vec::new(),
            priorities: Vec::new(),
            groups: Vec::new(),
            keys: Vec::new(),
            visible_at: Vec::new(),
            created: Vec::new(),
            headers: Vec::new(),
            hand_out: Vec::new(),
            lease_ends: Vec::new(),
        };
        for (pending, w) in group.iter().zip(work) {
            if w.failed.is_some() || w.queue_type != queue_type {
                continue;
            }
            for (i, (m, plan)) in pending.p.messages.iter().zip(&w.plans).enumerate() {
                if !matches!(plan, Plan::New) {
                    continue;
                }
                c.ids.push(pending.batch.ids[i].as_str());
                c.queue_ids.push(w.queue_id);
                c.payloads.push(m.payload.as_str());
                c.priorities.push(m.priority);
                c.groups.push(m.group_id.as_deref());
                c.keys.push(m.idempotency_key.as_deref());
                c.visible_at.push(pending.batch.visible_at[i]);
                c.created.push(pending.p.now);
                c.headers.push(m.headers.as_deref());
                c.hand_out.push(m.hand_out.is_some());
                c.lease_ends
                    .push(publish::lease_end(pending.p.now, m.hand_out)?);
            }
        }
        Ok(c)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    pub(super) fn params(&self) -> [&(dyn ToSql + Sync); 11] {
        [
            &self.ids,
            &self.queue_ids,
            &self.payloads,
            &self.priorities,
            &self.groups,
            &self.keys,
            &self.visible_at,
            &self.created,
            &self.headers,
            &self.hand_out,
            &self.lease_ends,
        ]
    }
}
