//! Ack and nack: a lease ends once, only for the right receipt.

use onceq_store::NackOutcome;

use crate::{Harness, payload};

conformance!(
    ack_succeeds_once,
    ack_with_wrong_receipt_does_nothing,
    ack_without_receipt,
    ack_unknown_or_not_in_flight,
    nack_requeue_keeps_delivery_count,
    nack_with_delay,
    nack_without_requeue_dead_letters,
    nack_with_wrong_receipt_does_nothing,
    nack_not_in_flight,
);

async fn ack_succeeds_once(h: Harness) {
    h.publish_one("jobs", &payload(1)).await;
    let c = h.claim_one("jobs").await;
    assert!(h.ack("jobs", &c.message_id, Some(&c.receipt)).await);
    assert!(
        !h.ack("jobs", &c.message_id, Some(&c.receipt)).await,
        "twice"
    );
    let s = h.stats("jobs").await;
    assert_eq!((s.message_count, s.in_flight), (0, 0), "acked is gone");
}

async fn ack_with_wrong_receipt_does_nothing(h: Harness) {
    h.publish_one("jobs", &payload(1)).await;
    let c = h.claim_one("jobs").await;
    assert!(
        !h.ack("jobs", &c.message_id, Some("rcpt_not_this_one"))
            .await
    );
    assert_eq!(h.stats("jobs").await.in_flight, 1, "still held");
    assert!(h.ack("jobs", &c.message_id, Some(&c.receipt)).await);
}

async fn ack_without_receipt(h: Harness) {
    h.publish_one("jobs", &payload(1)).await;
    let c = h.claim_one("jobs").await;
    assert!(h.ack("jobs", &c.message_id, None).await);
    assert_eq!(h.stats("jobs").await.message_count, 0);
}

async fn ack_unknown_or_not_in_flight(h: Harness) {
    let p = h.publish_one("jobs", &payload(1)).await;
    assert!(
        !h.ack("jobs", &p.message_id, None).await,
        "available, not held"
    );
    assert_eq!(h.stats("jobs").await.available, 1, "untouched");
    assert!(
        !h.ack("jobs", "qmsg_00000000000000000000000000000000", None)
            .await
    );
    assert!(!h.ack("nope", &p.message_id, None).await, "unknown queue");
}

async fn nack_requeue_keeps_delivery_count(h: Harness) {
    h.publish_one("jobs", &payload(1)).await;
    let c = h.claim_one("jobs").await;
    let out = h
        .nack("jobs", &c.message_id, Some(&c.receipt), true, 0)
        .await;
    let want = NackOutcome {
        nacked: true,
        requeued: true,
        dead_lettered: false,
        delivery_count: 1,
    };
    assert_eq!(out, want);
    let s = h.stats("jobs").await;
    assert_eq!((s.available, s.in_flight), (1, 0));
    let again = h.claim_one("jobs").await;
    assert_eq!((again.message_id, again.delivery_count), (c.message_id, 2));
}

async fn nack_with_delay(mut h: Harness) {
    h.publish_one("jobs", &payload(1)).await;
    let c = h.claim_one("jobs").await;
    let out = h
        .nack("jobs", &c.message_id, Some(&c.receipt), true, 30)
        .await;
    assert!(out.nacked && out.requeued);
    let s = h.stats("jobs").await;
    assert_eq!((s.delayed, s.available, s.in_flight), (1, 0, 0));
    assert!(h.claim("jobs", 10).await.is_empty());

    h.advance(31);
    assert_eq!(h.stats("jobs").await.available, 1);
    assert_eq!(h.claim_one("jobs").await.message_id, c.message_id);
}

async fn nack_without_requeue_dead_letters(h: Harness) {
    h.publish_one("jobs", r#"{"keep":"me"}"#).await;
    let c = h.claim_one("jobs").await;
    let out = h.nack_claimed("jobs", &c, false).await;
    let want = NackOutcome {
        nacked: true,
        requeued: false,
        dead_lettered: true,
        delivery_count: 1,
    };
    assert_eq!(out, want);

    let s = h.stats("jobs").await;
    assert_eq!((s.message_count, s.dead_lettered), (0, 1));
    let d = h.stats("jobs-dlq").await;
    assert_eq!((d.message_count, d.available), (1, 1));

    let dead = h.claim_one("jobs-dlq").await;
    assert_eq!(dead.message_id, c.message_id, "same id");
    assert_eq!(dead.payload, r#"{"keep":"me"}"#);
    assert_eq!(dead.delivery_count, 2, "count kept, plus this hand-out");
}

async fn nack_with_wrong_receipt_does_nothing(h: Harness) {
    h.publish_one("jobs", &payload(1)).await;
    let c = h.claim_one("jobs").await;
    let out = h
        .nack("jobs", &c.message_id, Some("rcpt_wrong"), false, 0)
        .await;
    assert!(!out.nacked && !out.requeued && !out.dead_lettered);
    let s = h.stats("jobs").await;
    assert_eq!((s.in_flight, s.dead_lettered), (1, 0));
}

async fn nack_not_in_flight(h: Harness) {
    let p = h.publish_one("jobs", &payload(1)).await;
    let out = h.nack("jobs", &p.message_id, None, false, 0).await;
    assert!(!out.nacked && !out.requeued && !out.dead_lettered);
    let s = h.stats("jobs").await;
    assert_eq!((s.available, s.dead_lettered), (1, 0), "untouched");

    let unknown = h
        .nack(
            "jobs",
            "qmsg_00000000000000000000000000000000",
            None,
            true,
            0,
        )
        .await;
    assert_eq!(
        unknown,
        NackOutcome {
            nacked: false,
            requeued: false,
            dead_lettered: false,
            delivery_count: 0
        }
    );
}
