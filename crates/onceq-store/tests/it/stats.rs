//! Stats: counts by state, the oldest message's age, dead-lettered count.

use onceq_store::StoreError;
use onceq_types::QueueStats;

use crate::{Harness, MsgExt, defaults, msg, payload};

conformance!(
    stats_counts_each_state,
    stats_oldest_message_age,
    stats_counts_dead_lettered,
    stats_of_unknown_queue,
);

async fn stats_counts_each_state(h: Harness) {
    h.create("jobs", defaults()).await.unwrap();
    let empty = QueueStats {
        queue: "jobs".into(),
        message_count: 0,
        available: 0,
        delayed: 0,
        in_flight: 0,
        dead_lettered: 0,
        dead_letter_queue: Some("jobs-dlq".into()),
        oldest_message_age_seconds: 0,
        paused: false,
    };
    assert_eq!(h.stats("jobs").await, empty);

    for n in 0..5 {
        h.publish_one("jobs", &payload(n)).await;
    }
    for n in 5..7 {
        h.publish_msg("jobs", msg(&payload(n)).delay(100)).await;
    }
    h.claim("jobs", 2).await;
    let s = h.stats("jobs").await;
    assert_eq!((s.available, s.delayed, s.in_flight), (3, 2, 2));
    assert_eq!(s.message_count, 7, "available + delayed + in_flight");
    assert_eq!(s.dead_lettered, 0);
}

async fn stats_oldest_message_age(mut h: Harness) {
    h.publish_one("jobs", &payload(1)).await;
    h.advance(100);
    h.publish_one("jobs", &payload(2)).await;
    h.advance(20);
    assert_eq!(h.stats("jobs").await.oldest_message_age_seconds, 120);

    let oldest = h.claim_one("jobs").await;
    assert_eq!(
        h.stats("jobs").await.oldest_message_age_seconds,
        120,
        "in flight is still held"
    );
    assert!(h.ack("jobs", &oldest.message_id, None).await);
    assert_eq!(h.stats("jobs").await.oldest_message_age_seconds, 20);
}

async fn stats_counts_dead_lettered(h: Harness) {
    for n in 0..2 {
        h.publish_one("jobs", &payload(n)).await;
        let c = h.claim_one("jobs").await;
        assert!(h.nack_claimed("jobs", &c, false).await.dead_lettered);
    }
    h.publish_one("jobs", &payload(9)).await;
    let s = h.stats("jobs").await;
    assert_eq!((s.message_count, s.available, s.dead_lettered), (1, 1, 2));
    assert_eq!(s.dead_letter_queue.as_deref(), Some("jobs-dlq"));
    assert_eq!(h.stats("jobs-dlq").await.dead_lettered, 0, "it has no DLQ");
}

async fn stats_of_unknown_queue(h: Harness) {
    let res = h.try_stats("nope").await;
    assert!(matches!(res, Err(StoreError::QueueNotFound)), "got {res:?}");
}
