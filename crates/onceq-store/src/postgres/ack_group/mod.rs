//! Group commit of acks: concurrent acks share one statement, one
//! transaction and one WAL flush.
//!
//! A worker acks each message it handled, so under load acks are the most
//! frequent call there is, and one alone is a whole transaction for one row
//! (`sql/message_ack.sql`): its statement, its commit, its flush. As with
//! publishes ([`super::publish_group`]), `message_ack` hands the ack to one
//! committer task, which takes every ack waiting, up to [`MAX_GROUP`], and
//! deletes their messages in one statement (`sql/message_ack_many.sql`) on
//! its own connection ([`super::hot`]): one round trip per group. Each ack is
//! answered only after the commit, with whether it deleted its message,
//! exactly as alone.
//!
//! Acks that may keep their message (`rules::finished`: a lease of a queue
//! with `completed_retention_seconds`, or no receipt) are grouped apart
//! and go through `sql/message_ack_keep_many.sql`, the same DELETE with the
//! move into `onceq_finished` in the same statement; so with retention off
//! every group is the one statement it always was, and with it on a group
//! is still one round trip.
//!
//! A batch (`Store::message_ack_many`) is one request of the queue, never
//! split across groups: its acks go in the group's statement (one per
//! kind), so in one transaction, each answered as it would be alone.
//!
//! Two acks of one message in a group: the statement deletes the message
//! once, and tells one of them so, as two acks one after the other would.
//! A group that fails otherwise than by the database being unavailable is
//! retried ack by ack, each alone, so that one bad ack never fails its
//! neighbours.
//!
//! As for publishes (see [`super::publish_group`], "The store timeout"): a
//! caller waits at most the store timeout, the committer leaves out acks
//! whose caller has gone, bounds each group by the store timeout and closes
//! its connection when a group runs out of it. An ack answered 503 may
//! still have been done; acking again is harmless (it answers `false`).

use std::time::Duration;

use crate::postgres::db::Db;
use tokio::sync::{mpsc, oneshot};

use super::db::{GenericClient, Stmt};
use super::errors::{self, Error};
use super::hot::{self, HotConnection};
use super::{lease, sql};
use onceq_types::MessageStatus;

use crate::rules::finished;
use crate::{AckOutcome, MessageAck, StoreError};

/// Connections the committer keeps (see `hot.rs`).
pub(super) const CONNECTIONS: usize = 1;

/// Acks one group takes at most (a batch is never split: a group may pass
/// it by the last batch taken).
const MAX_GROUP: usize = 512;

/// Acks waiting for the committer; beyond it, `message_ack` waits.
const QUEUE_DEPTH: usize = 4096;

/// What one ack gets back: whether it deleted its message (and when that
/// lease began).
type Answer = crate::Result<AckOutcome>;

struct Pending {
    ack: MessageAck,
    reply: oneshot::Sender<Answer>,
}

/// What the queue carries: one ack, or a batch's, taken whole.
type Request = Vec<Pending>;

/// The handle `PgStore` keeps; the committer stops when it is dropped.
pub(super) struct AckGroup {
    sender: mpsc::Sender<Request>,
    /// The store timeout, for each ack's wait.
    bound: Duration,
}

impl AckGroup {
    /// Starts the committer task on the current runtime; `bound` is the
    /// store timeout.
    pub(super) fn start(pool: Db, bound: Duration) -> AckGroup {
        let (sender, receiver) = mpsc::channel(QUEUE_DEPTH);
        tokio::spawn(committer(pool, receiver, bound));
        AckGroup { sender, bound }
    }

    /// Acks with whatever else is being acked right now; `Unavailable`
    /// after the store timeout, queueing included.
    pub(super) async fn ack(&self, ack: MessageAck) -> Answer {
        let mut answers = self.ack_many(vec![ack]).await?;
        answers.pop().ok_or_else(stopped)
    }

