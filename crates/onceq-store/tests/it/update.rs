//! `queue_update`: what it changes, what it keeps, the create rules it
//! obeys for a dead-letter queue, its refusals (nothing changed), and that
//! hand-outs follow the new settings at once.

use onceq_store::{QueueChanges, QueueUpdate, StoreError};
use onceq_types::{QueueRecord, QueueType};

use crate::{Harness, defaults, fifo, payload};

conformance!(
    update_changes_what_it_names_and_keeps_the_rest,
    update_names_an_existing_standard_dead_letter_queue,
    update_refusals_change_nothing,
    update_of_an_unknown_queue_is_not_found,
    update_applies_to_the_next_hand_outs,
);

impl Harness {
    pub(crate) async fn update(
        &self,
        name: &str,
        changes: QueueChanges,
    ) -> onceq_store::Result<QueueRecord> {
        self.store
            .queue_update(QueueUpdate {
                queue: self.q(name),
                changes,
                now: self.now,
            })
            .await
    }
}

async fn update_changes_what_it_names_and_keeps_the_rest(mut h: Harness) {
    let created = h.create("orders", defaults()).await.unwrap().record;
    h.advance(5);
    let updated = h
        .update(
            "orders",
            QueueChanges {
                max_retries: Some(7),
                visibility_timeout_default: Some(120),
                ..QueueChanges::default()
            },
        )
        .await
        .unwrap();
    let expected = QueueRecord {
        max_retries: 7,
        visibility_timeout_default: 120,
        ..created.clone()
    };
    assert_eq!(updated, expected, "created_at, DLQ and the rest kept");
    assert_eq!(h.get("orders").await, Some(expected.clone()));

    let again = h
        .update(
            "orders",
            QueueChanges {
                message_retention_days: Some(30),
                enable_priority: Some(false),
                // The type stated again, unchanged, is no change.
                queue_type: Some(QueueType::Standard),
                ..QueueChanges::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        again,
        QueueRecord {
            message_retention_days: 30,
            enable_priority: false,
            ..expected.clone()
        }
    );
    let none = h.update("orders", QueueChanges::default()).await.unwrap();
    assert_eq!(none, again, "an empty update changes nothing");
}

async fn update_names_an_existing_standard_dead_letter_queue(h: Harness) {
    h.create("orders", defaults()).await.unwrap();
    h.create("graveyard", defaults()).await.unwrap();
    let updated = h
        .update(
            "orders",
            QueueChanges {
                dead_letter_queue: Some("graveyard".into()),
                ..QueueChanges::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(updated.dead_letter_queue.as_deref(), Some("graveyard"));
    assert_eq!(
        h.stats("orders").await.dead_letter_queue.as_deref(),
        Some("graveyard")
    );
    // Nothing is created: the old DLQ stays, the named one is used.
    assert!(h.get("orders-dlq").await.is_some());
}

async fn update_refusals_change_nothing(h: Harness) {
    let orders = h.create("orders", defaults()).await.unwrap().record;
    h.create("lines", fifo()).await.unwrap();
    let refused = [
        (
            QueueChanges {
                queue_type: Some(QueueType::Fifo),
                max_retries: Some(9),
                ..QueueChanges::default()
            },
            "type cannot change",
        ),
        (
            QueueChanges {
                dead_letter_queue: Some("orders".into()),
                max_retries: Some(9),
                ..QueueChanges::default()
            },
            "own dead-letter",
        ),
        (
            QueueChanges {
                dead_letter_queue: Some("lines".into()),
                max_retries: Some(9),
                ..QueueChanges::default()
            },
            "FIFO",
        ),
    ];
    for (changes, why) in refused {
        match h.update("orders", changes).await {
            Err(StoreError::Invalid(m)) => assert!(m.contains(why), "{m}"),
            other => panic!("expected Invalid ({why}), got {other:?}"),
        }
    }
    match h
        .update(
            "orders",
            QueueChanges {
                dead_letter_queue: Some("nowhere".into()),
                max_retries: Some(9),
                ..QueueChanges::default()
            },
        )
        .await
    {
        Err(StoreError::DeadLetterQueueNotFound(n)) => assert_eq!(n, "nowhere"),
        other => panic!("expected DeadLetterQueueNotFound, got {other:?}"),
    }
    assert_eq!(h.get("orders").await, Some(orders), "nothing changed");
    assert_eq!(h.get("nowhere").await, None, "nothing created");
}

async fn update_of_an_unknown_queue_is_not_found(h: Harness) {
    let err = h
        .update(
            "ghost",
            QueueChanges {
                max_retries: Some(1),
                ..QueueChanges::default()
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::QueueNotFound), "{err:?}");
    assert_eq!(h.get("ghost").await, None);
    // Another project's queue of that name is not this project's.
    h.as_project("proj-b")
        .await
        .create("ghost", defaults())
        .await
        .unwrap();
    let err = h
        .update("ghost", QueueChanges::default())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::QueueNotFound), "{err:?}");
}

async fn update_applies_to_the_next_hand_outs(mut h: Harness) {
    h.create("jobs", defaults()).await.unwrap();
    h.publish_one("jobs", &payload(1)).await;
    h.update(
        "jobs",
        QueueChanges {
            max_retries: Some(0),
            visibility_timeout_default: Some(300),
            ..QueueChanges::default()
        },
    )
    .await
    .unwrap();
    // The new default lease...
    let c = h.claim_one("jobs").await;
    assert_eq!(
        c.lease_expires_at,
        h.now + jiff::SignedDuration::from_secs(300)
    );
    // ...and max_retries 0: the first failure dead-letters.
    h.advance(1);
    let out = h.nack_claimed("jobs", &c, true).await;
    assert!(out.dead_lettered && !out.requeued, "{out:?}");
    assert_eq!(h.stats("jobs").await.dead_lettered, 1);
}
