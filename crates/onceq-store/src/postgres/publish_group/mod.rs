//! Group commit of publishes: concurrent publishes share one transaction,
//! one statement per step and one WAL flush.
//!
//! A publish alone costs a transaction of its own: BEGIN, a queue lookup, a
//! statement per idempotency key, the insert and COMMIT, each a round trip
//! and a statement for PostgreSQL to parse, plan and run, for one row. Under
//! load that per-statement work, not the disk, is the ceiling. So
//! `message_publish` hands its request to a queue, and a few committer tasks
//! ([`COMMITTERS`], so that the next group gathers while one commits) each
//! take whatever is waiting, up to [`MAX_GROUP_MESSAGES`], and store it in
//! one transaction:
//!
//! 1. the queues named, in one lookup (a missing one is created, as a first
//!    publish does);
//! 2. every idempotency key in one `INSERT ... ON CONFLICT`
//!    (`sql/dedupe_key_claim_many.sql`), sorted by (queue, key) so that two
//!    groups never deadlock on each other;
//! 3. the keys already held, in one query, only when there are some: each
//!    becomes a replay, or fails its publish when the payload differs;
//! 4. the keys of publishes that failed in step 3 given back, so a failed
//!    publish stores nothing (rare);
//! 5. FIFO groups' locks (FIFO queues only);
//! 6. every new message in one `INSERT` (`sql/message_insert_many.sql`);
//!
//! then COMMIT, and only then is any request answered: an acknowledged
//! publish is durable exactly as a publish alone would be.
//!
//! Two publishes of one group wanting the same key: the later one waits for
//! the next group, where it finds the first committed and becomes its
//! replay. A group that loses a race (deadlock, serialization failure, a
//! queue deleted under it) is retried whole with the same message ids; a
//! group that fails otherwise is split, each publish retried in a
//! transaction of its own ([`publish::publish_alone`]), so one bad request
//! never fails its neighbours.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use deadpool_postgres::{GenericClient, Pool};
use jiff::Timestamp;
use onceq_types::QueueType;
use tokio::sync::{Mutex, mpsc, oneshot};

use super::errors::{self, Error};
use super::publish::{self, Batch};
use super::{queues, sql};
use crate::{MessagePublish, PublishOutcome, QueueRef, StoreError};

/// Committer tasks per store: one commits while the next gathers a group.
const COMMITTERS: usize = 4;

/// Messages one group stores at most (a publish is never split).
const MAX_GROUP_MESSAGES: usize = 512;

/// Publishes waiting for a committer; beyond it, `message_publish` waits
/// (backpressure instead of an unbounded buffer).
const QUEUE_DEPTH: usize = 4096;

/// What one publish gets back.
type Answer = crate::Result<Vec<PublishOutcome>>;

/// One publish waiting for its group.
struct Pending {
    p: MessagePublish,
    batch: Batch,
    reply: oneshot::Sender<Answer>,
}

/// The handle `PgStore` keeps: publishes go in, answers come back after
/// COMMIT. The committer tasks stop when it is dropped.
pub(super) struct GroupCommit {
    sender: mpsc::Sender<Pending>,
}

impl GroupCommit {
    /// Starts the committer tasks on the current runtime.
    pub(super) fn start(pool: Pool) -> GroupCommit {
        let (sender, receiver) = mpsc::channel(QUEUE_DEPTH);
        let receiver = Arc::new(Mutex::new(receiver));
        for _ in 0..COMMITTERS {
            tokio::spawn(committer(pool.clone(), receiver.clone()));
        }
        GroupCommit { sender }
    }

    /// Stores `p` with whatever else is being published right now.
    pub(super) async fn publish(&self, p: MessagePublish) -> Answer {
        let batch = Batch::new(&p)?;
        let (reply, answer) = oneshot::channel();
        self.sender
            .send(Pending { p, batch, reply })
            .await
            .map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }
}

fn stopped() -> StoreError {
    StoreError::internal("the publish committer stopped")
}

/// Takes a group off the queue, stores it, answers it; until the store is
/// dropped.
async fn committer(pool: Pool, receiver: Arc<Mutex<mpsc::Receiver<Pending>>>) {
    loop {
        let group = {
            let mut receiver = receiver.lock().await;
            let Some(first) = receiver.recv().await else {
                return;
            };
            let mut size = first.p.messages.len();
            let mut group = vec![first];
            while size < MAX_GROUP_MESSAGES {
                let Ok(next) = receiver.try_recv() else { break };
                size += next.p.messages.len();
                group.push(next);
            }
            group
        };
        commit(&pool, group).await;
    }
}

