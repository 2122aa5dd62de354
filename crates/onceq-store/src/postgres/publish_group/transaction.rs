//! The commit of one group: one transaction, its statements pipelined, in
//! the steps the module docs list ([`super`]); the keys' and the messages'
//! steps are in [`super::keys`] and [`super::messages`].

use std::collections::{HashMap, HashSet};

use crate::postgres::db::GenericClient;
use jiff::Timestamp;
use onceq_types::QueueType;
use tokio_postgres::types::ToSql;

use super::cache::{QueueCache, QueueIds};
use super::keys::{ClaimColumns, replay_held, taken, undo_failed};
use super::messages::{NewColumns, lock_fifo_groups};
use super::plan::{Take, Work, answer, plan_keys};
use super::{Answer, Pending};
use crate::postgres::ack_group::CarriedAcks;
use crate::postgres::errors::Error;
use crate::postgres::hot::HotConnection;
use crate::postgres::publish::Stored;
use crate::postgres::{queues, sql};
use crate::rules::dedupe::Plan;
use crate::{AckOutcome, QueueRef, StoreError};

/// One attempt at the whole group, in one transaction. `Err` fails (or
/// retries) the whole group; a publish's own failure is in its answer.
/// Also answers the acks the group carries, in its order.
pub(super) async fn group_once(
    conn: &mut HotConnection,
    cache: &QueueCache,
    group: &[Pending],
) -> Result<(Vec<Option<Answer>>, Vec<AckOutcome>), Error> {
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

/// The transaction of [`group_once`]. In the common case (single
/// publishes to known standard queues, no acks carried) it is one statement
/// and one round trip, sent without BEGIN or COMMIT; with acks carried (or
/// behind a pooler that could not make the statement's function), BEGIN,
/// that statement, the acks and COMMIT in one pipeline; otherwise COMMIT
/// comes after what the pipeline's answers decide (held keys, FIFO queues'
/// locks and messages).
async fn in_transaction(
    client: &crate::postgres::db::Conn,
    cache: &QueueCache,
    group: &[Pending],
) -> Result<(Vec<Option<Answer>>, Vec<AckOutcome>), Error> {
    let stmt = client.prepare_cached(sql::PUBLISH_GROUP).await?;
    let carried = group
        .iter()
        .filter_map(|pending| pending.carried.as_ref())
        .flat_map(|c| c.acks.iter());
    let carried = CarriedAcks::prepare(client, carried).await?;
    // Queues already known: BEGIN goes in the pipeline below. Otherwise
    // look them up (or create them) in the transaction first.
    let (ids, begun) = match cache.get(group) {
        Some(ids) => (ids, false),
        None => {
            client.batch_execute(client.hot_begin()).await?;
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
    // one round trip for the group (COMMIT in the pipeline, or none at all).
    // Nothing decided after the pipeline can need undoing then (a publish
    // whose only key is held stored nothing), and a publish left unstored
    // is answered by a publish of its own instead (see [`one_trip`]).
    let one_trip = !begun
        && group.iter().all(|p| p.p.messages.len() == 1)
        && work
            .iter()
            .all(|w| w.queue_type == QueueType::Standard && w.failed.is_none());

    // With nothing else to run, the group's one statement is sent alone:
    // no BEGIN, no COMMIT (one Sync: PostgreSQL commits it before it
    // answers). It needs the hot settings: the committer's session holds
    // them (`hot.rs`), or behind a pooler the statement's function does; a
    // statement sent as itself there needs BEGIN to SET LOCAL them.
    let alone = !client.behind_pooler() || stmt.is_hot_function();
    if one_trip && carried.is_empty() && alone {
        let (taken, stored) =
            store(client, &stmt, group, &work, &takes, QueueType::Standard).await?;
        let answers = one_trip_answers(client, group, work, &takes, &taken, &stored).await;
        return Ok((answers, Vec::new()));
    }
    // Otherwise keys and standard queues' messages in one pipeline with
    // BEGIN (and COMMIT, for one trip).
    let begin = async {
        match begun {
            true => Ok(()),
            false => client.batch_execute(client.hot_begin()).await,
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
    let (began, stored, acked, committed) = tokio::join!(
        begin,
        store(client, &stmt, group, &work, &takes, QueueType::Standard),
        carried.run(client),
        commit,
    );
    began?;
    let ((taken, mut stored), acked) = (stored?, acked?);
    committed?;
    if one_trip {
        let answers = one_trip_answers(client, group, work, &takes, &taken, &stored).await;
        return Ok((answers, acked));
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
        let (_, fifo) = store(client, &stmt, group, &work, &[], QueueType::Fifo).await?;
        stored.extend(fifo);
    }
    check_stored(group, &work, &stored)?;
    client.batch_execute("COMMIT").await?;
    // Only now: a queue created by this transaction exists for others once
    // it committed (cached earlier, another group's insert would not find
    // it yet).
    if begun {
        cache.put(&ids);
    }

    let answers = group
        .iter()
        .zip(work)
        .map(|(pending, w)| Some(answer(pending, w, &stored)))
        .collect();
    Ok((answers, acked))
}

/// Runs `sql/publish_group.sql` for `takes` and the new messages bound
/// for queues of `queue_type`: the keys now ours and the messages stored
/// (nothing sent when there are neither).
async fn store<'g>(
    client: &crate::postgres::db::Conn,
    stmt: &crate::postgres::db::Stmt,
    group: &'g [Pending],
    work: &[Work],
    takes: &[Take<'g>],
    queue_type: QueueType,
) -> Result<(HashSet<(i64, &'g str)>, HashMap<String, Stored>), Error> {
    let new = NewColumns::of(group, work, queue_type)?;
    if takes.is_empty() && new.is_empty() {
        return Ok((HashSet::new(), HashMap::new()));
    }
    let claim = ClaimColumns::of(group, takes);
    let params: Vec<&(dyn ToSql + Sync)> = claim.params().into_iter().chain(new.params()).collect();
    let rows = client.query(stmt, &params).await?;
    // A message's row has its id, a key's row none.
    let (messages, keys): (Vec<_>, Vec<_>) = rows
        .into_iter()
        .partition(|row| row.get::<_, Option<&str>>("id").is_some());
    Ok((taken(takes, &keys), Stored::from_rows(&messages)?))
}

/// The answers of a group committed in one trip. Held keys are read after
/// the commit (they were committed before it): each makes its publish a
/// replay, or a failure when the payload differs. A publish that stored
/// nothing and is neither gets `None`, to be published on its own: its
/// queue went away under the cached id, or its key's holder could not be
/// read. The group is never retried from here: it has committed.
async fn one_trip_answers(
    client: &crate::postgres::db::Conn,
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
            .find(|g| g.p.queue.project == project && g.p.queue.queue == name);
        let now = first.map(|g| g.p.now).unwrap_or_else(Timestamp::now);
        let retention = first.map_or(0, |g| g.p.new_queue_completed_retention);
        let queue = QueueRef::new(project, name);
        let found = queues::ensure(c, &queue, retention, now).await?;
        ids.insert(key, found);
    }
    Ok(ids)
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
