//! Tenancy: two projects own a queue of the same name and never see each
//! other's messages.

use onceq_store::{LeaseExpiry, QueueLeaseExpiry, StoreError};
use onceq_types::queue::QueueSettings;

use crate::{Harness, MsgExt, defaults, ids, msg, payload};

conformance!(
    same_name_different_projects_are_isolated,
    other_project_cannot_touch_messages,
    other_project_sees_only_its_queues,
    dedupe_is_per_project,
    lease_expire_covers_every_project,
);

async fn same_name_different_projects_are_isolated(a: Harness) {
    let b = a.as_project("proj-b").await;
    let a1 = a.publish_one("orders", &payload(1)).await;
    a.publish_one("orders", &payload(2)).await;
    let b1 = b.publish_one("orders", &payload(3)).await;

    assert_eq!(ids(&b.claim("orders", 10).await), [b1.message_id]);
    assert!(b.claim("orders", 10).await.is_empty(), "A's are not B's");
    let (sa, sb) = (a.stats("orders").await, b.stats("orders").await);
    assert_eq!((sa.available, sa.in_flight), (2, 0));
    assert_eq!((sb.message_count, sb.in_flight), (1, 1));
    assert_eq!(a.claim("orders", 10).await[0].message_id, a1.message_id);
}

async fn other_project_cannot_touch_messages(a: Harness) {
    let b = a.as_project("proj-b").await;
    a.publish_one("orders", &payload(1)).await;
    a.publish_one("orders", &payload(2)).await;
    let held = a.claim_one("orders").await;
    b.create("orders", defaults()).await.unwrap();
    let (id, r) = (held.message_id.as_str(), Some(held.receipt.as_str()));

    assert!(!b.ack("orders", id, r).await);
    assert!(!b.ack("orders", id, None).await);
    assert!(!b.nack("orders", id, r, false, 0).await.nacked);
    assert!(!b.nack("orders", id, None, true, 0).await.nacked);
    let ext = b.extend("orders", id, r, 600).await;
    assert_eq!(
        (ext.extended, ext.lease_expires_at),
        (false, None),
        "no leak"
    );
    assert_eq!(b.store.queue_purge(&b.q("orders")).await.unwrap(), 0);
    assert!(b.claim("orders", 10).await.is_empty());

    let s = a.stats("orders").await;
    assert_eq!((s.available, s.in_flight, s.dead_lettered), (1, 1, 0));
    assert_eq!(b.store.queue_delete(&b.q("orders")).await.unwrap(), 0);
    assert_eq!(a.stats("orders").await.message_count, 2, "A's queue stays");
    assert!(a.ack("orders", id, r).await);
}

async fn other_project_sees_only_its_queues(a: Harness) {
    let b = a.as_project("proj-b").await;
    a.create("orders", defaults()).await.unwrap();
    a.create("a-only", defaults()).await.unwrap();
    let mine = QueueSettings {
        max_retries: 5,
        ..defaults()
    };
    let created = b.create("orders", mine).await.unwrap();
    assert!(created.created, "not a conflict with A's orders");

    let names = |v: Vec<onceq_types::QueueRecord>| -> Vec<String> {
        v.into_iter().map(|r| r.name).collect()
    };
    let listed = names(b.store.queue_list(&b.project).await.unwrap());
    assert_eq!(listed, ["orders", "orders-dlq"]);
    assert_eq!(b.get("orders").await.unwrap().max_retries, 5);
    assert_eq!(a.get("orders").await.unwrap().max_retries, 3);
    assert_eq!(b.get("a-only").await, None);
    let stats = b.try_stats("a-only").await;
    assert!(matches!(stats, Err(StoreError::QueueNotFound)), "{stats:?}");
    let claim = b.try_claim("a-only", 1, None).await;
    assert!(matches!(claim, Err(StoreError::QueueNotFound)), "{claim:?}");
}

async fn dedupe_is_per_project(a: Harness) {
    let b = a.as_project("proj-b").await;
    let pa = a.publish_msg("orders", msg(&payload(1)).key("k")).await;
    // Another payload under the same key is no conflict in another project.
    let pb = b.publish_msg("orders", msg(&payload(2)).key("k")).await;
    assert!(!pb.replay);
    assert_ne!(pa.message_id, pb.message_id);
}

async fn lease_expire_covers_every_project(mut a: Harness) {
    let b = a.as_project("proj-b").await;
    a.publish_one("orders", &payload(1)).await;
    b.publish_one("orders", &payload(2)).await;
    a.claim_one("orders").await;
    b.claim_one("orders").await;
    a.advance(31);
    let one = |queue| QueueLeaseExpiry {
        queue,
        requeued: 1,
        dead_lettered: 0,
    };
    let want = LeaseExpiry {
        requeued: 2,
        dead_lettered: 0,
        by_queue: vec![one(a.q("orders")), one(b.q("orders"))],
    };
    assert_eq!(a.lease_expire(100).await, want);
}
