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
//! 2. every idempotency key and every new message to a standard queue in
//!    one statement (`sql/publish_group.sql`), the keys sorted by (queue,
//!    key) so that two groups never deadlock on each other;
//! 3. the keys already held, in one query, only when there are some: each
//!    becomes a replay, or fails its publish when the payload differs;
//! 4. the keys of publishes that failed in step 3 given back, so a failed
//!    publish stores nothing (rare);
//! 5. FIFO groups' locks, then their new messages (FIFO queues only);
//!
//! then COMMIT, and only then is any request answered: an acknowledged
//! publish is durable exactly as a publish alone would be. A group of
//! single publishes to known standard queues is step 2 alone, sent without
//! BEGIN or COMMIT: PostgreSQL runs a lone statement as a transaction of
//! its own and commits it before it answers (held keys are read after it,
//! see [`transaction`]).
//!
//! Two publishes of one group wanting the same key: the later one waits for
//! the next group, where it finds the first committed and becomes its
//! replay. A group that loses a race (deadlock, serialization failure, a
//! queue deleted under it) is retried whole with the same message ids; a
//! group that fails otherwise is split, each publish retried in a
//! transaction of its own ([`publish::publish_alone`]), so one bad request
//! never fails its neighbours.
//!
//! # The store timeout
//!
//! A caller waits at most the store timeout (`StoreOptions::op_timeout`)
//! for its answer, queueing included, then gets `Unavailable`: one timer per
//! publish, around its wait. The committer leaves out of a group every
//! publish whose caller has already given up (its answer's receiver is
//! dropped), so a stall does not store publishes after they were answered
//! 503. A publish whose group was already being committed when its caller
//! gave up may still be stored: a 503 after a stall means "unknown", and a
//! retry with the same idempotency key replays what was stored
//! (docs/guarantees.md). The committer bounds each group by the store
//! timeout as well, and closes its connection when a group runs out of
//! it, so a stalled database never wedges it: the next group opens another.
//!
//! - this module: the queues of publishes, the committers, and what they
//!   do when a group fails;
//! - [`cache`]: the queue ids remembered between groups;
//! - [`plan`]: what the group works out without the database (the dedupe
//!   rule, `crate::rules::dedupe`, shared with a publish alone and SQLite)
//!   and each publish's answer;
//! - [`transaction`]: one attempt at a group, its steps in [`keys`] and
//!   [`messages`].

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use crate::postgres::db::Db;
use tokio::sync::{Mutex, mpsc, oneshot};

use super::errors;
use super::hot::{self, HotConnection};
use super::publish::{self, Batch};
use crate::{AckOutcome, MessageAck, MessagePublish, PublishOutcome, StoreError};
use cache::QueueCache;
use transaction::group_once;

mod cache;
mod keys;
mod messages;
mod plan;
mod transaction;

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

/// What one publish gets back.
type Answer = crate::Result<Vec<PublishOutcome>>;

/// One publish waiting for its group.
struct Pending {
    p: MessagePublish,
    batch: Batch,
    /// Acks it carries (`Store::message_publish_acking`), if any.
    carried: Option<Carried>,
    reply: oneshot::Sender<Answer>,
}

/// The acks a publish carries for the consumers it hands messages to: run
/// in its group's transaction, and answered on `done` (before the publish's
/// own answer) only when that transaction committed. Dropped unanswered,
/// they were not done.
struct Carried {
    acks: Vec<MessageAck>,
    done: oneshot::Sender<Vec<AckOutcome>>,
}

/// The handle `PgStore` keeps: publishes go in, answers come back after
/// COMMIT. The committer tasks stop when it is dropped.
pub(super) struct GroupCommit {
    /// Publishes of fewer than [`BIG`] messages, to the one committer.
    small: mpsc::Sender<Pending>,
    /// Batches, to the [`BIG_COMMITTERS`].
    big: mpsc::Sender<Pending>,
    /// The store timeout, for each publish's wait.
    bound: Duration,
}

impl GroupCommit {
    /// Starts the committer tasks on the current runtime; `bound` is the
    /// store timeout (see the module docs).
    pub(super) fn start(pool: Db, bound: Duration) -> GroupCommit {
        let cache = Arc::new(QueueCache::default());
        let (small, receiver) = mpsc::channel(QUEUE_DEPTH);
        let receiver = Arc::new(Mutex::new(receiver));
        tokio::spawn(committer(pool.clone(), cache.clone(), receiver, bound));
        let (big, receiver) = mpsc::channel(QUEUE_DEPTH);
        let receiver = Arc::new(Mutex::new(receiver));
        for _ in 0..BIG_COMMITTERS {
            tokio::spawn(committer(
                pool.clone(),
                cache.clone(),
                receiver.clone(),
                bound,
            ));
        }
        GroupCommit { small, big, bound }
    }

    /// Stores `p` with whatever else is being published right now.
    /// `Unavailable` after the store timeout (queueing included); it may
    /// still have been stored then (see the module docs).
    pub(super) async fn publish(&self, p: MessagePublish) -> Answer {
        self.publish_carrying(p, None).await
    }

