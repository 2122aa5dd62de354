//! Browsing a queue's messages (the dashboard): list, search, get, and the
//! single-message changes `message_delete` and `dlq_redrive_one`.

use onceq_types::{MessageStatus, QueueType};
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::{queues, time};
use crate::rules::{attempts, page};
use crate::{
    DlqRedriveOne, Finished, FinishedList, FinishedMessage, FinishedPage, FinishedState,
    FoundMessage, MessageDelete, MessageGet, MessageList, MessagePage, MessageRecord,
    RedriveOneOutcome, Result, SingleOutcome, StoreError,
};

pub(super) fn message_record(row: &Row<'_>) -> rusqlite::Result<MessageRecord> {
    message_record_as(row, None)
}

fn unreadable(column: usize, what: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(column, rusqlite::types::Type::Text, what.into())
}

/// A row of onceq_messages, or (`status: Some(Gone)`) of onceq_finished.
fn message_record_as(
    row: &Row<'_>,
    status: Option<MessageStatus>,
) -> rusqlite::Result<MessageRecord> {
    let state: String = row.get(3)?;
    let status = match status {
        Some(status) => status,
        None => MessageStatus::parse(&state)
            .ok_or_else(|| unreadable(3, format!("unknown message state {state:?}")))?,
    };
    let attempts: Option<String> = row.get(13)?;
    Ok(MessageRecord {
        seq: row.get(0)?,
        message_id: row.get(1)?,
        payload: row.get(2)?,
        status,
        priority: row.get(4)?,
        group_id: row.get(5)?,
        idempotency_key: row.get(6)?,
        delivery_count: row.get(7)?,
        created_at: time::get(row, 8)?,
        visible_at: time::get(row, 9)?,
        lease_expires_at: time::get_opt(row, 10)?,
        headers: row.get(11)?,
        last_error: row.get(12)?,
        attempts: attempts::parse(attempts.as_deref())
            .map_err(|e| unreadable(13, e.to_string()))?,
    })
}

/// A `message_find.sql` row.
fn found(row: &Row<'_>) -> rusqlite::Result<FoundMessage> {
    let Some(finished_at) = time::get_opt(row, 15)? else {
        return Ok(FoundMessage {
            record: message_record(row)?,
            dead_lettered: row.get(14)?,
            finished: None,
        });
    };
    let state: String = row.get(3)?;
    let state = FinishedState::parse(&state)
        .ok_or_else(|| unreadable(3, format!("unknown finished state {state:?}")))?;
    Ok(FoundMessage {
        record: message_record_as(row, Some(MessageStatus::Gone))?,
        dead_lettered: false,
        finished: Some(Finished {
            state,
            finished_at,
            result: row.get(16)?,
        }),
    })
}

/// `Store::message_list`.
pub(super) fn list(conn: &Connection, p: &MessageList) -> Result<MessagePage> {
    let state = p.checked_state()?;
    let queue = queues::get(conn, &p.queue)?;
    let (after, limit) = page::window(p);
    let now = time::micros(p.now);
    let fetched = match &p.search {
        Some(search) => conn
            .prepare_cached(sql!("message_search"))?
            .query_map(
                params![queue.id, after, now, state, limit, search, p.group_id],
                message_record,
            )?
            .collect::<rusqlite::Result<Vec<_>>>()?,
        None => conn
            .prepare_cached(sql!("message_list"))?
            .query_map(
                params![queue.id, after, now, state, limit, p.group_id],
                message_record,
            )?
            .collect::<rusqlite::Result<Vec<_>>>()?,
    };
    Ok(page::page(fetched, p.limit))
}

/// `Store::message_get`.
pub(super) fn get(conn: &Connection, p: &MessageGet) -> Result<Option<MessageRecord>> {
    let queue = queues::get(conn, &p.queue)?;
    Ok(conn
        .prepare_cached(sql!("message_get"))?
        .query_row(
            params![queue.id, p.message_id, time::micros(p.now)],
            message_record,
        )
        .optional()?)
}

/// `Store::message_find`.
pub(super) fn find_anywhere(conn: &Connection, p: &MessageGet) -> Result<Option<FoundMessage>> {
    let queue = queues::get(conn, &p.queue)?;
    Ok(conn
        .prepare_cached(sql!("message_find"))?
        .query_row(params![queue.id, p.message_id, time::micros(p.now)], found)
        .optional()?)
}

/// `Store::finished_list`.
pub(super) fn finished_list(conn: &Connection, p: &FinishedList) -> Result<FinishedPage> {
    let rows_to_read = p.rows_to_read()?;
    let queue = queues::get(conn, &p.queue)?;
    let fetched = match &p.before {
        None => conn
            .prepare_cached(sql!("finished_list"))?
            .query_map(params![queue.id, rows_to_read], finished_message)?
            .collect::<rusqlite::Result<Vec<_>>>()?,
        Some(before) => conn
            .prepare_cached(sql!("finished_list_before"))?
            .query_map(
                params![
                    queue.id,
                    rows_to_read,
                    time::micros(before.finished_at),
                    before.message_id
                ],
                finished_message,
            )?
            .collect::<rusqlite::Result<Vec<_>>>()?,
    };
    Ok(FinishedPage::of(fetched, p.limit))
}

