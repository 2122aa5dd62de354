//! Publishing: all-or-nothing batches, implicit queues, idempotency keys.
//!
//! Without keys a batch is one `INSERT ... SELECT FROM unnest(...)`, a single
//! round trip that is atomic by itself. With keys, one transaction takes
//! each key first (see `sql/dedupe_key_claim.sql`): a key already held with
//! the same payload makes that message a replay, with another payload it
//! fails the whole batch. A queue that does not exist yet is created in the
//! transaction, as a first publish does.

use std::collections::HashMap;

use crate::postgres::db::GenericClient;
use jiff::Timestamp;
use onceq_types::{MessageStatus, QueueType};

use super::errors::Error;
use super::{queues, sql};
use crate::rules::dedupe::{self, Plan};
use crate::rules::visibility;
use crate::{DEFAULT_GROUP, HandedOut, MessagePublish, PublishOutcome, StoreError, ids};

/// What a publish computes once, before any attempt: retries reuse the same
/// ids, so nothing about the outcome depends on how many attempts it took.
pub(super) struct Batch {
    pub(super) ids: Vec<String>,
    pub(super) visible_at: Vec<Timestamp>,
    pub(super) hashes: Vec<[u8; 32]>,
    pub(super) key_expires_at: Timestamp,
}

impl Batch {
    pub(super) fn new(p: &MessagePublish) -> crate::Result<Batch> {
        Ok(Batch {
            ids: p.messages.iter().map(|_| ids::message_id()).collect(),
            visible_at: p
                .messages
                .iter()
                .map(|m| Ok(visibility::visible_after(p.now, m.delay)?.1))
                .collect::<crate::Result<_>>()?,
            hashes: p
                .messages
                .iter()
                .map(|m| ids::payload_hash(&m.payload))
                .collect(),
            key_expires_at: p
                .now
                .checked_add(p.dedupe_window)
                .map_err(|_| StoreError::Invalid("dedupe window is out of range".into()))?,
        })
    }
}

/// A new message as its insert returned it (`RETURNING id, state,
/// created_at, receipt, lease_expires_at`), by id; what its answer is made
/// from.
pub(super) struct Stored {
    status: MessageStatus,
    created_at: Timestamp,
    /// Stored handed out ([`crate::HandOut`]).
    handed_out: Option<HandedOut>,
}

/// When the lease of a message handed out with `hand_out` at `now` ends,
/// if its consumer gave a timeout; `None` also for the queue's default
/// (the insert adds it) and for a message not handed out.
pub(super) fn lease_end(
    now: Timestamp,
    hand_out: Option<crate::HandOut>,
) -> crate::Result<Option<Timestamp>> {
    hand_out
        .and_then(|h| h.visibility_timeout)
        .map(|t| now.checked_add(t))
        .transpose()
        .map_err(|_| StoreError::Invalid("visibility timeout is out of range".into()))
}

impl Stored {
    /// The rows of `sql/message_insert.sql` or `sql/publish_group.sql`.
    pub(super) fn from_rows(
        rows: &[tokio_postgres::Row],
    ) -> Result<HashMap<String, Stored>, Error> {
        rows.iter()
            .map(|row| {
                let receipt: Option<String> = row.get("receipt");
                let lease_expires_at: Option<Timestamp> = row.get("lease_expires_at");
                let stored = Stored {
                    status: status(row.get("state"))?,
                    created_at: row.get("created_at"),
                    handed_out: receipt
                        .zip(lease_expires_at)
                        .map(|(receipt, lease_expires_at)| HandedOut {
                            receipt,
                            lease_expires_at,
                        }),
                };
                Ok((row.get("id"), stored))
            })
            .collect()
    }

    /// The answer to message `i` of `p`, planned new: from its row, which
    /// must be there.
    pub(super) fn outcome(
        stored: &HashMap<String, Stored>,
        p: &MessagePublish,
        batch: &Batch,
        i: usize,
    ) -> Result<PublishOutcome, Error> {
        let id = &batch.ids[i];
        let row = stored
            .get(id)
            .ok_or_else(|| StoreError::internal(format!("inserted message {id} not returned")))?;
        Ok(dedupe::new_outcome(
            id.clone(),
            p.messages[i].payload.clone(),
            row.status,
            row.created_at,
            row.handed_out.clone(),
        ))
    }
}