/// Stores `group` (and the publishes it had to put off) and answers each.
async fn commit(pool: &Pool, mut group: Vec<Pending>) {
    while !group.is_empty() {
        let later = put_off_shared_keys(&mut group);
        let answers = match group_retrying(pool, &group).await {
            Ok(answers) => answers,
            Err(e) if group.len() > 1 && !matches!(e, StoreError::Unavailable(_)) => {
                tracing::debug!(error = %e, size = group.len(), "postgres: group failed, publishing alone");
                let mut answers = Vec::with_capacity(group.len());
                for pending in &group {
                    answers.push(alone_retrying(pool, pending).await);
                }
                answers
            }
            Err(e) => {
                let message = e.to_string();
                let unavailable = matches!(e, StoreError::Unavailable(_));
                let mut answers = vec![Err(e)];
                answers.extend((1..group.len()).map(|_| {
                    Err(if unavailable {
                        StoreError::Unavailable(message.clone().into())
                    } else {
                        StoreError::internal(message.clone())
                    })
                }));
                answers
            }
        };
        for (pending, answer) in group.into_iter().zip(answers) {
            // The caller may have gone (its request was cancelled); what was
            // stored stays stored, and a retry with its key gets a replay.
            let _ = pending.reply.send(answer);
        }
        group = later;
    }
}

/// [`group_once`] until it does not lose a race.
async fn group_retrying(pool: &Pool, group: &[Pending]) -> crate::Result<Vec<Answer>> {
    let mut retry = errors::Retry::default();
    loop {
        match group_once(pool, group).await {
            Ok(answers) => return Ok(answers),
            Err(e) => retry.after(e).await?,
        }
    }
}

/// [`publish::publish_alone`] until it does not lose a race.
async fn alone_retrying(pool: &Pool, pending: &Pending) -> Answer {
    let mut retry = errors::Retry::default();
    loop {
        match publish::publish_alone(pool, &pending.p, &pending.batch).await {
            Ok(outcomes) => return Ok(outcomes),
            Err(e) => retry.after(e).await?,
        }
    }
}

/// Moves out of `group` every publish that names an idempotency key an
/// earlier publish of the group names too: it goes in the next group.
fn put_off_shared_keys(group: &mut Vec<Pending>) -> Vec<Pending> {
    let mut seen: HashSet<(&str, &str, &str)> = HashSet::new();
    let mut shares = Vec::with_capacity(group.len());
    for pending in group.iter() {
        let q = &pending.p.queue;
        let keys: HashSet<&str> = pending
            .p
            .messages
            .iter()
            .filter_map(|m| m.idempotency_key.as_deref())
            .collect();
        let shared = keys
            .iter()
            .any(|k| seen.contains(&(q.project.as_str(), q.queue.as_str(), *k)));
        if !shared {
            seen.extend(
                keys.into_iter()
                    .map(|k| (q.project.as_str(), q.queue.as_str(), k)),
            );
        }
        shares.push(shared);
    }
    if !shares.contains(&true) {
        return Vec::new();
    }
    let (later, now): (Vec<_>, Vec<_>) = std::mem::take(group)
        .into_iter()
        .zip(shares)
        .partition(|(_, shared)| *shared);
    *group = now.into_iter().map(|(p, _)| p).collect();
    later.into_iter().map(|(p, _)| p).collect()
}

/// How one message of the group resolves.
enum Plan {
    /// Store it (its key, if any, is ours).
    New,
    /// Answered from the key's first message.
    Replay(PublishOutcome),
    /// Same key as an earlier message of its own publish (same payload).
    SameAs(usize),
}

/// One publish of the group as the transaction works it out.
struct Work {
    queue_id: i64,
    queue_type: QueueType,
    plans: Vec<Plan>,
    /// Set when the publish fails; it then stores nothing.
    failed: Option<Error>,
}

/// A key the group takes: which publish, which message.
struct Take<'a> {
    req: usize,
    msg: usize,
    queue_id: i64,
    key: &'a str,
}

/// One attempt at the whole group, in one transaction. `Err` fails (or
/// retries) the whole group; a publish's own failure is in its answer.
async fn group_once(pool: &Pool, group: &[Pending]) -> Result<Vec<Answer>, Error> {
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;

    let ids = queue_ids(&tx, group).await?;
    let mut work: Vec<Work> = group
        .iter()
        .map(|pending| {
            let q = &pending.p.queue;
            let (queue_id, queue_type) = ids[&(q.project.as_str(), q.queue.as_str())];
            Work {
                queue_id,
                queue_type,
                plans: Vec::with_capacity(pending.p.messages.len()),
                failed: None,
            }
        })
        .collect();

    let takes = plan_keys(group, &mut work);
    let taken = take_keys(&tx, group, &takes).await?;
    let held: Vec<&Take> = takes
        .iter()
        .filter(|t| !taken.contains(&(t.queue_id, t.key)))
        .collect();
    if !held.is_empty() {
        replay_held(&tx, group, &mut work, &held).await?;
        release_failed(&tx, group, &work, &takes, &taken).await?;
    }

    lock_fifo_groups(&tx, group, &work).await?;
    let stored = insert_new(&tx, group, &work).await?;
    tx.commit().await?;

    Ok(group
        .iter()
        .zip(work)
        .map(|(pending, w)| answer(pending, w, &stored))
        .collect())
}

