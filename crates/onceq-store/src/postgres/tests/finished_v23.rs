//! Migration V23: a finished row written before it holds its whole history
//! in `attempts` (the acked attempt included) and reads as it was, with no
//! attempt appended a second time.

use onceq_types::AttemptOutcome;

use super::{PgStore, migrated_to};
use crate::{MessageGet, QueueRef, Store};

#[tokio::test]
async fn a_row_kept_before_v23_reads_as_it_was_written() {
    let (db, client) = migrated_to(22).await;
    // As V22's message_ack_keep.sql wrote it: an earlier nack and the ack.
    client
        .batch_execute(
            r#"INSERT INTO onceq_projects (name, created_at) VALUES ('p', now());
               INSERT INTO onceq_queues (project, name, queue_type, max_retries,
                   message_retention_days, visibility_timeout_default, enable_priority,
                   created_at)
               VALUES ('p', 'q', 'standard', 3, 7, 30, true, now());
               INSERT INTO onceq_finished (id, queue_id, state, payload, priority, delivery_count,
                   created_at, visible_at, finished_at, expires_at, result, attempts)
               SELECT 'm1', id, 'completed', '{}', 0, 2, now(), now(), now(),
                      now() + interval '1 hour', '{"ok":1}',
                      '[{"delivery_count":1,"consumed_at":"2030-01-01T00:00:00.000000Z","ended_at":"2030-01-01T00:00:05.000000Z","outcome":"nacked","error":"boom"},
                        {"delivery_count":2,"consumed_at":"2030-01-01T00:00:10.000000Z","ended_at":"2030-01-01T00:00:12.000000Z","outcome":"acked","error":null}]'
               FROM onceq_queues WHERE name = 'q'"#,
        )
        .await
        .unwrap();
    let store = PgStore::connect(&db.url).await.unwrap();
    let found = store
        .message_find(MessageGet {
            queue: QueueRef::new("p", "q"),
            message_id: "m1".into(),
            now: jiff::Timestamp::now(),
        })
        .await
        .unwrap()
        .expect("kept");
    let outcomes: Vec<AttemptOutcome> = found.record.attempts.iter().map(|a| a.outcome).collect();
    assert_eq!(outcomes, [AttemptOutcome::Nacked, AttemptOutcome::Acked]);
    assert_eq!(found.record.attempts[1].delivery_count, 2);
}