fn status(state: &str) -> crate::Result<MessageStatus> {
    MessageStatus::parse(state)
        .ok_or_else(|| StoreError::internal(format!("unknown message state {state:?}")))
}

/// Inserts the messages at `which` (indexes into the batch). Empty when the
/// queue does not exist, or when `standard_only` and it is a FIFO queue.
async fn insert(
    c: &impl GenericClient,
    p: &MessagePublish,
    batch: &Batch,
    which: &[usize],
    standard_only: bool,
) -> Result<HashMap<String, Stored>, Error> {
    let ids: Vec<&str> = which.iter().map(|&i| batch.ids[i].as_str()).collect();
    let payloads: Vec<&str> = which
        .iter()
        .map(|&i| p.messages[i].payload.as_str())
        .collect();
    let priorities: Vec<i32> = which.iter().map(|&i| p.messages[i].priority).collect();
    let groups: Vec<Option<&str>> = which
        .iter()
        .map(|&i| p.messages[i].group_id.as_deref())
        .collect();
    let keys: Vec<Option<&str>> = which
        .iter()
        .map(|&i| p.messages[i].idempotency_key.as_deref())
        .collect();
    let visible_at: Vec<Timestamp> = which.iter().map(|&i| batch.visible_at[i]).collect();
    let headers: Vec<Option<&str>> = which
        .iter()
        .map(|&i| p.messages[i].headers.as_deref())
        .collect();
    let stmt = c.prepare_cached(sql::MESSAGE_INSERT).await?;
    let rows = c
        .query(
            &stmt,
            &[
                &p.queue.project,
                &p.queue.queue,
                &p.now,
                &ids,
                &payloads,
                &priorities,
                &groups,
                &keys,
                &visible_at,
                &standard_only,
                &headers,
            ],
        )
        .await?;
    Stored::from_rows(&rows)
}

/// Stores one publish in a transaction of its own: the path of a publish
/// whose group failed (see `publish_group`), so that one bad request never
/// fails its neighbours.
pub(super) async fn publish_alone(
    pool: &crate::postgres::db::Db,
    p: &MessagePublish,
    batch: &Batch,
) -> Result<Vec<PublishOutcome>, Error> {
    if p.messages.is_empty() {
        return Ok(Vec::new());
    }
    let mut client = pool.get().await?;
    let all: Vec<usize> = (0..p.messages.len()).collect();

    let keyed = p.messages.iter().any(|m| m.idempotency_key.is_some());
    if !keyed {
        // The common case: one statement. Nothing back means the queue
        // is missing (create it below and insert in that transaction),
        // or is a FIFO queue (take its groups' locks first, below).
        let stored = insert(&client, p, batch, &all, true).await?;
        if !stored.is_empty() {
            return new_outcomes(p, batch, &all, &stored);
        }
    }

    let tx = client.transaction().await?;
    let (queue_id, queue_type) =
        queues::ensure(&tx, &p.queue, p.new_queue_completed_retention, p.now).await?;

    let mut plans = Vec::with_capacity(p.messages.len());
    let mut takes = Vec::new();
    let reused = dedupe::plan(&p.messages, &batch.hashes, &mut plans, |i| takes.push(i));
    // In message order, so the first failure is the one reported.
    for i in takes {
        if reused.is_some_and(|r| r < i) {
            break;
        }
        plans[i] = take_key(&tx, p, batch, queue_id, i).await?;
        if plans[i] == Plan::Reused {
            return Err(dedupe::reused(&p.messages, i).into());
        }
    }
    if let Some(r) = reused {
        return Err(dedupe::reused(&p.messages, r).into());
    }

    let fresh: Vec<usize> = plans
        .iter()
        .enumerate()
        .filter_map(|(i, plan)| (*plan == Plan::New).then_some(i))
        .collect();
    let stored = if fresh.is_empty() {
        HashMap::new()
    } else {
        if queue_type == QueueType::Fifo {
            let groups = fresh.iter().map(|&i| p.messages[i].group_id.as_deref());
            lock_groups(&tx, queue_id, groups).await?;
        }
        let stored = insert(&tx, p, batch, &fresh, false).await?;
        // Fewer rows than asked: the queue was deleted since `ensure`
        // found it (the insert's lock waited for the delete). Again from
        // the start, which creates it anew.
        if stored.len() < fresh.len() {
            return Err(Error::Race("queue deleted during publish"));
        }
        stored
    };
    let outcomes = dedupe::outcomes(&p.messages, plans, |i| {
        Stored::outcome(&stored, p, batch, i)
    })?;
    tx.commit().await?;
    Ok(outcomes)
}

