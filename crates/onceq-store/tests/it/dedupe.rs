//! Dedupe: one message per `(queue, idempotency_key)` within the window.

use jiff::SignedDuration;
use onceq_store::StoreError;
use onceq_types::MessageStatus;

use crate::{Harness, MsgExt, msg, payload};

conformance!(
    dedupe_replays_first_id,
    dedupe_replay_after_ack_is_gone,
    dedupe_different_payload_is_rejected,
    dedupe_key_is_scoped_per_queue,
    dedupe_key_is_new_after_window,
    dedupe_purge_forgets_expired_keys,
    dedupe_within_one_batch,
);

async fn dedupe_replays_first_id(mut h: Harness) {
    let first = h.publish_msg("jobs", msg(&payload(1)).key("k")).await;
    assert!(!first.replay);
    h.advance(10);
    let again = h.publish_msg("jobs", msg(&payload(1)).key("k")).await;
    assert!(again.replay);
    assert_eq!(again.message_id, first.message_id);
    assert_eq!(again.status, MessageStatus::Available);
    assert_eq!(again.delivery_count, 0);
    assert_eq!(again.created_at, first.created_at, "the first one's");
    assert_eq!(again.payload, first.payload);
    assert_eq!(h.stats("jobs").await.message_count, 1);
}

async fn dedupe_replay_after_ack_is_gone(h: Harness) {
    let first = h.publish_msg("jobs", msg(&payload(1)).key("k")).await;
    let c = h.claim_one("jobs").await;

    let held = h.publish_msg("jobs", msg(&payload(1)).key("k")).await;
    assert!(held.replay);
    assert_eq!(
        (held.status, held.delivery_count),
        (MessageStatus::InFlight, 1)
    );

    assert!(h.ack("jobs", &c.message_id, Some(&c.receipt)).await);
    let gone = h.publish_msg("jobs", msg(&payload(1)).key("k")).await;
    assert!(gone.replay, "the key outlives the message");
    assert_eq!(gone.message_id, first.message_id);
    assert_eq!((gone.status, gone.delivery_count), (MessageStatus::Gone, 0));
    assert_eq!(h.stats("jobs").await.message_count, 0, "not stored again");
    assert!(h.claim("jobs", 10).await.is_empty());
}

async fn dedupe_different_payload_is_rejected(h: Harness) {
    h.publish_msg("jobs", msg(&payload(1)).key("k")).await;
    match h.publish("jobs", vec![msg(&payload(2)).key("k")]).await {
        Err(StoreError::IdempotencyKeyReused { index, key }) => {
            assert_eq!((index, key.as_str()), (0, "k"));
        }
        other => panic!("expected IdempotencyKeyReused, got {other:?}"),
    }
    assert_eq!(h.stats("jobs").await.message_count, 1);
}

async fn dedupe_key_is_scoped_per_queue(h: Harness) {
    let a = h.publish_msg("a", msg(&payload(1)).key("k")).await;
    let b = h.publish_msg("b", msg(&payload(1)).key("k")).await;
    assert!(!b.replay);
    assert_ne!(a.message_id, b.message_id);
    assert_eq!(h.stats("a").await.message_count, 1);
    assert_eq!(h.stats("b").await.message_count, 1);
}

async fn dedupe_key_is_new_after_window(mut h: Harness) {
    h.dedupe_window = SignedDuration::from_secs(60);
    let first = h.publish_msg("jobs", msg(&payload(1)).key("k")).await;

    h.advance(59);
    let inside = h.publish_msg("jobs", msg(&payload(1)).key("k")).await;
    assert!(inside.replay, "still inside the window");

    h.advance(2);
    // A passed window counts as absent: even another payload is accepted.
    let second = h.publish_msg("jobs", msg(&payload(2)).key("k")).await;
    assert!(!second.replay);
    assert_ne!(second.message_id, first.message_id);
    assert_eq!(h.stats("jobs").await.message_count, 2);

    // ...and the key now names the second message.
    let replay = h.publish_msg("jobs", msg(&payload(2)).key("k")).await;
    assert!(replay.replay);
    assert_eq!(replay.message_id, second.message_id);
}

async fn dedupe_purge_forgets_expired_keys(mut h: Harness) {
    h.dedupe_window = SignedDuration::from_secs(60);
    let first = h.publish_msg("jobs", msg(&payload(1)).key("short")).await;
    h.dedupe_window = SignedDuration::from_hours(1);
    let long = h.publish_msg("jobs", msg(&payload(1)).key("long")).await;

    h.advance(30);
    assert_eq!(h.store.dedupe_purge(h.now).await.unwrap(), 0, "none ended");
    h.advance(31);
    assert_eq!(
        h.store.dedupe_purge(h.now).await.unwrap(),
        1,
        "only `short`"
    );
    assert_eq!(
        h.store.dedupe_purge(h.now).await.unwrap(),
        0,
        "already gone"
    );

    let again = h.publish_msg("jobs", msg(&payload(1)).key("short")).await;
    assert!(!again.replay);
    assert_ne!(again.message_id, first.message_id);
    let kept = h.publish_msg("jobs", msg(&payload(1)).key("long")).await;
    assert!(kept.replay);
    assert_eq!(kept.message_id, long.message_id);
}

async fn dedupe_within_one_batch(h: Harness) {
    let out = h
        .publish(
            "jobs",
            vec![msg(&payload(1)).key("k"), msg(&payload(1)).key("k")],
        )
        .await
        .unwrap();
    assert!(!out[0].replay);
    assert!(out[1].replay);
    assert_eq!(out[1].message_id, out[0].message_id);
    assert_eq!(h.stats("jobs").await.message_count, 1);

    let clash = vec![msg(&payload(1)).key("j"), msg(&payload(2)).key("j")];
    match h.publish("jobs", clash).await {
        Err(StoreError::IdempotencyKeyReused { index, key }) => {
            assert_eq!((index, key.as_str()), (1, "j"));
        }
        other => panic!("expected IdempotencyKeyReused, got {other:?}"),
    }
    assert_eq!(h.stats("jobs").await.message_count, 1, "nothing stored");
}
