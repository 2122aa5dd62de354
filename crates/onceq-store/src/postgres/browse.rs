//! Browsing a queue's messages (the dashboard): list, search, get, and the
//! single-message changes `message_delete` and `dlq_redrive_one` (the
//! batch forms' statements, for one id: `batch.rs`).

use crate::postgres::db::GenericClient;
use onceq_types::{Attempt, MessageStatus};
use tokio_postgres::Row;

use super::errors::Error;
use super::queues::lookup;
use super::{PgStore, sql};
use crate::rules::{attempts, finished, page};
use crate::{
    DlqRedriveOne, Finished, FinishedList, FinishedMessage, FinishedPage, FinishedState,
    FoundMessage, MessageDelete, MessageGet, MessageList, MessagePage, MessageRecord, QueueRef,
    RedriveOneOutcome, SingleOutcome, StoreError,
};

pub(super) fn message_record(row: &Row) -> Result<MessageRecord, Error> {
    message_record_as(row, None, None)
}

/// A row of onceq_messages, or (`status: Some(Gone)`) of onceq_finished,
/// whose `closing` attempt is appended to the stored ones.
fn message_record_as(
    row: &Row,
    status: Option<MessageStatus>,
    closing: Option<Attempt>,
) -> Result<MessageRecord, Error> {
    let state: &str = row.get("state");
    let status = match status {
        Some(status) => status,
        None => MessageStatus::parse(state).ok_or_else(|| {
            StoreError::internal(format!("unknown message state {state:?} in the database"))
        })?,
    };
    Ok(MessageRecord {
        seq: row.get("seq"),
        message_id: row.get("id"),
        payload: row.get("payload"),
        status,
        priority: row.get("priority"),
        group_id: row.get("group_id"),
        idempotency_key: row.get("idempotency_key"),
        delivery_count: row.get("delivery_count"),
        created_at: row.get("created_at"),
        visible_at: row.get("visible_at"),
        lease_expires_at: row.get("lease_expires_at"),
        headers: row.get("headers"),
        last_error: row.get("last_error"),
        attempts: attempts::parse_then(row.get("attempts"), closing)?,
    })
}

/// A `message_find.sql` row.
fn found(row: &Row) -> Result<FoundMessage, Error> {
    let finished_at: Option<jiff::Timestamp> = row.get("finished_at");
    let Some(finished_at) = finished_at else {
        return Ok(FoundMessage {
            record: message_record(row)?,
            dead_lettered: row.get("dead_lettered"),
            finished: None,
        });
    };
    let state: &str = row.get("state");
    let state = FinishedState::parse(state).ok_or_else(|| {
        StoreError::internal(format!("unknown finished state {state:?} in the database"))
    })?;
    // V23: the hand-out the finish ended is not in `attempts`.
    let closing = row.get::<_, bool>("ended_lease").then(|| {
        finished::closing_attempt(
            state,
            row.get("delivery_count"),
            row.get("consumed_at"),
            finished_at,
        )
    });
    Ok(FoundMessage {
        record: message_record_as(row, Some(MessageStatus::Gone), closing)?,
        dead_lettered: false,
        finished: Some(Finished {
            state,
            finished_at,
            result: row.get("result"),
        }),
    })
}

/// A `finished_list.sql` row (the columns of `message_find.sql`'s
/// finished branch).
fn finished_message(row: &Row) -> Result<FinishedMessage, Error> {
    let found = found(row)?;
    let finished = found
        .finished
        .ok_or_else(|| StoreError::internal("a finished row without finished_at"))?;
    Ok(FinishedMessage {
        record: found.record,
        finished,
    })
}

/// The queue's id, or `QueueNotFound`.
pub(super) async fn queue_id(c: &impl GenericClient, q: &QueueRef) -> Result<i64, Error> {
    match lookup(c, &q.project, &q.queue).await? {
        Some((id, _)) => Ok(id),
        None => Err(StoreError::QueueNotFound.into()),
    }
}

