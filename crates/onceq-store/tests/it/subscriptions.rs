//! Push subscriptions: add, list, delete, the per-queue limit, tenancy,
//! deletion with their queue, and the dispatcher's scan (which queues have
//! a message due).

use onceq_store::{StoreError, SubscriptionDelete, SubscriptionInsert, SubscriptionRecord};
use onceq_types::push::MAX_SUBSCRIPTIONS_PER_QUEUE;

use crate::{Harness, MsgExt, defaults, msg, payload};

conformance!(
    subscription_insert_list_delete,
    subscription_needs_its_queue,
    subscription_limit_per_queue,
    subscription_is_per_project,
    subscription_goes_with_its_queue,
    subscription_scan_reports_due_queues,
);

impl Harness {
    fn subscription(&self, queue: &str, url: &str) -> SubscriptionInsert {
        SubscriptionInsert {
            queue: self.q(queue),
            url: url.to_owned(),
            secret: "0123456789abcdef-secret".to_owned(),
            max_in_flight: 10,
            timeout_seconds: 30,
            now: self.now,
        }
    }

    async fn subscribe(&self, queue: &str, url: &str) -> SubscriptionRecord {
        self.store
            .subscription_insert(self.subscription(queue, url))
            .await
            .expect("subscription_insert")
    }

    async fn subscriptions(&self, queue: &str) -> Vec<SubscriptionRecord> {
        self.store
            .subscription_list(&self.q(queue))
            .await
            .expect("subscription_list")
    }

    async fn unsubscribe(&self, queue: &str, id: &str) -> onceq_store::Result<bool> {
        self.store
            .subscription_delete(SubscriptionDelete {
                queue: self.q(queue),
                subscription_id: id.to_owned(),
            })
            .await
    }

    /// The scan's rows as `(subscription id, due)`.
    async fn scan(&self) -> Vec<(String, bool)> {
        self.store
            .subscription_scan(self.now)
            .await
            .expect("subscription_scan")
            .into_iter()
            .map(|d| (d.subscription.subscription_id, d.due))
            .collect()
    }
}

async fn subscription_insert_list_delete(mut h: Harness) {
    h.create("orders", defaults()).await.unwrap();
    let mut p = h.subscription("orders", "https://hooks.example.com/a");
    p.max_in_flight = 3;
    p.timeout_seconds = 7;
    let a = h.store.subscription_insert(p).await.unwrap();
    assert!(a.subscription_id.starts_with("psub_"), "{a:?}");
    assert_eq!(a.subscription_id.len(), 5 + 32);
    assert_eq!(
        a,
        SubscriptionRecord {
            subscription_id: a.subscription_id.clone(),
            queue: h.q("orders"),
            url: "https://hooks.example.com/a".into(),
            secret: "0123456789abcdef-secret".into(),
            max_in_flight: 3,
            timeout_seconds: 7,
            created_at: h.now,
        }
    );
    h.advance(1);
    let b = h.subscribe("orders", "https://hooks.example.com/b").await;
    assert_ne!(a.subscription_id, b.subscription_id);

    // Oldest first, as inserted.
    assert_eq!(h.subscriptions("orders").await, [a.clone(), b.clone()]);

    assert!(h.unsubscribe("orders", &a.subscription_id).await.unwrap());
    assert!(!h.unsubscribe("orders", &a.subscription_id).await.unwrap());
    assert!(!h.unsubscribe("orders", "psub_nope").await.unwrap());
    assert_eq!(h.subscriptions("orders").await, std::slice::from_ref(&b));

    // Another queue of the project cannot delete it.
    h.create("other", defaults()).await.unwrap();
    assert!(!h.unsubscribe("other", &b.subscription_id).await.unwrap());
    assert_eq!(h.subscriptions("orders").await, [b]);
    assert!(h.subscriptions("other").await.is_empty());
}

