//! Queues: create (defaults, conflicts, dead-letter queues), get, list,
//! delete, purge.

use onceq_store::StoreError;
use onceq_types::{QueueType, queue::QueueSettings};

use crate::{Harness, MsgExt, defaults, msg, payload, with_dlq};

conformance!(
    create_applies_defaults_and_creates_dlq,
    create_identical_returns_existing,
    create_different_settings_conflicts,
    create_missing_explicit_dlq_fails,
    create_uses_explicit_existing_dlq,
    create_dlq_equal_to_itself_is_invalid,
    list_by_name,
    get_existing_and_unknown,
    delete_removes_queue_messages_and_keys,
    delete_dlq_leaves_users_without_one,
    purge_removes_every_state,
);

async fn create_applies_defaults_and_creates_dlq(h: Harness) {
    let out = h.create("orders", defaults()).await.unwrap();
    assert!(out.created);
    let r = &out.record;
    assert_eq!(r.name, "orders");
    assert_eq!(r.queue_type, QueueType::Standard);
    assert_eq!(r.dead_letter_queue.as_deref(), Some("orders-dlq"));
    assert_eq!(r.max_retries, 3);
    assert_eq!(r.message_retention_days, 7);
    assert_eq!(r.visibility_timeout_default, 30);
    assert!(r.enable_priority);
    assert_eq!(r.created_at, h.now);
    assert_eq!(h.get("orders").await.as_ref(), Some(r));

    let dlq = h.get("orders-dlq").await.expect("default DLQ was created");
    assert_eq!(dlq.dead_letter_queue, None, "a DLQ has no DLQ of its own");
}

async fn create_identical_returns_existing(mut h: Harness) {
    let first = h.create("orders", defaults()).await.unwrap();
    h.advance(10);
    let again = h.create("orders", defaults()).await.unwrap();
    assert!(!again.created);
    assert_eq!(
        again.record, first.record,
        "the stored record, first created_at"
    );

    // `None` means `<name>-dlq`: naming it explicitly is the same settings.
    let explicit = h.create("orders", with_dlq("orders-dlq")).await.unwrap();
    assert!(!explicit.created);
    assert_eq!(explicit.record, first.record);
}

async fn create_different_settings_conflicts(h: Harness) {
    let first = h.create("orders", defaults()).await.unwrap();
    let other = QueueSettings {
        max_retries: 5,
        ..defaults()
    };
    match h.create("orders", other).await {
        Err(StoreError::QueueAlreadyExists(existing)) => assert_eq!(*existing, first.record),
        other => panic!("expected QueueAlreadyExists, got {other:?}"),
    }
    assert_eq!(h.get("orders").await, Some(first.record), "unchanged");
}

async fn create_missing_explicit_dlq_fails(h: Harness) {
    match h.create("orders", with_dlq("graveyard")).await {
        Err(StoreError::DeadLetterQueueNotFound(name)) => assert_eq!(name, "graveyard"),
        other => panic!("expected DeadLetterQueueNotFound, got {other:?}"),
    }
    assert_eq!(h.get("orders").await, None, "nothing created");
    assert_eq!(h.get("graveyard").await, None);
}

async fn create_uses_explicit_existing_dlq(h: Harness) {
    h.create("graveyard", defaults()).await.unwrap();
    let out = h.create("orders", with_dlq("graveyard")).await.unwrap();
    assert!(out.created);
    assert_eq!(out.record.dead_letter_queue.as_deref(), Some("graveyard"));
    assert_eq!(h.get("orders-dlq").await, None, "no default DLQ made");
}

async fn create_dlq_equal_to_itself_is_invalid(h: Harness) {
    let res = h.create("orders", with_dlq("orders")).await;
    assert!(matches!(res, Err(StoreError::Invalid(_))), "got {res:?}");
    assert_eq!(h.get("orders").await, None);
}

async fn list_by_name(h: Harness) {
    assert!(h.store.queue_list(&h.project).await.unwrap().is_empty());
    h.create("b", defaults()).await.unwrap();
    h.create("a", defaults()).await.unwrap();
    let names: Vec<String> = h
        .store
        .queue_list(&h.project)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(names, ["a", "a-dlq", "b", "b-dlq"]);
}

async fn get_existing_and_unknown(h: Harness) {
    let settings = QueueSettings {
        max_retries: 7,
        message_retention_days: 2,
        visibility_timeout_default: 90,
        enable_priority: false,
        ..defaults()
    };
    let out = h.create("orders", settings).await.unwrap();
    let got = h.get("orders").await.unwrap();
    assert_eq!(got, out.record);
    assert_eq!(
        (got.max_retries, got.message_retention_days),
        (7, 2),
        "settings stored"
    );
    assert_eq!(
        (got.visibility_timeout_default, got.enable_priority),
        (90, false)
    );
    assert_eq!(h.get("nope").await, None);
}

async fn delete_removes_queue_messages_and_keys(h: Harness) {
    let first = h.publish_msg("orders", msg(&payload(1)).key("k")).await;
    h.publish_one("orders", &payload(2)).await;

    assert_eq!(h.store.queue_delete(&h.q("orders")).await.unwrap(), 2);
    assert_eq!(h.get("orders").await, None);
    assert!(matches!(
        h.try_stats("orders").await,
        Err(StoreError::QueueNotFound)
    ));
    assert!(matches!(
        h.try_claim("orders", 10, None).await,
        Err(StoreError::QueueNotFound)
    ));
    let res = h.store.queue_delete(&h.q("orders")).await;
    assert!(matches!(res, Err(StoreError::QueueNotFound)), "got {res:?}");

    // The dedupe keys went with it: the same key is new on the new queue,
    // and the old one is not left behind for the purge (a queue's id is
    // never reused, so only the purge could tell).
    let again = h.publish_msg("orders", msg(&payload(9)).key("k")).await;
    assert!(!again.replay);
    assert_ne!(again.message_id, first.message_id);
    assert_eq!(h.stats("orders").await.message_count, 1);
    h.store.queue_delete(&h.q("orders")).await.unwrap();
    let far = h.t(400 * 24 * 3600);
    assert_eq!(h.store.dedupe_purge(far).await.unwrap(), 0, "no key left");
}

async fn delete_dlq_leaves_users_without_one(h: Harness) {
    h.create("orders", defaults()).await.unwrap();
    h.store.queue_delete(&h.q("orders-dlq")).await.unwrap();
    assert_eq!(h.get("orders-dlq").await, None);
    assert_eq!(h.get("orders").await.unwrap().dead_letter_queue, None);
    assert_eq!(h.stats("orders").await.dead_letter_queue, None);
}

async fn purge_removes_every_state(h: Harness) {
    for n in 0..3 {
        h.publish_one("orders", &payload(n)).await;
    }
    h.publish_msg("orders", msg(&payload(3)).delay(60)).await;
    let held = h.claim_one("orders").await;
    let s = h.stats("orders").await;
    assert_eq!((s.available, s.delayed, s.in_flight), (2, 1, 1));

    assert_eq!(h.store.queue_purge(&h.q("orders")).await.unwrap(), 4);
    let s = h.stats("orders").await;
    assert_eq!(
        (s.message_count, s.available, s.delayed, s.in_flight),
        (0, 0, 0, 0)
    );
    assert!(
        !h.ack("orders", &held.message_id, None).await,
        "in-flight one gone too"
    );
    assert!(h.claim("orders", 10).await.is_empty());

    let res = h.store.queue_purge(&h.q("nope")).await;
    assert!(matches!(res, Err(StoreError::QueueNotFound)), "got {res:?}");
}