/// The id and type of every queue the group names, creating missing ones.
async fn queue_ids<'g>(
    c: &impl GenericClient,
    group: &'g [Pending],
) -> Result<HashMap<(&'g str, &'g str), (i64, QueueType)>, Error> {
    let mut names: Vec<(&str, &str)> = group
        .iter()
        .map(|g| (g.p.queue.project.as_str(), g.p.queue.queue.as_str()))
        .collect();
    names.sort_unstable();
    names.dedup();
    let projects: Vec<&str> = names.iter().map(|n| n.0).collect();
    let queues: Vec<&str> = names.iter().map(|n| n.1).collect();
    let stmt = c.prepare_cached(sql::QUEUE_LOOKUP_MANY).await?;
    let mut ids = HashMap::with_capacity(names.len());
    for row in c.query(&stmt, &[&projects, &queues]).await? {
        let project: &str = row.get("project");
        let name: &str = row.get("name");
        let Some(&key) = names.iter().find(|n| n.0 == project && n.1 == name) else {
            continue;
        };
        let queue_type = QueueType::parse(row.get("queue_type"))
            .ok_or_else(|| StoreError::internal("unknown queue type"))?;
        ids.insert(key, (row.get("id"), queue_type));
    }
    for name in names {
        if ids.contains_key(&name) {
            continue;
        }
        // A first publish creates its queue (rare: once per queue).
        let first = group
            .iter()
            .find(|g| (g.p.queue.project.as_str(), g.p.queue.queue.as_str()) == name)
            .map(|g| g.p.now)
            .unwrap_or_else(Timestamp::now);
        let queue = QueueRef::new(name.0, name.1);
        let found = queues::ensure(c, &queue, first).await?;
        ids.insert(name, found);
    }
    Ok(ids)
}

/// Fills each publish's plans for what needs no database (keyless
/// messages, a key twice in one publish) and lists the keys to take, sorted.
fn plan_keys<'g>(group: &'g [Pending], work: &mut [Work]) -> Vec<Take<'g>> {
    let mut takes = Vec::new();
    for (req, (pending, w)) in group.iter().zip(work.iter_mut()).enumerate() {
        let mut first_of: HashMap<&str, usize> = HashMap::new();
        for (msg, m) in pending.p.messages.iter().enumerate() {
            let Some(key) = m.idempotency_key.as_deref() else {
                w.plans.push(Plan::New);
                continue;
            };
            if let Some(&first) = first_of.get(key) {
                if pending.batch.hashes[first] != pending.batch.hashes[msg] {
                    w.failed.get_or_insert_with(|| publish::reused(msg, key));
                }
                w.plans.push(Plan::SameAs(first));
                continue;
            }
            first_of.insert(key, msg);
            w.plans.push(Plan::New);
            takes.push(Take {
                req,
                msg,
                queue_id: w.queue_id,
                key,
            });
        }
    }
    // A publish that already failed takes no key.
    takes.retain(|t| work[t.req].failed.is_none());
    takes.sort_unstable_by(|a, b| (a.queue_id, a.key).cmp(&(b.queue_id, b.key)));
    takes
}

/// Takes the keys in one statement; returns those now ours.
async fn take_keys<'g>(
    c: &impl GenericClient,
    group: &[Pending],
    takes: &[Take<'g>],
) -> Result<HashSet<(i64, &'g str)>, Error> {
    if takes.is_empty() {
        return Ok(HashSet::new());
    }
    let queue_ids: Vec<i64> = takes.iter().map(|t| t.queue_id).collect();
    let keys: Vec<&str> = takes.iter().map(|t| t.key).collect();
    let message_ids: Vec<&str> = takes
        .iter()
        .map(|t| group[t.req].batch.ids[t.msg].as_str())
        .collect();
    let hashes: Vec<&[u8]> = takes
        .iter()
        .map(|t| group[t.req].batch.hashes[t.msg].as_slice())
        .collect();
    let created: Vec<Timestamp> = takes.iter().map(|t| group[t.req].p.now).collect();
    let expires: Vec<Timestamp> = takes
        .iter()
        .map(|t| group[t.req].batch.key_expires_at)
        .collect();
    let stmt = c.prepare_cached(sql::DEDUPE_KEY_CLAIM_MANY).await?;
    let rows = c
        .query(
            &stmt,
            &[&queue_ids, &keys, &message_ids, &hashes, &created, &expires],
        )
        .await?;
    let mut taken = HashSet::with_capacity(rows.len());
    for row in rows {
        let queue_id: i64 = row.get("queue_id");
        let key: &str = row.get("key");
        // Back to the caller's borrow: the rows' strings die with the rows.
        if let Some(t) = takes
            .iter()
            .find(|t| t.queue_id == queue_id && t.key == key)
        {
            taken.insert((t.queue_id, t.key));
        }
    }
    Ok(taken)
}