/// A `finished_list.sql` row (the columns of `message_find.sql`'s
/// finished branch).
fn finished_message(row: &Row<'_>) -> rusqlite::Result<FinishedMessage> {
    let found = found(row)?;
    let finished = found
        .finished
        .ok_or_else(|| unreadable(15, "a finished row without finished_at".into()))?;
    Ok(FinishedMessage {
        record: found.record,
        finished,
    })
}

/// The message's seq and whether it is in flight, if the queue holds it.
pub(super) fn find(conn: &Connection, queue_id: i64, id: &str) -> Result<Option<(i64, bool)>> {
    Ok(conn
        .prepare_cached(sql!("message_state"))?
        .query_row(params![queue_id, id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)? == MessageStatus::InFlight.as_str(),
            ))
        })
        .optional()?)
}

/// Why a change of one message did nothing.
fn why_not(conn: &Connection, queue_id: i64, id: &str) -> Result<SingleOutcome> {
    Ok(match find(conn, queue_id, id)? {
        Some((_, true)) => SingleOutcome::InFlight,
        // Not in flight yet unchanged cannot happen on the one writer.
        Some((_, false)) | None => SingleOutcome::NotFound,
    })
}

/// `Store::message_delete`.
pub(super) fn delete(conn: &Connection, p: &MessageDelete) -> Result<SingleOutcome> {
    let queue = queues::get(conn, &p.queue)?;
    let deleted = conn
        .prepare_cached(sql!("message_delete_one"))?
        .execute(params![queue.id, p.message_id])?;
    if deleted == 1 {
        return Ok(SingleOutcome::Done);
    }
    why_not(conn, queue.id, &p.message_id)
}

/// `Store::dlq_redrive_one`: as `dlq::redrive` moves each message.
pub(super) fn redrive_one(conn: &Connection, p: &DlqRedriveOne) -> Result<RedriveOneOutcome> {
    let queue = queues::get(conn, &p.queue)?;
    let (Some(dlq_id), Some(dlq_name)) = (queue.dlq_id, queue.record.dead_letter_queue) else {
        return Err(StoreError::Invalid(format!(
            "queue {:?} has no dead-letter queue",
            p.queue.queue
        )));
    };
    let now = time::micros(p.now);
    let outcome = if queue.record.queue_type == QueueType::Fifo {
        match find(conn, dlq_id, &p.message_id)? {
            None => SingleOutcome::NotFound,
            Some((_, true)) => SingleOutcome::InFlight,
            Some((seq, false)) => {
                // Appended at its group's tail, as a publish would be.
                conn.prepare_cached(sql!("dlq_redrive_fifo"))?
                    .execute(params![seq, queue.id, now])?;
                SingleOutcome::Done
            }
        }
    } else {
        let moved = conn
            .prepare_cached(sql!("dlq_redrive_one"))?
            .execute(params![dlq_id, queue.id, now, p.message_id])?;
        if moved == 1 {
            SingleOutcome::Done
        } else {
            why_not(conn, dlq_id, &p.message_id)?
        }
    };
    Ok(RedriveOneOutcome {
        dead_letter_queue: dlq_name,
        outcome,
    })
}

#[cfg(test)]
mod tests {
    //! The dashboard's search probes indexes and its pages walk
    //! `(queue_id, seq)`: SQLite's plan must say SEARCH, never SCAN, for
    //! the messages table.

    use super::super::{conn, migrate};

    fn plan(conn: &rusqlite::Connection, sql: &str, params: impl rusqlite::Params) -> String {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let rows = stmt.query_map(params, |r| r.get::<_, String>(3)).unwrap();
        rows.map(Result::unwrap).collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn search_and_pages_use_indexes() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = conn::open_writer(&dir.path().join("t.db")).unwrap();
        migrate::run(&mut c, crate::OpenMode::Create).unwrap();
        let none: Option<&str> = None;
        let search = plan(
            &c,
            sql!("message_search"),
            rusqlite::params![1, i64::MIN, 0, none, 101, "order-7", none],
        );
        assert!(!search.contains("SCAN m"), "{search}");
        assert!(search.contains("onceq_messages_idempotency"), "{search}");
        let list = plan(
            &c,
            sql!("message_list"),
            rusqlite::params![1, 42, 0, none, 101, none],
        );
        assert!(!list.contains("SCAN m"), "{list}");
        assert!(list.contains("onceq_messages_queue"), "{list}");
    }

    /// A page of the completed listing walks the V14 index from its
    /// cursor, in its order: no scan, no sort.
    #[test]
    fn finished_pages_walk_their_index() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = conn::open_writer(&dir.path().join("t.db")).unwrap();
        migrate::run(&mut c, crate::OpenMode::Create).unwrap();
        let newest = plan(&c, sql!("finished_list"), rusqlite::params![1, 51]);
        let before = plan(
            &c,
            sql!("finished_list_before"),
            rusqlite::params![1, 51, 1_000, "m1"],
        );
        for plan in [newest, before] {
            assert!(!plan.contains("SCAN"), "{plan}");
            assert!(!plan.contains("TEMP B-TREE"), "{plan}");
            assert!(plan.contains("onceq_finished_queue_newest"), "{plan}");
        }
    }
}
