//! The dashboard's actions beyond browsing: `message_promote_now` and the
//! bounded `message_payload_search`.

use rusqlite::{Connection, params};

use super::browse::{find, message_record};
use super::{queues, time};
use crate::{MessagePromote, PayloadMatches, PayloadSearch, PromoteOutcome, Result};

/// `Store::message_promote_now`.
pub(super) fn promote_now(conn: &Connection, p: &MessagePromote) -> Result<PromoteOutcome> {
    let queue = queues::get(conn, &p.queue)?;
    let promoted = conn
        .prepare_cached(sql!("message_promote_now"))?
        .execute(params![queue.id, p.message_id, time::micros(p.now)])?;
    if promoted == 1 {
        return Ok(PromoteOutcome::Promoted);
    }
    Ok(match find(conn, queue.id, &p.message_id)? {
        Some(_) => PromoteOutcome::NotDelayed,
        None => PromoteOutcome::NotFound,
    })
}

/// `Store::message_payload_search`.
pub(super) fn payload_search(conn: &Connection, p: &PayloadSearch) -> Result<PayloadMatches> {
    p.check()?;
    let queue = queues::get(conn, &p.queue)?;
    let (scan, limit) = (i64::from(p.scan), i64::from(p.limit));
    let messages = conn
        .prepare_cached(sql!("message_payload_search"))?
        .query_map(
            params![queue.id, time::micros(p.now), scan, p.text, limit],
            message_record,
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let held: i64 = conn
        .prepare_cached(sql!("message_recent_count"))?
        .query_row(params![queue.id, scan + 1], |r| r.get(0))?;
    Ok(PayloadMatches {
        messages,
        scanned: u32::try_from(held.min(scan)).unwrap_or(p.scan),
        truncated: held > scan,
    })
}

#[cfg(test)]
mod tests {
    //! The payload search walks `(queue_id, seq)` backwards with a LIMIT:
    //! SQLite's plan must use that index, never scan the messages table.

    use super::super::{conn, migrate};

    fn plan(conn: &rusqlite::Connection, sql: &str, params: impl rusqlite::Params) -> String {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let rows = stmt.query_map(params, |r| r.get::<_, String>(3)).unwrap();
        rows.map(Result::unwrap).collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn payload_search_walks_the_queue_index() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = conn::open_writer(&dir.path().join("t.db")).unwrap();
        migrate::run(&mut c, crate::OpenMode::Create).unwrap();
        let search = plan(
            &c,
            sql!("message_payload_search"),
            rusqlite::params![1, 0, 1000, "alice", 50],
        );
        let count = plan(&c, sql!("message_recent_count"), rusqlite::params![1, 1001]);
        // The group filter of message_list walks an index too.
        let group = plan(
            &c,
            sql!("message_list"),
            rusqlite::params![1, 42, 0, None::<&str>, 51, "g"],
        );
        assert!(!group.contains("SCAN m"), "{group}");
        for plan in [search, count] {
            assert!(
                !plan.contains("SCAN m\n") && !plan.ends_with("SCAN m"),
                "{plan}"
            );
            assert!(!plan.contains("SCAN onceq_messages"), "{plan}");
            assert!(plan.contains("onceq_messages_queue"), "{plan}");
        }
    }
}