    /// Acks a batch, as one request of the queue (see the module docs):
    /// one answer per ack, in order; `Unavailable` after the store
    /// timeout, queueing included.
    pub(super) async fn ack_many(&self, acks: Vec<MessageAck>) -> crate::Result<Vec<AckOutcome>> {
        let (request, answers): (Request, Vec<_>) = acks
            .into_iter()
            .map(|ack| {
                let (reply, answer) = oneshot::channel();
                (Pending { ack, reply }, answer)
            })
            .unzip();
        // One timer per call, around the whole wait.
        errors::within(self.bound, async {
            self.sender.send(request).await.map_err(|_| stopped())?;
            let mut outcomes = Vec::with_capacity(answers.len());
            for answer in answers {
                outcomes.push(answer.await.map_err(|_| stopped())??);
            }
            Ok(outcomes)
        })
        .await
    }
}

fn stopped() -> StoreError {
    StoreError::internal("the ack committer stopped")
}

async fn committer(pool: Db, mut receiver: mpsc::Receiver<Request>, bound: Duration) {
    let mut conn = HotConnection::new(pool);
    while let Some(group) = hot::next_group(&mut receiver, MAX_GROUP, Vec::len).await {
        commit(&mut conn, group.into_iter().flatten().collect(), bound).await;
    }
}

/// Acks `group` and answers each; `bound` is the store timeout, for each
/// attempt at the group.
async fn commit(conn: &mut HotConnection, mut group: Vec<Pending>, bound: Duration) {
    // A caller that gave up was answered already (see the module docs).
    group.retain(|pending| !pending.reply.is_closed());
    // Acks that may keep their message (rules::finished) form a group of
    // their own with its own statement; the others' stays as it always was.
    let (keeping, plain): (Vec<Pending>, Vec<Pending>) = group
        .into_iter()
        .partition(|p| finished::may_keep(p.ack.lease.receipt.as_deref()));
    for (group, keep) in [(plain, false), (keeping, true)] {
        if !group.is_empty() {
            commit_one(conn, group, keep, bound).await;
        }
    }
}

/// Acks `group`, all of one kind (`keep`: may keep their messages), and
/// answers each.
async fn commit_one(conn: &mut HotConnection, group: Vec<Pending>, keep: bool, bound: Duration) {
    let tried = errors::within(bound, group_retrying(conn, &group, keep)).await;
    if matches!(&tried, Err(StoreError::Unavailable(_))) {
        // Timed out mid-statement, or the connection failed: not one to
        // reuse.
        conn.discard();
    }
    let answers = match tried {
        Ok(deleted) => deleted.into_iter().map(Ok).collect(),
        Err(e) if group.len() > 1 && !matches!(e, StoreError::Unavailable(_)) => {
            tracing::debug!(error = %e, size = group.len(), "postgres: ack group failed, acking alone");
            let mut answers = Vec::with_capacity(group.len());
            for pending in &group {
                if pending.reply.is_closed() {
                    answers.push(Err(errors::stalled(bound)));
                    continue;
                }
                let pool = conn.pool();
                let alone = errors::retrying(bound, || async {
                    match keep {
                        true => lease::ack_keeping(pool, &pending.ack).await,
                        false => lease::ack_alone(pool, &pending.ack).await,
                    }
                });
                answers.push(alone.await);
            }
            answers
        }
        Err(e) => errors::shared(e, group.len()),
    };
    for (pending, answer) in group.into_iter().zip(answers) {
        // A caller that went away changes nothing: the ack is done.
        let _ = pending.reply.send(answer);
    }
}

/// [`group_once`] until it does not lose a race.
async fn group_retrying(
    conn: &mut HotConnection,
    group: &[Pending],
    keep: bool,
) -> crate::Result<Vec<AckOutcome>> {
    let mut retry = errors::Retry::default();
    loop {
        match group_once(conn, group, keep).await {
            Ok(deleted) => return Ok(deleted),
            Err(e) => retry.after(e).await?,
        }
    }
}

