//! The dead-letter rule (at most `max_retries + 1` hand-outs) and redrive.

use onceq_store::{DlqRedrive, LeaseExpiry, QueueLeaseExpiry, RedriveOutcome, StoreError};
use onceq_types::queue::QueueSettings;

use crate::{Harness, defaults, payload};

conformance!(
    fourth_failed_nack_dead_letters,
    fourth_expired_lease_dead_letters,
    max_retries_zero_dead_letters_first_failure,
    queue_without_dlq_requeues,
    redrive_moves_messages_back,
    redrive_respects_max,
    redrive_needs_a_dlq,
);

async fn fourth_failed_nack_dead_letters(h: Harness) {
    let p = h.publish_one("jobs", &payload(1)).await;
    for n in 1..=3 {
        let c = h.claim_one("jobs").await;
        assert_eq!(c.delivery_count, n);
        let out = h.nack_claimed("jobs", &c, true).await;
        assert!(out.requeued && !out.dead_lettered, "failure {n} requeues");
    }
    let c = h.claim_one("jobs").await;
    assert_eq!(c.delivery_count, 4);
    let out = h.nack_claimed("jobs", &c, true).await;
    assert!(out.nacked && out.dead_lettered && !out.requeued);
    assert_eq!(out.delivery_count, 4);

    assert!(h.claim("jobs", 10).await.is_empty());
    assert_eq!(h.stats("jobs").await.dead_lettered, 1);
    assert_eq!(h.claim_one("jobs-dlq").await.message_id, p.message_id);
}

async fn fourth_expired_lease_dead_letters(mut h: Harness) {
    let p = h.publish_one("jobs", &payload(1)).await;
    for n in 1..=4 {
        let c = h.claim_one("jobs").await;
        assert_eq!(c.delivery_count, n);
        h.advance(31);
        let (requeued, dead_lettered) = if n < 4 { (1, 0) } else { (0, 1) };
        let want = LeaseExpiry {
            requeued,
            dead_lettered,
            by_queue: vec![QueueLeaseExpiry {
                queue: h.q("jobs"),
                requeued,
                dead_lettered,
            }],
        };
        assert_eq!(h.lease_expire(100).await, want, "expiry {n}");
    }
    let s = h.stats("jobs").await;
    assert_eq!((s.message_count, s.dead_lettered), (0, 1));
    assert_eq!(h.claim_one("jobs-dlq").await.message_id, p.message_id);
}

async fn max_retries_zero_dead_letters_first_failure(h: Harness) {
    let once = QueueSettings {
        max_retries: 0,
        ..defaults()
    };
    h.create("jobs", once).await.unwrap();
    h.publish_one("jobs", &payload(1)).await;
    let c = h.claim_one("jobs").await;
    let out = h.nack_claimed("jobs", &c, true).await;
    assert!(out.dead_lettered && !out.requeued);
    assert_eq!(h.stats("jobs").await.dead_lettered, 1);
}

async fn queue_without_dlq_requeues(h: Harness) {
    h.create("jobs", defaults()).await.unwrap();
    // `jobs-dlq` has no DLQ: failures past max_retries requeue it there.
    let p = h.publish_one("jobs-dlq", &payload(1)).await;
    for n in 1..=5 {
        let c = h.claim_one("jobs-dlq").await;
        assert_eq!(c.delivery_count, n);
        let out = h.nack_claimed("jobs-dlq", &c, true).await;
        assert!(out.requeued && !out.dead_lettered, "failure {n} requeues");
    }
    assert_eq!(h.stats("jobs-dlq").await.available, 1);
    assert_eq!(h.claim_one("jobs-dlq").await.message_id, p.message_id);
}

async fn dead_letter(h: &Harness, queue: &str, n: i64) {
    for i in 0..n {
        h.publish_one(queue, &payload(i)).await;
        let c = h.claim_one(queue).await;
        assert!(h.nack_claimed(queue, &c, false).await.dead_lettered);
    }
}

fn redrive(h: &Harness, queue: &str, max: Option<i64>) -> DlqRedrive {
    DlqRedrive {
        queue: h.q(queue),
        max,
        now: h.now,
    }
}

async fn redrive_moves_messages_back(h: Harness) {
    dead_letter(&h, "jobs", 2).await;
    let out = h
        .store
        .dlq_redrive(redrive(&h, "jobs", None))
        .await
        .unwrap();
    let want = RedriveOutcome {
        dead_letter_queue: "jobs-dlq".into(),
        redriven: 2,
    };
    assert_eq!(out, want);
    let s = h.stats("jobs").await;
    assert_eq!((s.available, s.dead_lettered), (2, 0));
    let back = h.claim("jobs", 10).await;
    assert_eq!(back.len(), 2);
    assert!(
        back.iter().all(|c| c.delivery_count == 1),
        "count was reset"
    );
}

async fn redrive_respects_max(h: Harness) {
    dead_letter(&h, "jobs", 3).await;
    let out = h
        .store
        .dlq_redrive(redrive(&h, "jobs", Some(2)))
        .await
        .unwrap();
    assert_eq!(out.redriven, 2);
    let s = h.stats("jobs").await;
    assert_eq!((s.available, s.dead_lettered), (2, 1));
}

async fn redrive_needs_a_dlq(h: Harness) {
    h.create("jobs", defaults()).await.unwrap();
    let res = h.store.dlq_redrive(redrive(&h, "jobs-dlq", None)).await;
    assert!(matches!(res, Err(StoreError::Invalid(_))), "got {res:?}");
    let res = h.store.dlq_redrive(redrive(&h, "nope", None)).await;
    assert!(matches!(res, Err(StoreError::QueueNotFound)), "got {res:?}");
}
