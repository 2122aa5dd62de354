//! A queue's hand-out limits: `max_in_flight` (messages in flight at once)
//! and `rate_per_sec` (a token bucket in the queue's row, refilled by the
//! claims' `now`): stored by create and update, and a claim simply takes
//! fewer, on standard and FIFO queues.

use onceq_store::{QueueChanges, QueueUpdate, StoreError};
use onceq_types::{QueueRecord, queue::QueueSettings};

use crate::{Harness, MsgExt, defaults, fifo, msg, payload};

conformance!(
    limits_are_stored_by_create_and_update,
    max_in_flight_caps_what_is_out_at_once,
    rate_per_sec_hands_out_by_the_bucket,
    both_limits_take_the_tighter,
    limits_hold_on_fifo_queues,
);

fn limited(max_in_flight: Option<i32>, rate_per_sec: Option<f64>) -> QueueSettings {
    QueueSettings {
        max_in_flight,
        rate_per_sec,
        ..defaults()
    }
}

impl Harness {
    async fn set_limits(
        &self,
        name: &str,
        max_in_flight: Option<Option<i32>>,
        rate_per_sec: Option<Option<f64>>,
    ) -> QueueRecord {
        self.store
            .queue_update(QueueUpdate {
                queue: self.q(name),
                changes: QueueChanges {
                    max_in_flight,
                    rate_per_sec,
                    ..QueueChanges::default()
                },
                now: self.now,
            })
            .await
            .expect("queue_update")
    }

    async fn publish_n(&self, queue: &str, n: i64) {
        for i in 0..n {
            self.publish_one(queue, &payload(i)).await;
        }
    }
}

async fn limits_are_stored_by_create_and_update(h: Harness) {
    let r = h.create("jobs", limited(Some(5), Some(2.5))).await.unwrap();
    assert_eq!(
        (r.record.max_in_flight, r.record.rate_per_sec),
        (Some(5), Some(2.5))
    );
    assert!(
        !h.create("jobs", limited(Some(5), Some(2.5)))
            .await
            .unwrap()
            .created
    );
    assert!(matches!(
        h.create("jobs", limited(Some(6), Some(2.5))).await,
        Err(StoreError::QueueAlreadyExists(_))
    ));
    let kept = h.set_limits("jobs", None, None).await;
    assert_eq!(
        (kept.max_in_flight, kept.rate_per_sec),
        (Some(5), Some(2.5))
    );
    let changed = h.set_limits("jobs", Some(Some(1)), Some(None)).await;
    assert_eq!(
        (changed.max_in_flight, changed.rate_per_sec),
        (Some(1), None)
    );
    let cleared = h.set_limits("jobs", Some(None), Some(Some(100.0))).await;
    assert_eq!(
        (cleared.max_in_flight, cleared.rate_per_sec),
        (None, Some(100.0))
    );
    assert_eq!(h.get("jobs").await, Some(cleared));
    let dlq = h.get("jobs-dlq").await.unwrap();
    assert_eq!((dlq.max_in_flight, dlq.rate_per_sec), (None, None));
}

async fn max_in_flight_caps_what_is_out_at_once(mut h: Harness) {
    h.create("jobs", limited(Some(3), None)).await.unwrap();
    h.publish_n("jobs", 10).await;
    let first = h.claim("jobs", 10).await;
    assert_eq!(first.len(), 3, "the cap, not the 10 asked for");
    assert!(h.claim("jobs", 10).await.is_empty(), "none while 3 are out");
    // Each way a lease ends frees its place.
    assert!(
        h.ack("jobs", &first[0].message_id, Some(&first[0].receipt))
            .await
    );
    assert_eq!(h.claim("jobs", 10).await.len(), 1, "after an ack");
    h.nack_claimed("jobs", &first[1], true).await;
    assert_eq!(h.claim("jobs", 10).await.len(), 1, "after a nack");
    h.advance(31);
    assert_eq!(h.lease_expire(100).await.requeued, 3);
    assert_eq!(h.claim("jobs", 2).await.len(), 2, "max still applies");
    assert_eq!(h.claim("jobs", 10).await.len(), 1, "after expiries");
    // Lowered below what is out: nothing until enough come back.
    h.set_limits("jobs", Some(Some(1)), None).await;
    assert!(h.claim("jobs", 10).await.is_empty());
    h.set_limits("jobs", Some(None), None).await;
    assert_eq!(h.claim("jobs", 10).await.len(), 6, "no cap: the rest");
}

async fn rate_per_sec_hands_out_by_the_bucket(mut h: Harness) {
    h.create("jobs", limited(None, Some(2.0))).await.unwrap();
    h.create("slow", limited(None, Some(0.5))).await.unwrap();
    h.publish_n("jobs", 30).await;
    h.publish_n("slow", 5).await;
    // A full bucket: one second's worth.
    assert_eq!(h.claim("jobs", 10).await.len(), 2);
    assert!(h.claim("jobs", 10).await.is_empty(), "empty bucket");
    h.advance(1);
    assert_eq!(h.claim("jobs", 1).await.len(), 1);
    assert_eq!(h.claim("jobs", 10).await.len(), 1, "the second token");
    h.advance(60);
    assert_eq!(
        h.claim("jobs", 10).await.len(),
        2,
        "refilled up to capacity only"
    );
    // Over 10 s of claims every second: 2 a second, whatever is asked.
    let mut taken = 0;
    for _ in 0..10 {
        h.advance(1);
        taken += h.claim("jobs", 10).await.len();
        taken += h.claim("jobs", 10).await.len();
    }
    assert_eq!(taken, 20);
    // Slower than one a second: a token every 2 s, capacity one.
    assert_eq!(h.claim("slow", 10).await.len(), 1);
    h.advance(1);
    assert!(h.claim("slow", 10).await.is_empty(), "half a token");
    h.advance(1);
    assert_eq!(h.claim("slow", 10).await.len(), 1);
    // A new rate starts with a full bucket.
    h.set_limits("slow", None, Some(Some(3.0))).await;
    assert_eq!(h.claim("slow", 10).await.len(), 3);
}

async fn both_limits_take_the_tighter(mut h: Harness) {
    h.create("jobs", limited(Some(2), Some(5.0))).await.unwrap();
    h.publish_n("jobs", 20).await;
    let out = h.claim("jobs", 10).await;
    assert_eq!(out.len(), 2, "max_in_flight is tighter");
    for c in &out {
        h.ack("jobs", &c.message_id, Some(&c.receipt)).await;
    }
    assert_eq!(
        h.claim("jobs", 10).await.len(),
        2,
        "3 tokens left, 2 places"
    );
    h.set_limits("jobs", Some(Some(100)), None).await;
    assert_eq!(h.claim("jobs", 10).await.len(), 1, "the last token");
    h.advance(1);
    assert_eq!(h.claim("jobs", 10).await.len(), 5);
}

async fn limits_hold_on_fifo_queues(h: Harness) {
    h.create(
        "orders",
        QueueSettings {
            max_in_flight: Some(2),
            ..fifo()
        },
    )
    .await
    .unwrap();
    for g in ["a", "b", "c", "d"] {
        h.publish_msg("orders", msg(&payload(1)).group(g)).await;
    }
    let out = h.claim("orders", 10).await;
    assert_eq!(out.len(), 2, "two groups' heads, not four");
    assert!(h.claim("orders", 10).await.is_empty());
    h.ack("orders", &out[0].message_id, Some(&out[0].receipt))
        .await;
    assert_eq!(h.claim("orders", 10).await.len(), 1);
}
