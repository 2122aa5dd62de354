//! Claims with the plain statement unless the queue is known not to be
//! plain (`claim/mod.rs`): a wrong guess, either way, still hands out what the
//! full statement would, and is put right.

use super::*;
use crate::{MessageClaim, QueueChanges, QueueUpdate};

fn claim(queue: &str, max: u32) -> MessageClaim {
    MessageClaim {
        queue: QueueRef::new("p", queue),
        max,
        visibility_timeout: None,
        now: publish(queue).now,
    }
}

async fn limit(store: &PgStore, queue: &str, max_in_flight: Option<i32>) {
    store
        .queue_update(QueueUpdate {
            queue: QueueRef::new("p", queue),
            changes: QueueChanges {
                max_in_flight: Some(max_in_flight),
                ..Default::default()
            },
            now: publish(queue).now,
        })
        .await
        .unwrap();
}

#[tokio::test]
async fn a_queue_that_gains_or_loses_a_limit_is_claimed_by_the_statement_it_needs() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    let q = QueueRef::new("p", "q");
    store.message_publish(publish("q")).await.unwrap();
    assert_eq!(store.message_claim(claim("q", 10)).await.unwrap().len(), 1);
    assert!(
        !store.claims.known_not_plain(&q),
        "a new standard queue is plain"
    );

    // A limit set since the last claim (by this server or another): the
    // plain statement hands out nothing, the full one honours the limit.
    limit(&store, "q", Some(2)).await;
    for _ in 0..3 {
        store.message_publish(publish("q")).await.unwrap();
    }
    assert_eq!(
        store.message_claim(claim("q", 10)).await.unwrap().len(),
        1,
        "one in flight already, at most two"
    );
    assert!(store.claims.known_not_plain(&q));
    assert!(
        store
            .message_claim(claim("q", 10))
            .await
            .unwrap()
            .is_empty()
    );

    // The limit lifted: the full statement claims (it fits every queue),
    // and the queue is plain again from then on.
    limit(&store, "q", None).await;
    assert_eq!(store.message_claim(claim("q", 10)).await.unwrap().len(), 2);
    assert!(!store.claims.known_not_plain(&q));
}

#[tokio::test]
async fn a_fifo_queue_hands_out_its_head_at_the_first_claim() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    store
        .queue_create(crate::QueueCreate {
            queue: QueueRef::new("p", "f"),
            settings: onceq_types::queue::QueueSettings {
                queue_type: onceq_types::QueueType::Fifo,
                ..Default::default()
            },
            now: publish("f").now,
        })
        .await
        .unwrap();
    store.message_publish(publish("f")).await.unwrap();
    assert_eq!(store.message_claim(claim("f", 10)).await.unwrap().len(), 1);
    assert!(store.claims.known_not_plain(&QueueRef::new("p", "f")));
}

/// The plain statement hands out as the full one does: the same lease,
/// receipt and delivery count, written once in each file, so they are held
/// to be the same text here (from the `UPDATE` to its `WHERE`).
#[test]
fn both_claims_set_the_same_lease_and_receipt() {
    let hand_out = |sql: &str| {
        let start = sql.find("UPDATE onceq_messages m").expect("the hand-out");
        let end = start + sql[start..].find("WHERE").expect("its WHERE");
        sql[start..end].to_owned()
    };
    assert_eq!(
        hand_out(crate::postgres::sql::MESSAGE_CLAIM_PLAIN),
        hand_out(crate::postgres::sql::MESSAGE_CLAIM)
    );
}
