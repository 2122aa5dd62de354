//! Publish: implicit queue creation, what a publish returns, all-or-nothing
//! batches.

use onceq_store::StoreError;
use onceq_types::MessageStatus;

use crate::{Harness, MsgExt, msg, payload};

conformance!(
    publish_creates_queue_and_dlq,
    publish_returns_outcomes,
    publish_batch_is_all_or_nothing,
);

async fn publish_creates_queue_and_dlq(h: Harness) {
    assert_eq!(h.get("jobs").await, None);
    h.publish_one("jobs", &payload(1)).await;

    let q = h.get("jobs").await.expect("queue created by publish");
    assert_eq!(q.dead_letter_queue.as_deref(), Some("jobs-dlq"));
    assert_eq!(
        (
            q.max_retries,
            q.message_retention_days,
            q.visibility_timeout_default
        ),
        (3, 7, 30)
    );
    assert!(q.enable_priority);
    let dlq = h.get("jobs-dlq").await.expect("its DLQ created too");
    assert_eq!(dlq.dead_letter_queue, None);
    assert_eq!(h.stats("jobs").await.available, 1);
}

async fn publish_returns_outcomes(h: Harness) {
    let out = h
        .publish(
            "jobs",
            vec![msg(&payload(1)), msg(r#"{"b":[1,2]}"#).delay(60)],
        )
        .await
        .unwrap();
    assert_eq!(out.len(), 2);
    let (now, later) = (&out[0], &out[1]);
    for o in &out {
        assert!(o.message_id.starts_with("qmsg_"), "{}", o.message_id);
        assert_eq!(o.delivery_count, 0);
        assert_eq!(o.created_at, h.now);
        assert!(!o.replay);
    }
    assert_ne!(now.message_id, later.message_id);
    assert_eq!(
        (now.payload.as_str(), now.status),
        (r#"{"n":1}"#, MessageStatus::Available)
    );
    assert_eq!(
        (later.payload.as_str(), later.status),
        (r#"{"b":[1,2]}"#, MessageStatus::Delayed)
    );

    let s = h.stats("jobs").await;
    assert_eq!((s.message_count, s.available, s.delayed), (2, 1, 1));
}

async fn publish_batch_is_all_or_nothing(h: Harness) {
    h.publish_msg("jobs", msg(&payload(0)).key("k3")).await;
    let batch = vec![
        msg(&payload(1)).key("k1"),
        msg(&payload(2)),
        msg(&payload(3)).key("k3"), // k3 was used with another payload
    ];
    match h.publish("jobs", batch).await {
        Err(StoreError::IdempotencyKeyReused { index, key }) => {
            assert_eq!((index, key.as_str()), (2, "k3"));
        }
        other => panic!("expected IdempotencyKeyReused, got {other:?}"),
    }
    assert_eq!(h.stats("jobs").await.message_count, 1, "nothing stored");

    // Nor was k1 remembered: another payload under k1 is a new message.
    let k1 = h.publish_msg("jobs", msg(&payload(42)).key("k1")).await;
    assert!(!k1.replay);
    assert_eq!(h.stats("jobs").await.message_count, 2);
}
