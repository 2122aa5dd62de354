//! Group commit of publishes: concurrent publishes share one transaction,
//! one statement per step and one WAL flush.
//!
//! A publish alone costs a transaction of its own: BEGIN, a queue lookup, a
//! statement per idempotency key, the insert and COMMIT, each a round trip
//! and a statement for PostgreSQL to parse, plan and run, for one row. Under
//! load that per-statement work, not the disk, is the ceiling. So
//! `message_publish` hands its request to a queue, and one committer task
//! takes whatever is waiting, up to [`MAX_GROUP_MESSAGES`], and stores it in
//! one transaction; the next group gathers in the queue meanwhile. One, not
//! several: committers side by side each took the one or two publishes
//! waiting, so groups stayed small and PostgreSQL ran more statements and
//! flushes per message (measured in docs/performance.md, change 6).
//! Publishes of [`BIG`] messages or more (batches) go to a queue of their
//! own, worked by [`BIG_COMMITTERS`] committers side by side: a batch is a
//! group already, and one committer alone kept PostgreSQL on one core
//! (change 9). Each group is stored as follows:
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
use super::hot::{self, HotConnection};
use super::publish::{self, Batch};
use super::{queues, sql};
use crate::{MessagePublish, PublishOutcome, QueueRef, StoreError};

/// A publish of this many messages or more goes to the batch committers.
const BIG: usize = 10;

/// Committers working batches side by side.
const BIG_COMMITTERS: usize = 3;

/// Connections the committers keep (see `hot.rs`): one for single
/// publishes, one per batch committer.
pub(super) const CONNECTIONS: usize = 1 + BIG_COMMITTERS;

/// Messages one group stores at most (a publish is never split).
const MAX_GROUP_MESSAGES: usize = 512;

/// Publishes waiting for a committer; beyond it, `message_publish` waits
/// (backpressure instead of an unbounded buffer).
const QUEUE_DEPTH: usize = 4096;

/// Queue ids and types by (project, name).
type QueueIds = HashMap<(String, String), (i64, QueueType)>;

/// Queues recently published to, so that a group need not look them up.
/// Safe to be stale: a queue's id and type never change (a queue deleted
/// and created again gets a new id), and a message or key written under a
/// deleted queue's id fails the group (foreign key, or the insert's join
/// returns nothing), which clears the cache and retries.
#[derive(Default)]
struct QueueCache {
    ids: std::sync::Mutex<QueueIds>,
}

/// Queues remembered at most; beyond, the cache starts over.
const CACHED_QUEUES: usize = 10_000;

impl QueueCache {
    /// The ids of every queue of `group`, if all are known.
    fn get(&self, group: &[Pending]) -> Option<QueueIds> {
        let ids = self.ids.lock().unwrap_or_else(|e| e.into_inner());
        let mut found = QueueIds::new();
        for pending in group {
            let key = (
                pending.p.queue.project.clone(),
                pending.p.queue.queue.clone(),
            );
            let id = *ids.get(&key)?;
            found.insert(key, id);
        }
        Some(found)
    }

    fn put(&self, found: &QueueIds) {
        let mut ids = self.ids.lock().unwrap_or_else(|e| e.into_inner());
        if ids.len() + found.len() > CACHED_QUEUES {
            ids.clear();
        }
        ids.extend(found.iter().map(|(k, v)| (k.clone(), *v)));
    }

    fn clear(&self) {
        self.ids.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

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
    /// Publishes of fewer than [`BIG`] messages, to the one committer.
    small: mpsc::Sender<Pending>,
    /// Batches, to the [`BIG_COMMITTERS`].
    big: mpsc::Sender<Pending>,
}

impl GroupCommit {
    /// Starts the committer tasks on the current runtime.
    pub(super) fn start(pool: Pool) -> GroupCommit {
        let cache = Arc::new(QueueCache::default());
        let (small, receiver) = mpsc::channel(QUEUE_DEPTH);
        let receiver = Arc::new(Mutex::new(receiver));
        tokio::spawn(committer(pool.clone(), cache.clone(), receiver));
        let (big, receiver) = mpsc::channel(QUEUE_DEPTH);
        let receiver = Arc::new(Mutex::new(receiver));
        for _ in 0..BIG_COMMITTERS {
            tokio::spawn(committer(pool.clone(), cache.clone(), receiver.clone()));
        }
        GroupCommit { small, big }
    }