/// One attempt at the whole group: whether each ack deleted its message.
/// One statement, so atomic without a transaction of its own — except
/// behind a pooler when the statement goes out as itself (its function
/// could not be made, `hot_functions.rs`), where a transaction carries the
/// hot settings (`Conn::hot_begin`), pipelined with the statement and its
/// COMMIT.
async fn group_once(
    conn: &mut HotConnection,
    group: &[Pending],
    keep: bool,
) -> Result<Vec<AckOutcome>, Error> {
    let client = conn.get().await?;
    let acks: Vec<&MessageAck> = group.iter().map(|p| &p.ack).collect();
    let columns = AckColumns::of(&acks);
    let stmt = client.prepare_cached(AckColumns::statement(keep)).await?;
    let params = columns.params(keep);
    // A connection this closes is replaced by the next `conn.get()`.
    let deleted = if client.behind_pooler() && !stmt.is_hot_function() {
        // All three queued at the first poll: the COMMIT always follows.
        let (began, deleted, committed) = tokio::join!(
            client.batch_execute(client.hot_begin()),
            client.query(&stmt, &params),
            client.batch_execute("COMMIT"),
        );
        began?;
        let deleted = deleted?;
        committed?;
        deleted
    } else {
        client.query(&stmt, &params).await?
    };
    Ok(outcomes(&acks, &deleted))
}

/// The parameters of an ack statement (`sql/message_ack_many.sql`, or
/// `sql/message_ack_keep_many.sql` for acks that may keep their message)
/// for a group of acks, column by column; also what a consume's acks run
/// in its claim's transaction (`claim/mod.rs`).
pub(super) struct AckColumns<'a> {
    projects: Vec<&'a str>,
    queues: Vec<&'a str>,
    ids: Vec<&'a str>,
    receipts: Vec<Option<&'a str>>,
    results: Vec<Option<&'a str>>,
    times: Vec<jiff::Timestamp>,
    in_flight: &'static str,
}

impl<'a> AckColumns<'a> {
    pub(super) fn of(acks: &[&'a MessageAck]) -> Self {
        let leases = acks.iter().map(|a| &a.lease);
        AckColumns {
            projects: leases.clone().map(|l| l.queue.project.as_str()).collect(),
            queues: leases.clone().map(|l| l.queue.queue.as_str()).collect(),
            ids: leases.clone().map(|l| l.message_id.as_str()).collect(),
            receipts: leases.map(|l| l.receipt.as_deref()).collect(),
            results: acks.iter().map(|a| a.result.as_deref()).collect(),
            times: acks.iter().map(|a| a.now).collect(),
            in_flight: MessageStatus::InFlight.as_str(),
        }
    }

    /// The statement for acks that may keep their message (`keep`), or not.
    pub(super) fn statement(keep: bool) -> &'static str {
        match keep {
            true => sql::MESSAGE_ACK_KEEP_MANY,
            false => sql::MESSAGE_ACK_MANY,
        }
    }

    /// [`AckColumns::statement`]'s parameters.
    pub(super) fn params(&self, keep: bool) -> Vec<&(dyn tokio_postgres::types::ToSql + Sync)> {
        let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = vec![
            &self.projects,
            &self.queues,
            &self.ids,
            &self.receipts,
            &self.in_flight,
        ];
        if keep {
            params.extend([
                &self.results as &(dyn tokio_postgres::types::ToSql + Sync),
                &self.times,
            ]);
        }
        params
    }
}

/// Acks run as statements of another transaction's pipeline: a consume's
/// in its claim's (`claim/mod.rs`), those a publish group carries for the
/// consumers it hands messages to in the group's (`publish_group`). Those
/// that may keep their message (`rules::finished`) and the others get a
/// statement each, as in an ack group; both are prepared here, before the
/// pipeline, so that [`CarriedAcks::run`] queues them at its first poll.
pub(super) struct CarriedAcks<'a> {
    /// Whether each ack, in the order given, may keep its message.
    keeps: Vec<bool>,
    plain: Vec<&'a MessageAck>,
    keeping: Vec<&'a MessageAck>,
    plain_columns: AckColumns<'a>,
    keeping_columns: AckColumns<'a>,
    plain_stmt: Option<Stmt>,
    keeping_stmt: Option<Stmt>,
}