/// Answers the keys already held: a replay of the first message, or the
/// publish fails when the payload differs.
async fn replay_held(
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
        let first_hash: &[u8] = row.get("payload_hash");
        let w = &mut work[t.req];
        if first_hash != pending.batch.hashes[t.msg] {
            w.failed
                .get_or_insert_with(|| publish::reused(t.msg, t.key));
            continue;
        }
        let payload = &pending.p.messages[t.msg].payload;
        w.plans[t.msg] = Plan::Replay(publish::replay(row, pending.p.now, payload)?);
    }
    Ok(())
}

/// Gives back the keys taken by publishes that failed after taking them.
async fn release_failed(
    c: &impl GenericClient,
    group: &[Pending],
    work: &[Work],
    takes: &[Take<'_>],
    taken: &HashSet<(i64, &str)>,
) -> Result<(), Error> {
    let back: Vec<&Take> = takes
        .iter()
        .filter(|t| work[t.req].failed.is_some() && taken.contains(&(t.queue_id, t.key)))
        .collect();
    if back.is_empty() {
        return Ok(());
    }
    let queue_ids: Vec<i64> = back.iter().map(|t| t.queue_id).collect();
    let keys: Vec<&str> = back.iter().map(|t| t.key).collect();
    let message_ids: Vec<&str> = back
        .iter()
        .map(|t| group[t.req].batch.ids[t.msg].as_str())
        .collect();
    let stmt = c.prepare_cached(sql::DEDUPE_KEY_RELEASE_MANY).await?;
    c.execute(&stmt, &[&queue_ids, &keys, &message_ids]).await?;
    Ok(())
}

/// Takes the group locks of every FIFO queue the new messages go to, queue
/// by queue in id order (see `publish::lock_groups`).
async fn lock_fifo_groups(
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

/// A new message as stored.
struct Stored {
    status: onceq_types::MessageStatus,
    created_at: Timestamp,
}

/// Inserts every new message of the publishes that did not fail.
async fn insert_new(
    c: &impl GenericClient,
    group: &[Pending],
    work: &[Work],
) -> Result<HashMap<String, Stored>, Error> {
    let mut ids = Vec::new();
    let mut queue_ids = Vec::new();
    let mut payloads = Vec::new();
    let mut priorities = Vec::new();
    let mut groups = Vec::new();
    let mut keys = Vec::new();
    let mut visible_at = Vec::new();
    let mut created = Vec::new();
    for (pending, w) in group.iter().zip(work) {
        if w.failed.is_some() {
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
        }
    }
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let stmt = c.prepare_cached(sql::MESSAGE_INSERT_MANY).await?;
    let rows = c
        .query(
            &stmt,
            &[
                &ids,
                &queue_ids,
                &payloads,
                &priorities,
                &groups,
                &keys,
                &visible_at,
                &created,
            ],
        )
        .await?;
    if rows.len() != ids.len() {
        // A queue vanished between the lookup and the insert.
        return Err(Error::Race("queue deleted during publish"));
    }
    rows.iter()
        .map(|row| {
            let stored = Stored {
                status: publish::status(row.get("state"))?,
                created_at: row.get("created_at"),
            };
            Ok((row.get("id"), stored))
        })
        .collect()
}

/// One publish's answer once the group committed.
fn answer(pending: &Pending, w: Work, stored: &HashMap<String, Stored>) -> Answer {
    if let Some(failed) = w.failed {
        return Err(failed.into_store());
    }
    let mut outcomes: Vec<PublishOutcome> = Vec::with_capacity(w.plans.len());
    for (i, plan) in w.plans.into_iter().enumerate() {
        let payload = pending.p.messages[i].payload.clone();
        outcomes.push(match plan {
            Plan::New => {
                let id = &pending.batch.ids[i];
                let row = stored.get(id).ok_or_else(|| {
                    StoreError::internal(format!("inserted message {id} not returned"))
                })?;
                PublishOutcome {
                    message_id: id.clone(),
                    payload,
                    status: row.status,
                    delivery_count: 0,
                    created_at: row.created_at,
                    replay: false,
                }
            }
            Plan::Replay(outcome) => outcome,
            Plan::SameAs(first) => PublishOutcome {
                payload,
                replay: true,
                ..outcomes[first].clone()
            },
        });
    }
    Ok(outcomes)
}

#[cfg(test)]
mod tests;