impl PgStore {
    pub(super) async fn message_list_once(&self, p: &MessageList) -> Result<MessagePage, Error> {
        let state = p.checked_state()?;
        let client = self.client().await?;
        let queue_id = queue_id(&client, &p.queue).await?;
        let (after, limit) = page::window(p);
        let rows = match &p.search {
            Some(search) => {
                let stmt = client.prepare_cached(sql::MESSAGE_SEARCH).await?;
                client
                    .query(
                        &stmt,
                        &[
                            &queue_id,
                            &after,
                            &p.now,
                            &state,
                            &limit,
                            search,
                            &p.group_id,
                        ],
                    )
                    .await?
            }
            None => {
                let stmt = client.prepare_cached(sql::MESSAGE_LIST).await?;
                client
                    .query(
                        &stmt,
                        &[&queue_id, &after, &p.now, &state, &limit, &p.group_id],
                    )
                    .await?
            }
        };
        let fetched = rows
            .iter()
            .map(message_record)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(page::page(fetched, p.limit))
    }

    pub(super) async fn message_get_once(
        &self,
        p: &MessageGet,
    ) -> Result<Option<MessageRecord>, Error> {
        let client = self.client().await?;
        let queue_id = queue_id(&client, &p.queue).await?;
        let stmt = client.prepare_cached(sql::MESSAGE_GET).await?;
        match client
            .query_opt(&stmt, &[&queue_id, &p.message_id, &p.now])
            .await?
        {
            Some(row) => Ok(Some(message_record(&row)?)),
            None => Ok(None),
        }
    }

    pub(super) async fn message_find_once(
        &self,
        p: &MessageGet,
    ) -> Result<Option<FoundMessage>, Error> {
        let client = self.client().await?;
        let queue_id = queue_id(&client, &p.queue).await?;
        let stmt = client.prepare_cached(sql::MESSAGE_FIND).await?;
        match client
            .query_opt(&stmt, &[&queue_id, &p.message_id, &p.now])
            .await?
        {
            Some(row) => Ok(Some(found(&row)?)),
            None => Ok(None),
        }
    }

    pub(super) async fn finished_list_once(&self, p: &FinishedList) -> Result<FinishedPage, Error> {
        let rows_to_read = p.rows_to_read()?;
        let client = self.client().await?;
        let queue_id = queue_id(&client, &p.queue).await?;
        let rows = match &p.before {
            None => {
                let stmt = client.prepare_cached(sql::FINISHED_LIST).await?;
                client.query(&stmt, &[&queue_id, &rows_to_read]).await?
            }
            Some(before) => {
                let stmt = client.prepare_cached(sql::FINISHED_LIST_BEFORE).await?;
                client
                    .query(
                        &stmt,
                        &[
                            &queue_id,
                            &rows_to_read,
                            &before.finished_at,
                            &before.message_id,
                        ],
                    )
                    .await?
            }
        };
        let fetched = rows
            .iter()
            .map(finished_message)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(FinishedPage::of(fetched, p.limit))
    }

    /// `Store::message_delete`: the batch form's one statement, for one id.
    pub(super) async fn message_delete_once(
        &self,
        p: &MessageDelete,
    ) -> Result<SingleOutcome, Error> {
        let ids = one(&p.queue, &p.message_id, p.now);
        Ok(self.delete_many_once(&ids).await?[0])
    }

    /// `Store::dlq_redrive_one`: the batch form, for one id.
    pub(super) async fn redrive_one_once(
        &self,
        p: &DlqRedriveOne,
    ) -> Result<RedriveOneOutcome, Error> {
        let ids = one(&p.queue, &p.message_id, p.now);
        let moved = self.redrive_many_once(&ids).await?;
        Ok(RedriveOneOutcome {
            dead_letter_queue: moved.dead_letter_queue,
            outcome: moved.outcomes[0],
        })
    }
}

/// One message of a queue, as the batch forms take it.
pub(super) fn one(queue: &QueueRef, id: &str, now: jiff::Timestamp) -> crate::MessageIds {
    crate::MessageIds {
        queue: queue.clone(),
        message_ids: vec![id.to_owned()],
        now,
    }
}