impl<'a> CarriedAcks<'a> {
    /// Whether there are no acks to run.
    pub(super) fn is_empty(&self) -> bool {
        self.keeps.is_empty()
    }

    /// Prepares the statements `acks` need (none for no acks).
    pub(super) async fn prepare(
        client: &impl GenericClient,
        acks: impl IntoIterator<Item = &'a MessageAck>,
    ) -> Result<CarriedAcks<'a>, Error> {
        let (mut keeps, mut plain, mut keeping) = (Vec::new(), Vec::new(), Vec::new());
        for ack in acks {
            let keep = finished::may_keep(ack.lease.receipt.as_deref());
            keeps.push(keep);
            match keep {
                true => keeping.push(ack),
                false => plain.push(ack),
            }
        }
        let plain_stmt = match plain.is_empty() {
            true => None,
            false => Some(client.prepare_cached(AckColumns::statement(false)).await?),
        };
        let keeping_stmt = match keeping.is_empty() {
            true => None,
            false => Some(client.prepare_cached(AckColumns::statement(true)).await?),
        };
        Ok(CarriedAcks {
            keeps,
            plain_columns: AckColumns::of(&plain),
            keeping_columns: AckColumns::of(&keeping),
            plain,
            keeping,
            plain_stmt,
            keeping_stmt,
        })
    }

    /// Runs the statements (both queued at the first poll, in the
    /// pipeline's order) and answers each ack, in the order given: the
    /// first error in statement order otherwise.
    pub(super) async fn run(&self, client: &impl GenericClient) -> Result<Vec<AckOutcome>, Error> {
        // Parameters only for a statement that runs: no acks build none.
        let (plain_deleted, keeping_deleted) = tokio::join!(
            async {
                match &self.plain_stmt {
                    Some(stmt) => client.query(stmt, &self.plain_columns.params(false)).await,
                    None => Ok(Vec::new()),
                }
            },
            async {
                match &self.keeping_stmt {
                    Some(stmt) => client.query(stmt, &self.keeping_columns.params(true)).await,
                    None => Ok(Vec::new()),
                }
            },
        );
        let (plain_deleted, keeping_deleted) = (plain_deleted?, keeping_deleted?);
        let mut plain = outcomes(&self.plain, &plain_deleted).into_iter();
        let mut keeping = outcomes(&self.keeping, &keeping_deleted).into_iter();
        Ok(self
            .keeps
            .iter()
            .map(|keep| match keep {
                true => keeping.next(),
                false => plain.next(),
            })
            .map(|o| o.expect("one outcome per ack"))
            .collect())
    }
}

/// What each ack did, from the rows its statement deleted: each deleted
/// message goes to the first ack that could have deleted it (same
/// message, same queue, its receipt or none).
pub(super) fn outcomes(acks: &[&MessageAck], deleted: &[tokio_postgres::Row]) -> Vec<AckOutcome> {
    let not_acked = AckOutcome {
        acked: false,
        consumed_at: None,
    };
    let mut answers = vec![not_acked; acks.len()];
    for row in deleted {
        let (id, receipt, project, queue): (&str, Option<&str>, &str, &str) =
            (row.get(0), row.get(1), row.get(3), row.get(4));
        let first = acks.iter().zip(answers.iter_mut()).find(|(a, answered)| {
            let l = &a.lease;
            !answered.acked
                && l.message_id == id
                && l.queue.project == project
                && l.queue.queue == queue
                && (l.receipt.is_none() || l.receipt.as_deref() == receipt)
        });
        if let Some((_, answer)) = first {
            *answer = AckOutcome {
                acked: true,
                consumed_at: row.get(2),
            };
        }
    }
    answers
}

#[cfg(test)]
mod tests;