/// Takes the advisory locks of these groups of a FIFO queue (`None` is the
/// `default` group) until the transaction ends, in one order for everyone so
/// that two batches never deadlock. Everything that gives a message a place
/// in a group (publish, redrive) holds its group's lock from before the
/// message takes its `seq` until COMMIT: within a group, seq order is then
/// commit order (see `sql/message_claim.sql` for why claims need that).
pub(super) async fn lock_groups<'a>(
    c: &impl GenericClient,
    queue_id: i64,
    groups: impl IntoIterator<Item = Option<&'a str>>,
) -> Result<(), Error> {
    let groups: std::collections::BTreeSet<&str> = groups
        .into_iter()
        .map(|g| g.unwrap_or(DEFAULT_GROUP))
        .collect();
    let stmt = c.prepare_cached(sql::FIFO_GROUP_LOCK).await?;
    for group in groups {
        c.execute(&stmt, &[&queue_id, &group]).await?;
    }
    Ok(())
}

/// Takes message `i`'s key, or answers from whoever holds it.
async fn take_key(
    c: &impl GenericClient,
    p: &MessagePublish,
    batch: &Batch,
    queue_id: i64,
    i: usize,
) -> Result<Plan, Error> {
    let key = p.messages[i].idempotency_key.as_deref().unwrap_or_default();
    let claim = c.prepare_cached(sql::DEDUPE_KEY_CLAIM).await?;
    let hash: &[u8] = &batch.hashes[i];
    let ours = c
        .query_opt(
            &claim,
            &[
                &queue_id,
                &key,
                &batch.ids[i],
                &hash,
                &p.now,
                &batch.key_expires_at,
            ],
        )
        .await?;
    if ours.is_some() {
        return Ok(Plan::New);
    }
    let get = c.prepare_cached(sql::DEDUPE_KEY_GET).await?;
    let Some(row) = c.query_opt(&get, &[&queue_id, &key]).await? else {
        // Purged or its queue deleted since we conflicted with it.
        return Err(Error::Race("idempotency key vanished"));
    };
    Ok(Plan::held(row.get("payload_hash"), hash, || {
        replay(&row, p.now, &p.messages[i].payload)
    })?)
}

/// The answer to a publish whose key is held, from the key's row joined
/// with its first message (`sql/dedupe_key_get.sql`'s columns).
pub(super) fn replay(
    row: &tokio_postgres::Row,
    now: Timestamp,
    payload: &str,
) -> crate::Result<PublishOutcome> {
    let state: Option<&str> = row.get("state");
    let (status, delivery_count) = match state {
        // Its first message is gone (acked, purged, expired).
        None => (MessageStatus::Gone, 0),
        Some(state) => {
            let visible_at: Timestamp = row.get("visible_at");
            let status = visibility::reported(status(state)?, visible_at, now);
            (status, row.get("delivery_count"))
        }
    };
    Ok(PublishOutcome {
        message_id: row.get("message_id"),
        payload: payload.to_owned(),
        status,
        delivery_count,
        created_at: row.get("created_at"),
        replay: true,
        handed_out: None,
    })
}

fn new_outcomes(
    p: &MessagePublish,
    batch: &Batch,
    which: &[usize],
    stored: &HashMap<String, Stored>,
) -> Result<Vec<PublishOutcome>, Error> {
    which
        .iter()
        .map(|&i| Stored::outcome(stored, p, batch, i))
        .collect()
}