    /// [`GroupCommit::publish`] with `acks` in the group's transaction,
    /// answered when it committed, whatever the publish's own answer; not
    /// done when the publish was stored apart from its group or its group
    /// failed (see [`commit`]), unknown when the store timed out.
    pub(super) async fn publish_acking(
        &self,
        p: MessagePublish,
        acks: Vec<MessageAck>,
    ) -> crate::PublishedAcking {
        let (done, mut acked) = oneshot::channel();
        let published = self.publish_carrying(p, Some(Carried { acks, done })).await;
        // Answered before the publish, if at all: a publish that timed out
        // may have left them with a group still at work, not to be waited
        // for.
        crate::PublishedAcking {
            published,
            acked: acked.try_recv().ok(),
        }
    }

    async fn publish_carrying(&self, p: MessagePublish, carried: Option<Carried>) -> Answer {
        let batch = Batch::new(&p)?;
        let (reply, answer) = oneshot::channel();
        let queue = match p.messages.len() >= BIG {
            true => &self.big,
            false => &self.small,
        };
        // One timer per publish, around the whole wait; dropped at the
        // bound, the receiver tells the committer this caller has gone.
        errors::within(self.bound, async {
            let pending = Pending {
                p,
                batch,
                carried,
                reply,
            };
            queue.send(pending).await.map_err(|_| stopped())?;
            answer.await.map_err(|_| stopped())?
        })
        .await
    }
}

fn stopped() -> StoreError {
    StoreError::internal("the publish committer stopped")
}

/// Takes a group off the queue, stores it, answers it; until the store is
/// dropped.
async fn committer(
    pool: Db,
    cache: Arc<QueueCache>,
    receiver: Arc<Mutex<mpsc::Receiver<Pending>>>,
    bound: Duration,
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
        commit(&mut conn, &cache, group, bound).await;
    }
}

/// Stores `group` (and the publishes it had to put off) and answers each;
/// `bound` is the store timeout, for each attempt at the group.
async fn commit(
    conn: &mut HotConnection,
    cache: &QueueCache,
    mut group: Vec<Pending>,
    bound: Duration,
) {
    loop {
        // A caller that gave up (the store timeout, or its request was
        // cancelled) was answered already: storing its publish now would
        // make a 503 a lie more often than it has to be.
        group.retain(|pending| !pending.reply.is_closed());
        if group.is_empty() {
            return;
        }
        let later = put_off_shared_keys(&mut group);
        let tried = errors::within(bound, group_retrying(conn, cache, &group)).await;
        if matches!(&tried, Err(StoreError::Unavailable(_))) {
            // Timed out halfway through a transaction begun by hand, or
            // the connection failed: either way not one to reuse.
            conn.discard();
        }
        let answers = match tried {
            Ok((answers, acked)) => {
                answer_carried(&mut group, acked);
                let mut done = Vec::with_capacity(group.len());
                for (pending, answer) in group.iter().zip(answers) {
                    done.push(match answer {
                        Some(answer) => answer,
                        // Stored nothing after a one-trip commit: alone now
                        // (and the cached queue id may be stale).
                        None => {
                            cache.clear();
                            alone_retrying(conn.pool(), pending, bound).await
                        }
                    });
                }
                done
            }
            Err(e) if group.len() > 1 && !matches!(e, StoreError::Unavailable(_)) => {
                tracing::debug!(error = %e, size = group.len(), "postgres: group failed, publishing alone");
                let mut answers = Vec::with_capacity(group.len());
                for pending in &group {
                    answers.push(alone_retrying(conn.pool(), pending, bound).await);
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

/// Sends each publish's carried acks their answers (`acked`: the group's,
/// in its order), done in the group's committed transaction.
fn answer_carried(group: &mut [Pending], acked: Vec<AckOutcome>) {
    let mut acked = acked.into_iter();
    for pending in group {
        if let Some(Carried { acks, done }) = pending.carried.take() {
            // A caller that went away changes nothing: the acks are done.
            let _ = done.send(acked.by_ref().take(acks.len()).collect());
        }
    }
}

/// [`group_once`] until it does not lose a race.
async fn group_retrying(
    conn: &mut HotConnection,
    cache: &QueueCache,
    group: &[Pending],
) -> crate::Result<(Vec<Option<Answer>>, Vec<AckOutcome>)> {
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

/// [`publish::publish_alone`] until it does not lose a race, within
/// `bound`; not at all for a caller that has gone.
async fn alone_retrying(pool: &Db, pending: &Pending, bound: Duration) -> Answer {
    if pending.reply.is_closed() {
        return Err(errors::stalled(bound));
    }
    errors::within(bound, async {
        let mut retry = errors::Retry::default();
        loop {
            match publish::publish_alone(pool, &pending.p, &pending.batch).await {
                Ok(outcomes) => return Ok(outcomes),
                Err(e) => retry.after(e).await?,
            }
        }
    })
    .await
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

#[cfg(test)]
mod tests;
