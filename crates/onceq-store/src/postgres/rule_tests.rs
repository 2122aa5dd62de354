//! The rules PostgreSQL keeps a copy of in SQL, held to their Rust
//! originals in `crate::rules` case by case (the conformance suite checks
//! the same through the API, on a few cases).

use jiff::{SignedDuration, Timestamp};
use onceq_types::attempt::MAX_ATTEMPTS_KEPT;
use onceq_types::queue::QueueSettings;
use onceq_types::{Attempt, AttemptOutcome};

use super::PgStore;
use crate::rules::attempts;
use crate::rules::dead_letter::{self, Ending};
use crate::{QueueCreate, QueueRef, Store};

/// `sql/lease_expire.sql` ends every expired lease as
/// [`dead_letter::ending`] says with `requeue: true`: for each number of
/// retries and hand-outs, with and without a dead-letter queue.
#[tokio::test]
async fn lease_expiry_sql_is_the_dead_letter_rule() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    let conn = store.client().await.unwrap();
    let client = conn.raw();
    let now = Timestamp::from_second(1_900_000_000).unwrap();
    let mut cases = Vec::new();
    for max_retries in 0..3 {
        for has_dlq in [true, false] {
            let name = format!("q{max_retries}-{has_dlq}");
            store
                .queue_create(QueueCreate {
                    queue: QueueRef::new("p", name.as_str()),
                    settings: QueueSettings {
                        max_retries,
                        ..QueueSettings::default()
                    },
                    now,
                })
                .await
                .unwrap();
            let row = client
                .query_one(
                    "UPDATE onceq_queues SET dead_letter_queue_id =
                         CASE WHEN $2 THEN dead_letter_queue_id END
                     WHERE name = $1 RETURNING id, dead_letter_queue_id",
                    &[&name, &has_dlq],
                )
                .await
                .unwrap();
            let (queue_id, dlq_id): (i64, Option<i64>) = (row.get(0), row.get(1));
            for delivery_count in 1..=max_retries + 2 {
                let id = format!("qmsg_{name}_{delivery_count}");
                client
                    .execute(
                        "INSERT INTO onceq_messages (id, queue_id, state, payload,
                             delivery_count, visible_at, receipt, lease_expires_at, created_at)
                         VALUES ($1, $2, 'in_flight', '{}', $3, $4, 'r', $4, $4)",
                        &[&id, &queue_id, &delivery_count, &now],
                    )
                    .await
                    .unwrap();
                let ending = dead_letter::ending(true, delivery_count, max_retries, has_dlq);
                let expected = match (ending, dlq_id) {
                    (Ending::DeadLettered, Some(dlq)) => dlq,
                    _ => queue_id,
                };
                cases.push((id, ending, expected));
            }
        }
    }

    let expiry = store
        .lease_expire(now + SignedDuration::from_secs(1), 1000)
        .await
        .unwrap();
    for (id, ending, expected) in &cases {
        let row = client
            .query_one(
                "SELECT queue_id, state FROM onceq_messages WHERE id = $1",
                &[id],
            )
            .await
            .unwrap();
        assert_eq!(row.get::<_, i64>(0), *expected, "{id}: {ending:?}");
        assert_eq!(row.get::<_, &str>(1), "available", "{id}");
    }
    let count = |e: Ending| cases.iter().filter(|c| c.1 == e).count() as u64;
    assert_eq!(expiry.dead_lettered, count(Ending::DeadLettered));
    assert_eq!(expiry.requeued, count(Ending::Requeued));
    assert!(count(Ending::DeadLettered) > 0 && count(Ending::Dropped) == 0);
}

/// `onceq_attempts_append` (migration V22's SQL expression, which
/// PostgreSQL inlines into the kept-ack, cancel and lease-expiry
/// statements) is [`attempts::append`]: for every length of
/// history from none to beyond the bound, the same attempts kept. And a
/// `keep` below one keeps nothing, as V10's and V18's forms did.
#[tokio::test]
async fn attempts_append_sql_is_the_attempts_rule() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    let conn = store.client().await.unwrap();
    let client = conn.raw();
    let attempt = |n: usize| Attempt {
        delivery_count: n as i32 + 1,
        consumed_at: n
            .is_multiple_of(2)
            .then(|| Timestamp::from_second(1_900_000_000).unwrap()),
        ended_at: Timestamp::from_second(1_900_000_000 + n as i64).unwrap(),
        outcome: AttemptOutcome::Nacked,
        error: n.is_multiple_of(3).then(|| format!("failure {n}")),
    };
    let keep = MAX_ATTEMPTS_KEPT as i32;
    let append = "SELECT onceq_attempts_append($1, $2::text::jsonb, $3)";
    for len in 0..=MAX_ATTEMPTS_KEPT + 2 {
        let before: Vec<Attempt> = (0..len).map(attempt).collect();
        // No history yet is stored as NULL; an empty array reads the same.
        let stored = (len > 0).then(|| serde_json::to_string(&before).unwrap());
        let next = serde_json::to_string(&attempt(len)).unwrap();
        let expected = attempts::append(stored.as_deref(), attempt(len)).unwrap();
        let expected: serde_json::Value = serde_json::from_str(&expected).unwrap();
        for given in [stored.clone(), stored.clone().or(Some("[]".to_owned()))] {
            let row = client
                .query_one(append, &[&given, &next, &keep])
                .await
                .unwrap();
            let got: serde_json::Value = serde_json::from_str(row.get(0)).unwrap();
            assert_eq!(got, expected, "{len} attempts before, stored {given:?}");
        }
    }
    for keep in [0, -1] {
        let row = client
            .query_one(append, &[&None::<String>, &"{}", &keep])
            .await
            .unwrap();
        assert_eq!(row.get::<_, Option<&str>>(0), None, "keep {keep}");
    }
}
