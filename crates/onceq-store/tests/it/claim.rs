//! Claim: order, priority, `max`, the lease it grants, delayed messages.

use onceq_store::StoreError;
use onceq_types::queue::QueueSettings;

use crate::{Harness, MsgExt, defaults, ids, msg, payload, payloads};

conformance!(
    claim_in_publish_order,
    claim_higher_priority_first,
    claim_ignores_priority_when_disabled,
    claim_respects_max,
    claim_empty_and_unknown_queue,
    claim_grants_a_lease,
    claim_lease_defaults_to_queue_timeout,
    claim_counts_hand_outs_with_new_receipts,
    claim_skips_leased_messages,
    claim_waits_for_delay,
);

async fn claim_in_publish_order(h: Harness) {
    let batch = vec![msg(&payload(0)), msg(&payload(1)), msg(&payload(2))];
    h.publish("jobs", batch).await.unwrap();
    h.publish_one("jobs", &payload(3)).await;
    h.publish_one("jobs", &payload(4)).await;
    let got = h.claim("jobs", 10).await;
    let want: Vec<String> = (0..5).map(payload).collect();
    assert_eq!(payloads(&got), want);
}

async fn claim_higher_priority_first(h: Harness) {
    for (n, prio) in [(0, 0), (1, 5), (2, 1), (3, 5), (4, -2)] {
        h.publish_msg("jobs", msg(&payload(n)).priority(prio)).await;
    }
    let got = h.claim("jobs", 10).await;
    let want: Vec<String> = [1, 3, 2, 0, 4].into_iter().map(payload).collect();
    assert_eq!(payloads(&got), want);
}

async fn claim_ignores_priority_when_disabled(h: Harness) {
    let settings = QueueSettings {
        enable_priority: false,
        ..defaults()
    };
    h.create("jobs", settings).await.unwrap();
    h.publish_msg("jobs", msg(&payload(0)).priority(0)).await;
    h.publish_msg("jobs", msg(&payload(1)).priority(9)).await;
    let got = h.claim("jobs", 10).await;
    assert_eq!(payloads(&got), [payload(0), payload(1)], "stored as 0");
}

async fn claim_respects_max(h: Harness) {
    let batch: Vec<_> = (0..10).map(|n| msg(&payload(n))).collect();
    h.publish("jobs", batch).await.unwrap();
    assert_eq!(h.claim("jobs", 3).await.len(), 3);
    let s = h.stats("jobs").await;
    assert_eq!((s.available, s.in_flight), (7, 3));
}

async fn claim_empty_and_unknown_queue(h: Harness) {
    h.create("jobs", defaults()).await.unwrap();
    assert!(h.claim("jobs", 10).await.is_empty());
    let res = h.try_claim("nope", 1, None).await;
    assert!(matches!(res, Err(StoreError::QueueNotFound)), "got {res:?}");
}

async fn claim_grants_a_lease(mut h: Harness) {
    let p = h.publish_msg("jobs", msg(&payload(1)).key("k")).await;
    h.advance(5);
    let got = h.try_claim("jobs", 1, Some(45)).await.unwrap();
    assert_eq!(got.len(), 1);
    let c = &got[0];
    assert_eq!(c.message_id, p.message_id);
    assert_eq!(c.payload, payload(1));
    assert_eq!(c.delivery_count, 1);
    assert!(!c.receipt.is_empty());
    assert_eq!(c.created_at, h.t(0), "when published");
    assert_eq!(c.lease_expires_at, h.t(50), "now + 45 s");
    assert_eq!(c.idempotency_key.as_deref(), Some("k"));
    assert_eq!(h.stats("jobs").await.in_flight, 1);
}

async fn claim_lease_defaults_to_queue_timeout(h: Harness) {
    h.publish_one("dflt", &payload(1)).await;
    assert_eq!(h.claim_one("dflt").await.lease_expires_at, h.t(30));

    let slow = QueueSettings {
        visibility_timeout_default: 120,
        ..defaults()
    };
    h.create("slow", slow).await.unwrap();
    h.publish_one("slow", &payload(1)).await;
    assert_eq!(h.claim_one("slow").await.lease_expires_at, h.t(120));
}

async fn claim_counts_hand_outs_with_new_receipts(h: Harness) {
    h.publish_one("jobs", &payload(1)).await;
    let first = h.claim_one("jobs").await;
    assert!(h.nack_claimed("jobs", &first, true).await.requeued);
    let second = h.claim_one("jobs").await;
    assert_eq!(second.message_id, first.message_id);
    assert_eq!((first.delivery_count, second.delivery_count), (1, 2));
    assert_ne!(second.receipt, first.receipt);
}

async fn claim_skips_leased_messages(mut h: Harness) {
    h.publish_one("jobs", &payload(1)).await;
    let b = h.publish_one("jobs", &payload(2)).await;
    h.claim_one("jobs").await;
    let next = h.claim("jobs", 10).await;
    assert_eq!(ids(&next), [b.message_id], "only the unleased one");
    h.advance(29);
    assert!(h.claim("jobs", 10).await.is_empty(), "both still leased");
}

async fn claim_waits_for_delay(mut h: Harness) {
    let p = h.publish_msg("jobs", msg(&payload(1)).delay(60)).await;
    assert!(h.claim("jobs", 10).await.is_empty());
    h.advance(59);
    assert!(h.claim("jobs", 10).await.is_empty(), "not yet");
    let s = h.stats("jobs").await;
    assert_eq!((s.delayed, s.available), (1, 0));

    h.advance(2);
    let s = h.stats("jobs").await;
    assert_eq!((s.delayed, s.available), (0, 1), "its time has come");
    assert_eq!(h.claim_one("jobs").await.message_id, p.message_id);
}
