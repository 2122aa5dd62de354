//! Retention: messages older than their queue's retention are deleted.

use onceq_types::queue::QueueSettings;

use crate::{Harness, defaults, payload};

conformance!(retention_purge_deletes_old_messages, retention_is_per_queue);

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
