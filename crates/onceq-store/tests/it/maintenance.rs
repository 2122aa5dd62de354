//! Retention: messages older than their queue's retention are deleted,
//! whatever their state (docs/guarantees.md, "Retention deletes"): in
//! flight included.

use onceq_types::queue::QueueSettings;

use crate::{Harness, defaults, payload};

conformance!(
    retention_purge_deletes_old_messages,
    retention_is_per_queue,
    retention_deletes_in_flight_messages_too
);

const DAY: i64 = 86_400;

async fn retention_purge_deletes_old_messages(mut h: Harness) {
    h.publish_one("jobs", &payload(1)).await;
    h.advance(2 * DAY);
    let young = h.publish_one("jobs", &payload(2)).await;
    h.advance(6 * DAY); // the first is 8 days old, past the default 7
    assert_eq!(h.store.message_retention_purge(h.now).await.unwrap(), 1);
    assert_eq!(h.stats("jobs").await.message_count, 1);
    assert_eq!(h.claim_one("jobs").await.message_id, young.message_id);
    assert_eq!(h.store.message_retention_purge(h.now).await.unwrap(), 0);
}

async fn retention_is_per_queue(mut h: Harness) {
    let short = QueueSettings {
        message_retention_days: 1,
        ..defaults()
    };
    h.create("short", short).await.unwrap();
    h.publish_one("short", &payload(1)).await;
    h.publish_one("long", &payload(1)).await;
    h.advance(2 * DAY);
    assert_eq!(h.store.message_retention_purge(h.now).await.unwrap(), 1);
    assert_eq!(h.stats("short").await.message_count, 0);
    assert_eq!(h.stats("long").await.message_count, 1);
}

/// A message past its queue's retention is deleted while its lease still
/// runs: the purge does not wait for the lease, and the holder's ack then
/// finds nothing.
async fn retention_deletes_in_flight_messages_too(mut h: Harness) {
    h.publish_one("jobs", &payload(1)).await;
    h.publish_one("jobs", &payload(2)).await;
    h.advance(7 * DAY - 3600);
    // A 12 h lease: it ends 11 h after the message passes 7 days.
    let held = h.try_claim("jobs", 1, Some(43_200)).await.unwrap();
    assert_eq!(held.len(), 1);
    h.advance(2 * 3600);
    let before = h.stats("jobs").await;
    assert_eq!((before.in_flight, before.available), (1, 1));
    assert_eq!(h.store.message_retention_purge(h.now).await.unwrap(), 2);
    let after = h.stats("jobs").await;
    assert_eq!((after.message_count, after.in_flight), (0, 0));
    let receipt = held[0].receipt.clone();
    assert!(!h.ack("jobs", &held[0].message_id, Some(&receipt)).await);
}