    /// Stores `p` with whatever else is being published right now.
    pub(super) async fn publish(&self, p: MessagePublish) -> Answer {
        let batch = Batch::new(&p)?;
        let (reply, answer) = oneshot::channel();
        let queue = match p.messages.len() >= BIG {
            true => &self.big,
            false => &self.small,
        };
        queue
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
async fn committer(
    pool: Pool,
    cache: Arc<QueueCache>,
    receiver: Arc<Mutex<mpsc::Receiver<Pending>>>,
) {
    let mut conn = HotConnection::new(pool);
    loop {
        // The lock is held while the group gathers, so committers sharing
        // a queue each take whole groups.
        let group = {
            let mut receiver = receiver.lock().await;
            hot::next_group(&mut receiver, MAX_GROUP_MESSAGES, |p: &Pending| {
                p.p.messages.len()
            })
            .await
        };
        let Some(group) = group else { return };
        commit(&mut conn, &cache, group).await;
    }
}

/// Stores `group` (and the publishes it had to put off) and answers each.
async fn commit(conn: &mut HotConnection, cache: &QueueCache, mut group: Vec<Pending>) {
    while !group.is_empty() {
        let later = put_off_shared_keys(&mut group);
        let answers = match group_retrying(conn, cache, &group).await {
            Ok(answers) => {
                let mut done = Vec::with_capacity(group.len());
                for (pending, answer) in group.iter().zip(answers) {
                    done.push(match answer {
                        Some(answer) => answer,
                        // Stored nothing after a one-trip commit: alone now
                        // (and the cached queue id may be stale).
                        None => {
                            cache.clear();
                            alone_retrying(conn.pool(), pending).await
                        }
                    });
                }
                done
            }
            Err(e) if group.len() > 1 && !matches!(e, StoreError::Unavailable(_)) => {
                tracing::debug!(error = %e, size = group.len(), "postgres: group failed, publishing alone");
                let mut answers = Vec::with_capacity(group.len());
                for pending in &group {
                    answers.push(alone_retrying(conn.pool(), pending).await);
                }
                answers
            }
            Err(e) => errors::shared(e, group.len()),
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
async fn group_retrying(
    conn: &mut HotConnection,
    cache: &QueueCache,
    group: &[Pending],
) -> crate::Result<Vec<Option<Answer>>> {
    let mut retry = errors::Retry::default();
    loop {
        match group_once(conn, cache, group).await {
            Ok(answers) => return Ok(answers),
            Err(e) => {
                // A lost race may mean a cached queue was deleted.
                cache.clear();
                retry.after(e).await?
            }
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
async fn group_once(
    conn: &mut HotConnection,
    cache: &QueueCache,
    group: &[Pending],
) -> Result<Vec<Option<Answer>>, Error> {
    let client = conn.get().await?;
    match in_transaction(client, cache, group).await {
        Ok(answers) => Ok(answers),
        Err(e) => {
            // The transaction was opened by hand (to pipeline BEGIN), so it
            // is closed by hand; a connection that cannot is not reused.
            if client.batch_execute("ROLLBACK").await.is_err() {
                conn.discard();
            }
            Err(e)
        }
    }
}

/// The transaction of [`group_once`]. In the common case (queues known,
/// standard queues, keys new) it is two round trips: BEGIN, the keys and
/// the messages in one pipeline, then COMMIT.
async fn in_transaction(
    client: &deadpool_postgres::Client,
    cache: &QueueCache,
    group: &[Pending],
) -> Result<Vec<Option<Answer>>, Error> {
    let claim = client.prepare_cached(sql::DEDUPE_KEY_CLAIM_MANY).await?;
    let insert = client.prepare_cached(sql::MESSAGE_INSERT_MANY).await?;
    // Queues already known: BEGIN goes in the pipeline below. Otherwise
    // look them up (or create them) in the transaction first.
    let (ids, begun) = match cache.get(group) {
        Some(ids) => (ids, false),
        None => {
            client.batch_execute("BEGIN").await?;
            (queue_ids(client, group).await?, true)
        }
    };
    let mut work: Vec<Work> = group
        .iter()
        .map(|pending| {
            let q = &pending.p.queue;
            let (queue_id, queue_type) = ids[&(q.project.clone(), q.queue.clone())];
            Work {
                queue_id,
                queue_type,
                plans: Vec::with_capacity(pending.p.messages.len()),
                failed: None,
            }
        })
        .collect();
    let takes = plan_keys(group, &mut work);
    // The common case, one message per publish to known standard queues:
    // COMMIT goes in the pipeline as well, one round trip for the group.
    // Nothing decided after the pipeline can need undoing then (a publish
    // whose only key is held stored nothing), and a publish left unstored
    // is answered by a publish of its own instead (see [`one_trip`]).
    let one_trip = !begun
        && group.iter().all(|p| p.p.messages.len() == 1)
        && work
            .iter()
            .all(|w| w.queue_type == QueueType::Standard && w.failed.is_none());

    // Keys and standard queues' messages in one pipeline: the insert stores
    // a keyed message only if the claim just before took its key.
    let begin = async {
        match begun {
            true => Ok(()),
            false => client.batch_execute("BEGIN").await,
        }
    };
    let commit = async {
        match one_trip {
            true => client.batch_execute("COMMIT").await,
            false => Ok(()),
        }
    };
    // All awaited, then the first error in statement order: after a failed
    // statement the later ones only say "transaction is aborted", which
    // would hide the cause (a lost race is retried, that is not). A COMMIT
    // after a failed statement rolls back.
    let (began, taken, stored, committed) = tokio::join!(
        begin,
        take_keys(client, &claim, group, &takes),
        insert_new(client, &insert, group, &work, QueueType::Standard),
        commit,
    );
    began?;
    let (taken, mut stored) = (taken?, stored?);
    committed?;
    if one_trip {
        return Ok(one_trip_answers(client, group, work, &takes, &taken, &stored).await);
    }
    let held: Vec<&Take> = takes
        .iter()
        .filter(|t| !taken.contains(&(t.queue_id, t.key)))
        .collect();
    if !held.is_empty() {
        replay_held(client, group, &mut work, &held).await?;
        undo_failed(client, group, &work, &takes, &taken, &mut stored).await?;
    }
    if work
        .iter()
        .any(|w| w.queue_type == QueueType::Fifo && w.failed.is_none())
    {
        lock_fifo_groups(client, group, &work).await?;
        stored.extend(insert_new(client, &insert, group, &work, QueueType::Fifo).await?);
    }
    check_stored(group, &work, &stored)?;
    client.batch_execute("COMMIT").await?;
    // Only now: a queue created by this transaction exists for others once
    // it committed (cached earlier, another group's foreign key check would
    // not see it yet).
    if begun {
        cache.put(&ids);
    }

    Ok(group
        .iter()
        .zip(work)
        .map(|(pending, w)| Some(answer(pending, w, &stored)))
        .collect())
}

/// The answers of a group committed in one trip. Held keys are read after
/// the commit (they were committed before it): each makes its publish a
/// replay, or a failure when the payload differs. A publish that stored
/// nothing and is neither gets `None`, to be published on its own: its
/// queue went away under the cached id, or its key's holder could not be
/// read. The group is never retried from here: it has committed.
async fn one_trip_answers(
    client: &deadpool_postgres::Client,
    group: &[Pending],
    mut work: Vec<Work>,
    takes: &[Take<'_>],
    taken: &HashSet<(i64, &str)>,
    stored: &HashMap<String, Stored>,
) -> Vec<Option<Answer>> {
    let held: Vec<&Take> = takes
        .iter()
        .filter(|t| !taken.contains(&(t.queue_id, t.key)))
        .collect();
    if !held.is_empty() && replay_held(client, group, &mut work, &held).await.is_err() {
        // Left as `Plan::New`, unstored: each is published alone below.
        tracing::debug!("postgres: held keys not readable after commit, publishing alone");
    }
    group
        .iter()
        .zip(work)
        .map(|(pending, w)| {
            let unstored = w.failed.is_none()
                && matches!(w.plans[0], Plan::New)
                && !stored.contains_key(&pending.batch.ids[0]);
            (!unstored).then(|| answer(pending, w, stored))
        })
        .collect()
}

/// The id and type of every queue the group names, creating missing ones.
async fn queue_ids(c: &impl GenericClient, group: &[Pending]) -> Result<QueueIds, Error> {
    let mut names: Vec<(&str, &str)> = group
        .iter()
        .map(|g| (g.p.queue.project.as_str(), g.p.queue.queue.as_str()))
        .collect();
    names.sort_unstable();
    names.dedup();
    let projects: Vec<&str> = names.iter().map(|n| n.0).collect();
    let queues: Vec<&str> = names.iter().map(|n| n.1).collect();
    let stmt = c.prepare_cached(sql::QUEUE_LOOKUP_MANY).await?;
    let mut ids = QueueIds::with_capacity(names.len());
    for row in c.query(&stmt, &[&projects, &queues]).await? {
        let queue_type = QueueType::parse(row.get("queue_type"))
            .ok_or_else(|| StoreError::internal("unknown queue type"))?;
        ids.insert(
            (row.get("project"), row.get("name")),
            (row.get("id"), queue_type),
        );
    }
    for (project, name) in names {
        let key = (project.to_owned(), name.to_owned());
        if ids.contains_key(&key) {
            continue;
        }
        // A first publish creates its queue (rare: once per queue).
        let first = group
            .iter()
            .find(|g| g.p.queue.project == project && g.p.queue.queue == name)
            .map(|g| g.p.now)
            .unwrap_or_else(Timestamp::now);
        let queue = QueueRef::new(project, name);
        let found = queues::ensure(c, &queue, first).await?;
        ids.insert(key, found);
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
    stmt: &tokio_postgres::Statement,
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
    let rows = c
        .query(
            stmt,
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

/// Undoes what publishes that failed after the pipeline (a key reused
/// with another payload) did in it: gives their keys back and deletes their
/// messages, so a failed publish stores nothing.
async fn undo_failed(
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
        let queue_ids: Vec<i64> = back.iter().map(|t| t.queue_id).collect();
        let keys: Vec<&str> = back.iter().map(|t| t.key).collect();
        let message_ids: Vec<&str> = back
            .iter()
            .map(|t| group[t.req].batch.ids[t.msg].as_str())
            .collect();
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

/// Inserts the new messages bound for queues of `queue_type` of the
/// publishes that did not fail (a keyed one only if its key was taken).
async fn insert_new(
    c: &impl GenericClient,
    stmt: &tokio_postgres::Statement,
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
            ],
        )
        .await?;
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

/// Every message still planned as new was stored; one missing means its
/// queue vanished since it was looked up (or cached): the group is retried.
fn check_stored(
    group: &[Pending],
    work: &[Work],
    stored: &HashMap<String, Stored>,
) -> Result<(), Error> {
    for (pending, w) in group.iter().zip(work) {
        if w.failed.is_some() {
            continue;
        }
        let missing = w
            .plans
            .iter()
            .zip(&pending.batch.ids)
            .any(|(plan, id)| matches!(plan, Plan::New) && !stored.contains_key(id));
        if missing {
            return Err(Error::Race("queue deleted during publish"));
        }
    }
    Ok(())
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
