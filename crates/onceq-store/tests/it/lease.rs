//! Leases: extend, expiry, and receipts that outlived their lease.

use onceq_store::{LeaseExpiry, QueueLeaseExpiry};

use crate::{Harness, payload};

conformance!(
    extend_moves_the_lease_end,
    extend_with_wrong_receipt_does_nothing,
    stale_receipt_cannot_touch_a_new_lease,
    expired_but_unreaped_lease_can_be_acked,
    lease_expire_waits_for_expiry,
    lease_expire_respects_limit,
    lease_expire_counts_per_queue,
);

const NONE: LeaseExpiry = LeaseExpiry {
    requeued: 0,
    dead_lettered: 0,
    by_queue: Vec::new(),
};

async fn extend_moves_the_lease_end(mut h: Harness) {
    h.publish_one("jobs", &payload(1)).await;
    let c = h.claim_one("jobs").await; // lease ends at t0 + 30
    h.advance(20);
    let out = h.extend("jobs", &c.message_id, Some(&c.receipt), 60).await;
    assert!(out.extended);
    assert_eq!(out.lease_expires_at, Some(h.t(80)), "now + 60");

    h.advance(11); // past the old end
    assert_eq!(h.lease_expire(100).await, NONE);
    assert_eq!(h.stats("jobs").await.in_flight, 1);
    h.advance(50); // past the new end
    assert_eq!(h.lease_expire(100).await.requeued, 1);
    assert_eq!(h.stats("jobs").await.available, 1);
}

async fn extend_with_wrong_receipt_does_nothing(mut h: Harness) {
    h.publish_one("jobs", &payload(1)).await;
    let c = h.claim_one("jobs").await;
    h.advance(20);
    let out = h
        .extend("jobs", &c.message_id, Some("rcpt_wrong"), 600)
        .await;
    assert!(!out.extended);
    assert_eq!(out.lease_expires_at, Some(h.t(30)), "the unchanged end");
    h.advance(11);
    assert_eq!(h.lease_expire(100).await.requeued, 1, "lease not moved");

    // No longer in flight: nothing to extend, no lease end.
    let out = h.extend("jobs", &c.message_id, None, 600).await;
    assert_eq!((out.extended, out.lease_expires_at), (false, None));
}

async fn stale_receipt_cannot_touch_a_new_lease(mut h: Harness) {
    h.publish_one("jobs", &payload(1)).await;
    let old = h.claim_one("jobs").await;
    h.advance(31);
    assert_eq!(h.lease_expire(100).await.requeued, 1);
    let new = h.claim_one("jobs").await;
    assert_eq!(new.delivery_count, 2);
    let (id, stale) = (&old.message_id, Some(old.receipt.as_str()));

    assert!(!h.ack("jobs", id, stale).await);
    let nack = h.nack("jobs", id, stale, false, 0).await;
    assert!(!nack.nacked && !nack.dead_lettered && !nack.requeued);
    assert!(!h.extend("jobs", id, stale, 600).await.extended);

    let s = h.stats("jobs").await;
    assert_eq!(
        (s.in_flight, s.dead_lettered),
        (1, 0),
        "new holder untouched"
    );
    assert!(h.ack("jobs", id, Some(&new.receipt)).await);
}

async fn expired_but_unreaped_lease_can_be_acked(mut h: Harness) {
    h.publish_one("jobs", &payload(1)).await;
    let c = h.claim_one("jobs").await;
    h.advance(60);
    assert!(h.ack("jobs", &c.message_id, Some(&c.receipt)).await);
    assert_eq!(h.lease_expire(100).await, NONE);
    assert_eq!(h.stats("jobs").await.message_count, 0);
}

async fn lease_expire_waits_for_expiry(mut h: Harness) {
    h.publish_one("jobs", &payload(1)).await;
    let c = h.claim_one("jobs").await;
    h.advance(29);
    assert_eq!(h.lease_expire(100).await, NONE, "not yet");
    assert_eq!(h.stats("jobs").await.in_flight, 1);
    h.advance(1); // exactly at the end: expired "at or before now"
    let want = LeaseExpiry {
        requeued: 1,
        dead_lettered: 0,
        by_queue: vec![QueueLeaseExpiry {
            queue: h.q("jobs"),
            requeued: 1,
            dead_lettered: 0,
        }],
    };
    assert_eq!(h.lease_expire(100).await, want);
    let s = h.stats("jobs").await;
    assert_eq!((s.available, s.in_flight), (1, 0));
    assert_eq!(h.claim_one("jobs").await.message_id, c.message_id);
}

async fn lease_expire_respects_limit(mut h: Harness) {
    for n in 0..5 {
        h.publish_one("jobs", &payload(n)).await;
    }
    assert_eq!(h.claim("jobs", 10).await.len(), 5);
    h.advance(31);
    let requeued: Vec<u64> = {
        let mut v = Vec::new();
        for _ in 0..4 {
            v.push(h.lease_expire(2).await.requeued);
        }
        v
    };
    assert_eq!(requeued, [2, 2, 1, 0]);
    assert_eq!(h.stats("jobs").await.available, 5);
}

async fn lease_expire_counts_per_queue(mut h: Harness) {
    let settings = |max_retries| onceq_types::queue::QueueSettings {
        max_retries,
        ..crate::defaults()
    };
    // "last" dead-letters on its first expiry; "jobs" requeues.
    h.create("last", settings(0)).await.unwrap();
    h.create("jobs", settings(3)).await.unwrap();
    for n in 0..3 {
        h.publish_one("jobs", &payload(n)).await;
    }
    for n in 0..2 {
        h.publish_one("last", &payload(n)).await;
    }
    h.publish_one("idle", &payload(9)).await;
    assert_eq!(h.claim("jobs", 10).await.len(), 3);
    assert_eq!(h.claim("last", 10).await.len(), 2);
    h.advance(31);
    let got = h.lease_expire(100).await;
    let want = LeaseExpiry {
        requeued: 3,
        dead_lettered: 2,
        by_queue: vec![
            QueueLeaseExpiry {
                queue: h.q("jobs"),
                requeued: 3,
                dead_lettered: 0,
            },
            QueueLeaseExpiry {
                queue: h.q("last"),
                requeued: 0,
                dead_lettered: 2,
            },
        ],
    };
    assert_eq!(got, want, "only queues with expiries, by name");
    assert_eq!(h.stats("last").await.dead_lettered, 2);
}
