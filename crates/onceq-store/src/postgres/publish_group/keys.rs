//! The group's idempotency keys: their columns for the statement that takes
//! them (`sql/publish_group.sql`), the ones already held answered in
//! another, and those of publishes that failed given back.

use std::collections::{HashMap, HashSet};

use crate::postgres::db::GenericClient;
use jiff::Timestamp;
use tokio_postgres::types::ToSql;

use super::Pending;
use super::plan::{Take, Work};
use crate::postgres::errors::Error;
use crate::postgres::publish::{self, Stored};
use crate::postgres::sql;
use crate::rules::dedupe::{self, Plan};

/// The keys' parameters of `sql/publish_group.sql` (the first six).
pub(super) struct ClaimColumns<'a> {
    queue_ids: Vec<i64>,
    keys: Vec<&'a str>,
    message_ids: Vec<&'a str>,
    hashes: Vec<&'a [u8]>,
    created: Vec<Timestamp>,
    expires: Vec<Timestamp>,
}

impl<'a> ClaimColumns<'a> {
    pub(super) fn of(group: &'a [Pending], takes: &'a [Take<'a>]) -> ClaimColumns<'a> {
        let (queue_ids, keys, message_ids) = columns(group, takes.iter());
        ClaimColumns {
            queue_ids,
            keys,
            message_ids,
            hashes: takes
                .iter()
                .map(|t| group[t.req].batch.hashes[t.msg].as_slice())
                .collect(),
            created: takes.iter().map(|t| group[t.req].p.now).collect(),
            expires: takes
                .iter()
                .map(|t| group[t.req].batch.key_expires_at)
                .collect(),
        }
    }

    pub(super) fn params(&self) -> [&(dyn ToSql + Sync); 6] {
        [
            &self.queue_ids,
            &self.keys,
            &self.message_ids,
            &self.hashes,
            &self.created,
            &self.expires,
        ]
    }
}

/// The keys of `takes` the claim's rows (`queue_id`, `key`; other rows
/// have a null key) say are now ours.
pub(super) fn taken<'g>(
    takes: &[Take<'g>],
    rows: &[tokio_postgres::Row],
) -> HashSet<(i64, &'g str)> {
    let mut taken = HashSet::with_capacity(rows.len());
    for row in rows {
        let (Some(queue_id), Some(key)) = (
            row.get::<_, Option<i64>>("queue_id"),
            row.get::<_, Option<&str>>("key"),
        ) else {
            continue;
        };
        // Back to the caller's borrow: the rows' strings die with the rows.
        if let Some(t) = takes
            .iter()
            .find(|t| t.queue_id == queue_id && t.key == key)
        {
            taken.insert((t.queue_id, t.key));
        }
    }
    taken
}

/// The queue id, key and message id columns of `takes`, as the statements
/// take them.
fn columns<'a>(
    group: &'a [Pending],
    takes: impl Iterator<Item = &'a Take<'a>> + Clone,
) -> (Vec<i64>, Vec<&'a str>, Vec<&'a str>) {
    let queue_ids = takes.clone().map(|t| t.queue_id).collect();
    let keys = takes.clone().map(|t| t.key).collect();
    let message_ids = takes
        .map(|t| group[t.req].batch.ids[t.msg].as_str())
        .collect();
    (queue_ids, keys, message_ids)
}

/// Answers the keys already held: a replay of the first message, or the
/// publish fails when the payload differs.
pub(super) async fn replay_held(
    c: &impl GenericClient,
    group: &[Pending],
    work: &mut [Work],
    held: &[&Take<'_>],
) -> Result<(), Error> {
    let queue_ids: Vec<i64> = held.iter().map(|t| t.queue_id).collect();
    let keys: Vec<&str> = held.iter().map(|t| t.key).collect();
    let stmt = c.prepare_cached(sql::DEDUPE_KEY_GET_MANY).await?;
    let rows = c.query(&stmt, &[&queue_ids, &keys]).await?;
    for t in held {
        let row = rows
            .iter()
            .find(|r| r.get::<_, i64>("queue_id") == t.queue_id && r.get::<_, &str>("key") == t.key)
            // Purged or its queue deleted since we conflicted with it.
            .ok_or(Error::Race("idempotency key vanished"))?;
        let pending = &group[t.req];
        let payload = &pending.p.messages[t.msg].payload;
        let plan = Plan::held(
            row.get("payload_hash"),
            &pending.batch.hashes[t.msg],
            || publish::replay(row, pending.p.now, payload),
        )?;
        let w = &mut work[t.req];
        if plan == Plan::Reused {
            w.failed
                .get_or_insert_with(|| dedupe::reused(&pending.p.messages, t.msg).into());
        }
        w.plans[t.msg] = plan;
    }
    Ok(())
}

/// Undoes what publishes that failed after the pipeline (a key reused
/// with another payload) did in it: gives their keys back and deletes their
/// messages, so a failed publish stores nothing.
pub(super) async fn undo_failed(
    c: &impl GenericClient,
    group: &[Pending],
    work: &[Work],
    takes: &[Take<'_>],
    taken: &HashSet<(i64, &str)>,
    stored: &mut HashMap<String, Stored>,
) -> Result<(), Error> {
    let back: Vec<&Take> = takes
        .iter()
        .filter(|t| work[t.req].failed.is_some() && taken.contains(&(t.queue_id, t.key)))
        .collect();
    if !back.is_empty() {
        let (queue_ids, keys, message_ids) = columns(group, back.iter().copied());
        let stmt = c.prepare_cached(sql::DEDUPE_KEY_RELEASE_MANY).await?;
        c.execute(&stmt, &[&queue_ids, &keys, &message_ids]).await?;
    }
    let gone: Vec<&str> = group
        .iter()
        .zip(work)
        .filter(|(_, w)| w.failed.is_some())
        .flat_map(|(pending, _)| pending.batch.ids.iter().map(String::as_str))
        .filter(|id| stored.contains_key(*id))
        .collect();
    if !gone.is_empty() {
        let stmt = c.prepare_cached(sql::MESSAGE_DELETE_MANY).await?;
        c.execute(&stmt, &[&gone]).await?;
        for id in gone {
            stored.remove(id);
        }
    }
    Ok(())
}