async fn subscription_needs_its_queue(h: Harness) {
    let res = h
        .store
        .subscription_insert(h.subscription("nope", "https://x.example"))
        .await;
    assert!(matches!(res, Err(StoreError::QueueNotFound)), "{res:?}");
    let res = h.store.subscription_list(&h.q("nope")).await;
    assert!(matches!(res, Err(StoreError::QueueNotFound)), "{res:?}");
    let res = h.unsubscribe("nope", "psub_x").await;
    assert!(matches!(res, Err(StoreError::QueueNotFound)), "{res:?}");
    assert!(h.scan().await.is_empty(), "nothing half-stored");
}

async fn subscription_limit_per_queue(h: Harness) {
    h.create("orders", defaults()).await.unwrap();
    for i in 0..MAX_SUBSCRIPTIONS_PER_QUEUE {
        h.subscribe("orders", &format!("https://x.example/{i}"))
            .await;
    }
    let res = h
        .store
        .subscription_insert(h.subscription("orders", "https://x.example/over"))
        .await;
    match res {
        Err(StoreError::Invalid(m)) => assert!(m.contains("push subscriptions"), "{m}"),
        other => panic!("expected Invalid, got {other:?}"),
    }
    assert_eq!(
        h.subscriptions("orders").await.len(),
        MAX_SUBSCRIPTIONS_PER_QUEUE
    );
    // The limit is per queue.
    h.create("other", defaults()).await.unwrap();
    h.subscribe("other", "https://x.example/other").await;
}

async fn subscription_is_per_project(a: Harness) {
    let b = a.as_project("proj-b").await;
    a.create("orders", defaults()).await.unwrap();
    b.create("orders", defaults()).await.unwrap();
    let sa = a.subscribe("orders", "https://a.example").await;
    assert!(b.subscriptions("orders").await.is_empty());
    assert!(!b.unsubscribe("orders", &sa.subscription_id).await.unwrap());
    assert_eq!(a.subscriptions("orders").await, std::slice::from_ref(&sa));

    // The scan sees every project's, each with its own project.
    let sb = b.subscribe("orders", "https://b.example").await;
    let all = a.store.subscription_scan(a.now).await.unwrap();
    let projects: Vec<_> = all
        .iter()
        .map(|d| {
            (
                d.subscription.subscription_id.clone(),
                d.subscription.queue.project.clone(),
            )
        })
        .collect();
    assert_eq!(
        projects,
        [
            (sa.subscription_id, a.project.clone()),
            (sb.subscription_id, b.project.clone())
        ]
    );
}

async fn subscription_goes_with_its_queue(h: Harness) {
    h.create("orders", defaults()).await.unwrap();
    h.subscribe("orders", "https://x.example").await;
    h.publish_one("orders", &payload(1)).await;
    h.store.queue_delete(&h.q("orders")).await.unwrap();
    assert!(h.scan().await.is_empty());
    // A queue of the same name starts without subscriptions.
    h.create("orders", defaults()).await.unwrap();
    assert!(h.subscriptions("orders").await.is_empty());
}

async fn subscription_scan_reports_due_queues(mut h: Harness) {
    h.create("orders", defaults()).await.unwrap();
    h.create("quiet", defaults()).await.unwrap();
    let s = h.subscribe("orders", "https://x.example").await;
    let quiet = h.subscribe("quiet", "https://y.example").await;
    let (sid, qid) = (s.subscription_id.clone(), quiet.subscription_id.clone());
    assert_eq!(h.scan().await, [(sid.clone(), false), (qid.clone(), false)]);

    // Available: due.
    h.publish_one("orders", &payload(1)).await;
    assert_eq!(h.scan().await, [(sid.clone(), true), (qid.clone(), false)]);

    // In flight: not due.
    let c = h.claim_one("orders").await;
    assert_eq!(h.scan().await[0], (sid.clone(), false));

    // Nacked with a delay: due once the delay has passed.
    h.nack("orders", &c.message_id, Some(&c.receipt), true, 60)
        .await;
    assert_eq!(h.scan().await[0], (sid.clone(), false));
    h.advance(60);
    assert_eq!(h.scan().await[0], (sid.clone(), true));

    // Published with a delay, into the quiet queue: due on time.
    h.publish_msg("quiet", msg(&payload(2)).delay(30)).await;
    assert_eq!(h.scan().await[1], (qid.clone(), false));
    h.advance(30);
    assert_eq!(h.scan().await[1], (qid, true));
}
